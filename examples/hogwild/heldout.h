/*  examples/hogwild/heldout.h - a held-out set, scored by a model.

    The softmax plugin's validate=PATH: the msgpack records of PATH
    ([label, features], in any form the plugin trains on: a bin of bytes,
    an array of numbers, a map {index: number}) are read once, into flat
    arrays that take a few bytes a feature (not the msgpack objects, which
    take 32), and scored at each epoch's end.

    Conventions as model.h's: functions that fail return a negative code
    and write a message into the caller's ERROR (ERRLEN bytes) that names
    the file, the record and the byte where it starts.  */
#ifndef HOGWILD_HELDOUT_H_INCLUDED
#define HOGWILD_HELDOUT_H_INCLUDED

#include <stddef.h>

#include "model.h"

typedef struct heldout heldout;

/*  Read PATH.  0 and *OUT, or -1 with ERROR: the file cannot be read, a
    record is not msgpack or not [label, features], a label is not an
    integer from 0, a feature is not a number, an index not an integer,
    or there are no records.  */
int heldout_load (const char *path, heldout **out, char *error, size_t errlen);
void heldout_destroy (heldout **self_p);

/*  Score M on every record: the mean cross-entropy into *LOSS and the
    share predicted right into *ACCURACY.  Bytes are scaled by SCALE when
    SCALE_GIVEN, else by 1/255; numbers by SCALE when SCALE_GIVEN, else 1.
    0, or -1 with ERROR: a label the model has no class for, a dense
    record longer than the model's rows, a value that is not finite once
    scaled.  Reads M as prediction does (atomic loads): safe while other
    workers train, though the plugin scores when none does.  */
int heldout_score (const heldout *self, model_blob *m, int scale_given, float scale, double *loss,
                   double *accuracy, char *error, size_t errlen);

#endif

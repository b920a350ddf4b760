/*  examples/hogwild/record.h - a training record's msgpack bytes read
    without decoding them into objects.

    softmax's records are [label, features], and two forms of features
    carry nearly all data: a bin of bytes (idx2msgpack's) and a map
    {index: number} (the libsvm reader's).  A Fashion-MNIST image as a
    map is 390 pairs: decoded by the engine, 781 msgpack objects of 24
    bytes each, written and then read back into arrays, which took a
    third of a sparse job's time.  This reads the bytes straight into the
    arrays the model takes.

    It takes only the encodings listed below and says "another form" for
    everything else, so that its caller decodes such a record as objects
    and one path, the objects', says what is wrong with a record.  Within
    what it takes, it gives the numbers the objects give: an integer
    becomes a double, then a float, as msgpack_object's via.f64 and a
    cast would.  */
#ifndef HOGWILD_RECORD_H_INCLUDED
#define HOGWILD_RECORD_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int labeled; /*  1: LABEL holds it; 0: the label was nil  */
    uint64_t label;
    int sparse; /*  0: N bytes at BYTES; 1: N pairs at PAIRS  */
    size_t n;
    const uint8_t *bytes;
    const uint8_t *pairs, *end; /*  the map's pairs, and the record's end  */
} record_head;

/*  1 and *HEAD when the LEN bytes at DATA start an array of two: a label
    that is nil or a non-negative integer (a positive fixint or a uint
    8 to 64), then a bin (8, 16 or 32) or a map (fix, 16 or 32).  0 for
    any other form or encoding.  */
int record_head_parse (const void *data, size_t len, record_head *head);

/*  The HEAD->n pairs of a sparse HEAD into INDEXES and VALUES (room for
    n each): 1, or 0 when a key is no positive fixint or uint, a value no
    fixint, int, uint or float, or the bytes end first.  */
int record_pairs (const record_head *head, uint64_t *indexes, float *values);

#endif

/*  examples/hogwild/record.h - a training record's msgpack bytes read
    without decoding them into objects.

    softmax's records are [label, features], and four forms of features
    carry nearly all data: a bin of bytes (idx2msgpack's), an array of
    numbers (the json reader's), a map {index: number} (the libsvm
    reader's) and [indexes, values], two bins of little-endian uint32
    and float32 (the libsvm reader's with features=bins).  A
    Fashion-MNIST image as a map is 390 pairs: decoded by the engine, 781
    msgpack objects of 24 bytes each, written and then read back into
    arrays: a third of a sparse job's time in a profile.  This reads the
    bytes straight into the arrays the model takes.

    It takes only the encodings listed below and says "another form" for
    everything else, so that its caller decodes such a record as objects
    and one path, the objects', says what is wrong with a record.  Within
    what it takes, it gives the numbers the objects give: an integer
    becomes a double, then a float, as msgpack_object's via.f64 and a
    cast would (a signalling NaN may stay one, where the objects make it
    quiet: the model refuses both).  */
#ifndef HOGWILD_RECORD_H_INCLUDED
#define HOGWILD_RECORD_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

typedef enum {
    RECORD_BYTES,   /*  a bin: N bytes at BYTES  */
    RECORD_NUMBERS, /*  an array of N numbers at ITEMS  */
    RECORD_PAIRS,   /*  a map of N pairs {index: number} at ITEMS  */
    RECORD_SPARSE,  /*  [indexes, values]: N uint32 at BYTES, N float32 at ITEMS  */
} record_form;

typedef struct {
    int labeled; /*  1: LABEL holds it; 0: the label was nil  */
    uint64_t label;
    record_form form;
    size_t n;
    const uint8_t *bytes;
    const uint8_t *items, *end; /*  the numbers or pairs, and the record's end  */
} record_head;

/*  1 and *HEAD when the LEN bytes at DATA start an array of two: a label
    that is nil or a non-negative integer (a positive fixint or a uint
    8 to 64), then a bin (8, 16 or 32), an array or a map (fix, 16 or
    32), or a fixarray of two bins that record_sparse_count takes.  0 for
    any other form or encoding.  */
int record_head_parse (const void *data, size_t len, record_head *head);

/*  The HEAD->n numbers of a RECORD_NUMBERS HEAD into VALUES (room for
    n): 1, or 0 when one is no fixint, int, uint or float, or the bytes
    end first.  */
int record_numbers (const record_head *head, float *values);

/*  The HEAD->n pairs of a RECORD_PAIRS HEAD into INDEXES and VALUES
    (room for n each): 1, or 0 when a key is no positive fixint or uint,
    a value no fixint, int, uint or float, or the bytes end first.  */
int record_pairs (const record_head *head, uint64_t *indexes, float *values);

/*  Whether bins of INDEXES_LEN and VALUES_LEN bytes are the [indexes,
    values] of a sparse record: as many little-endian uint32 indexes as
    float32 values.  1 and their count in *N, or 0.  Their numbers are
    read by model_sparse_le32 (model.h), or trained on where they lie
    (model_worker_add_sparse_le32).  */
int record_sparse_count (size_t indexes_len, size_t values_len, size_t *n);

#endif

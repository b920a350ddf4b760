/*  examples/hogwild/heldout.c - a held-out set, read once, scored often.  */
#include "heldout.h"

#include <errno.h>
#include <math.h>
#include <msgpack.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"

enum { S_BYTES, S_DENSE, S_SPARSE };

typedef struct {
    uint64_t label;
    size_t at;      //  where its features start in the pool of its kind
    size_t n;       //  how many
    size_t offset;  //  the byte of the file where the record starts
    int kind;
} s_example;

struct heldout {
    char *path;
    s_example *ex;
    size_t count, cap;
    uint8_t *bytes;  //  the features of bin records
    size_t nbytes, capbytes;
    float *values;      //  of array and map records
    uint64_t *indexes;  //  of map records (beside their values)
    size_t nvalues, capvalues;
};

static int s_fail (char *error, size_t errlen, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));

static int s_fail (char *error, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (error, errlen, fmt, ap);
    va_end (ap);
    return -1;
}

//  Room for N more values (and indexes)
static int s_room_values (heldout *self, size_t n)
{
    if (self->capvalues - self->nvalues >= n)
        return 0;
    size_t cap = self->capvalues ? self->capvalues : 4096;
    while (cap - self->nvalues < n)
        cap *= 2;
    float *values = realloc (self->values, cap * sizeof *values);
    if (values)
        self->values = values;
    uint64_t *indexes = values ? realloc (self->indexes, cap * sizeof *indexes) : NULL;
    if (indexes)
        self->indexes = indexes;
    if (!values || !indexes)
        return -1;
    self->capvalues = cap;
    return 0;
}

static int s_room_bytes (heldout *self, size_t n)
{
    if (self->capbytes - self->nbytes >= n)
        return 0;
    size_t cap = self->capbytes ? self->capbytes : 65536;
    while (cap - self->nbytes < n)
        cap *= 2;
    uint8_t *bytes = realloc (self->bytes, cap);
    if (!bytes)
        return -1;
    self->bytes = bytes;
    self->capbytes = cap;
    return 0;
}

static int s_number (const msgpack_object *o, float *v)
{
    switch (o->type) {
    case MSGPACK_OBJECT_POSITIVE_INTEGER: *v = (float) o->via.u64; return 1;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: *v = (float) o->via.i64; return 1;
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: *v = (float) o->via.f64; return 1;
    default: return 0;
    }
}

//  Record REC (the K-th, at byte OFFSET) into SELF
static int s_take (heldout *self, const msgpack_object *rec, size_t k, size_t offset, char *error,
                   size_t errlen)
{
    const char *path = self->path;
    if (rec->type != MSGPACK_OBJECT_ARRAY || rec->via.array.size != 2)
        return s_fail (error, errlen, "validate='%s': record %zu (byte %zu) is not [label, features]", path,
                       k, offset);
    const msgpack_object *label = &rec->via.array.ptr[0], *f = &rec->via.array.ptr[1];
    if (label->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        return s_fail (error, errlen,
                       "validate='%s': record %zu (byte %zu): the label is not an integer from 0", path, k,
                       offset);
    if (self->count == self->cap) {
        size_t cap = self->cap ? self->cap * 2 : 1024;
        s_example *ex = realloc (self->ex, cap * sizeof *ex);
        if (!ex)
            return s_fail (error, errlen, "validate='%s': out of memory", path);
        self->ex = ex;
        self->cap = cap;
    }
    s_example *e = &self->ex[self->count];
    e->label = label->via.u64;
    e->offset = offset;
    float v;
    switch (f->type) {
    case MSGPACK_OBJECT_BIN:
        e->kind = S_BYTES;
        e->n = f->via.bin.size;
        e->at = self->nbytes;
        if (s_room_bytes (self, e->n))
            return s_fail (error, errlen, "validate='%s': out of memory", path);
        memcpy (self->bytes + self->nbytes, f->via.bin.ptr, e->n);
        self->nbytes += e->n;
        break;
    case MSGPACK_OBJECT_ARRAY:
        if (f->via.array.size == 2 && f->via.array.ptr[0].type == MSGPACK_OBJECT_BIN) {
            const msgpack_object *index = &f->via.array.ptr[0], *value = &f->via.array.ptr[1];
            if (value->type != MSGPACK_OBJECT_BIN
                || !record_sparse_count (index->via.bin.size, value->via.bin.size, &e->n))
                return s_fail (error, errlen,
                               "validate='%s': record %zu (byte %zu): features [indexes, values] must be two "
                               "bins of as many little-endian uint32 indexes as float32 values",
                               path, k, offset);
            e->kind = S_SPARSE;
            e->at = self->nvalues;
            if (s_room_values (self, e->n))
                return s_fail (error, errlen, "validate='%s': out of memory", path);
            if (e->n)
                model_sparse_le32 (index->via.bin.ptr, value->via.bin.ptr, e->n, self->indexes + e->at,
                                   self->values + e->at);
            self->nvalues += e->n;
            break;
        }
        //  fall through
    case MSGPACK_OBJECT_MAP: {
        int dense = f->type == MSGPACK_OBJECT_ARRAY;
        e->kind = dense ? S_DENSE : S_SPARSE;
        e->n = dense ? f->via.array.size : f->via.map.size;
        e->at = self->nvalues;
        if (s_room_values (self, e->n))
            return s_fail (error, errlen, "validate='%s': out of memory", path);
        for (size_t j = 0; j < e->n; j++) {
            const msgpack_object *x = dense ? &f->via.array.ptr[j] : &f->via.map.ptr[j].val;
            if (!dense && f->via.map.ptr[j].key.type != MSGPACK_OBJECT_POSITIVE_INTEGER)
                return s_fail (error, errlen, "validate='%s': record %zu (byte %zu): key %zu is not an index",
                               path, k, offset, j);
            if (!s_number (x, &v))
                return s_fail (error, errlen,
                               "validate='%s': record %zu (byte %zu): feature %zu is not a number", path, k,
                               offset, j);
            self->values[e->at + j] = v;
            if (!dense)
                self->indexes[e->at + j] = f->via.map.ptr[j].key.via.u64;
        }
        self->nvalues += e->n;
        break;
    }
    default:
        return s_fail (
            error, errlen,
            "validate='%s': record %zu (byte %zu): the features are not a bin, an array of numbers, "
            "a map {index: number} or [indexes, values]",
            path, k, offset);
    }
    self->count++;
    return 0;
}

int heldout_load (const char *path, heldout **out, char *error, size_t errlen)
{
    *out = NULL;
    FILE *f = fopen (path, "rb");
    if (!f)
        return s_fail (error, errlen, "validate='%s': %s", path, strerror (errno));
    char *data = NULL;
    size_t len = 0, cap = 0, got;
    do {
        if (cap - len < 65536) {
            char *more = realloc (data, cap = cap ? cap * 2 : 1 << 20);
            if (!more) {
                free (data);
                fclose (f);
                return s_fail (error, errlen, "validate='%s': out of memory", path);
            }
            data = more;
        }
        got = fread (data + len, 1, cap - len, f);
        len += got;
    } while (got > 0);
    int bad = ferror (f);
    fclose (f);
    if (bad) {
        free (data);
        return s_fail (error, errlen, "validate='%s': cannot read it", path);
    }
    heldout *self = calloc (1, sizeof *self);
    if (!self || !(self->path = strdup (path))) {
        free (self);
        free (data);
        return s_fail (error, errlen, "validate='%s': out of memory", path);
    }
    msgpack_unpacked rec;
    msgpack_unpacked_init (&rec);
    size_t off = 0, at = 0;
    int rc = 0;
    while (!rc && off < len) {
        at = off;
        msgpack_unpack_return r = msgpack_unpack_next (&rec, data, len, &off);
        if (r == MSGPACK_UNPACK_SUCCESS)
            rc = s_take (self, &rec.data, self->count + 1, at, error, errlen);
        else if (r == MSGPACK_UNPACK_CONTINUE)
            rc = s_fail (error, errlen,
                         "validate='%s': record %zu (byte %zu) is cut short: the file ends in it", path,
                         self->count + 1, at);
        else
            rc = s_fail (error, errlen, "validate='%s': record %zu (byte %zu) is not msgpack", path,
                         self->count + 1, at);
    }
    msgpack_unpacked_destroy (&rec);
    free (data);
    if (!rc && self->count == 0)
        rc = s_fail (error, errlen, "validate='%s': the file holds no record", path);
    if (rc)
        heldout_destroy (&self);
    *out = self;
    return rc;
}

void heldout_destroy (heldout **self_p)
{
    heldout *self = *self_p;
    if (!self)
        return;
    free (self->path);
    free (self->ex);
    free (self->bytes);
    free (self->values);
    free (self->indexes);
    free (self);
    *self_p = NULL;
}

int heldout_score (const heldout *self, model_blob *m, int scale_given, float scale, double *loss,
                   double *accuracy, char *error, size_t errlen)
{
    float local[64], *prob = m->classes <= 64 ? local : malloc (m->classes * sizeof *prob);
    if (!prob)
        return s_fail (error, errlen, "validate='%s': out of memory", self->path);
    double sum = 0;
    size_t right = 0;
    int rc = 0;
    for (size_t i = 0; i < self->count && !rc; i++) {
        const s_example *e = &self->ex[i];
        if (e->label >= m->classes) {
            rc = s_fail (error, errlen,
                         "validate='%s': record %zu (byte %zu): label %llu, but the model has %u classes",
                         self->path, i + 1, e->offset, (unsigned long long) e->label, m->classes);
            continue;
        }
        int p;
        if (e->kind == S_BYTES)
            p = model_predict_dense_u8 (m, self->bytes + e->at, e->n, scale_given ? scale : 1.0f / 255, prob);
        else if (e->kind == S_DENSE)
            p = model_predict_dense_f32 (m, self->values + e->at, e->n, scale_given ? scale : 1.0f, prob);
        else
            p = model_predict_sparse (m, self->indexes + e->at, self->values + e->at, e->n,
                                      scale_given ? scale : 1.0f, prob);
        if (p == MODEL_EDIM)
            rc = s_fail (error, errlen,
                         "validate='%s': record %zu (byte %zu): %zu features, but the model has %llu rows",
                         self->path, i + 1, e->offset, e->n, (unsigned long long) m->dim);
        else if (p < 0)
            rc = s_fail (error, errlen, "validate='%s': record %zu (byte %zu): %s", self->path, i + 1,
                         e->offset, model_strerror (p));
        else {
            //  A probability rounded to 0 would make the loss infinite
            sum -= log (fmax ((double) prob[e->label], 1e-30));
            right += (uint64_t) p == e->label;
        }
    }
    if (prob != local)
        free (prob);
    if (!rc) {
        *loss = sum / (double) self->count;
        *accuracy = (double) right / (double) self->count;
    }
    return rc;
}

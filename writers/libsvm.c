/*  writers/libsvm.c - [label, features] records as libsvm text, the
    format liblinear, libsvm and scikit-learn read: one line per record,
    `label index:value index:value ...`.

    The label is a number: an integer is written as its digits, a float as
    the shortest text that reads back as the same value (lib/decimal.h;
    a float32 as the first of %.6g to %.9g that reads back as the same
    float32).  The features are one of:

    - a bin: dense bytes, byte i as index i+1 with the value byte *
      scale=, zeros skipped;
    - an array of numbers: dense, element i as index i+1, zeros skipped;
    - a map {index: number}: sparse, keys positive integers (at most
      INT64_MAX, what the libsvm reader takes back), written in ascending
      order whatever the map's order; every entry is written, an explicit
      zero included, so that what the libsvm reader read is written back
      byte for byte;
    - [indexes, values], two bins of as many little-endian uint32 indices
      (positive) as float32 values: sparse, as the libsvm reader gives
      them with features=bins, written like a map (values as float32).

    Values are written like labels.  Nothing else is a record: not an
    array of two, a label or value that is no number or not finite, a bad
    or repeated key are errors naming the record.  The line of a bad
    record is not written; the records before it in its batch are.

    The file is shared by the writer's threads like the lines writer's
    (writers/filewriter.h), and so resumes the same way: truncated to the
    length the checkpoint committed.  */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/batch.h"
#include "lib/decimal.h"
#include "lib/jsontext.h"
#include "writers/filewriter.h"

//  The text of recent values, per thread: learning data repeats few
//  values (pixels, counts, one-hot ones), and printf with a read-back
//  check costs about a microsecond
#define S_CACHE_BITS 12

typedef struct {
    uint64_t bits;
    uint8_t len;     //  0: empty
    uint8_t single;  //  the text of a float32
    char text[WEIR__DECIMAL_MAX - 2];
} s_cached;

typedef struct {
    uint64_t index;
    const msgpack_object *value;
} s_pair;

typedef struct {
    weir__records decoder;
    s_pair *pairs;  //  a map's entries, to sort
    size_t cap;
    msgpack_object *floats;  //  the values of [indexes, values], as objects
    size_t floats_cap;
    s_cached *cache;
} s_thread;

//  The own state of the libsvm writer
typedef struct {
    s_thread *threads;
    unsigned count;
    //  The text of byte * scale for every byte of a bin (0 is skipped)
    char bytes[256][WEIR__DECIMAL_MAX];
    uint8_t bytes_len[256];
} s_libsvm;

static const weir_property_info s_props[] = {
    WEIR__FILEWRITER_PATH,
    WEIR__FILEWRITER_COMPRESS,
    WEIR__FILEWRITER_LEVEL,
    {"scale", "1", "multiply the bytes of bin features by this number (a decimal, or a fraction like 1/255)"},
    {NULL, NULL, NULL},
};

#define S_BAD 1

static void s_free (void *own)
{
    s_libsvm *self = own;
    for (unsigned t = 0; self->threads && t < self->count; t++) {
        weir__records_release (&self->threads[t].decoder);
        free (self->threads[t].pairs);
        free (self->threads[t].floats);
        free (self->threads[t].cache);
    }
    free (self->threads);
    free (self);
}

//  scale=X or scale=A/B; the value of byte b is b * A / B, so that 1/255
//  gives each b/255 correctly rounded, not b times a rounded 1/255.
static int s_scale (weir__props *props, double *num, double *den, weir__err *err)
{
    weir__prop *p = weir__props_find (props, "scale");
    *num = *den = 1;
    if (!p)
        return 0;
    const char *text = p->value, *slash = strchr (text, '/');
    size_t n = slash ? (size_t) (slash - text) : strlen (text);
    if (weir__decimal_parse (text, n, num)
        || (slash && weir__decimal_parse (slash + 1, strlen (slash + 1), den)))
        return weir__err_at (err, WEIR_EPROPERTY, p->value_offset,
                             "libsvm: property 'scale': '%s' is not a number or a fraction A/B", text);
    double one = *num / *den;
    if (!isfinite (one) || one == 0 || !isfinite (255 * *num / *den))
        return weir__err_at (err, WEIR_EPROPERTY, p->value_offset,
                             "libsvm: property 'scale': '%s' must be finite and not zero", text);
    return 0;
}

static int s_state_open (weir__props *props, unsigned threads, void **own, weir__err *err)
{
    double num, den;
    int rc = s_scale (props, &num, &den, err);
    if (rc)
        return rc;
    s_libsvm *self = calloc (1, sizeof *self);
    if (!self || !(self->threads = calloc (threads, sizeof *self->threads))) {
        if (self)
            s_free (self);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    self->count = threads;
    for (unsigned t = 0; t < threads; t++)
        if (weir__records_init (&self->threads[t].decoder)
            || !(self->threads[t].cache = calloc ((size_t) 1 << S_CACHE_BITS, sizeof (s_cached)))) {
            s_free (self);
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        }
    for (unsigned b = 1; b < 256; b++)
        self->bytes_len[b] = (uint8_t) weir__decimal_format (self->bytes[b], (double) b * num / den);
    *own = self;
    return 0;
}

static const char *s_kind (const msgpack_object *o)
{
    switch (o->type) {
    case MSGPACK_OBJECT_NIL: return "nil";
    case MSGPACK_OBJECT_BOOLEAN: return "a boolean";
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: return "an integer";
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: return "a float";
    case MSGPACK_OBJECT_STR: return "a string";
    case MSGPACK_OBJECT_BIN: return "a bin";
    case MSGPACK_OBJECT_ARRAY: return "an array";
    case MSGPACK_OBJECT_MAP: return "a map";
    case MSGPACK_OBJECT_EXT: return "an ext";
    }
    return "an unknown type";
}

//  Append the text of the number O: 0, S_BAD if it is no finite number,
//  -1 out of memory.
static int s_number (s_thread *t, weir__buf *b, const msgpack_object *o)
{
    if (weir__buf_reserve (b, WEIR__DECIMAL_MAX))
        return -1;
    char *out = b->data + b->len;
    switch (o->type) {
    case MSGPACK_OBJECT_POSITIVE_INTEGER: b->len += weir__decimal_format_uint (out, o->via.u64, 0); return 0;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER:
        //  The magnitude of INT64_MIN does not fit an int64
        b->len += weir__decimal_format_uint (out, (uint64_t) 0 - (uint64_t) o->via.i64, 1);
        return 0;
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: {
        double v = o->via.f64;
        if (!isfinite (v))
            return S_BAD;
        int single = o->type == MSGPACK_OBJECT_FLOAT32;
        uint64_t bits;
        memcpy (&bits, &v, sizeof bits);
        s_cached *c = &t->cache[(bits * UINT64_C (0x9e3779b97f4a7c15)) >> (64 - S_CACHE_BITS)];
        if (c->len && c->bits == bits && c->single == single) {
            memcpy (out, c->text, c->len);
            b->len += c->len;
            return 0;
        }
        size_t n = single ? weir__decimal_format_float (out, (float) v) : weir__decimal_format (out, v);
        if (n <= sizeof c->text) {
            c->bits = bits;
            c->single = (uint8_t) single;
            c->len = (uint8_t) n;
            memcpy (c->text, out, n);
        }
        b->len += n;
        return 0;
    }
    default: return S_BAD;
    }
}

static int s_is_zero (const msgpack_object *o)
{
    switch (o->type) {
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: return o->via.u64 == 0;
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: return o->via.f64 == 0;
    default: return 0;
    }
}

//  " INDEX:" before a value.
static int s_index (weir__buf *b, uint64_t index)
{
    if (weir__buf_reserve (b, 24))
        return -1;
    b->data[b->len++] = ' ';
    b->len += weir__decimal_format_uint (b->data + b->len, index, 0);
    b->data[b->len++] = ':';
    return 0;
}

static int s_bad (char *problem, size_t size, const char *fmt, ...) WEIR_PRINTF (3, 4);

static int s_bad (char *problem, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (problem, size, fmt, ap);
    va_end (ap);
    return S_BAD;
}

static int s_by_index (const void *a, const void *b)
{
    uint64_t x = ((const s_pair *) a)->index, y = ((const s_pair *) b)->index;
    return (x > y) - (x < y);
}

//  Room for N pairs in T
static int s_pairs_room (s_thread *t, size_t n)
{
    if (n <= t->cap)
        return 0;
    s_pair *pairs = realloc (t->pairs, n * sizeof *pairs);
    if (!pairs)
        return -1;
    t->pairs = pairs;
    t->cap = n;
    return 0;
}

//  The N pairs of T, in ascending order of index (SORTED: they are)
static int s_pairs_write (s_thread *t, weir__buf *b, size_t n, int sorted, char *problem, size_t size)
{
    //  Maps built from the libsvm reader, or in index order, are common
    if (!sorted)
        qsort (t->pairs, n, sizeof *t->pairs, s_by_index);
    for (size_t i = 0; i < n; i++) {
        if (i && t->pairs[i].index == t->pairs[i - 1].index)
            return s_bad (problem, size, "index %llu appears twice in the features",
                          (unsigned long long) t->pairs[i].index);
        int rc = s_index (b, t->pairs[i].index);
        if (!rc)
            rc = s_number (t, b, t->pairs[i].value);
        if (rc == S_BAD)
            return s_bad (problem, size, "the value of index %llu is %s, not a finite number",
                          (unsigned long long) t->pairs[i].index, s_kind (t->pairs[i].value));
        if (rc)
            return rc;
    }
    return 0;
}

//  Features [indexes, values] (O, an array of two whose first is a bin):
//  little-endian uint32 indices and float32 values, as the libsvm reader
//  gives them with features=bins
static int s_bins (s_thread *t, weir__buf *b, const msgpack_object *o, char *problem, size_t size)
{
    const msgpack_object *index = &o->via.array.ptr[0], *value = &o->via.array.ptr[1];
    if (value->type != MSGPACK_OBJECT_BIN)
        return s_bad (problem, size, "the features [indexes, values] are a bin and %s, not two bins",
                      s_kind (value));
    uint32_t len = index->via.bin.size;
    if (value->via.bin.size != len)
        return s_bad (problem, size,
                      "the features [indexes, values] have bins of %u and %u bytes, not as many uint32 "
                      "indices as float32 values",
                      (unsigned) len, (unsigned) value->via.bin.size);
    if (len % 4)
        return s_bad (problem, size,
                      "the features [indexes, values] have bins of %u bytes, not a whole number of 4-byte "
                      "indices and values",
                      (unsigned) len);
    size_t n = len / 4;
    if (s_pairs_room (t, n))
        return -1;
    if (n > t->floats_cap) {
        msgpack_object *floats = realloc (t->floats, n * sizeof *floats);
        if (!floats)
            return -1;
        t->floats = floats;
        t->floats_cap = n;
    }
    const unsigned char *x = (const unsigned char *) index->via.bin.ptr;
    const unsigned char *v = (const unsigned char *) value->via.bin.ptr;
    int sorted = 1;
    for (size_t i = 0; i < n; i++, x += 4, v += 4) {
        uint32_t at = (uint32_t) x[0] | (uint32_t) x[1] << 8 | (uint32_t) x[2] << 16 | (uint32_t) x[3] << 24;
        uint32_t bits =
            (uint32_t) v[0] | (uint32_t) v[1] << 8 | (uint32_t) v[2] << 16 | (uint32_t) v[3] << 24;
        if (at == 0)
            return s_bad (problem, size,
                          "index 0 (element %zu of the features' indexes) is not a positive index", i + 1);
        float f;
        memcpy (&f, &bits, sizeof f);
        t->floats[i].type = MSGPACK_OBJECT_FLOAT32;
        t->floats[i].via.f64 = f;
        t->pairs[i].index = at;
        t->pairs[i].value = &t->floats[i];
        if (i && at <= t->pairs[i - 1].index)
            sorted = 0;
    }
    return s_pairs_write (t, b, n, sorted, problem, size);
}

static int s_map (s_thread *t, weir__buf *b, const msgpack_object *o, char *problem, size_t size)
{
    uint32_t n = o->via.map.size;
    if (s_pairs_room (t, n))
        return -1;
    int sorted = 1;
    for (uint32_t i = 0; i < n; i++) {
        const msgpack_object_kv *kv = &o->via.map.ptr[i];
        if (kv->key.type != MSGPACK_OBJECT_POSITIVE_INTEGER || kv->key.via.u64 == 0
            || kv->key.via.u64 > INT64_MAX) {
            weir__buf key;
            weir__buf_init (&key);
            int rc = weir__jsontext_append (&key, &kv->key) || weir__buf_putc (&key, '\0');
            if (!rc)
                s_bad (problem, size,
                       "the key %.40s of the features is not an index (a positive integer up to "
                       "9223372036854775807)",
                       key.data);
            weir__buf_release (&key);
            return rc ? -1 : S_BAD;
        }
        t->pairs[i].index = kv->key.via.u64;
        t->pairs[i].value = &kv->val;
        if (i && t->pairs[i].index <= t->pairs[i - 1].index)
            sorted = 0;
    }
    return s_pairs_write (t, b, n, sorted, problem, size);
}

//  Append the line of record O: 0, S_BAD with PROBLEM filled, or -1.
static int s_line (s_libsvm *self, s_thread *t, weir__buf *b, const msgpack_object *o, char *problem,
                   size_t size)
{
    if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size != 2) {
        if (o->type == MSGPACK_OBJECT_ARRAY)
            return s_bad (problem, size, "a record must be [label, features], not an array of %u",
                          (unsigned) o->via.array.size);
        return s_bad (problem, size, "a record must be [label, features], not %s", s_kind (o));
    }
    const msgpack_object *label = &o->via.array.ptr[0], *features = &o->via.array.ptr[1];
    int rc = s_number (t, b, label);
    if (rc == S_BAD)
        return s_bad (problem, size, "the label is %s, not a finite number", s_kind (label));
    if (rc)
        return rc;
    switch (features->type) {
    case MSGPACK_OBJECT_BIN: {
        const unsigned char *p = (const unsigned char *) features->via.bin.ptr;
        for (uint32_t i = 0; i < features->via.bin.size; i++) {
            if (p[i] == 0)
                continue;
            if (s_index (b, (uint64_t) i + 1)
                || weir__buf_append (b, self->bytes[p[i]], self->bytes_len[p[i]]))
                return -1;
        }
        break;
    }
    case MSGPACK_OBJECT_ARRAY:
        if (features->via.array.size == 2 && features->via.array.ptr[0].type == MSGPACK_OBJECT_BIN) {
            if ((rc = s_bins (t, b, features, problem, size)))
                return rc;
            break;
        }
        for (uint32_t i = 0; i < features->via.array.size; i++) {
            const msgpack_object *v = &features->via.array.ptr[i];
            if (s_is_zero (v))
                continue;
            rc = s_index (b, (uint64_t) i + 1);
            if (!rc)
                rc = s_number (t, b, v);
            if (rc == S_BAD)
                return s_bad (problem, size, "element %u of the features is %s, not a finite number", i + 1,
                              s_kind (v));
            if (rc)
                return rc;
        }
        break;
    case MSGPACK_OBJECT_MAP:
        if ((rc = s_map (t, b, features, problem, size)))
            return rc;
        break;
    default:
        return s_bad (problem, size, "the features are %s, not a bin, an array or a map", s_kind (features));
    }
    return weir__buf_putc (b, '\n');
}

static int s_write (void *own, weir__outfile *file, unsigned thread, const char *payload, size_t len,
                    uint32_t count, weir__err *err)
{
    s_libsvm *self = own;
    s_thread *t = &self->threads[thread];
    weir__buf *b = weir__outfile_buf (file, thread);
    weir__records_reset (&t->decoder, payload, len);
    msgpack_object o;
    int more;
    uint32_t n = 0;
    while ((more = weir__records_next (&t->decoder, &o)) == 1) {
        size_t mark = b->len;
        char problem[256];
        int rc = s_line (self, t, b, &o, problem, sizeof problem);
        n++;
        if (rc) {
            //  A bad record leaves no half line behind
            b->len = mark;
            if (rc < 0)
                return weir__err_set (err, WEIR_ENOMEM, "libsvm: out of memory");
            //  The record as text, to recognise it
            weir__buf text;
            weir__buf_init (&text);
            if (weir__jsontext_append (&text, &o) || weir__buf_putc (&text, '\0'))
                weir__buf_release (&text);
            weir__err_set (err, WEIR_ECORRUPT, "libsvm: '%s': record %u of a batch of %u (%.60s%s): %s",
                           file->path, n, count, text.data ? text.data : "?",
                           text.data && strlen (text.data) > 60 ? "..." : "", problem);
            weir__buf_release (&text);
            return WEIR_ECORRUPT;
        }
    }
    if (more < 0)
        return weir__err_set (err, WEIR_ECORRUPT, "libsvm: malformed record in a batch");
    return 0;
}

static const weir__filewriter_class s_file = {
    .writer = &weir__writer_libsvm,
    .open = s_state_open,
    .write = s_write,
    .close = s_free,
};

static int s_open (weir__props *props, unsigned threads, const char *resume, unsigned flags, void **state,
                   weir__err *err)
{
    return weir__filewriter_open (&s_file, props, threads, resume, flags, state, err);
}

const weir__writer_class weir__writer_libsvm = WEIR__FILEWRITER_WRITER (
    "libsvm",
    "[label, features] records as libsvm text: features a bin or an array (dense), a map {index: value} or "
    "[indexes, values] (sparse)",
    s_props, s_open);

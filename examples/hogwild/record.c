/*  examples/hogwild/record.c - a training record's msgpack bytes read
    without decoding them into objects.  */
#include "record.h"

#include <string.h>

//  N bytes big-endian
static inline uint64_t s_be (const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

static inline uint64_t s_be64 (const uint8_t *p)
{
    //  Written out, compilers make it one load and a byte swap; the loop
    //  of s_be stays a loop of bytes
    return (uint64_t) p[0] << 56 | (uint64_t) p[1] << 48 | (uint64_t) p[2] << 40 | (uint64_t) p[3] << 32
           | (uint64_t) p[4] << 24 | (uint64_t) p[5] << 16 | (uint64_t) p[6] << 8 | (uint64_t) p[7];
}

//  The float of the float64 and of the float32 whose type byte is at Q
static inline float s_float64 (const uint8_t *q)
{
    uint64_t u = s_be64 (q + 1);
    double d;
    memcpy (&d, &u, sizeof d);
    return (float) d;
}

static inline float s_float32 (const uint8_t *q)
{
    uint32_t u = (uint32_t) q[1] << 24 | (uint32_t) q[2] << 16 | (uint32_t) q[3] << 8 | q[4];
    float f;
    memcpy (&f, &u, sizeof f);
    return f;
}

//  A non-negative integer at *P (before END): 1, its value in *V and *P
//  past it; 0 when it is encoded otherwise or cut short
static inline int s_uint (const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    const uint8_t *q = *p;
    if (q >= end)
        return 0;
    if (*q < 0x80) {
        *v = *q;
        *p = q + 1;
        return 1;
    }
    if (*q < 0xcc || *q > 0xcf)
        return 0;
    int n = 1 << (*q - 0xcc);
    if (end - q < 1 + n)
        return 0;
    *v = s_be (q + 1, n);
    *p = q + 1 + n;
    return 1;
}

//  A number at *P as a float, the way the objects give it
static inline int s_number (const uint8_t **p, const uint8_t *end, float *v)
{
    const uint8_t *q = *p;
    if (q >= end)
        return 0;
    uint8_t c = *q;
    if (c == 0xcb && end - q >= 9) {
        *v = s_float64 (q);
        *p = q + 9;
        return 1;
    }
    if (c == 0xca && end - q >= 5) {
        *v = s_float32 (q);
        *p = q + 5;
        return 1;
    }
    if (c >= 0xe0) {  //  negative fixint
        *v = (float) (double) (int8_t) c;
        *p = q + 1;
        return 1;
    }
    if (c >= 0xd0 && c <= 0xd3) {
        int n = 1 << (c - 0xd0);
        if (end - q < 1 + n)
            return 0;
        uint64_t u = s_be (q + 1, n);
        //  Sign-extend from n bytes
        int64_t i =
            n == 8 ? (int64_t) u : (int64_t) (u ^ (1ull << (8 * n - 1))) - (int64_t) (1ull << (8 * n - 1));
        *v = (float) (double) i;
        *p = q + 1 + n;
        return 1;
    }
    uint64_t u;
    if (!s_uint (p, end, &u))
        return 0;
    *v = (float) (double) u;
    return 1;
}

//  The bin at *P (before END): 1, its bytes in *AT and *LEN, *P past it;
//  0 when it is no bin or cut short
static int s_bin (const uint8_t **p, const uint8_t *end, const uint8_t **at, size_t *len)
{
    const uint8_t *q = *p;
    if (q >= end || *q < 0xc4 || *q > 0xc6)
        return 0;
    int n = 1 << (*q - 0xc4);
    if (end - q < 1 + n)
        return 0;
    *len = (size_t) s_be (q + 1, n);
    q += 1 + n;
    if ((size_t) (end - q) < *len)
        return 0;
    *at = q;
    *p = q + *len;
    return 1;
}

//  The two bins [indexes, values] at P (before END) into HEAD
static int s_sparse_head (const uint8_t *p, const uint8_t *end, record_head *head)
{
    const uint8_t *index_bytes, *value_bytes;
    size_t index_len, value_len;
    if (!s_bin (&p, end, &index_bytes, &index_len) || !s_bin (&p, end, &value_bytes, &value_len)
        || !record_sparse_count (index_len, value_len, &head->n))
        return 0;
    head->form = RECORD_SPARSE;
    head->bytes = index_bytes;
    head->items = value_bytes;
    head->end = end;
    return 1;
}

int record_head_parse (const void *data, size_t len, record_head *head)
{
    const uint8_t *p = data, *end = p + len;
    memset (head, 0, sizeof *head);
    if (len < 3 || *p++ != 0x92)
        return 0;
    if (*p == 0xc0) {
        p++;
        head->labeled = 0;
    }
    else if (s_uint (&p, end, &head->label))
        head->labeled = 1;
    else
        return 0;
    if (p >= end)
        return 0;
    uint8_t c = *p;
    if (c >= 0xc4 && c <= 0xc6) {
        if (!s_bin (&p, end, &head->bytes, &head->n))
            return 0;
        head->form = RECORD_BYTES;
        return 1;
    }
    if (c == 0x92 && end - p > 1 && p[1] >= 0xc4 && p[1] <= 0xc6)
        return s_sparse_head (p + 1, end, head);
    size_t wide = 0;  //  bytes of a 16 or 32 count
    if (c >= 0x80 && c <= 0x9f)
        head->n = c & 0x0f;
    else if (c == 0xdc || c == 0xde)
        wide = 2;
    else if (c == 0xdd || c == 0xdf)
        wide = 4;
    else
        return 0;
    head->form = (c >= 0x80 && c <= 0x8f) || c == 0xde || c == 0xdf ? RECORD_PAIRS : RECORD_NUMBERS;
    if ((size_t) (end - p) < 1 + wide)
        return 0;
    if (wide)
        head->n = (size_t) s_be (p + 1, (int) wide);
    p += 1 + wide;
    //  Every number takes a byte at least, every pair two: a count beyond
    //  that is a lie
    if (head->n > (size_t) (end - p) / (head->form == RECORD_PAIRS ? 2 : 1))
        return 0;
    head->items = p;
    head->end = end;
    return 1;
}

int record_numbers (const record_head *head, float *values)
{
    const uint8_t *p = head->items, *end = head->end;
    size_t n = head->n;
    for (size_t i = 0; i < n; i++)
        if (!s_number (&p, end, &values[i]))
            return 0;
    return 1;
}

//  A pair of the common shapes at *P, with 12 bytes left at least: an
//  index (a fixint, or a uint 8 or 16), then a float64 (as the libsvm
//  reader writes), a float32 or a count (a fixint or a uint8).  1 and *P
//  past it, or 0.  A branch for each width, each adding a constant, not a
//  length computed from the type byte: the branches are predicted, so the
//  next pair's address does not wait for this pair's bytes, and the loop
//  runs at the speed of its loads instead of their latency.
static inline int s_pair (const uint8_t **p, uint64_t *index, float *value)
{
    const uint8_t *q = *p;
    if (q[0] < 0x80) {
        *index = q[0];
        q += 1;
    }
    else if (q[0] == 0xcd) {
        *index = (uint64_t) q[1] << 8 | q[2];
        q += 3;
    }
    else if (q[0] == 0xcc) {
        *index = q[1];
        q += 2;
    }
    else
        return 0;
    if (q[0] == 0xcb) {
        *value = s_float64 (q);
        q += 9;
    }
    else if (q[0] == 0xca) {
        *value = s_float32 (q);
        q += 5;
    }
    else if (q[0] < 0x80) {
        *value = (float) q[0];
        q += 1;
    }
    else if (q[0] == 0xcc) {
        *value = (float) q[1];
        q += 2;
    }
    else
        return 0;
    *p = q;
    return 1;
}

int record_pairs (const record_head *head, uint64_t *indexes, float *values)
{
    const uint8_t *p = head->items, *end = head->end;
    size_t n = head->n;
    for (size_t i = 0; i < n; i++)
        if (!((end - p >= 12 && s_pair (&p, &indexes[i], &values[i]))
              || (s_uint (&p, end, &indexes[i]) && s_number (&p, end, &values[i]))))
            return 0;
    return 1;
}

int record_sparse_count (size_t indexes_len, size_t values_len, size_t *n)
{
    if (indexes_len % 4 || indexes_len != values_len)
        return 0;
    *n = indexes_len / 4;
    return 1;
}

/*  lib/pack.h - msgpack encoding straight into a batch.

    msgpack-c's packer hands every value to a write callback in pieces of 1
    to 9 bytes staged on the stack; the call per piece and the reload of
    bytes just stored cost more than the encoding itself.  These functions
    write the bytes in place (the format is the msgpack specification's;
    the choice of encodings is the same as msgpack-c's, so both produce the
    same bytes).  Each returns 0, or -1 when the batch cannot grow (and
    sets its oom flag).  */
#ifndef WEIR_PACK_H_INCLUDED
#define WEIR_PACK_H_INCLUDED

#include <msgpack.h>
#include <stdint.h>

#include "lib/batch.h"

static inline char *weir__pack_room (weir__batch *b, size_t n)
{
    if (b->cap - b->len < n && weir__batch_grow (b, n))
        return NULL;
    return b->data + b->len;
}

static inline void weir__pack_be16 (char *p, uint16_t v)
{
    p[0] = (char) (v >> 8);
    p[1] = (char) v;
}

static inline void weir__pack_be32 (char *p, uint32_t v)
{
    v = __builtin_bswap32 (v);
    memcpy (p, &v, 4);
}

static inline void weir__pack_be64 (char *p, uint64_t v)
{
    v = __builtin_bswap64 (v);
    memcpy (p, &v, 8);
}

static inline int weir__pack_uint64 (weir__batch *b, uint64_t v)
{
    char *p = weir__pack_room (b, 9);
    if (!p)
        return -1;
    if (v < 128) {
        p[0] = (char) v;
        b->len += 1;
    }
    else if (v < 256) {
        p[0] = (char) 0xcc;
        p[1] = (char) v;
        b->len += 2;
    }
    else if (v < 65536) {
        p[0] = (char) 0xcd;
        weir__pack_be16 (p + 1, (uint16_t) v);
        b->len += 3;
    }
    else if (v < 4294967296ull) {
        p[0] = (char) 0xce;
        weir__pack_be32 (p + 1, (uint32_t) v);
        b->len += 5;
    }
    else {
        p[0] = (char) 0xcf;
        weir__pack_be64 (p + 1, v);
        b->len += 9;
    }
    return 0;
}

static inline int weir__pack_int64 (weir__batch *b, int64_t v)
{
    if (v >= 0)
        return weir__pack_uint64 (b, (uint64_t) v);
    char *p = weir__pack_room (b, 9);
    if (!p)
        return -1;
    if (v >= -32) {
        p[0] = (char) v;
        b->len += 1;
    }
    else if (v >= -128) {
        p[0] = (char) 0xd0;
        p[1] = (char) v;
        b->len += 2;
    }
    else if (v >= -32768) {
        p[0] = (char) 0xd1;
        weir__pack_be16 (p + 1, (uint16_t) v);
        b->len += 3;
    }
    else if (v >= INT32_MIN) {
        p[0] = (char) 0xd2;
        weir__pack_be32 (p + 1, (uint32_t) v);
        b->len += 5;
    }
    else {
        p[0] = (char) 0xd3;
        weir__pack_be64 (p + 1, (uint64_t) v);
        b->len += 9;
    }
    return 0;
}

static inline int weir__pack_double (weir__batch *b, double v)
{
    char *p = weir__pack_room (b, 9);
    if (!p)
        return -1;
    uint64_t bits;
    memcpy (&bits, &v, 8);
    p[0] = (char) 0xcb;
    weir__pack_be64 (p + 1, bits);
    b->len += 9;
    return 0;
}

//  An array or map header: FIX is 0x90 or 0x80, WIDE 0xdc or 0xde.
static inline int weir__pack_container (weir__batch *b, uint32_t n, unsigned fix, unsigned wide)
{
    char *p = weir__pack_room (b, 5);
    if (!p)
        return -1;
    if (n < 16) {
        p[0] = (char) (fix | n);
        b->len += 1;
    }
    else if (n < 65536) {
        p[0] = (char) wide;
        weir__pack_be16 (p + 1, (uint16_t) n);
        b->len += 3;
    }
    else {
        p[0] = (char) (wide + 1);
        weir__pack_be32 (p + 1, n);
        b->len += 5;
    }
    return 0;
}

/*  The header of an array of N elements, or of a map of N pairs; the
    elements (keys and values alternating) follow.  */
static inline int weir__pack_array (weir__batch *b, uint32_t n)
{
    return weir__pack_container (b, n, 0x90, 0xdc);
}

static inline int weir__pack_map (weir__batch *b, uint32_t n)
{
    return weir__pack_container (b, n, 0x80, 0xde);
}

/*  The shortest header of a str (or, with BIN set, a bin) of N bytes,
    into P (room for 5): its length.  */
static inline size_t weir__pack_bytes_header (char *p, uint32_t n, int bin)
{
    if (!bin && n < 32) {
        p[0] = (char) (0xa0 | n);
        return 1;
    }
    if (n < 256) {
        p[0] = (char) (bin ? 0xc4 : 0xd9);
        p[1] = (char) n;
        return 2;
    }
    if (n < 65536) {
        p[0] = (char) (bin ? 0xc5 : 0xda);
        weir__pack_be16 (p + 1, (uint16_t) n);
        return 3;
    }
    p[0] = (char) (bin ? 0xc6 : 0xdb);
    weir__pack_be32 (p + 1, n);
    return 5;
}

/*  A str (or, with BIN set, a bin) header for N bytes, then the bytes.  */
int weir__pack_bytes (weir__batch *b, const char *data, size_t n, int bin);

static inline int weir__pack_str (weir__batch *b, const char *data, size_t n)
{
    if (n < 32) {
        char *p = weir__pack_room (b, 1 + n);
        if (!p)
            return -1;
        p[0] = (char) (0xa0 | n);
        if (n)
            memcpy (p + 1, data, n);
        b->len += 1 + n;
        return 0;
    }
    return weir__pack_bytes (b, data, n, 0);
}

/*  Any object, recursively (objects come from validated records, so their
    depth is bounded).  */
int weir__pack_object (weir__batch *b, const msgpack_object *o);

#endif

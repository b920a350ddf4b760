/*  lib/unpack.c - one msgpack object decoded into msgpack_object form.  */
#include "config.h"
#include "lib/unpack.h"

#include <stdint.h>
#include <string.h>

#include "lib/scan.h"

typedef struct {
    const unsigned char *p, *end;
    msgpack_zone *zone;
    int rc;  //  why the descent stopped: 0, or a msgpack_unpack_return
} s_state;

static inline uint64_t s_be (const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

//  Eight bytes big-endian, written out so that compilers make it one load
//  and a byte swap (the loop above stays a loop of bytes)
static inline uint64_t s_be64 (const unsigned char *p)
{
    return (uint64_t) p[0] << 56 | (uint64_t) p[1] << 48 | (uint64_t) p[2] << 40 | (uint64_t) p[3] << 32
           | (uint64_t) p[4] << 24 | (uint64_t) p[5] << 16 | (uint64_t) p[6] << 8 | (uint64_t) p[7];
}

static int s_fail (s_state *st, int rc)
{
    st->rc = rc;
    return -1;
}

//  N bytes at the cursor, or the bytes end inside the object
static inline int s_need (const s_state *st, size_t n)
{
    return (size_t) (st->end - st->p) >= n;
}

//  A str, bin or ext payload of N bytes at the cursor, pointed at
static inline int s_bytes (s_state *st, uint64_t n, const char **ptr)
{
    if (!s_need (st, n))
        return s_fail (st, MSGPACK_UNPACK_CONTINUE);
    *ptr = (const char *) st->p;
    st->p += n;
    return 0;
}

//  A str of N bytes: msgpack-c points an empty one nowhere (a bin or an
//  ext of none at where its bytes would be), and so does this
static inline int s_str (s_state *st, msgpack_object *o, uint64_t n)
{
    o->type = MSGPACK_OBJECT_STR;
    o->via.str.size = (uint32_t) n;
    if (s_bytes (st, n, &o->via.str.ptr))
        return -1;
    if (!n)
        o->via.str.ptr = NULL;
    return 0;
}

static int s_object (s_state *st, msgpack_object *o, int depth);

/*  The pair of a sparse example, {index: value} with an index below 65536
    and a float64 value, in one step: 1 when it was one, 0 (nothing read)
    for any other pair, which takes the general way.  A map of a few
    hundred such pairs is what the libsvm reader gives, and the general
    way's dispatch on each format byte was most of its decoding.  */
static inline int s_pair (s_state *st, msgpack_object_kv *kv)
{
    const unsigned char *p = st->p;
    if (st->end - p < 12)
        return 0;
    uint64_t index;
    size_t k;
    if (p[0] <= 0x7f) {
        index = p[0];
        k = 1;
    }
    else if (p[0] == 0xcd) {
        index = (uint64_t) p[1] << 8 | p[2];
        k = 3;
    }
    else if (p[0] == 0xcc) {
        index = p[1];
        k = 2;
    }
    else
        return 0;
    if (p[k] != 0xcb)
        return 0;
    uint64_t bits = s_be64 (p + k + 1);
    kv->key.type = MSGPACK_OBJECT_POSITIVE_INTEGER;
    kv->key.via.u64 = index;
    kv->val.type = MSGPACK_OBJECT_FLOAT64;
    memcpy (&kv->val.via.f64, &bits, 8);
    st->p = p + k + 9;
    return 1;
}

//  The N elements of an array (PAIRS: the pairs of a map), in one
//  allocation of the zone
static int s_container (s_state *st, msgpack_object *o, uint64_t n, int pairs, int depth)
{
    //  Nested as deep as msgpack-c allows, even empty
    if (depth == WEIR__SCAN_MAX_DEPTH)
        return s_fail (st, MSGPACK_UNPACK_PARSE_ERROR);
    //  Every element takes a byte at least: a count past the bytes is
    //  refused before the zone is asked for room for it
    uint64_t elements = pairs ? 2 * n : n;
    if (elements > (uint64_t) (st->end - st->p))
        return s_fail (st, n > UINT32_MAX ? MSGPACK_UNPACK_PARSE_ERROR : MSGPACK_UNPACK_CONTINUE);
    if (pairs) {
        o->type = MSGPACK_OBJECT_MAP;
        o->via.map.size = (uint32_t) n;
        o->via.map.ptr = NULL;
        if (!n)
            return 0;
        msgpack_object_kv *kv = msgpack_zone_malloc (st->zone, (size_t) n * sizeof *kv);
        if (!kv)
            return s_fail (st, MSGPACK_UNPACK_NOMEM_ERROR);
        o->via.map.ptr = kv;
        for (uint64_t i = 0; i < n; i++)
            if (!s_pair (st, &kv[i])
                && (s_object (st, &kv[i].key, depth + 1) || s_object (st, &kv[i].val, depth + 1)))
                return -1;
        return 0;
    }
    o->type = MSGPACK_OBJECT_ARRAY;
    o->via.array.size = (uint32_t) n;
    o->via.array.ptr = NULL;
    if (!n)
        return 0;
    msgpack_object *items = msgpack_zone_malloc (st->zone, (size_t) n * sizeof *items);
    if (!items)
        return s_fail (st, MSGPACK_UNPACK_NOMEM_ERROR);
    o->via.array.ptr = items;
    for (uint64_t i = 0; i < n; i++)
        if (s_object (st, &items[i], depth + 1))
            return -1;
    return 0;
}

//  A signed integer of a format that may hold either sign
static inline void s_signed (msgpack_object *o, int64_t v)
{
    if (v < 0) {
        o->type = MSGPACK_OBJECT_NEGATIVE_INTEGER;
        o->via.i64 = v;
    }
    else {
        o->type = MSGPACK_OBJECT_POSITIVE_INTEGER;
        o->via.u64 = (uint64_t) v;
    }
}

static int s_ext (s_state *st, msgpack_object *o, uint64_t n)
{
    if (!s_need (st, 1))
        return s_fail (st, MSGPACK_UNPACK_CONTINUE);
    o->type = MSGPACK_OBJECT_EXT;
    o->via.ext.type = (int8_t) *st->p++;
    o->via.ext.size = (uint32_t) n;
    return s_bytes (st, n, &o->via.ext.ptr);
}

static int s_object (s_state *st, msgpack_object *o, int depth)
{
    if (!s_need (st, 1))
        return s_fail (st, MSGPACK_UNPACK_CONTINUE);
    unsigned c = *st->p++;
    //  The formats of sparse examples and most records first
    if (c <= 0x7f) {
        o->type = MSGPACK_OBJECT_POSITIVE_INTEGER;
        o->via.u64 = c;
        return 0;
    }
    if (c >= 0xe0) {
        o->type = MSGPACK_OBJECT_NEGATIVE_INTEGER;
        o->via.i64 = (int8_t) c;
        return 0;
    }
    if (c >= 0xa0 && c <= 0xbf)
        return s_str (st, o, c & 0x1f);
    if (c == 0xcb) {
        if (!s_need (st, 8))
            return s_fail (st, MSGPACK_UNPACK_CONTINUE);
        uint64_t bits = s_be64 (st->p);
        st->p += 8;
        o->type = MSGPACK_OBJECT_FLOAT64;
        memcpy (&o->via.f64, &bits, 8);
        return 0;
    }
    if (c <= 0x8f)
        return s_container (st, o, c & 0x0f, 1, depth);
    if (c <= 0x9f)
        return s_container (st, o, c & 0x0f, 0, depth);
    //  Formats with a length or a value of N bytes after the type byte
    static const unsigned char widths[32] = {
        //  c0 .. c9: nil, (never used), false, true, bin8/16/32, ext8/16/32
        0, 0, 0, 0, 1, 2, 4, 1, 2, 4,
        //  ca .. d3: float32, float64, uint8/16/32/64, int8/16/32/64
        4, 8, 1, 2, 4, 8, 1, 2, 4, 8,
        //  d4 .. d8: fixext 1/2/4/8/16 (their type byte is read apart)
        0, 0, 0, 0, 0,
        //  d9 .. df: str8/16/32, array16/32, map16/32
        1, 2, 4, 2, 4, 2, 4};
    int w = widths[c - 0xc0];
    if (!s_need (st, (size_t) w))
        return s_fail (st, MSGPACK_UNPACK_CONTINUE);
    uint64_t v = s_be (st->p, w);
    st->p += w;
    switch (c) {
    case 0xc0: o->type = MSGPACK_OBJECT_NIL; return 0;
    case 0xc2:
    case 0xc3:
        o->type = MSGPACK_OBJECT_BOOLEAN;
        o->via.boolean = c == 0xc3;
        return 0;
    case 0xc4:
    case 0xc5:
    case 0xc6:
        o->type = MSGPACK_OBJECT_BIN;
        o->via.bin.size = (uint32_t) v;
        return s_bytes (st, v, &o->via.bin.ptr);
    case 0xc7:
    case 0xc8:
    case 0xc9: return s_ext (st, o, v);
    case 0xca: {
        uint32_t bits = (uint32_t) v;
        float f;
        memcpy (&f, &bits, 4);
        o->type = MSGPACK_OBJECT_FLOAT32;
        o->via.f64 = f;
        return 0;
    }
    case 0xcc:
    case 0xcd:
    case 0xce:
    case 0xcf:
        o->type = MSGPACK_OBJECT_POSITIVE_INTEGER;
        o->via.u64 = v;
        return 0;
    case 0xd0: s_signed (o, (int8_t) v); return 0;
    case 0xd1: s_signed (o, (int16_t) v); return 0;
    case 0xd2: s_signed (o, (int32_t) v); return 0;
    case 0xd3: s_signed (o, (int64_t) v); return 0;
    case 0xd4:
    case 0xd5:
    case 0xd6:
    case 0xd7:
    case 0xd8: return s_ext (st, o, (uint64_t) 1 << (c - 0xd4));
    case 0xd9:
    case 0xda:
    case 0xdb: return s_str (st, o, v);
    case 0xdc:
    case 0xdd: return s_container (st, o, v, 0, depth);
    case 0xde:
    case 0xdf: return s_container (st, o, v, 1, depth);
    default: return s_fail (st, MSGPACK_UNPACK_PARSE_ERROR);  //  0xc1
    }
}

msgpack_unpack_return weir__unpack (const char *data, size_t len, size_t *off, msgpack_zone *zone,
                                    msgpack_object *obj)
{
    if (*off > len)
        return MSGPACK_UNPACK_PARSE_ERROR;
    s_state st = {(const unsigned char *) data + *off, (const unsigned char *) data + len, zone, 0};
    if (s_object (&st, obj, 0))
        return (msgpack_unpack_return) st.rc;
    *off = (size_t) ((const char *) st.p - data);
    return *off == len ? MSGPACK_UNPACK_SUCCESS : MSGPACK_UNPACK_EXTRA_BYTES;
}

/*  lib/batch.c - building and decoding batches of msgpack records.  */
#include "config.h"
#include "lib/batch.h"

#include <stdlib.h>
#include <weir/weir.h>

#include "lib/scan.h"
#include "lib/unpack.h"

//  msgpack's packer writes every value in pieces of 1 to 9 bytes.  A
//  memcpy of constant size compiles to one move; a call to the library
//  memcpy for each piece was a fifth of the cost of repacking a record.
static int s_packer_write (void *data, const char *buf, size_t len)
{
    weir__batch *b = data;
    if (b->cap - b->len < len)
        return weir__batch_append (b, buf, len);
    char *to = b->data + b->len;
    switch (len) {
    case 1: to[0] = buf[0]; break;
    case 2: memcpy (to, buf, 2); break;
    case 3: memcpy (to, buf, 3); break;
    case 5: memcpy (to, buf, 5); break;
    case 9: memcpy (to, buf, 9); break;
    default: memcpy (to, buf, len);
    }
    b->len += len;
    return 0;
}

int weir__batch_init (weir__batch *b, size_t cap)
{
    memset (b, 0, sizeof *b);
    if (cap < WEIR__BATCH_HEADER + 64)
        cap = WEIR__BATCH_HEADER + 64;
    b->data = malloc (cap);
    if (!b->data)
        return WEIR_ENOMEM;
    b->cap = cap;
    b->len = WEIR__BATCH_HEADER;
    b->kind = WEIR__BATCH_DATA;
    msgpack_packer_init (&b->pk, b, s_packer_write);
    return 0;
}

void weir__batch_release (weir__batch *b)
{
    free (b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

int weir__batch_grow (weir__batch *b, size_t n)
{
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n) {
        if (cap > SIZE_MAX / 2) {
            b->oom = 1;
            return -1;
        }
        cap *= 2;
    }
    char *data = realloc (b->data, cap);
    if (!data) {
        b->oom = 1;
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

char *weir__batch_take (weir__batch *b, size_t *len)
{
    //  The next batch of this stream is likely to be as large as this one
    char *fresh = malloc (b->cap);
    if (!fresh)
        return NULL;
    weir__batch_header h;
    weir__batch_header_of (b, &h);
    h.kind = b->kind ? b->kind : WEIR__BATCH_DATA;
    memcpy (b->data, &h, sizeof h);
    char *out = b->data;
    *len = b->len;
    b->data = fresh;
    weir__batch_clear (b);
    return out;
}

void weir__batch_clear (weir__batch *b)
{
    b->len = WEIR__BATCH_HEADER;
    b->count = 0;
    b->origin_stage = b->origins = 0;
    b->origin_open = 0;
}

void weir__batch_header_of (const weir__batch *b, weir__batch_header *h)
{
    memset (h, 0, sizeof *h);
    h->kind = WEIR__BATCH_DATA;
    h->count = b->count;
    if (!b->origin_stage || !b->origins)
        return;
    h->origin_stage = b->origin_stage;
    h->origins = b->origins;
    memcpy (h->origin, b->origin, sizeof h->origin);
    //  The open run holds every record added since it began
    if (b->origin_open)
        h->origin[b->origins - 1].count = b->count - b->origin[b->origins - 1].first;
}

int weir__records_init (weir__records *it)
{
    memset (it, 0, sizeof *it);
    //  A chunk that holds the objects of a record of a few thousand
    //  elements (a sparse example): msgpack_zone_clear keeps the first
    //  chunk and frees the others, so a record that needs more than the
    //  first costs a malloc and a free every time
    return msgpack_zone_init (&it->zone, 65536) ? 0 : WEIR_ENOMEM;
}

void weir__records_release (weir__records *it)
{
    msgpack_zone_destroy (&it->zone);
}

void weir__records_reset (weir__records *it, const char *payload, size_t len)
{
    it->data = payload;
    it->len = len;
    it->off = 0;
}

static uint64_t s_be (const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

//  Scalar records (integers, strings, nil, booleans) are the common case
//  and need no zone: decode them here and leave containers, floats and
//  exts to msgpack-c.  1 when decoded, 0 to fall back.
static int s_scalar (weir__records *it, msgpack_object *o)
{
    const unsigned char *p = (const unsigned char *) it->data + it->off;
    size_t left = it->len - it->off;
    unsigned c = p[0];
    size_t used;
    if (c <= 0x7f) {
        o->type = MSGPACK_OBJECT_POSITIVE_INTEGER;
        o->via.u64 = c;
        used = 1;
    }
    else if (c >= 0xe0) {
        o->type = MSGPACK_OBJECT_NEGATIVE_INTEGER;
        o->via.i64 = (int8_t) c;
        used = 1;
    }
    else if (c >= 0xa0 && c <= 0xbf) {
        uint32_t n = c & 0x1f;
        if (left < 1 + (size_t) n)
            return 0;
        o->type = MSGPACK_OBJECT_STR;
        o->via.str.ptr = (const char *) p + 1;
        o->via.str.size = n;
        used = 1 + n;
    }
    else if (c >= 0xcc && c <= 0xcf) {
        int n = 1 << (c - 0xcc);
        if (left < 1 + (size_t) n)
            return 0;
        o->type = MSGPACK_OBJECT_POSITIVE_INTEGER;
        o->via.u64 = s_be (p + 1, n);
        used = 1 + (size_t) n;
    }
    else if (c >= 0xd0 && c <= 0xd3) {
        int n = 1 << (c - 0xd0);
        if (left < 1 + (size_t) n)
            return 0;
        uint64_t u = s_be (p + 1, n);
        //  Sign-extend from n bytes
        int64_t v =
            n == 8 ? (int64_t) u : (int64_t) (u ^ (1ull << (8 * n - 1))) - (int64_t) (1ull << (8 * n - 1));
        //  msgpack-c types a non-negative signed value as positive
        o->type = v < 0 ? MSGPACK_OBJECT_NEGATIVE_INTEGER : MSGPACK_OBJECT_POSITIVE_INTEGER;
        o->via.i64 = v;
        used = 1 + (size_t) n;
    }
    else if (c >= 0xd9 && c <= 0xdb) {
        int n = 1 << (c - 0xd9);
        if (left < 1 + (size_t) n)
            return 0;
        uint64_t size = s_be (p + 1, n);
        if (left - 1 - (size_t) n < size)
            return 0;
        o->type = MSGPACK_OBJECT_STR;
        o->via.str.ptr = (const char *) p + 1 + n;
        o->via.str.size = (uint32_t) size;
        used = 1 + (size_t) n + (size_t) size;
    }
    else if (c == 0xc0) {
        o->type = MSGPACK_OBJECT_NIL;
        used = 1;
    }
    else if (c == 0xc2 || c == 0xc3) {
        o->type = MSGPACK_OBJECT_BOOLEAN;
        o->via.boolean = c == 0xc3;
        used = 1;
    }
    else
        return 0;
    it->off += used;
    return 1;
}

int weir__records_next (weir__records *it, msgpack_object *obj)
{
    if (it->off >= it->len)
        return 0;
    if (s_scalar (it, obj))
        return 1;
    msgpack_zone_clear (&it->zone);
    msgpack_unpack_return rc = weir__unpack (it->data, it->len, &it->off, &it->zone, obj);
    if (rc == MSGPACK_UNPACK_SUCCESS || rc == MSGPACK_UNPACK_EXTRA_BYTES)
        return 1;
    return rc == MSGPACK_UNPACK_NOMEM_ERROR ? WEIR__RECORDS_NOMEM : -1;
}

int weir__records_next_bytes (weir__records *it, const char **data, size_t *len)
{
    if (it->off >= it->len)
        return 0;
    size_t size, where;
    if (weir__scan (it->data + it->off, it->len - it->off, &size, &where) != WEIR__SCAN_OK)
        return -1;
    *data = it->data + it->off;
    *len = size;
    it->off += size;
    return 1;
}

int weir__records_decode (weir__records *it, const char *data, size_t len, msgpack_object *obj)
{
    size_t off = 0;
    msgpack_zone_clear (&it->zone);
    msgpack_unpack_return rc = weir__unpack (data, len, &off, &it->zone, obj);
    if (rc == MSGPACK_UNPACK_SUCCESS && off == len)
        return 0;
    return rc == MSGPACK_UNPACK_NOMEM_ERROR ? WEIR__RECORDS_NOMEM : -1;
}

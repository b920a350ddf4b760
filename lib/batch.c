/*  lib/batch.c - building and decoding batches of msgpack records.  */
#include "config.h"
#include "lib/batch.h"

#include <stdlib.h>
#include <weir/weir.h>

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
    weir__batch_header h = {WEIR__BATCH_DATA, b->count};
    memcpy (b->data, &h, sizeof h);
    char *out = b->data;
    *len = b->len;
    b->data = fresh;
    b->len = WEIR__BATCH_HEADER;
    b->count = 0;
    return out;
}

void weir__batch_clear (weir__batch *b)
{
    b->len = WEIR__BATCH_HEADER;
    b->count = 0;
}

int weir__records_init (weir__records *it)
{
    memset (it, 0, sizeof *it);
    return msgpack_zone_init (&it->zone, 4096) ? 0 : WEIR_ENOMEM;
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

int weir__records_next (weir__records *it, msgpack_object *obj)
{
    if (it->off >= it->len)
        return 0;
    msgpack_zone_clear (&it->zone);
    msgpack_unpack_return rc = msgpack_unpack (it->data, it->len, &it->off, &it->zone, obj);
    if (rc == MSGPACK_UNPACK_SUCCESS || rc == MSGPACK_UNPACK_EXTRA_BYTES)
        return 1;
    return -1;
}

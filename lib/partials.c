/*  lib/partials.c - a producer's partial aggregates, a key and its value
    in half a cache line or one.  */
#include "config.h"
#include "lib/partials.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/fieldpath.h"
#include "lib/hash.h"
#include "lib/key.h"
#include "lib/pack.h"

//  A slot: the low half of the key's hash (the table's own, s_hash), its
//  length (0: the slot is empty; a canonical key has a byte at least),
//  and its bytes when they fit, else where they are in the arena; the
//  value follows, in 32 bytes in all when it is no larger than 8 (a
//  count: two keys a line, so that a word count's hot keys stay in the
//  first-level cache), else in 64
typedef struct {
    uint32_t hash;
    uint32_t len;
    union {
        char key[WEIR__PARTIALS_KEY_INLINE];
        uint32_t off;
    };
} s_slot;

_Static_assert(sizeof (s_slot) + WEIR__PARTIALS_VALUE_MAX == 64, "a slot and its value are a cache line");
_Static_assert(sizeof (s_slot) + 8 == 32, "a slot and a count are half a cache line");
_Static_assert(offsetof (s_slot, key) == WEIR__PARTIALS_SLOT_KEY
                   && sizeof (s_slot) == WEIR__PARTIALS_SLOT_VALUE,
               "a slot as weir__partials_find_str reads it");

struct weir__partials {
    //  First, what weir__partials_find_str reads: the slots (NULL while
    //  there are none; a power of two of them, aligned to a cache line),
    //  their mask, and a slot and its value's size, 1 << index.shift
    //  (32 or 64 bytes)
    weir__partials_index index;
    size_t value_size;
    uint32_t *order;  //  [count]: the slot of each key, in the order they came
    size_t count, room;
    weir__buf arena;  //  the bytes of keys too long for their slot
};

//  How many slots, and their size
static inline size_t s_nslots (const weir__partials *self)
{
    return self->index.slots ? self->index.mask + 1 : 0;
}

static inline size_t s_stride (const weir__partials *self)
{
    return (size_t) 1 << self->index.shift;
}

weir__partials *weir__partials_new (size_t value_size)
{
    if (value_size > WEIR__PARTIALS_VALUE_MAX)
        return NULL;
    weir__partials *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->value_size = value_size;
    self->index.shift = value_size <= 8 ? 5 : 6;
    weir__buf_init (&self->arena);
    return self;
}

void weir__partials_destroy (weir__partials **self_p)
{
    weir__partials *self = *self_p;
    if (!self)
        return;
    free (self->index.slots);
    free (self->order);
    weir__buf_release (&self->arena);
    free (self);
    *self_p = NULL;
}

static inline s_slot *s_slot_at (const weir__partials *self, size_t i)
{
    return (s_slot *) (self->index.slots + (i << self->index.shift));
}

static inline void *s_value (s_slot *slot)
{
    return slot + 1;
}

static inline const char *s_key (const weir__partials *self, const s_slot *slot)
{
    return slot->len <= WEIR__PARTIALS_KEY_INLINE ? slot->key : self->arena.data + slot->off;
}

//  The table's hash (weir__partials_hash16) of the key whose bytes are
//  the HLEN at HEAD (fewer than 16) and then the BLEN at BODY: its first
//  16 bytes, and a checksum of the rest
static uint64_t s_hash (const char *head, size_t hlen, const char *body, size_t blen)
{
    char first[16] = {0};
    size_t len = hlen + blen, fromb = blen < 16 - hlen ? blen : 16 - hlen;
    uint64_t lo, hi, rest = 0;
    if (hlen)
        memcpy (first, head, hlen);
    if (fromb)
        memcpy (first + hlen, body, fromb);
    memcpy (&lo, first, 8);
    memcpy (&hi, first + 8, 8);
    if (len > 16)
        rest = weir__hash64 (0x70617274, body + fromb, blen - fromb);
    return weir__partials_hash16 (lo, hi, rest, len);
}

//  The slot of the key whose bytes are the HLEN at HEAD and then the BLEN
//  at BODY, or the empty slot where it would go
static inline s_slot *s_find (const weir__partials *self, const char *head, size_t hlen, const char *body,
                              size_t blen, uint32_t hash)
{
    size_t mask = self->index.mask, len = hlen + blen;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
        s_slot *slot = s_slot_at (self, i);
        if (!slot->len)
            return slot;
        if (slot->hash != hash || slot->len != len)
            continue;
        const char *k = s_key (self, slot);
        if (weir__same_bytes (k, head, hlen) && weir__same_bytes (k + hlen, body, blen))
            return slot;
    }
}

//  Twice the slots (at least 64), every key placed again.  0 or -1.
static int s_grow (weir__partials *self)
{
    size_t n = s_nslots (self) ? s_nslots (self) * 2 : 64, stride = s_stride (self);
    char *slots = aligned_alloc (64, n * stride);
    if (!slots)
        return -1;
    memset (slots, 0, n * stride);
    for (size_t k = 0; k < self->count; k++) {
        const s_slot *old = s_slot_at (self, self->order[k]);
        size_t i = old->hash & (n - 1);
        while (((s_slot *) (slots + i * stride))->len)
            i = (i + 1) & (n - 1);
        memcpy (slots + i * stride, old, stride);
        self->order[k] = (uint32_t) i;
    }
    free (self->index.slots);
    self->index.slots = slots;
    self->index.mask = n - 1;
    return 0;
}

//  Inline in both callers: a look-up is what the table is for
static inline __attribute__ ((always_inline)) void *s_upsert (weir__partials *self, const char *head,
                                                              size_t hlen, const char *body, size_t blen,
                                                              uint32_t hash, int *fresh)
{
    *fresh = 0;
    s_slot *slot = self->index.slots ? s_find (self, head, hlen, body, blen, hash) : NULL;
    if (slot && slot->len)
        return s_value (slot);
    //  A new key.  At most half full: a word is found at its first slot
    //  more often than not (3/4 full took 6% longer to count words), and
    //  a table of a shuffle's 4,096 keys is still 256 kB of counts
    if ((self->count + 1) * 2 > s_nslots (self)) {
        if (s_grow (self))
            return NULL;
        slot = s_find (self, head, hlen, body, blen, hash);
    }
    size_t len = hlen + blen;
    if (len > UINT32_MAX || self->arena.len + len > UINT32_MAX)
        return NULL;
    if (self->count == self->room) {
        size_t room = self->room ? self->room * 2 : 64;
        uint32_t *order = realloc (self->order, room * sizeof *order);
        if (!order)
            return NULL;
        self->order = order;
        self->room = room;
    }
    char *k = slot->key;
    //  Zero past a short key: weir__partials_find_str compares 16 bytes
    memset (slot->key, 0, sizeof slot->key);
    if (len > WEIR__PARTIALS_KEY_INLINE) {
        if (weir__buf_reserve (&self->arena, len))
            return NULL;
        slot->off = (uint32_t) self->arena.len;
        k = self->arena.data + self->arena.len;
        self->arena.len += len;
    }
    if (hlen)
        memcpy (k, head, hlen);
    if (blen)
        memcpy (k + hlen, body, blen);
    slot->hash = hash;
    slot->len = (uint32_t) len;
    memset (s_value (slot), 0, self->value_size);
    self->order[self->count++] = (uint32_t) (((char *) slot - self->index.slots) >> self->index.shift);
    *fresh = 1;
    return s_value (slot);
}

void *weir__partials_upsert (weir__partials *self, const void *key, size_t len, int *fresh)
{
    //  Its first byte apart, as a str's header is: fewer than 16
    const char *k = key;
    size_t hlen = len ? 1 : 0;
    return s_upsert (self, k, hlen, k + hlen, len - hlen, (uint32_t) s_hash (k, hlen, k + hlen, len - hlen),
                     fresh);
}

void *weir__partials_upsert_str (weir__partials *self, const char *s, size_t n, int *fresh)
{
    void *value = weir__partials_find_str (self, s, n);
    *fresh = 0;
    if (value)
        return value;
    //  A new word is added with the hash the look-up works out, so that
    //  the look-up of the same key from its canonical bytes (s_hash) finds
    //  it only when the two agree, as they must
    char head[5];
    size_t hlen = weir__pack_bytes_header (head, (uint32_t) n, 0);
    uint64_t lo, hi;
    uint32_t hash = n <= WEIR__KEY_STR_SHORT && weir__key_str_readable (s, n)
                        ? weir__partials_str_hash (s, n, &lo, &hi)
                        : (uint32_t) s_hash (head, hlen, s, n);
    return s_upsert (self, head, hlen, s, n, hash, fresh);
}

size_t weir__partials_count (const weir__partials *self)
{
    return self->count;
}

void *weir__partials_entry (const weir__partials *self, size_t i, const char **key, size_t *len)
{
    s_slot *slot = s_slot_at (self, self->order[i]);
    *key = s_key (self, slot);
    *len = slot->len;
    return s_value (slot);
}

void weir__partials_clear (weir__partials *self)
{
    //  Slot by slot when few were used, which is the usual flush
    if (self->count * 8 < s_nslots (self))
        for (size_t k = 0; k < self->count; k++)
            s_slot_at (self, self->order[k])->len = 0;
    else if (self->index.slots)
        memset (self->index.slots, 0, s_nslots (self) * s_stride (self));
    self->count = 0;
    self->arena.len = 0;
}

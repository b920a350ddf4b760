/*  lib/keytable.c - keys' bytes to fixed-size values, open addressing.  */
#include "config.h"
#include "lib/keytable.h"

#include <stdlib.h>
#include <string.h>

#include "lib/fieldpath.h"
#include "lib/key.h"

//  No hash: a key's is weir__key_hash of its bytes, worked out again
//  when the slots grow or a key moves, rather than 8 more bytes a key
typedef struct {
    uint32_t off, len;  //  the key's bytes in the arena
} s_entry;

//  A value of bytes (WEIR__KEYTABLE_BYTES): its length, and the room for
//  it after its key's bytes in the arena
typedef struct {
    uint32_t len, cap;
} s_bytes;

struct weir__keytable {
    size_t value_size;  //  or WEIR__KEYTABLE_BYTES
    size_t stride;      //  of VALUES: value_size, or an s_bytes
    //  The high half of the key's hash, then its entry number + 1 (0 for
    //  an empty slot): a probe compares hashes without touching an entry
    uint64_t *slots;
    size_t nslots;  //  a power of two, or 0
    s_entry *entries;
    char *values;  //  [count * stride]
    size_t count, room;
    weir__buf arena;
    size_t garbage;  //  bytes of the arena that deleted keys held
};

weir__keytable *weir__keytable_new (size_t value_size)
{
    if (value_size > 4096 && value_size != WEIR__KEYTABLE_BYTES)
        return NULL;
    weir__keytable *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->value_size = value_size;
    self->stride = value_size == WEIR__KEYTABLE_BYTES ? sizeof (s_bytes) : value_size;
    weir__buf_init (&self->arena);
    return self;
}

void weir__keytable_destroy (weir__keytable **self_p)
{
    weir__keytable *self = *self_p;
    if (!self)
        return;
    free (self->slots);
    free (self->entries);
    free (self->values);
    weir__buf_release (&self->arena);
    free (self);
    *self_p = NULL;
}

//  The slot of the key, or of the empty slot where it would go
static size_t s_probe (const weir__keytable *self, const void *key, size_t len, uint64_t hash)
{
    size_t mask = self->nslots - 1;
    uint64_t tag = hash >> 32 << 32;
    for (size_t i = (size_t) hash & mask;; i = (i + 1) & mask) {
        uint64_t slot = self->slots[i];
        if (!slot)
            return i;
        if ((slot & ~(uint64_t) UINT32_MAX) != tag)
            continue;
        const s_entry *e = &self->entries[(uint32_t) slot - 1];
        if (e->len == len && weir__same_bytes (self->arena.data + e->off, key, len))
            return i;
    }
}

//  Twice the slots (at least 16), every entry placed again.  0 or -1.
static int s_grow (weir__keytable *self)
{
    size_t n = self->nslots ? self->nslots * 2 : 16;
    uint64_t *slots = calloc (n, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t k = 0; k < self->count; k++) {
        uint64_t hash = weir__keytable_hash (self, k);
        size_t i = (size_t) hash & (n - 1);
        while (slots[i])
            i = (i + 1) & (n - 1);
        slots[i] = (hash >> 32 << 32) | (k + 1);
    }
    free (self->slots);
    self->slots = slots;
    self->nslots = n;
    return 0;
}

void weir__keytable_clear (weir__keytable *self)
{
    if (self->count)
        memset (self->slots, 0, self->nslots * sizeof *self->slots);
    self->count = 0;
    self->arena.len = 0;
    self->garbage = 0;
}

void *weir__keytable_find (const weir__keytable *self, const void *key, size_t len, uint64_t hash)
{
    if (!self->nslots)
        return NULL;
    uint32_t at = (uint32_t) self->slots[s_probe (self, key, len, hash)];
    return at ? self->values + (size_t) (at - 1) * self->stride : NULL;
}

void *weir__keytable_upsert (weir__keytable *self, const void *key, size_t len, uint64_t hash, int *fresh)
{
    *fresh = 0;
    //  At most 3/4 full: linear probing stays short
    if ((self->count + 1) * 4 > self->nslots * 3 && s_grow (self))
        return NULL;
    size_t i = s_probe (self, key, len, hash);
    if (self->slots[i])
        return self->values + (size_t) ((uint32_t) self->slots[i] - 1) * self->stride;
    if (len > UINT32_MAX || self->arena.len + len > UINT32_MAX || self->count >= UINT32_MAX - 1)
        return NULL;
    if (self->count == self->room) {
        size_t room = self->room ? self->room * 2 : 8;
        s_entry *entries = realloc (self->entries, room * sizeof *entries);
        if (!entries)
            return NULL;
        self->entries = entries;
        char *values = realloc (self->values, room * self->stride + 1);
        if (!values)
            return NULL;
        self->values = values;
        self->room = room;
    }
    uint32_t off = (uint32_t) self->arena.len;
    if (weir__buf_append (&self->arena, key, len))
        return NULL;
    self->entries[self->count] = (s_entry){off, (uint32_t) len};
    char *value = self->values + self->count * self->stride;
    memset (value, 0, self->stride);
    self->slots[i] = (hash >> 32 << 32) | ++self->count;
    *fresh = 1;
    return value;
}

//  Value I's bytes, of a table of bytes
static s_bytes *s_bytes_of (const weir__keytable *self, size_t i)
{
    return (s_bytes *) (self->values + i * sizeof (s_bytes));
}

//  The arena again, with only the keys the entries hold (and their
//  values of bytes, in no more room than they take): deleted keys' and
//  moved values' bytes given back once they are half of it.  0 or -1.
static int s_compact (weir__keytable *self)
{
    weir__buf arena;
    weir__buf_init (&arena);
    if (weir__buf_reserve (&arena, self->arena.len - self->garbage + 1))
        return -1;
    int bytes = self->value_size == WEIR__KEYTABLE_BYTES;
    for (size_t k = 0; k < self->count; k++) {
        s_entry *e = &self->entries[k];
        uint32_t off = (uint32_t) arena.len;
        s_bytes *v = bytes ? s_bytes_of (self, k) : NULL;
        weir__buf_append (&arena, self->arena.data + e->off, e->len + (v ? v->len : 0));
        if (v)
            v->cap = v->len;
        e->off = off;
    }
    weir__buf_release (&self->arena);
    self->arena = arena;
    self->garbage = 0;
    return 0;
}

int weir__keytable_delete (weir__keytable *self, const void *key, size_t len, uint64_t hash)
{
    if (!self->nslots)
        return 0;
    size_t mask = self->nslots - 1, i = s_probe (self, key, len, hash);
    uint32_t at = (uint32_t) self->slots[i];
    if (!at)
        return 0;
    //  Backward shift: each slot after the hole that may sit in it (its
    //  home is not between the hole and it) moves up, so that probes
    //  need no tombstones
    for (size_t j = (i + 1) & mask; self->slots[j]; j = (j + 1) & mask) {
        size_t home = (size_t) weir__keytable_hash (self, (uint32_t) self->slots[j] - 1) & mask;
        int between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!between) {
            self->slots[i] = self->slots[j];
            i = j;
        }
    }
    self->slots[i] = 0;
    //  The last entry takes the deleted one's place, and its slot says so
    size_t k = at - 1, last = self->count - 1;
    self->garbage +=
        self->entries[k].len + (self->value_size == WEIR__KEYTABLE_BYTES ? s_bytes_of (self, k)->cap : 0);
    if (k != last) {
        uint64_t h = weir__keytable_hash (self, last);
        size_t j = (size_t) h & mask;
        while ((uint32_t) self->slots[j] != last + 1)
            j = (j + 1) & mask;
        self->slots[j] = (h >> 32 << 32) | (k + 1);
        self->entries[k] = self->entries[last];
        memcpy (self->values + k * self->stride, self->values + last * self->stride, self->stride);
    }
    self->count--;
    if (self->garbage > 4096 && self->garbage * 2 > self->arena.len && s_compact (self))
        return -1;
    return 1;
}

size_t weir__keytable_count (const weir__keytable *self)
{
    return self->count;
}

void *weir__keytable_entry (const weir__keytable *self, size_t i, const char **key, size_t *len)
{
    *key = self->arena.data + self->entries[i].off;
    *len = self->entries[i].len;
    return self->values + i * self->stride;
}

const void *weir__keytable_get_bytes (const weir__keytable *self, const void *key, size_t len, uint64_t hash,
                                      size_t *vlen)
{
    const s_bytes *v = weir__keytable_find (self, key, len, hash);
    if (!v)
        return NULL;
    *vlen = v->len;
    const s_entry *e = &self->entries[((const char *) v - self->values) / sizeof *v];
    return self->arena.data + e->off + e->len;
}

const void *weir__keytable_entry_bytes (const weir__keytable *self, size_t i, size_t *vlen)
{
    *vlen = s_bytes_of (self, i)->len;
    return self->arena.data + self->entries[i].off + self->entries[i].len;
}

int weir__keytable_put_bytes (weir__keytable *self, const void *key, size_t len, uint64_t hash,
                              const void *value, size_t vlen, int *fresh)
{
    //  VALUE may be the table's own bytes (a value read and set again):
    //  the arena may move under it
    const char *from = value, *arena = self->arena.data;
    void *copy = NULL;
    if (vlen && arena && from >= arena && from < arena + self->arena.cap) {
        if (!(copy = malloc (vlen)))
            return -1;
        memcpy (copy, value, vlen);
        from = copy;
    }
    int rc = -1;
    s_bytes *v = weir__keytable_upsert (self, key, len, hash, fresh);
    if (!v || vlen > UINT32_MAX)
        goto done;
    s_entry *e = &self->entries[((char *) v - self->values) / sizeof *v];
    if (vlen > v->cap) {
        //  More room, a quarter more than it needs for the next that
        //  grows: in place when the key and its value end the arena (a
        //  key just added), else with its key again at the arena's end,
        //  the old copy garbage
        size_t cap = vlen + vlen / 4;
        int last = (size_t) e->off + e->len + v->cap == self->arena.len;
        size_t more = last ? cap - v->cap : e->len + cap;
        if (self->arena.len + more > UINT32_MAX || weir__buf_reserve (&self->arena, more))
            goto done;
        if (!last) {
            uint32_t off = (uint32_t) self->arena.len;
            memcpy (self->arena.data + off, self->arena.data + e->off, e->len);
            self->garbage += e->len + v->cap;
            e->off = off;
        }
        self->arena.len += more;
        v->cap = (uint32_t) cap;
    }
    if (vlen)
        memcpy (self->arena.data + e->off + e->len, from, vlen);
    v->len = (uint32_t) vlen;
    rc = self->garbage > 4096 && self->garbage * 2 > self->arena.len ? s_compact (self) : 0;
done:
    free (copy);
    return rc;
}

uint64_t weir__keytable_hash (const weir__keytable *self, size_t i)
{
    return weir__key_hash (self->arena.data + self->entries[i].off, self->entries[i].len);
}

size_t weir__keytable_memory (const weir__keytable *self)
{
    return sizeof *self + self->nslots * sizeof *self->slots
           + self->room * (sizeof *self->entries + self->stride) + self->arena.cap;
}

//  N as 4 bytes little-endian, the save's one width, and back
static int s_put32 (weir__buf *out, size_t n)
{
    unsigned char b[4] = {(unsigned char) n, (unsigned char) (n >> 8), (unsigned char) (n >> 16),
                          (unsigned char) (n >> 24)};
    return weir__buf_append (out, b, 4);
}
static size_t s_get32 (const unsigned char *p)
{
    return (size_t) p[0] | (size_t) p[1] << 8 | (size_t) p[2] << 16 | (size_t) p[3] << 24;
}

//  A table of bytes says so in the saved value size
#define S_SAVED_BYTES 0xffffffffu

int weir__keytable_save (const weir__keytable *self, weir__buf *out)
{
    int bytes = self->value_size == WEIR__KEYTABLE_BYTES;
    if (s_put32 (out, bytes ? S_SAVED_BYTES : self->value_size))
        return -1;
    for (size_t i = 0; i < self->count; i++) {
        const s_entry *e = &self->entries[i];
        if (s_put32 (out, e->len) || weir__buf_append (out, self->arena.data + e->off, e->len))
            return -1;
        if (bytes) {
            size_t vlen;
            const void *v = weir__keytable_entry_bytes (self, i, &vlen);
            if (s_put32 (out, vlen) || weir__buf_append (out, v, vlen))
                return -1;
        }
        else if (weir__buf_append (out, self->values + i * self->stride, self->stride))
            return -1;
    }
    return 0;
}

int weir__keytable_saved_size (const void *data, size_t len, size_t *value_size)
{
    if (len < 4)
        return -1;
    *value_size = s_get32 (data);
    if (*value_size == S_SAVED_BYTES)
        *value_size = WEIR__KEYTABLE_BYTES;
    return 0;
}

//  The keys and values of bytes of a save, LEN bytes at P after the value
//  size: as weir__keytable_load
static int s_load_bytes (weir__keytable *self, const unsigned char *p, size_t len,
                         uint64_t (*hash) (const void *key, size_t len))
{
    while (len) {
        if (len < 4)
            return -1;
        size_t n = s_get32 (p);
        if (len - 4 < n || len - 4 - n < 4)
            return -1;
        size_t vlen = s_get32 (p + 4 + n);
        if (len - 8 - n < vlen)
            return -1;
        int fresh;
        if (weir__keytable_put_bytes (self, p + 4, n, hash (p + 4, n), p + 8 + n, vlen, &fresh))
            return -2;
        if (!fresh)
            return -1;  //  a key twice
        p += 8 + n + vlen;
        len -= 8 + n + vlen;
    }
    return 0;
}

int weir__keytable_load (weir__keytable *self, const void *data, size_t len,
                         uint64_t (*hash) (const void *key, size_t len))
{
    const unsigned char *p = data;
    size_t size;
    if (weir__keytable_saved_size (p, len, &size) || size != self->value_size)
        return -1;
    p += 4;
    len -= 4;
    if (size == WEIR__KEYTABLE_BYTES)
        return s_load_bytes (self, p, len, hash);
    while (len) {
        if (len < 4)
            return -1;
        size_t n = s_get32 (p);
        if (len - 4 < n || len - 4 - n < self->value_size)
            return -1;
        int fresh;
        void *value = weir__keytable_upsert (self, p + 4, n, hash (p + 4, n), &fresh);
        if (!value)
            return -2;
        if (!fresh)
            return -1;  //  a key twice
        memcpy (value, p + 4 + n, self->value_size);
        p += 4 + n + self->value_size;
        len -= 4 + n + self->value_size;
    }
    return 0;
}

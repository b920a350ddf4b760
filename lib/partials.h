/*  lib/partials.h - a producer's partial aggregates, by key: the table a
    combiner folds records into before they cross a keyed link
    (lib/shuffle.h).

    Unlike a key group's state (lib/keytable.h), this table is small (a
    shuffle flushes it at a few thousand keys), emptied at every flush,
    and looked up once for every record a producer sends, so it is laid
    out for the look-up, not for memory: each slot holds the key's hash
    (the table's own), its canonical bytes when they are short (a word, a
    user name, a level) and its value, so that a key found costs one
    line; a slot is half a line when the value is a count, a line
    otherwise.  Only longer keys' bytes are elsewhere, in an arena.  Keys
    are iterated in the order they came.

    One owner (the producer thread): no lock.  */
#ifndef WEIR_PARTIALS_H_INCLUDED
#define WEIR_PARTIALS_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lib/key.h"

typedef struct weir__partials weir__partials;

/*  The longest key kept in its slot, in canonical bytes, and the
    largest value kept there: larger values are refused by _new.  */
#define WEIR__PARTIALS_KEY_INLINE 16
#define WEIR__PARTIALS_VALUE_MAX 40

/*  A table of values of VALUE_SIZE bytes (at most
    WEIR__PARTIALS_VALUE_MAX).  NULL when out of memory or too large.  */
weir__partials *weir__partials_new (size_t value_size);
void weir__partials_destroy (weir__partials **self_p);

/*  The value of the key of LEN canonical bytes at KEY; a new key's comes
    zeroed, with *FRESH set.  Valid until the next key is added.  NULL
    when out of memory.  The table hashes keys its own way, cheaper for a
    word than weir__key_hash, which a caller works out for a key when it
    needs to know its group.  */
void *weir__partials_upsert (weir__partials *self, const void *key, size_t len, int *fresh);

/*  The same for the key that is the msgpack str S of N bytes, whose
    canonical bytes (its shortest header, then S) are never side by side
    in the caller's memory.  */
void *weir__partials_upsert_str (weir__partials *self, const char *s, size_t n, int *fresh);

/*  What the inline look-up of a word reads of a table, its first member
    (the rest is lib/partials.c's), and of a slot: the low half of the
    key's hash, its length (0: empty) above it, its canonical bytes from
    byte 8 when they are 16 at most (zero past their end), its value
    from byte 24.  */
typedef struct weir__partials_index {
    char *slots;     //  NULL while the table has none
    size_t mask;     //  slots - 1
    unsigned shift;  //  a slot and its value are 1 << SHIFT bytes
} weir__partials_index;
#define WEIR__PARTIALS_SLOT_KEY 8
#define WEIR__PARTIALS_SLOT_VALUE 24

/*  The table's hash of a key whose canonical bytes are LEN, of which the
    first 16 (zero past the end) are LO and HI, and the rest's checksum
    REST (0 for none).  Not weir__key_hash, which routes a key to its
    group for good and reads a short key in loads that depend on its
    length: a word is read 16 bytes at a time (weir__key_str16), and
    taken as it is, so that it costs a multiply; weir__key_hash is worked
    out once per key and flush (lib/shuffle.c), not once per record.  */
static inline uint64_t weir__partials_hash16 (uint64_t lo, uint64_t hi, uint64_t rest, size_t len)
{
    return weir__key_mix (lo ^ len, hi ^ rest);
}

/*  The table's hash of the str S of N bytes (N at most
    WEIR__KEY_STR_SHORT, weir__key_str_readable), its key's 16 bytes in
    *LO and *HI.  */
static inline uint32_t weir__partials_str_hash (const char *s, size_t n, uint64_t *lo, uint64_t *hi)
{
    weir__key_str16 (s, n, lo, hi);
    return (uint32_t) weir__partials_hash16 (*lo, *hi, 0, n + 1);
}

/*  The value of the str S of N bytes when SELF holds it and the look-up
    of words can read it (weir__key_str_readable), else NULL: then
    weir__partials_upsert_str.  Inline, and with no branch on the word's
    length: a word count looks up every word.  */
static inline void *weir__partials_find_str (weir__partials *self, const char *s, size_t n)
{
    const weir__partials_index *x = (const weir__partials_index *) self;
    if (n > WEIR__KEY_STR_SHORT || !x->slots || !weir__key_str_readable (s, n))
        return NULL;
    uint64_t lo, hi;
    uint32_t hash = weir__partials_str_hash (s, n, &lo, &hi);
    uint64_t head = hash | (uint64_t) (n + 1) << 32;
    for (size_t i = hash & x->mask;; i = (i + 1) & x->mask) {
        char *slot = x->slots + (i << x->shift);
        uint64_t h, k0, k1;
        memcpy (&h, slot, 8);
        if (!(h >> 32))
            return NULL;
        memcpy (&k0, slot + WEIR__PARTIALS_SLOT_KEY, 8);
        memcpy (&k1, slot + WEIR__PARTIALS_SLOT_KEY + 8, 8);
        //  Hash, length and 16 bytes at once
        if (((h ^ head) | (k0 ^ lo) | (k1 ^ hi)) == 0)
            return slot + WEIR__PARTIALS_SLOT_VALUE;
    }
}

/*  The keys it holds, and key I of them (in the order they came): its
    value, its canonical bytes and their length.  */
size_t weir__partials_count (const weir__partials *self);
void *weir__partials_entry (const weir__partials *self, size_t i, const char **key, size_t *len);

/*  Forget every key, keeping the memory for the next ones.  */
void weir__partials_clear (weir__partials *self);

#endif

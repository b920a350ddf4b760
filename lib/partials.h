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

/*  The keys it holds, and key I of them (in the order they came): its
    value, its canonical bytes and their length.  */
size_t weir__partials_count (const weir__partials *self);
void *weir__partials_entry (const weir__partials *self, size_t i, const char **key, size_t *len);

/*  Forget every key, keeping the memory for the next ones.  */
void weir__partials_clear (weir__partials *self);

#endif

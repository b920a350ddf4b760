/*  lib/keytable.h - the state of the keys of one key group: a table
    from a key's canonical bytes (lib/key.h) to a value of a fixed size.

    Open addressing with linear probing over an array of slots, each half
    the key's hash and half its entry number, so that a probe compares
    hashes without a miss on the entries; the entries (where the key's
    bytes are) and their values in arrays of their own, the keys' bytes
    back to back in one arena: a key costs its bytes, 8 bytes of entry,
    its value and 11 to 21 bytes of slots, and no allocation of its own.
    A key's hash is not kept: it must be weir__key_hash of its bytes,
    which the table works out again when it grows.  Entries keep the
    order they came in, so iterating is a walk along an array.

    One owner at a time (the thread that owns the group): no lock.  */
#ifndef WEIR_KEYTABLE_H_INCLUDED
#define WEIR_KEYTABLE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"

typedef struct weir__keytable weir__keytable;

/*  The value size of a table whose values are bytes of any length (a
    msgpack value a plugin keeps per key, weir_key_value): each kept in
    the arena after its key's bytes, with room for a quarter more, and
    moved to the arena's end with its key when it outgrows that room
    (weir__keytable_put_bytes, _get_bytes, _entry_bytes).  */
#define WEIR__KEYTABLE_BYTES ((size_t) -1)

/*  A table of values of VALUE_SIZE bytes (at most 4096, or
    WEIR__KEYTABLE_BYTES).  NULL when out of memory.  */
weir__keytable *weir__keytable_new (size_t value_size);
void weir__keytable_destroy (weir__keytable **self_p);

/*  The value of the key of LEN bytes at KEY, whose hash (weir__key_hash)
    is HASH; a new key's comes zeroed, with *FRESH set.  Valid until the
    next key is added.  NULL when out of memory (or a key of 4 GiB).  */
void *weir__keytable_upsert (weir__keytable *self, const void *key, size_t len, uint64_t hash, int *fresh);

/*  Forget the key of LEN bytes at KEY, of hash HASH, and its value: 1,
    0 when it was not there, -1 when out of memory.  The last key takes
    its place in the order keys came in.  */
int weir__keytable_delete (weir__keytable *self, const void *key, size_t len, uint64_t hash);

/*  Forget every key, keeping the memory for the next ones.  */
void weir__keytable_clear (weir__keytable *self);

/*  The value of that key, or NULL.  */
void *weir__keytable_find (const weir__keytable *self, const void *key, size_t len, uint64_t hash);

/*  The keys it holds, and key I of them (in the order they came) with
    its value.  */
size_t weir__keytable_count (const weir__keytable *self);
void *weir__keytable_entry (const weir__keytable *self, size_t i, const char **key, size_t *len);

/*  The hash of key I (weir__key_hash of its bytes).  */
uint64_t weir__keytable_hash (const weir__keytable *self, size_t i);

/*  A table of bytes: the value of that key and its length *VLEN, or
    NULL when it has no such key.  Valid until the table changes.  */
const void *weir__keytable_get_bytes (const weir__keytable *self, const void *key, size_t len, uint64_t hash,
                                      size_t *vlen);

/*  A table of bytes: the value of that key (added, *FRESH set, when
    new) becomes the VLEN bytes at VALUE, which may be one of the
    table's own.  0, or -1 when out of memory.  */
int weir__keytable_put_bytes (weir__keytable *self, const void *key, size_t len, uint64_t hash,
                              const void *value, size_t vlen, int *fresh);

/*  A table of bytes: key I's value and its length.  */
const void *weir__keytable_entry_bytes (const weir__keytable *self, size_t i, size_t *vlen);

/*  Bytes of memory it holds.  */
size_t weir__keytable_memory (const weir__keytable *self);

/*  Append every key and value to OUT: the value size, then per key its
    length, its bytes, its value (sizes as 4 bytes little-endian); a
    table of bytes writes 0xffffffff as its value size, and each value's
    length before it.  0 or -1 (out of memory).  */
int weir__keytable_save (const weir__keytable *self, weir__buf *out);

/*  The value size of what weir__keytable_save wrote, LEN bytes at DATA,
    into *VALUE_SIZE (WEIR__KEYTABLE_BYTES for a table of bytes): 0, or
    -1 when it is too short to say.  */
int weir__keytable_saved_size (const void *data, size_t len, size_t *value_size);

/*  Add the keys and values of what weir__keytable_save wrote, LEN bytes
    at DATA, HASH giving each key's hash.  0, -1 when malformed (or of
    another value size), -2 when out of memory.  */
int weir__keytable_load (weir__keytable *self, const void *data, size_t len,
                         uint64_t (*hash) (const void *key, size_t len));

#endif

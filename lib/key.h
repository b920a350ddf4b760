/*  lib/key.h - the key of a record, and the key group it falls in.

    A keyed stage (key=PATH) gets every record of one key in the same
    thread.  The key is the value PATH leads to ('.user', '[0]', '.' for
    the whole record; nil when it is absent), compared as its canonical
    msgpack bytes: what msgpack-c packs for the value, so that 7 packed as
    a uint8 and 7 packed as a fixint are the same key, a str and a bin of
    the same bytes are not, and a float32 and a float64 are not either.
    Maps are compared in the order of their keys.

    A key hashes to one of GROUPS key groups, fixed when a job is created
    (Flink's "maximum parallelism"); groups are the unit of ownership: a
    stage of T threads gives thread t the contiguous run of groups
    [t*G/T, (t+1)*G/T), so a resume with another thread count hands whole
    groups, and their state, to their new owners.  */
#ifndef WEIR_KEY_H_INCLUDED
#define WEIR_KEY_H_INCLUDED

#include <msgpack.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "lib/error.h"

/*  The default number of key groups, and the most a job may have.  */
#define WEIR__KEY_GROUPS 128
#define WEIR__KEY_GROUPS_MAX 65536

/*  The longest key, in canonical bytes: a longer one makes its record a
    bad record, as a line past max-line does.  */
#define WEIR__KEY_MAX_BYTES 65536

typedef struct weir__key weir__key;

/*  The key PATH (its text is copied).  NULL with ERR (WEIR_EPROPERTY) naming the
    column of a malformed path, its offset that column's in PATH.  */
weir__key *weir__key_new (const char *path, weir__err *err);
void weir__key_destroy (weir__key **self_p);

/*  The path as given.  */
const char *weir__key_path (const weir__key *self);

/*  The value the path leads to in REC, or NULL when it is absent.  */
const msgpack_object *weir__key_find (const weir__key *self, const msgpack_object *rec);

/*  REC's key, canonical, into OUT (emptied first), and its hash.  0, or
    -1 when out of memory.  */
int weir__key_pack (const weir__key *self, const msgpack_object *rec, weir__buf *out, uint64_t *hash);

/*  The hash of the canonical key bytes KEY of LEN bytes, as
    weir__key_pack gives it.  */
uint64_t weir__key_hash (const void *key, size_t len);

/*  The group of a key of hash HASH among GROUPS.  */
static inline unsigned weir__key_group (uint64_t hash, unsigned groups)
{
    //  The high bits, scaled: no division, and no bias worth a name
    return (unsigned) (((hash >> 32) * groups) >> 32);
}

/*  The thread of THREADS that owns GROUP of GROUPS, and the first group
    thread T owns (its last is the next thread's first, less one).  */
static inline unsigned weir__key_owner (unsigned group, unsigned groups, unsigned threads)
{
    return (unsigned) (((uint64_t) group * threads) / groups);
}
static inline unsigned weir__key_first_group (unsigned thread, unsigned groups, unsigned threads)
{
    //  The smallest g with g * threads / groups >= thread
    return (unsigned) (((uint64_t) thread * groups + threads - 1) / threads);
}

#endif

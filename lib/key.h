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
#include <string.h>

#include "lib/buf.h"
#include "lib/error.h"
#include "lib/hash.h"

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

/*  Whether the path is '.': the key is the whole record.  */
int weir__key_whole (const weir__key *self);

/*  The value the path leads to in REC, or NULL when it is absent.  */
const msgpack_object *weir__key_find (const weir__key *self, const msgpack_object *rec);

/*  REC's key, canonical, in *KEY and *LEN, and its hash.  The key is
    REC's own bytes when they are canonical already (a str with the
    shortest header), else packed into SCRATCH; valid while both are.
    REC must have been decoded from bytes in memory, its strings pointing
    into them (weir__records, msgpack_unpack).  HASH may be NULL: not
    worked out.  0, or -1 when out of memory.  */
int weir__key_of (const weir__key *self, const msgpack_object *rec, weir__buf *scratch, const char **key,
                  size_t *len, uint64_t *hash);

/*  The hash of the canonical key bytes KEY of LEN bytes, as
    weir__key_of gives it.  Inline: every record of a keyed stage is
    hashed where it is sent and where it is counted.  */
static inline uint64_t weir__key_mix (uint64_t a, uint64_t b)
{
    //  A 64 x 64 -> 128-bit multiply folded: every input bit reaches
    //  every output bit, in a few cycles
    unsigned __int128 m = (unsigned __int128) (a ^ 0xa0761d6478bd642full) * (b ^ 0xe7037ed1a0b428dbull);
    return (uint64_t) m ^ (uint64_t) (m >> 64);
}

static inline uint64_t weir__key_hash (const void *key, size_t len)
{
    //  Most keys are a few bytes (a word, a user): two loads that may
    //  overlap read them whole, with no loop and no call to memcpy of a
    //  length unknown; longer keys take the checksum's loop
    const unsigned char *p = key;
    uint64_t a, b;
    if (len > 16)
        return weir__key_mix (weir__hash64 (0x6b6579, key, len), len);
    if (len >= 8) {
        memcpy (&a, p, 8);
        memcpy (&b, p + len - 8, 8);
    }
    else if (len >= 4) {
        uint32_t x, y;
        memcpy (&x, p, 4);
        memcpy (&y, p + len - 4, 4);
        a = x, b = y;
    }
    else if (len)
        a = (uint64_t) p[0] << 16 | (uint64_t) p[len / 2] << 8 | p[len - 1], b = 0;
    else
        a = b = 0;
    return weir__key_mix (a ^ len, b);
}

/*  The longest str whose canonical key (a header of one byte, then its
    bytes) is 16 bytes at most: a word, read 16 bytes at a time by a
    producer's table (lib/partials.h).  */
#define WEIR__KEY_STR_SHORT 15

/*  The 8 bytes at P, which may run past the object P points into, in a
    read the caller knows stays in P's page (weir__key_str_readable): it
    cannot fault, and the bytes past the object are never used.  A load, not memcpy (which a
    sanitizer would check), of a pointer the compiler cannot follow to
    its object, so that it neither warns of the read nor reasons from it;
    the sanitizers are told the read is meant.  */
__attribute__ ((no_sanitize ("address", "thread"))) static inline uint64_t weir__key_load8 (const char *p)
{
    typedef uint64_t __attribute__ ((may_alias, aligned (1))) s_u64;
    __asm__("" : "+r"(p));
    return *(const s_u64 *) p;
}

/*  Whether the str of N bytes at S (N at most WEIR__KEY_STR_SHORT) may be
    read 16 bytes at a time, with no branch on its length: S has a byte
    (N is not 0: an empty str's pointer may be NULL, or just past its
    buffer), and the 16 bytes from S stay in its page, on x86-64, where
    a read of a mapped page cannot fault (a CPU that tags memory, as ARM's
    MTE does, would fault on the bytes past S).  Words are of every length,
    and a branch per length is mispredicted about once a word, which cost
    a word count more than hashing itself did.  */
static inline int weir__key_str_readable (const char *s, size_t n)
{
#if defined(__x86_64__)
    return n && ((uintptr_t) s & 4095) <= 4096 - 16;
#else
    (void) s, (void) n;
    return 0;
#endif
}

/*  The mask of the first N & 7 bytes of 8, and whether N is 8 or more
    (all ones, else zero): what a str of N bytes keeps of its two 8s.  */
static inline uint64_t weir__key_str_mask (size_t n, uint64_t *ge8)
{
    *ge8 = -(uint64_t) (n >= 8);
    return ((uint64_t) 1 << (8 * (n & 7))) - 1;
}

/*  The canonical key of the str S of N bytes (N at most
    WEIR__KEY_STR_SHORT, weir__key_str_readable) as 16 bytes in *LO
    and *HI (little-endian, zero past its N + 1 bytes).  */
static inline void weir__key_str16 (const char *s, size_t n, uint64_t *lo, uint64_t *hi)
{
    uint64_t ge8, m = weir__key_str_mask (n, &ge8);
    uint64_t w0 = weir__key_load8 (s) & (m | ge8), w1 = weir__key_load8 (s + 8) & (m & ge8);
    *lo = w0 << 8 | (0xa0 | n);
    *hi = w1 << 8 | w0 >> 56;
}

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

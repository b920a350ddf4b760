/*  checkpoint/layout.h - one checkpoint as the entries (keys and values)
    the store writes, and back from the entries it reads.

    This is checkpoint/keys.h's layout applied, and the only code that
    builds or takes apart the store's keys; it knows nothing of LevelDB,
    which the store keeps to itself.  Writing, weir__layout_init turns a
    checkpoint into its entries in key order (the order the checksum and
    a reader see them in) with the checksum over them.  Reading, the store
    hands each entry of an epoch in key order to weir__layout_take, hashes
    it with weir__layout_hash, and weir__layout_check and
    weir__layout_assemble refuse what does not add up and put each blob
    together from its chunks.

    A small section (meta, offsets, writers, files) is packed into one
    value, so that a checkpoint is a handful of entries plus the blob
    chunks, whatever the number of shards: for each item, a u32 name
    length, the name, a u32 value length and the value, in the machine's
    byte order.

    Errors are WEIR_ENOMEM, and WEIR_ECORRUPT with a message naming the
    epoch and DIR, the store's directory (for messages only).  */
#ifndef WEIR_LAYOUT_H_INCLUDED
#define WEIR_LAYOUT_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "checkpoint/ckpt.h"
#include "lib/error.h"

/*  One entry: its key is the layout's, its value borrowed from the
    checkpoint or the layout's own (a packed section, a blob's size).  */
typedef struct {
    char *key;
    size_t klen;
    const char *value;
    size_t vlen;
} weir__layout_entry;

/*  A blob as a checkpoint stores it: its bytes (SIZE of them, of hash
    HASH) are those checkpoint HELD's write put in the store.  */
typedef struct {
    char *name;
    size_t size;
    uint64_t held, hash;
} weir__layout_blob;

/*  Every entry of one checkpoint, in key order, and its checksum entry.
    Caller-owned: weir__layout_init, then weir__layout_release.  */
typedef struct {
    weir__layout_entry *entries;
    size_t count, cap;
    char **owned;  //  packed sections and size texts
    size_t nowned;
    char sum_key[40], sum[48];
    weir__layout_blob *blobs;  //  one per blob of the checkpoint
    size_t nblobs;
} weir__layout;

/*  1 and *HELD when the store holds the bytes of blob NAME, SIZE of them
    of hash HASH, as checkpoint *HELD wrote them; else 0.  */
typedef int (weir__layout_find_fn) (void *arg, const char *name, size_t size, uint64_t hash, uint64_t *held);

/*  The entries of CKPT, which must outlive SELF (its blobs are borrowed,
    not copied).  A blob whose bytes FIND says the store holds already
    gets only its entry, naming the write that holds them; the others'
    bytes are written again, under this epoch (FIND NULL: every blob's).
    0 or WEIR_ENOMEM; release SELF either way.  */
int weir__layout_init (weir__layout *self, const weir__ckpt *ckpt, weir__layout_find_fn *find, void *arg);
void weir__layout_release (weir__layout *self);

/*  H with one more entry mixed in, as the checksum counts them.  */
uint64_t weir__layout_hash (uint64_t h, const char *key, size_t klen, const char *value, size_t vlen);

/*  Put the entry KEY (of CKPT's epoch, checksum entry excepted) with
    VALUE into CKPT: the items of a packed section, or a blob's size or
    chunk.  0 or an error.  */
int weir__layout_take (weir__ckpt *ckpt, const char *dir, const char *key, size_t klen, const char *value,
                       size_t vlen, weir__err *err);

/*  COUNT entries taken, whose hashes chained to HASH, against SUM, the
    value of the checksum entry (NULL when there was none).  0 or an
    error: the checkpoint does not exist (nothing taken), or it is
    incomplete or altered.  */
int weir__layout_check (const weir__ckpt *ckpt, const char *dir, size_t count, uint64_t hash, const char *sum,
                        weir__err *err);

/*  Copy the value of KEY into DST when it is CAP bytes long: 0 and *LEN;
    -1 when there is no such key (*LEN 0) or it has another length (*LEN
    its length).  */
typedef int (weir__layout_get_fn) (void *arg, const char *key, size_t klen, char *dst, size_t cap,
                                   size_t *len);

/*  Replace the entry of each blob of CKPT with its bytes, put together
    from its chunks (the epoch's own, taken, in a store written before
    blobs were kept once; else read with GET from the write that holds
    them, and checked against their hash), and drop the chunks.  0 or an
    error.  */
int weir__layout_assemble (weir__ckpt *ckpt, const char *dir, weir__layout_get_fn *get, void *arg,
                           weir__err *err);

/*  A blob's entry, VALUE of LEN bytes: 1 with *SIZE, *HELD and *HASH when
    its bytes are in the chunks of write *HELD; 0 with *SIZE for a store
    written before, whose chunks are the epoch's own; -1 when malformed.  */
int weir__layout_blob_value (const char *value, size_t len, size_t *size, uint64_t *held, uint64_t *hash);

/*  FN for each blob of a checkpoint's packed blob entries (the value of
    its key e/EPOCH/b, LEN bytes at PACKED) whose bytes a write holds:
    its name (NLEN bytes, not terminated), size, write and hash.  0, or
    -1 when malformed or FN returned non-zero.  */
typedef int (weir__layout_blob_fn) (void *arg, const char *name, size_t nlen, size_t size, uint64_t held,
                                    uint64_t hash);
int weir__layout_blobs_each (const char *packed, size_t len, weir__layout_blob_fn *fn, void *arg);

/*  Hand each key of the chunks of the SIZE bytes of blob NAME (NLEN
    bytes) that write HELD holds to FN.  */
typedef void (weir__layout_key_fn) (void *arg, const char *key, size_t klen);
void weir__layout_shared_keys (const char *name, size_t nlen, size_t size, uint64_t held,
                               weir__layout_key_fn *fn, void *arg);

/*  Hand each key of the epoch's own chunks of the blob whose entry is
    KEY, with VALUE (a store written before blobs were kept once), to FN,
    as deleting an epoch needs them: chunks are never read to find their
    keys, which would read every byte of every blob.  */
void weir__layout_chunk_keys (const char *key, size_t klen, const char *value, size_t vlen,
                              weir__layout_key_fn *fn, void *arg);

#endif

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

/*  Every entry of one checkpoint, in key order, and its checksum entry.
    Caller-owned: weir__layout_init, then weir__layout_release.  */
typedef struct {
    weir__layout_entry *entries;
    size_t count, cap;
    char **owned;  //  packed sections and size texts
    size_t nowned;
    char sum_key[40], sum[48];
} weir__layout;

/*  The entries of CKPT, which must outlive SELF (its blobs are borrowed,
    not copied).  0 or WEIR_ENOMEM; release SELF either way.  */
int weir__layout_init (weir__layout *self, const weir__ckpt *ckpt);
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

/*  Replace the size of each blob of CKPT with its bytes, put together from
    its chunks, and drop the chunks.  0 or an error.  */
int weir__layout_assemble (weir__ckpt *ckpt, const char *dir, weir__err *err);

/*  Hand each key of the chunks of the blob whose size entry is KEY, with
    VALUE, to FN, as deleting an epoch needs them: chunks are never read
    to find their keys, which would read every byte of every blob.  */
typedef void (weir__layout_key_fn) (void *arg, const char *key, size_t klen);
void weir__layout_chunk_keys (const char *key, size_t klen, const char *value, size_t vlen,
                              weir__layout_key_fn *fn, void *arg);

#endif

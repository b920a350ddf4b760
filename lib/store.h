/*  lib/store.h - checkpoints in LevelDB.

    A checkpoint is a set of named items in four sections: metadata ('m'),
    reader offsets per shard ('o'), writer offsets ('w') and workspace
    blobs ('b').  weir__store_write puts all of one checkpoint, a checksum
    over it, the 'latest' pointer and the deletion of checkpoints beyond
    the retention in ONE synced WriteBatch: after a crash at any instant a
    checkpoint is there whole or not at all.

    Keys: e/<epoch, 20 digits>/<section> holds each small section (m, o,
    w) packed, so a checkpoint is a handful of entries whatever the number
    of shards; a blob is e/<epoch>/b/<name> (its size) and 4 MiB chunks
    e/<epoch>/c/<name>#<chunk>; the checksum is e/<epoch>/~sum.  The database is opened with paranoid checks and
    read with checksum verification: LevelDB otherwise drops corrupt log
    records silently.  A checkpoint whose checksum or keys do not add up is
    refused whole, never half-loaded.  */
#ifndef WEIR_STORE_H_INCLUDED
#define WEIR_STORE_H_INCLUDED

#include <leveldb/c.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"

/*  LevelDB options as every LevelDB of weir opens with: paranoid checks
    (without them LevelDB drops corrupt log records silently and opens
    anyway, possibly rolled back), and reads that verify checksums and
    leave the block cache to hot data.  The caller destroys them.  */
leveldb_options_t *weir__leveldb_options (int create);
leveldb_readoptions_t *weir__leveldb_readoptions (void);

typedef struct weir__ckpt weir__ckpt;
typedef struct weir__store weir__store;

/*  An in-memory checkpoint.  */
weir__ckpt *weir__ckpt_new (uint64_t epoch);
void weir__ckpt_destroy (weir__ckpt **self_p);
uint64_t weir__ckpt_epoch (const weir__ckpt *self);

/*  Add an item.  With COPY the bytes are copied; without, they are
    borrowed and must stay valid until the checkpoint is written.  0 or
    WEIR_ENOMEM.  */
int weir__ckpt_put (weir__ckpt *self, char section, const char *name, const void *data, size_t len,
                    int copy);
int weir__ckpt_put_text (weir__ckpt *self, char section, const char *name, const char *text);
int weir__ckpt_put_u64 (weir__ckpt *self, char section, const char *name, uint64_t value);

/*  The item or NULL; *LEN its size.  */
const void *weir__ckpt_get (const weir__ckpt *self, char section, const char *name, size_t *len);

/*  A metadata or offset value as an integer; -1 if missing or not one.  */
int weir__ckpt_get_u64 (const weir__ckpt *self, char section, const char *name, uint64_t *value);

/*  Items of a section, in name order: COUNT, then each by index.  */
size_t weir__ckpt_count (const weir__ckpt *self, char section);
const char *weir__ckpt_item (const weir__ckpt *self, char section, size_t index, const void **data,
                             size_t *len);

/*  Open (and with CREATE, create) the store in DIR.  */
int weir__store_open (const char *dir, int create, weir__store **out, weir__err *err);
void weir__store_destroy (weir__store **self_p);

/*  Close and open the database again: after a failed write (a full disk)
    LevelDB refuses every later write on the same handle.  */
int weir__store_reopen (weir__store *self, weir__err *err);

/*  The epochs present, ascending.  Caller frees *EPOCHS.  */
int weir__store_epochs (weir__store *self, uint64_t **epochs, size_t *count, weir__err *err);

/*  The latest epoch: 0 and *EPOCH, 1 when the store has none, or an
    error.  */
int weir__store_latest (weir__store *self, uint64_t *epoch, weir__err *err);

/*  Write CKPT (and the latest pointer) and delete all but the newest KEEP
    checkpoints (0: keep all), in one synced batch.  */
int weir__store_write (weir__store *self, const weir__ckpt *ckpt, unsigned keep, weir__err *err);

/*  Load checkpoint EPOCH, verified.  WEIR_ECORRUPT naming the epoch when a
    key is missing or the checksum differs; WEIR_ENOENT-like
    WEIR_ECORRUPT when it does not exist.  */
int weir__store_read (weir__store *self, uint64_t epoch, weir__ckpt **out, weir__err *err);

/*  A 64-bit checksum of bytes, fast enough for gigabytes of blobs.  */
uint64_t weir__hash64 (uint64_t seed, const void *data, size_t len);

#endif

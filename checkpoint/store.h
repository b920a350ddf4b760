/*  checkpoint/store.h - checkpoints in LevelDB.

    weir__store_write puts all of one checkpoint, a checksum over it, the
    'latest' pointer and the deletion of checkpoints beyond the retention
    in ONE synced WriteBatch: after a crash at any instant a checkpoint is
    there whole or not at all.  The layout is in checkpoint/keys.h;
    checkpoint/layout.h makes the entries and takes them apart.  The
    database is opened with paranoid checks and read with checksum
    verification (lib/leveldb.h); a checkpoint whose checksum or keys do
    not add up is refused whole, never half-loaded.  */
#ifndef WEIR_STORE_H_INCLUDED
#define WEIR_STORE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "checkpoint/ckpt.h"
#include "lib/error.h"

typedef struct weir__store weir__store;

/*  Open the store in DIR for a job, creating it when DIR is missing or
    empty (CREATE), or read-only (not CREATE): a private copy is opened, so
    that inspecting never takes the store's lock nor changes it, and works
    while a job runs.  WEIR_EIO naming DIR.  */
int weir__store_open (const char *dir, int create, weir__store **out, weir__err *err);
void weir__store_destroy (weir__store **self_p);

/*  The directory it was opened on.  */
const char *weir__store_dir (const weir__store *self);

/*  Close and open the database again: after a failed write (a full disk)
    LevelDB refuses every later write on the same handle.  */
int weir__store_reopen (weir__store *self, weir__err *err);

/*  The complete epochs present, ascending.  Caller frees *EPOCHS.  */
int weir__store_epochs (weir__store *self, uint64_t **epochs, size_t *count, weir__err *err);

/*  The latest epoch: 0 and *EPOCH, 1 when the store has none, or a
    negative WEIR_E* code with ERR.  */
int weir__store_latest (weir__store *self, uint64_t *epoch, weir__err *err);

/*  The epoch marked the best (weir_checkpoint_best): the same returns.  */
int weir__store_best (weir__store *self, uint64_t *epoch, weir__err *err);

/*  The newest epoch this store was written with, by the hint it keeps
    beside LevelDB (0 when there is none).  When it is newer than
    weir__store_latest, the store lost its last checkpoints (a log cut in a
    power failure) and a resume goes on from an older one.  */
uint64_t weir__store_written (const weir__store *self);

/*  Write CKPT (and the latest pointer) and delete all but the newest KEEP
    checkpoints (0: keep all), in one synced batch.  0 or WEIR_EIO.  */
int weir__store_write (weir__store *self, const weir__ckpt *ckpt, unsigned keep, weir__err *err);

/*  Go back to checkpoint EPOCH for good: every newer one deleted and the
    latest pointer at EPOCH, in one synced batch (the count deleted into
    *DROPPED; nothing is written when there is none).  A resume from an
    older checkpoint does this before it cuts any output back, so that a
    crash before its first checkpoint resumes from EPOCH again, not from
    a newer one whose outputs it has rewritten.  0 or WEIR_EIO.  */
int weir__store_rollback (weir__store *self, uint64_t epoch, unsigned *dropped, weir__err *err);

/*  Load checkpoint EPOCH, verified whole.  WEIR_ECORRUPT naming the epoch
    and the directory when it does not exist, a key is missing or the
    checksum differs.  */
int weir__store_read (weir__store *self, uint64_t epoch, weir__ckpt **out, weir__err *err);

#endif

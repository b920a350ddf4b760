/*  writers/writer.h - what a builtin writer is.

    A writer takes whole batches.  Its write() is called by every writer
    thread, each passing its thread index so that per-thread buffers need no
    lock; what reaches a shared file goes through weir__outfile
    (writers/outfile.h), which serialises whole buffers, so records from
    different threads never interleave inside a line.  */
#ifndef WEIR_WRITER_H_INCLUDED
#define WEIR_WRITER_H_INCLUDED

#include <msgpack.h>
#include <stdint.h>
#include <weir/weir.h>

#include "lib/error.h"
#include "lib/props.h"

/*  The committed state of a writer (for a file, its length in bytes) as
    text, at most this long.  */
#define WEIR__WRITER_STATE_MAX 64

/*  A fresh start of a job without a checkpoint: a writer of a file writes
    beside it and puts what it wrote in the file's place only when the job
    succeeds, so a failed job leaves the file as it was (as sed -i and
    rsync do).  With a checkpoint the file itself is written: a failed job
    goes on from its last checkpoint with --resume.  */
#define WEIR__WRITER_REPLACE 1u

/*  The job saves checkpoints (--checkpoint-dir): a commit's output is
    final only once the checkpoint that records it is written, and the
    writer hears so through settle.  Without it, every commit is final at
    once (settle follows commit at once).  */
#define WEIR__WRITER_CHECKPOINTED 2u

/*  A record a writer cannot write, and why (a map key that is no column):
    0 when it is skipped (on-error=skip: counted, kept in the dead
    letter), else the error that fails the job, in ERR.  Any writer
    thread.  */
typedef int (weir__writer_reject_fn) (void *arg, const msgpack_object *record, const char *reason,
                                      weir__err *err);

typedef struct weir__writer_class {
    const char *name;
    const char *description;
    const weir_property_info *props;
    /*  RESUME is NULL on a fresh start (files are created empty), else the
        committed state a checkpoint recorded: the writer goes back to it
        (a file is truncated to its committed length) and appends.  FLAGS:
        WEIR__WRITER_REPLACE or 0.  */
    int (*open) (weir__props *props, unsigned threads, const char *resume, unsigned flags, void **state,
                 weir__err *err);
    /*  PAYLOAD is COUNT well-formed records back to back.  */
    int (*write) (void *state, unsigned thread, const char *payload, size_t len, uint32_t count,
                  weir__err *err);
    /*  At an epoch barrier, from writer thread THREAD: hand everything the
        thread buffered to the output.  */
    int (*flush) (void *state, unsigned thread, weir__err *err);
    /*  With every thread flushed: make the output durable (fsync) and say
        what is committed, as text in OUT.  */
    int (*commit) (void *state, char *out, weir__err *err);
    /*  Flush and release everything; the first failure is returned.  STATE
        is freed even then.  */
    int (*close) (void *state, weir__err *err);
    /*  Before close, when the job failed: what this run wrote is not to
        take the place of what the output held (WEIR__WRITER_REPLACE).
        NULL: the writer writes in place, and a failed job leaves what it
        wrote.  */
    void (*discard) (void *state);
    /*  The checkpoint that recorded DURABLE, a state this writer's commit
        returned, is written: what that commit and those before it made
        ready becomes final (a PostgreSQL writer commits the transactions
        it prepared).  Between commit and settle a crash leaves the choice
        to the resume, which goes back to the state the checkpoint it
        finds recorded.  NULL: a commit is final as it returns (a synced
        file; the checkpoint's state cuts it back).  */
    int (*settle) (void *state, const char *durable, weir__err *err);
    /*  A writer whose properties take on-error= and dead-letter= is given,
        once open, where a record it cannot write goes when they say skip:
        REJECT (ARG).  Without skip it is not called, and the writer fails
        on the record, naming it.  NULL: the writer never leaves a record
        out.  */
    void (*rejecting) (void *state, weir__writer_reject_fn *reject, void *arg);
} weir__writer_class;

extern const weir__writer_class weir__writer_null;
extern const weir__writer_class weir__writer_lines;
extern const weir__writer_class weir__writer_msgpack;
extern const weir__writer_class weir__writer_leveldb;
extern const weir__writer_class weir__writer_libsvm;
extern const weir__writer_class weir__writer_json;
extern const weir__writer_class weir__writer_postgres;
extern const weir__writer_class weir__writer_kafka;

#endif

/*  pipeline/output.h - a writer stage's output: its writer, open while the
    pipe runs, and what it committed last.

    Writer threads write and flush through it; at each epoch's end, with
    the pipe quiescent, the recovery commits it (the output becomes
    durable) and records its committed state (a file's length) in the
    checkpoint; on resume it opens going back to that state.  */
#ifndef WEIR_OUTPUT_H_INCLUDED
#define WEIR_OUTPUT_H_INCLUDED

#include <stdint.h>

#include "lib/error.h"
#include "lib/props.h"
#include "writers/writer.h"

typedef struct weir__output weir__output;

/*  An output written by CLS (borrowed: a builtin's).  NULL when out of
    memory.  */
weir__output *weir__output_new (const weir__writer_class *cls);

/*  Free it, closing the writer if it is still open (its error lost).  */
void weir__output_destroy (weir__output **self_p);

const weir__writer_class *weir__output_class (const weir__output *self);

/*  Open the writer with PROPS for THREADS threads.  RESUME is NULL on a
    fresh start (the output starts empty), else the committed state it
    goes back to (copied).  FLAGS: WEIR__WRITER_REPLACE (writers/writer.h)
    or 0.  */
int weir__output_open (weir__output *self, weir__props *props, unsigned threads, const char *resume,
                       unsigned flags, weir__err *err);

/*  From writer thread THREAD: COUNT records back to back in PAYLOAD; and
    at a barrier, everything the thread buffered to the output.  */
int weir__output_write (weir__output *self, unsigned thread, const char *payload, size_t len, uint32_t count,
                        weir__err *err);
int weir__output_flush (weir__output *self, unsigned thread, weir__err *err);

/*  With every thread flushed: make the output durable and keep what it
    committed.  */
int weir__output_commit (weir__output *self, weir__err *err);

/*  The state at the last commit (or the one resumed from; "" before
    either).  */
const char *weir__output_committed (const weir__output *self);

/*  The state it committed last goes into the checkpoint of EPOCH.  */
void weir__output_saving (weir__output *self, uint64_t epoch);

/*  The checkpoints up to that of epoch DURABLE are written: the newest
    state saved in one of them is settled (writers/writer.h), once.  */
int weir__output_settle (weir__output *self, uint64_t durable, weir__err *err);

/*  With on-error=skip: records the writer cannot write go to REJECT (ARG)
    (writers/writer.h).  Once open.  */
void weir__output_rejecting (weir__output *self, weir__writer_reject_fn *reject, void *arg);

/*  The job failed: a writer that replaces its output at close keeps the
    old one instead (WEIR__WRITER_REPLACE).  */
void weir__output_discard (weir__output *self);

/*  Flush, close and release the writer; the first failure is returned.
    Nothing when it is not open.  */
int weir__output_close (weir__output *self, weir__err *err);

#endif

/*  pipeline/recovery.h - what makes a run recoverable: where it starts
    (fresh, or from a checkpoint), and what each epoch commits.

    The engine's side of the checkpoint room.  Before the stages open, it
    opens the checkpoint store, decides where the job goes on from and
    restores the workspace; as each stage opens, it hands back that stage's
    checkpointed state (a reader's offsets, a writer's or a dead letter's
    committed state); at each epoch boundary it commits the outputs (they
    become durable) and then saves the checkpoint that records the same
    instant: offsets, committed states, blobs.  What a job of several
    ranks adds to both is pipeline/ranks.h's.  */
#ifndef WEIR_RECOVERY_H_INCLUDED
#define WEIR_RECOVERY_H_INCLUDED

#include "lib/workspace.h"
#include "pipeline/controller.h"
#include "pipeline/job.h"
#include "pipeline/options.h"
#include "pipeline/ranks.h"
#include "pipeline/stage.h"

typedef struct weir__recovery weir__recovery;

/*  What a recovery borrows from the run: all of it outlives the
    recovery.  */
typedef struct weir__recovery_of {
    const weir__options *options;
    weir__stages *stages;  //  resolved, the reader's input open
    const char *description, *shape, *older_shape;
    weir__job *job;
    weir__ranks *ranks;
} weir__recovery_of;

/*  Prepare the run of WHAT: a workspace, blobs loaded from another job
    (--load-blobs), the checkpoint store (created if missing) and the
    checkpoint the job goes on from, whose blobs and record counts are
    restored.  0 and *OUT, or an error (a directory that holds checkpoints
    without --resume, a checkpoint of another pipeline, a corrupt one).  */
int weir__recovery_new (const weir__recovery_of *what, weir__recovery **out, weir__err *err);
void weir__recovery_destroy (weir__recovery **self_p);

/*  The job's blobs, shared by every stage.  */
weir__workspace *weir__recovery_workspace (weir__recovery *self);

/*  The key groups of the job (lib/key.h): the checkpoint's when it
    resumes, else the option's or the default.  */
unsigned weir__recovery_key_groups (const weir__recovery *self);

/*  No checkpoint to go on from: init runs, and checkpoint 0 is written.  */
int weir__recovery_fresh (const weir__recovery *self);

/*  Do the job's files of output replace the old ones only when it
    succeeds (WEIR__WRITER_REPLACE)?  Not with checkpoints: a failed run
    goes on from the last one, in the files themselves.  Nor from an input
    that may never end (weir__input_live): its output is watched as it
    grows.  Once the reader opened.  */
int weir__recovery_replaces (const weir__recovery *self);

/*  Does the job save checkpoints (WEIR__WRITER_CHECKPOINTED)?  */
int weir__recovery_checkpoints (const weir__recovery *self);

/*  The epoch the run begins with, and the pass over the input it is in.  */
uint64_t weir__recovery_first_epoch (const weir__recovery *self);
unsigned weir__recovery_pass (const weir__recovery *self);

/*  The checkpoint it goes on from says the job had finished.  */
int weir__recovery_finished (const weir__recovery *self);

/*  Once reader STAGE opened and planned its shards: their offsets, from
    the shards' starts or the checkpoint.  An error when the shards are
    not those checkpointed.  */
int weir__recovery_input (weir__recovery *self, weir__stage *stage, weir__err *err);

/*  Before writer STAGE opens: the committed state it goes back to, into
    STATE (WEIR__WRITER_STATE_MAX bytes), and *RESUME pointing at it (NULL
    on a fresh start).  */
int weir__recovery_output (weir__recovery *self, weir__stage *stage, char *state, const char **resume,
                           weir__err *err);

/*  The same for the dead letter of STAGE.  */
int weir__recovery_rejects (weir__recovery *self, weir__stage *stage, char *state, const char **resume,
                            weir__err *err);

/*  Once every stage opened (and init ran): start saving checkpoints, the
    first (epoch 0) on a fresh start, after the outputs committed their
    empty state.  */
int weir__recovery_begin (weir__recovery *self, weir__err *err);

/*  The end of an epoch, with the pipe quiescent (a weir__boundary_fn, ARG
    the recovery): commit the outputs, rewind the input for a new pass,
    save the checkpoint.  0, or 1 when it failed the job.  */
int weir__recovery_commit (void *self, const weir__boundary *b);

/*  The job ended well: wait for the last checkpoint (its failure is the
    job's) and settle what it records in every output of every rank
    (writers/writer.h), before they close.  */
int weir__recovery_settle (weir__recovery *self, weir__err *err);

/*  Wait for the last checkpoint write; its failure is the job's.  */
int weir__recovery_finish (weir__recovery *self, weir__err *err);

#endif

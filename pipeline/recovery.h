/*  pipeline/recovery.h - what makes a run recoverable: where it starts
    (fresh, or from a checkpoint), and what each epoch commits.

    The engine's side of the checkpoint room.  Before the stages open, it
    opens the checkpoint store, decides where the job goes on from and
    restores the workspace; as each stage opens, it hands back that stage's
    checkpointed state; at each epoch boundary it commits the writers
    (their output becomes durable) and then saves the checkpoint that
    records the same instant: offsets, writer states, blobs.  */
#ifndef WEIR_RECOVERY_H_INCLUDED
#define WEIR_RECOVERY_H_INCLUDED

#include "cluster/cluster.h"
#include "lib/workspace.h"
#include "pipeline/controller.h"
#include "pipeline/job.h"
#include "pipeline/options.h"
#include "pipeline/stage.h"

typedef struct weir__recovery weir__recovery;

/*  Prepare the run of STAGES (borrowed, as are DESCRIPTION and SHAPE):
    a workspace, blobs loaded from another job (--load-blobs), the
    checkpoint store (created if missing) and the checkpoint the job goes
    on from, whose blobs and record counts are restored.  0 and *OUT, or
    an error (a directory that holds checkpoints without --resume, a
    checkpoint of another pipeline, a corrupt one).  */
int weir__recovery_new (const weir__options *options, weir__stages *stages, const char *description,
                        const char *shape, weir__job *job, weir__cluster *cluster, weir__recovery **out,
                        weir__err *err);
void weir__recovery_destroy (weir__recovery **self_p);

/*  The job's blobs, shared by every stage.  */
weir__workspace *weir__recovery_workspace (weir__recovery *self);

/*  No checkpoint to go on from: init runs, and checkpoint 0 is written.  */
int weir__recovery_fresh (const weir__recovery *self);

/*  The epoch the run begins with, and the pass over the input it is in.  */
uint64_t weir__recovery_first_epoch (const weir__recovery *self);
unsigned weir__recovery_pass (const weir__recovery *self);

/*  The checkpoint it goes on from says the job had finished.  */
int weir__recovery_finished (const weir__recovery *self);

/*  Once reader STAGE opened and planned its shards: its offsets, from the
    shards' starts or the checkpoint.  An error when the shards are not
    those checkpointed.  */
int weir__recovery_reader (weir__recovery *self, weir__stage *stage, weir__err *err);

/*  Before writer STAGE opens: the committed state it goes back to, into
 *RESUME (NULL on a fresh start).  */
int weir__recovery_writer (weir__recovery *self, weir__stage *stage, const char **resume, weir__err *err);

/*  The same for the dead letter of STAGE.  */
int weir__recovery_dead_letter (weir__recovery *self, weir__stage *stage, const char **resume,
                                weir__err *err);

/*  Once every stage opened (and init ran): start saving checkpoints, the
    first (epoch 0) on a fresh start, after the writers committed their
    empty outputs.  */
int weir__recovery_begin (weir__recovery *self, weir__err *err);

/*  The end of an epoch, with the pipe quiescent (a weir__boundary_fn, ARG
    the recovery): commit the writers, rewind the reader for a new pass,
    save the checkpoint.  0, or 1 when it failed the job.  */
int weir__recovery_commit (void *self, const weir__boundary *b);

/*  The ranks of a job agree how an epoch ends (a weir__agree_fn, ARG the
    recovery): they wait for each other there, and the watchdog
    (--epoch-timeout) names those that do not come.  */
int weir__recovery_agree (void *arg, uint64_t epoch, int *exhausted, int *stopping);

/*  Wait for the last checkpoint write; its failure is the job's.  */
int weir__recovery_finish (weir__recovery *self, weir__err *err);

#endif

/*  pipeline/ranks.h - everything a job of several ranks adds to a run.

    mpirun -n N runs one pipe per rank.  Each rank plans every shard (they
    are cut the same way whatever runs them) and reads shard i when i mod
    N is its rank; each writes its own outputs: "{rank}" in a writer's
    path= becomes the rank's number, and a path without it is refused when
    N > 1, since two ranks would write one file.  The ranks meet only at
    epoch boundaries, from the controller's thread, and at start and end:

    - at start, rank 0 reads the checkpoint to go on from and hands it,
      packed, to the others (weir__ranks_hand_out);
    - a writer's committed state is kept per rank's output ("slot"); a
      resume with fewer ranks gives the outputs of ranks that are gone to
      the ranks that are left (slot s to rank s mod N), which take each
      back to its committed state and keep it (weir__ranks_adopt);
    - at each boundary they agree whether the inputs are exhausted and
      whether any rank stops (weir__ranks_agree), combine the blobs
      declared with weir_blob_reduce (weir__ranks_reduce), and send rank 0
      their part of the checkpoint, packed as a checkpoint itself, which
      rank 0 merges into the job's and saves: its synced write is the
      commit point for every rank (weir__ranks_snapshot);
    - at the end, the record counts of every rank are summed for rank 0
      to show (weir__ranks_totals).

    A process not started by an MPI launcher is rank 0 of 1, and all of
    this costs it nothing.  MPI itself is behind cluster/.  */
#ifndef WEIR_RANKS_H_INCLUDED
#define WEIR_RANKS_H_INCLUDED

#include <stdint.h>

#include "checkpoint/resume.h"
#include "cluster/cluster.h"
#include "checkpoint/snapshot.h"
#include "lib/error.h"
#include "lib/exchange.h"
#include "lib/workspace.h"
#include "pipeline/job.h"
#include "pipeline/stage.h"

typedef struct weir__ranks weir__ranks;

/*  Join the ranks of the job JOB runs (MPI starts here when a launcher
    started this process) and give STAGES (borrowed) their share: the
    reader's shards, the writers' paths.  Collectives wait at most
    TIMEOUT seconds (0: for ever).  WEIR_ESTRUCTURE for what a job of
    several ranks cannot do.  */
int weir__ranks_new (weir__stages *stages, weir__job *job, double timeout, weir__ranks **out, weir__err *err);
void weir__ranks_destroy (weir__ranks **self_p);

/*  Without starting MPI: how many ranks the launcher that started this
    process says the job has (1 when none did), and this process's rank
    into *RANK.  */
int weir__ranks_launched (int *rank);

/*  While the run goes on, QUIT (ARG) says whether the job ended (failed
    or aborted), and ends any wait for the other ranks; NULL after.  */
void weir__ranks_watch (weir__ranks *self, weir__cluster_quit_fn *quit, void *arg);

/*  The run is over: AGREED when it ended where every rank ends it
    (finished, or stopped at the agreed boundary).  A process whose run
    did not leaves the job by aborting every rank, whatever its exit
    status, so that none waits for it.  */
void weir__ranks_ended (weir__ranks *self, int agreed);

/*  This process's rank, and the job's ranks.  */
int weir__ranks_rank (const weir__ranks *self);
int weir__ranks_size (const weir__ranks *self);

/*  Rank 0's *RESUME (or none) to every rank: the others get their copy
    in *RESUME (SHAPES as for weir__resume_same).  */
int weir__ranks_hand_out (weir__ranks *self, weir__resume **resume, const weir__shapes *shapes,
                          weir__err *err);

/*  Before writer STAGE opens: its outputs ("slots"), as many as ranks
    ever wrote them; those of ranks gone since RESUME (NULL on a fresh
    start) that are this rank's to keep go back to their committed state,
    then close, their state carried into every checkpoint.  */
int weir__ranks_adopt (weir__ranks *self, weir__stage *stage, const weir__resume *resume, weir__err *err);

/*  Whether a writer has outputs that the checkpoint gone on from did not
    know (a job resumed on more ranks): the same on every rank, once every
    writer's outputs were adopted.  */
int weir__ranks_grew (const weir__ranks *self);

/*  The ranks agree how an epoch ends (a weir__agree_fn, ARG the ranks):
    they wait for each other there, and the watchdog (TIMEOUT) names those
    that do not come.  */
int weir__ranks_agree (void *arg, uint64_t epoch, int *exhausted, int *stopping);

/*  Which checkpoint is written, for writers that settle what one
    records (writers/writer.h): rank 0 says EPOCH, the newest its saver
    wrote; every rank hears it at the next boundary's agreement, and at the
    end, once the last checkpoint is written, through
    weir__ranks_share_durable (a collective).  weir__ranks_durable: 0 and
    *EPOCH, or -1 when this rank heard of none.  */
void weir__ranks_set_durable (weir__ranks *self, uint64_t epoch);
int weir__ranks_durable (const weir__ranks *self, uint64_t *epoch);
int weir__ranks_share_durable (weir__ranks *self, weir__err *err);

/*  The keyed links of the job (lib/exchange.h): LINKS of them, each
    bounded at CAPACITY messages per connection, bound and connected to
    every other rank (the ranks share where they listen, lib/hostaddr.h;
    WEIR_EXCHANGE_NET in the environment names the network to use), and
    greeted: every rank's SHAPES[link] must be this one's.  *OUT NULL on
    one rank or without keyed links.  */
int weir__ranks_exchange (weir__ranks *self, unsigned links, const uint64_t *shapes, unsigned capacity,
                          weir__exchange **out, weir__err *err);

/*  Combine every declared region of WS across the ranks at the end of
    EPOCH.  */
int weir__ranks_reduce (weir__ranks *self, weir__workspace *ws, uint64_t epoch, weir__err *err);

/*  With the pipe quiescent, S is this rank's state: what ranks add to it
    is added (every writer's slots); in a job of several ranks S is this
    rank's part, and on rank 0 it becomes the whole job's (its arrays
    borrowed from SELF until the next call).  Only rank 0 saves it.  */
int weir__ranks_snapshot (weir__ranks *self, weir__snapshot *s, weir__err *err);

/*  A job of several ranks that ended well: every stage's counts summed
    over the ranks, as job_* of its statistics.  */
int weir__ranks_totals (weir__ranks *self, weir__stages *stages, weir__err *err);

#endif

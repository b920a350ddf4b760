/*  cluster/cluster.h - the ranks of a job, and the few collectives the
    epoch controller needs across them.

    A job started by mpirun (or srun) runs one weir process per rank; each
    runs its own pipe, and the ranks meet only at epoch boundaries, from the
    controller's thread.  A process started any other way is a job of one
    rank, and every collective is then a copy or nothing.  MPI is behind
    cluster/mpi.h, the only file that calls it, so that another backend
    could follow.

    Every collective waits at most TIMEOUT seconds (0: for ever) and names
    WHAT it was doing when it gives up; the barrier names the ranks that did
    not arrive, and any wait ends when the job it serves ended (see
    weir__cluster_watch).  A process that ends after the cluster started
    aborts every rank of the job (mpirun exits with its code) unless its
    last run ended where every rank ends (weir__cluster_ended) and it
    exits 0, 130 or 143.  */
#ifndef WEIR_CLUSTER_H_INCLUDED
#define WEIR_CLUSTER_H_INCLUDED

#include <stddef.h>

#include "lib/error.h"

typedef struct weir__cluster weir__cluster;

/*  Element types and operations of weir__cluster_allreduce.  The first
    three are the public weir_reduce_type's; U64 is the engine's own (an
    aggregation's watermark, pipeline/aggregate.c), never a mean.  */
enum { WEIR__REDUCE_F32, WEIR__REDUCE_F64, WEIR__REDUCE_I64, WEIR__REDUCE_U64 };
enum { WEIR__REDUCE_SUM, WEIR__REDUCE_MEAN, WEIR__REDUCE_MIN, WEIR__REDUCE_MAX };

/*  The ranks this process belongs to, started at the first call (MPI is
    initialised once per process, and finalised at its exit), for a run
    that has not ended yet.  0 and *OUT, or WEIR_ESYSTEM.  */
int weir__cluster_get (weir__cluster **out, weir__err *err);

/*  Without starting MPI: how many ranks the launcher that started this
    process says the job has (1 when none did, or weir has no MPI), and
    this process's rank into *RANK.  */
int weir__cluster_launched (int *rank);

int weir__cluster_rank (const weir__cluster *self);
/*  While a run goes on: QUIT (ARG) is asked as a collective waits, and a
    non-zero answer (the job failed, or was aborted) ends the wait with
    WEIR_EABORTED.  NULL once the run is over.  */
typedef int weir__cluster_quit_fn (void *arg);
void weir__cluster_watch (weir__cluster *self, weir__cluster_quit_fn *quit, void *arg);
/*  The run ended: AGREED when it ended where every rank ends it (finished, or
    stopped at the boundary they agreed on), so that the process may leave
    the job without taking it down.  */
void weir__cluster_ended (weir__cluster *self, int agreed);
int weir__cluster_size (const weir__cluster *self);

/*  Wait until every rank arrived.  */
int weir__cluster_barrier (weir__cluster *self, double timeout, const char *what, weir__err *err);

/*  Rank 0's *BUF (*LEN bytes) to every rank: the others get a malloc'ed
    copy in *BUF (which they pass in NULL).  */
int weir__cluster_bcast (weir__cluster *self, char **buf, size_t *len, double timeout, const char *what,
                         weir__err *err);

/*  Every rank's BUF to rank 0: there *ALL is malloc'ed and holds them back
    to back, LENS[r] (the caller's array of size ranks) rank r's length.
    Any length: the bytes go in rounds (MPI counts in int), as a large
    broadcast goes in pieces.  */
int weir__cluster_gather (weir__cluster *self, const char *buf, size_t len, char **all, size_t *lens,
                          double timeout, const char *what, weir__err *err);

/*  COUNT elements of TYPE at DATA become, on every rank, OP over the
    ranks' arrays.  */
int weir__cluster_allreduce (weir__cluster *self, void *data, size_t count, int type, int op, double timeout,
                             const char *what, weir__err *err);

#endif

/*  cluster/mpi.h - the MPI backend of cluster/cluster.h: the only file that
    calls MPI.  Built when configure found MPI (WEIR_HAVE_MPI).

    Every call comes from one thread at a time (the controller's), so MPI
    is initialised with MPI_THREAD_SERIALIZED.  Collectives are the
    non-blocking ones, tested in short sleeps: a rank that waits for the
    others leaves its core to them (a blocking MPI call spins), and a wait
    can end at a deadline, which MPI itself never does.  */
#ifndef WEIR_MPI_H_INCLUDED
#define WEIR_MPI_H_INCLUDED

#include <stddef.h>

#include "lib/error.h"

/*  How many ranks the launcher's environment says, or 0 when the process
    was not started by one; this process's rank into *RANK.  */
int weir__mpi_launched (int *rank);

/*  Initialise MPI (once); at the process's exit it is finalised when the
    last run ended where every rank ends (weir__mpi_ended) and the exit
    status is 0, 130 or 143; else every rank is aborted with that status
    (1 for 0).  */
int weir__mpi_init (int *rank, int *size, weir__err *err);
/*  QUIT (ARG) is asked while a collective waits: non-zero leaves the wait
    with WEIR_EABORTED.  NULL asks nothing.  */
typedef int weir__mpi_quit_fn (void *arg);
void weir__mpi_watch (weir__mpi_quit_fn *quit, void *arg);
/*  Whether the run that ended ended where every rank ends.  */
void weir__mpi_ended (int agreed);

int weir__mpi_barrier (double timeout, const char *what, weir__err *err);
int weir__mpi_bcast (char **buf, size_t *len, double timeout, const char *what, weir__err *err);
int weir__mpi_gather (const char *buf, size_t len, char **all, size_t *lens, double timeout, const char *what,
                      weir__err *err);
/*  TYPE and OP as in cluster/cluster.h, OP not MEAN.  */
int weir__mpi_allreduce (void *data, size_t count, int type, int op, double timeout, const char *what,
                         weir__err *err);

#endif

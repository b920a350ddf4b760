/*  cluster/cluster.c - the ranks of a job: MPI's, or this process alone.  */
#include "config.h"
#include "cluster/cluster.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef WEIR_HAVE_MPI
#include "cluster/mpi.h"
#endif

struct weir__cluster {
    int mpi;  //  started by an MPI launcher
    int rank, size;
};

static weir__cluster s_cluster = {0, 0, 1};
static int s_started;
static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;

int weir__cluster_launched (int *rank)
{
#ifdef WEIR_HAVE_MPI
    int n = weir__mpi_launched (rank);
    return n > 0 ? n : 1;
#else
    *rank = 0;
    return 1;
#endif
}

int weir__cluster_get (weir__cluster **out, weir__err *err)
{
    int rc = 0;
    pthread_mutex_lock (&s_lock);
    if (!s_started) {
#ifdef WEIR_HAVE_MPI
        int rank;
        if (weir__mpi_launched (&rank) > 0) {
            rc = weir__mpi_init (&s_cluster.rank, &s_cluster.size, err);
            s_cluster.mpi = !rc;
        }
#endif
        s_started = !rc;
    }
#ifdef WEIR_HAVE_MPI
    //  A new run: until it ends where every rank ends, leaving takes the
    //  job down
    if (!rc && s_cluster.mpi)
        weir__mpi_ended (0);
#endif
    pthread_mutex_unlock (&s_lock);
    *out = rc ? NULL : &s_cluster;
    return rc;
}

int weir__cluster_rank (const weir__cluster *self)
{
    return self->rank;
}

int weir__cluster_size (const weir__cluster *self)
{
    return self->size;
}

void weir__cluster_watch (weir__cluster *self, weir__cluster_quit_fn *quit, void *arg)
{
#ifdef WEIR_HAVE_MPI
    if (self->mpi)
        weir__mpi_watch (quit, arg);
#else
    (void) self, (void) quit, (void) arg;
#endif
}

void weir__cluster_ended (weir__cluster *self, int agreed)
{
#ifdef WEIR_HAVE_MPI
    if (self->mpi)
        weir__mpi_ended (agreed);
#else
    (void) self, (void) agreed;
#endif
}

int weir__cluster_barrier (weir__cluster *self, double timeout, const char *what, weir__err *err)
{
#ifdef WEIR_HAVE_MPI
    if (self->mpi && self->size > 1)
        return weir__mpi_barrier (timeout, what, err);
#endif
    return 0;
}

int weir__cluster_bcast (weir__cluster *self, char **buf, size_t *len, double timeout, const char *what,
                         weir__err *err)
{
#ifdef WEIR_HAVE_MPI
    if (self->mpi && self->size > 1)
        return weir__mpi_bcast (buf, len, timeout, what, err);
#endif
    return 0;
}

int weir__cluster_gather (weir__cluster *self, const char *buf, size_t len, char **all, size_t *lens,
                          double timeout, const char *what, weir__err *err)
{
#ifdef WEIR_HAVE_MPI
    if (self->mpi && self->size > 1)
        return weir__mpi_gather (buf, len, all, lens, timeout, what, err);
#endif
    if (!(*all = malloc (len ? len : 1)))
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    if (len)
        memcpy (*all, buf, len);
    lens[0] = len;
    return 0;
}

int weir__cluster_allreduce (weir__cluster *self, void *data, size_t count, int type, int op, double timeout,
                             const char *what, weir__err *err)
{
    if (self->size <= 1)
        return 0;
#ifdef WEIR_HAVE_MPI
    int rc = weir__mpi_allreduce (data, count, type, op == WEIR__REDUCE_MEAN ? WEIR__REDUCE_SUM : op, timeout,
                                  what, err);
    if (rc || op != WEIR__REDUCE_MEAN)
        return rc;
    //  The mean is the sum over the ranks, divided by them
    for (size_t i = 0; i < count; i++) {
        if (type == WEIR__REDUCE_F32)
            ((float *) data)[i] /= (float) self->size;
        else if (type == WEIR__REDUCE_F64)
            ((double *) data)[i] /= (double) self->size;
        else
            ((int64_t *) data)[i] /= self->size;
    }
    return 0;
#else
    (void) data, (void) count, (void) type, (void) op, (void) timeout, (void) what, (void) err;
    return 0;
#endif
}

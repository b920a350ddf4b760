/*  cluster/mpi.c - ranks and collectives through MPI.  */
#include "config.h"
#include "cluster/mpi.h"

#include <inttypes.h>
#include <limits.h>
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cluster/cluster.h"
#include "lib/clock.h"

#define S_TAG_ARRIVE 7001
#define S_TAG_RELEASE 7002
#define S_TAG_PING 7003
#define S_TAG_PONG 7004

static int s_rank, s_size;

//  The job this process runs: asked each time a collective waits, so that
//  a rank aborted or failed meanwhile leaves the wait (S_QUIT) instead of
//  holding the process until --epoch-timeout, or for ever
static weir__mpi_quit_fn *s_quit;
static void *s_quit_arg;
#define S_QUIT (-1)

//  Set once a run ended where every rank ends (finished, or stopped at an
//  agreed boundary): only then may the process finalise MPI at its exit
static int s_agreed;

//  Ranks other than 0 answer rank 0's pings while they wait: when a
//  collective times out, rank 0 asks who is there, and names who is not.
static MPI_Request s_ping = MPI_REQUEST_NULL;
static char s_ping_buf, s_pong_buf;

static void s_answer_pings (void)
{
    if (s_rank == 0)
        return;
    int flag = 0;
    if (s_ping != MPI_REQUEST_NULL && MPI_Test (&s_ping, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag) {
        MPI_Request pong;
        if (MPI_Isend (&s_pong_buf, 1, MPI_CHAR, 0, S_TAG_PONG, MPI_COMM_WORLD, &pong) == MPI_SUCCESS)
            MPI_Request_free (&pong);
        s_ping = MPI_REQUEST_NULL;
    }
    if (s_ping == MPI_REQUEST_NULL)
        MPI_Irecv (&s_ping_buf, 1, MPI_CHAR, 0, S_TAG_PING, MPI_COMM_WORLD, &s_ping);
}

int weir__mpi_launched (int *rank)
{
    //  Open MPI's mpirun, MPICH's Hydra, Slurm's srun with PMIx (which
    //  says the size in Slurm's own words)
    static const char *const vars[][2] = {{"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"},
                                          {"PMI_SIZE", "PMI_RANK"},
                                          {"SLURM_NTASKS", "PMIX_RANK"}};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *size = getenv (vars[i][0]), *r = getenv (vars[i][1]);
        if (size && r && atoi (size) > 0) {
            *rank = atoi (r);
            return atoi (size);
        }
    }
    *rank = 0;
    return 0;
}

void weir__mpi_watch (weir__mpi_quit_fn *quit, void *arg)
{
    s_quit = quit;
    s_quit_arg = arg;
}

void weir__mpi_ended (int agreed)
{
    s_agreed = agreed;
}

//  At exit: a rank whose run ended where every rank ends finalises (every
//  rank ends at the same epoch, so they all do), and so does one stopped
//  by SIGINT or SIGTERM at the boundary the ranks agreed on (exit 130,
//  143).  Any other rank takes the job down with it, whatever its exit
//  status says: one that failed, and one aborted by a second signal or
//  the stop timeout (which exits 130 or 143 too, but ended alone), or the
//  others would wait for it at the next boundary.
static void s_exit (int status, void *arg)
{
    (void) arg;
    int finalized = 0;
    MPI_Finalized (&finalized);
    if (finalized)
        return;
    //  Aborted at once: a wait left early may still have requests on
    //  buffers that are gone, which driving MPI's progress could fill
    if (!s_agreed || (status != 0 && status != 128 + SIGINT && status != 128 + SIGTERM))
        MPI_Abort (MPI_COMM_WORLD, status ? status : 1);
    if (s_ping != MPI_REQUEST_NULL) {
        MPI_Cancel (&s_ping);
        MPI_Wait (&s_ping, MPI_STATUS_IGNORE);
    }
    MPI_Finalize ();
}

int weir__mpi_init (int *rank, int *size, weir__err *err)
{
    int initialized = 0;
    MPI_Initialized (&initialized);
    if (!initialized) {
        int provided = 0;
        if (MPI_Init_thread (NULL, NULL, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
            return weir__err_set (err, WEIR_ESYSTEM, "MPI could not be initialised");
        if (provided < MPI_THREAD_SERIALIZED) {
            MPI_Abort (MPI_COMM_WORLD, 1);
            return weir__err_set (err, WEIR_ESYSTEM, "MPI offers no MPI_THREAD_SERIALIZED");
        }
        //  Errors come back as codes, to be said with the job's words
        MPI_Comm_set_errhandler (MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm_rank (MPI_COMM_WORLD, &s_rank);
        MPI_Comm_size (MPI_COMM_WORLD, &s_size);
        on_exit (s_exit, NULL);
    }
    *rank = s_rank;
    *size = s_size;
    return 0;
}

static int s_mpi_error (int rc, const char *what, weir__err *err)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string (rc, text, &len) != MPI_SUCCESS)
        snprintf (text, sizeof text, "error %d", rc);
    return weir__err_set (err, WEIR_ESYSTEM, "rank %d: %s: MPI failed: %s", s_rank, what, text);
}

//  Wait for REQS[0, N) to complete, sleeping between tests: from 50 us
//  up to 2 ms, so that a quick collective stays quick and a long wait
//  costs no CPU.  0, 1 at DEADLINE_NS (DONE[i] then says which completed;
//  may be NULL), S_QUIT when the job ended meanwhile, or an MPI error code.
static int s_wait (MPI_Request *reqs, int n, int *done, uint64_t deadline_ns)
{
    long nap = 50000;
    for (;;) {
        if (s_quit && s_quit (s_quit_arg))
            return S_QUIT;
        s_answer_pings ();
        int all = 1;
        for (int i = 0; i < n; i++) {
            if (done && done[i])
                continue;
            int flag = 0;
            int rc = MPI_Test (&reqs[i], &flag, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS)
                return rc;
            if (flag && done)
                done[i] = 1;
            if (!flag)
                all = 0;
        }
        if (all)
            return 0;
        if (deadline_ns && weir__now_ns () >= deadline_ns)
            return 1;
        struct timespec ts = {0, nap};
        nanosleep (&ts, NULL);
        if (nap < 2000000)
            nap *= 2;
    }
}

//  Rank 0 gives up first, so that it has the time to name the ranks it
//  waited for before any rank's exit aborts the job
#define S_GRACE_NS 3000000000u

static uint64_t s_deadline (double timeout)
{
    if (timeout <= 0)
        return 0;
    return weir__now_ns () + (uint64_t) (timeout * 1e9) + (s_rank ? S_GRACE_NS : 0);
}

//  "2, 5 and 3 more" for the ranks whose DONE[r - 1] is 0, into OUT;
//  how many.
static size_t s_list (const int *done, char *out, size_t size)
{
    size_t used = 0, named = 0, missing = 0;
    out[0] = '\0';
    for (int r = 1; r < s_size; r++) {
        if (done[r - 1])
            continue;
        missing++;
        if (used + 16 < size && named < 32) {
            used += (size_t) snprintf (out + used, size - used, "%s%d", named ? ", " : "", r);
            named++;
        }
    }
    if (missing > named)
        snprintf (out + used, size - used, " and %zu more", missing - named);
    return missing;
}

//  A collective timed out.  Rank 0 pings every rank and names those that
//  do not answer within a second (stopped, hung, cut off, or still busy
//  in their epoch); the others say they waited.
static int s_late (double timeout, const char *what, weir__err *err)
{
    int n = s_size - 1;
    MPI_Request *reqs = s_rank == 0 ? calloc ((size_t) n * 2, sizeof *reqs) : NULL;
    int *done = s_rank == 0 ? calloc ((size_t) n * 2, sizeof *done) : NULL;
    char *pongs = s_rank == 0 ? calloc ((size_t) n, 1) : NULL;
    if (s_rank != 0 || !reqs || !done || !pongs) {
        free (reqs), free (done), free (pongs);
        return weir__err_set (
            err, WEIR_ESYSTEM,
            "rank %d: %s: no answer within %g s (--epoch-timeout); ended the job on every rank"
            "%s",
            s_rank, what, timeout, s_rank ? "; rank 0 names the ranks it waited for" : "");
    }
    char ping = 0;
    for (int r = 1; r <= n; r++) {
        MPI_Irecv (&pongs[r - 1], 1, MPI_CHAR, r, S_TAG_PONG, MPI_COMM_WORLD, &reqs[r - 1]);
        MPI_Isend (&ping, 1, MPI_CHAR, r, S_TAG_PING, MPI_COMM_WORLD, &reqs[n + r - 1]);
    }
    s_wait (reqs, n, done, weir__now_ns () + 1000000000u);
    char late[512];
    size_t missing = s_list (done, late, sizeof late);
    int rc =
        missing
            ? weir__err_set (err, WEIR_ESYSTEM,
                             "rank 0: %s: waited %g s (--epoch-timeout) for rank%s %s of %d, which did not "
                             "answer; ended the job on every rank",
                             what, timeout, missing > 1 ? "s" : "", late, s_size)
            : weir__err_set (err, WEIR_ESYSTEM,
                             "rank 0: %s: no answer within %g s (--epoch-timeout), though every rank "
                             "answers; ended the job on every rank",
                             what, timeout);
    free (reqs), free (done), free (pongs);
    return rc;
}

//  The job ended while this rank waited: its own failure or abort is the
//  job's error already, and the exit takes every rank down
static int s_quit_error (const char *what, weir__err *err)
{
    return weir__err_set (err, WEIR_EABORTED,
                          "rank %d: %s: the job ended while this rank waited for the others", s_rank, what);
}

//  What a wait's RC means, said with WHAT
static int s_waited (int rc, const char *what, weir__err *err)
{
    return rc == S_QUIT ? s_quit_error (what, err) : rc ? s_mpi_error (rc, what, err) : 0;
}

static int s_collective (MPI_Request *req, double timeout, const char *what, weir__err *err)
{
    int rc = s_wait (req, 1, NULL, s_deadline (timeout));
    if (rc == 1)
        return s_late (timeout, what, err);
    return s_waited (rc, what, err);
}

//  Everyone tells rank 0 it arrived, rank 0 releases everyone: rank 0
//  knows who is late, which MPI_Ibarrier would not say.
int weir__mpi_barrier (double timeout, const char *what, weir__err *err)
{
    int tag = S_TAG_ARRIVE, n = s_size - 1;
    char token = 0;
    uint64_t deadline = s_deadline (timeout);
    if (s_rank != 0) {
        MPI_Request reqs[2];
        char got = 0;
        int rc = MPI_Isend (&token, 1, MPI_CHAR, 0, tag, MPI_COMM_WORLD, &reqs[0]);
        if (!rc)
            rc = MPI_Irecv (&got, 1, MPI_CHAR, 0, S_TAG_RELEASE, MPI_COMM_WORLD, &reqs[1]);
        if (!rc)
            rc = s_wait (reqs, 2, NULL, deadline);
        if (rc == 1)
            return weir__err_set (
                err, WEIR_ESYSTEM,
                "rank %d: %s: rank 0 did not release the ranks within %g s (--epoch-timeout); "
                "rank 0 names the ranks it waited for",
                s_rank, what, timeout);
        return s_waited (rc, what, err);
    }
    if (n == 0)
        return 0;
    MPI_Request *reqs = calloc ((size_t) n, sizeof *reqs);
    char *got = calloc ((size_t) n, 1);
    int *done = calloc ((size_t) n, sizeof *done);
    if (!reqs || !got || !done) {
        free (reqs), free (got), free (done);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    int rc = 0;
    for (int r = 1; r <= n && !rc; r++)
        rc = MPI_Irecv (&got[r - 1], 1, MPI_CHAR, r, tag, MPI_COMM_WORLD, &reqs[r - 1]);
    if (!rc)
        rc = s_wait (reqs, n, done, deadline);
    if (rc == 1) {
        char late[512];
        size_t missing = s_list (done, late, sizeof late);
        rc = weir__err_set (err, WEIR_ESYSTEM,
                            "rank 0: %s: waited %g s (--epoch-timeout) for rank%s %s of %d, which did not "
                            "arrive; ended the job on every rank",
                            what, timeout, missing > 1 ? "s" : "", late, s_size);
    }
    else if (rc)
        rc = s_waited (rc, what, err);
    else {
        //  Released: the sends are tiny and the receivers wait for them
        for (int r = 1; r <= n && !rc; r++)
            rc = MPI_Isend (&token, 1, MPI_CHAR, r, S_TAG_RELEASE, MPI_COMM_WORLD, &reqs[r - 1]);
        if (!rc)
            rc = s_wait (reqs, n, NULL, 0);
        rc = s_waited (rc, what, err);
    }
    free (reqs), free (got), free (done);
    return rc;
}

//  MPI counts in int: a larger message goes in pieces of this many bytes
//  (the kill-point build of the tests sends small ones, so that the
//  pieces are exercised without gigabytes)
#ifdef WEIR_MPI_PIECE
#define S_PIECE ((size_t) WEIR_MPI_PIECE)
#else
#define S_PIECE ((size_t) 1 << 30)
#endif

int weir__mpi_bcast (char **buf, size_t *len, double timeout, const char *what, weir__err *err)
{
    uint64_t n = s_rank == 0 ? (uint64_t) *len : 0;
    MPI_Request req;
    int rc = MPI_Ibcast (&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD, &req);
    if (rc || (rc = s_collective (&req, timeout, what, err)))
        return rc > 0 ? s_mpi_error (rc, what, err) : rc;
    if (n > SIZE_MAX - 1)
        return weir__err_set (err, WEIR_ENOMEM, "%s: %" PRIu64 " bytes do not fit this rank's memory", what,
                              n);
    if (s_rank != 0) {
        if (!(*buf = malloc (n ? (size_t) n : 1)))
            return weir__err_set (err, WEIR_ENOMEM, "%s: out of memory for %" PRIu64 " bytes", what, n);
        *len = (size_t) n;
    }
    for (size_t at = 0; at < n;) {
        size_t piece = (size_t) n - at < S_PIECE ? (size_t) n - at : S_PIECE;
        rc = MPI_Ibcast (*buf + at, (int) piece, MPI_BYTE, 0, MPI_COMM_WORLD, &req);
        if (rc || (rc = s_collective (&req, timeout, what, err)))
            return rc > 0 ? s_mpi_error (rc, what, err) : rc;
        at += piece;
    }
    return 0;
}

//  Rank 0's share of a round of the gather: every rank's piece of it, in
//  TMP, copied after what came before of each rank's bytes in ALL
typedef struct {
    int *counts, *displs;
    size_t *at;  //  [rank]: where its bytes start in ALL
    char *tmp;
} s_gathering;

int weir__mpi_gather (const char *buf, size_t len, char **all, size_t *lens, double timeout, const char *what,
                      weir__err *err)
{
    //  Every rank's length to rank 0, and the longest to all: the bytes go
    //  in rounds of at most S_PIECE in all (MPI counts in int), each rank
    //  sending the next S_PIECE / ranks of its own, or nothing
    uint64_t mine = len, longest = len, *all_lens = NULL;
    s_gathering g = {NULL, NULL, NULL, NULL};
    MPI_Request req;
    int rc = 0;
    size_t share = S_PIECE / (size_t) s_size ? S_PIECE / (size_t) s_size : 1;
    if (s_rank == 0
        && (!(all_lens = calloc ((size_t) s_size, sizeof *all_lens))
            || !(g.counts = calloc ((size_t) s_size, sizeof *g.counts))
            || !(g.displs = calloc ((size_t) s_size, sizeof *g.displs))
            || !(g.at = calloc ((size_t) s_size, sizeof *g.at)))) {
        rc = weir__err_set (err, WEIR_ENOMEM, "out of memory");
        goto done;
    }
    rc = MPI_Iallreduce (MPI_IN_PLACE, &longest, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD, &req);
    if (rc || (rc = s_collective (&req, timeout, what, err)))
        goto done;
    rc = MPI_Igather (&mine, 1, MPI_UINT64_T, all_lens, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD, &req);
    if (rc || (rc = s_collective (&req, timeout, what, err)))
        goto done;
    if (s_rank == 0) {
        size_t total = 0, round = 0;
        for (int r = 0; r < s_size; r++) {
            if (all_lens[r] > SIZE_MAX - 1 - total) {
                rc = weir__err_set (err, WEIR_ENOMEM, "%s: more bytes than this rank can hold", what);
                goto done;
            }
            g.at[r] = total;
            lens[r] = (size_t) all_lens[r];
            total += (size_t) all_lens[r];
            round += lens[r] < share ? lens[r] : share;
        }
        //  One round (most often): straight into ALL.  Else a round's bytes
        //  go through TMP, no larger than a round takes (the largest round,
        //  1 GiB, allocated at every epoch cost seconds under
        //  AddressSanitizer)
        if (!(*all = malloc (total ? total : 1))
            || (longest > share && !(g.tmp = malloc (round ? round : 1)))) {
            rc = weir__err_set (err, WEIR_ENOMEM, "%s: out of memory for %zu bytes", what, total);
            goto done;
        }
    }
    for (uint64_t from = 0; from < longest; from += share) {
        int piece = (int) (len > from ? (len - from < share ? len - from : share) : 0);
        int in = 0;
        for (int r = 0; s_rank == 0 && r < s_size; r++) {
            g.counts[r] = (int) (lens[r] > from ? (lens[r] - from < share ? lens[r] - from : share) : 0);
            g.displs[r] = g.tmp ? in : (int) g.at[r];
            in += g.counts[r];
        }
        rc = MPI_Igatherv (buf + (piece ? from : 0), piece, MPI_BYTE,
                           g.tmp         ? g.tmp
                           : s_rank == 0 ? *all
                                         : NULL,
                           g.counts, g.displs, MPI_BYTE, 0, MPI_COMM_WORLD, &req);
        if (rc || (rc = s_collective (&req, timeout, what, err)))
            goto done;
        for (int r = 0; g.tmp && r < s_size; r++)
            memcpy (*all + g.at[r] + from, g.tmp + g.displs[r], (size_t) g.counts[r]);
    }
done:
    free (all_lens);
    free (g.counts);
    free (g.displs);
    free (g.at);
    free (g.tmp);
    return rc > 0 ? s_mpi_error (rc, what, err) : rc;
}

int weir__mpi_allreduce (void *data, size_t count, int type, int op, double timeout, const char *what,
                         weir__err *err)
{
    MPI_Datatype t = type == WEIR__REDUCE_F32   ? MPI_FLOAT
                     : type == WEIR__REDUCE_F64 ? MPI_DOUBLE
                     : type == WEIR__REDUCE_U64 ? MPI_UINT64_T
                                                : MPI_INT64_T;
    MPI_Op o = op == WEIR__REDUCE_MIN ? MPI_MIN : op == WEIR__REDUCE_MAX ? MPI_MAX : MPI_SUM;
    size_t width = type == WEIR__REDUCE_F32 ? 4 : 8;
    //  A larger array goes in pieces, like a broadcast
    for (size_t at = 0; at < count;) {
        size_t n = count - at < S_PIECE / width ? count - at : S_PIECE / width;
        MPI_Request req;
        int rc =
            MPI_Iallreduce (MPI_IN_PLACE, (char *) data + at * width, (int) n, t, o, MPI_COMM_WORLD, &req);
        if (rc || (rc = s_collective (&req, timeout, what, err)))
            return rc > 0 ? s_mpi_error (rc, what, err) : rc;
        at += n;
    }
    return 0;
}

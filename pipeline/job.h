/*  pipeline/job.h - the fate every thread of a running pipe shares: the
    first error, the stop request, the clock, the log.

    Any thread may fail the job; the first failure's message is the job's
    error, and the failure wakes everything that may be blocked (queues,
    the controller, receivers) through the hook the runtime installs, so
    that a failed job always ends, never hangs.  A stop (weir_stop, Ctrl-C)
    only asks the readers to end the epoch: what was read flows out.  */
#ifndef WEIR_JOB_H_INCLUDED
#define WEIR_JOB_H_INCLUDED

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <weir/weir.h>

#include "lib/error.h"

/*  Wakes whatever may be blocked; called once, by the first failure.  */
typedef void (weir__job_hook) (void *arg);

typedef struct weir__job {
    pthread_mutex_t lock;  //  guards err, the hook and the warnings
    weir__err err;
    atomic_int failed;
    atomic_int stop;
    atomic_int running;  //  the runtime threads run: there is an epoch
    atomic_int abort;    //  asked to end at once (weir_pipe_abort)
    atomic_int best;     //  the next checkpoint is marked the best (weir_checkpoint_best)
    weir__job_hook *on_fail;
    void *on_fail_arg;
    weir_pipe *pipe;  //  what the log callback is told
    weir_log_fn *log;
    void *log_arg;
    char **warnings;  //  for the user at the end (weir_pipe_warning)
    size_t warning_count;
    _Atomic uint64_t start_ns, end_ns;
    _Atomic uint64_t failed_ns;  //  when the first failure (an abort included) came, or 0
    //  Checkpoints that failed in this run (weir_pipe_checkpoint_failures)
    _Atomic uint64_t checkpoint_failures;
} weir__job;

void weir__job_init (weir__job *self, weir_pipe *pipe);
void weir__job_release (weir__job *self);

/*  Record ERR as the job's error without failing a run: a refusal before
    it starts (a bad description, a pipe that already ran).  Returns its
    code.  */
int weir__job_refuse (weir__job *self, const weir__err *err);

/*  The first failure of the job: keep ERR, ask every thread to stop, and
    call the hook.  Later failures are dropped.  Any thread.  */
void weir__job_fail (weir__job *self, const weir__err *err);

/*  A copy of the job's error (code 0 when there is none).  */
void weir__job_error (weir__job *self, weir__err *out);

/*  The hook weir__job_fail calls; NULL to remove it (before what it wakes
    goes away).  If the job has failed already, the hook runs at once.  */
void weir__job_set_hook (weir__job *self, weir__job_hook *hook, void *arg);

static inline int weir__job_failed (weir__job *self)
{
    return atomic_load_explicit (&self->failed, memory_order_relaxed);
}

/*  Ask the job to stop at the end of the epoch.  Async-signal-safe.  */
static inline void weir__job_stop (weir__job *self)
{
    atomic_store (&self->stop, 1);
}

/*  Ask the job to end at once, without a checkpoint.  Async-signal-safe:
    the controller acts on it.  */
static inline void weir__job_abort (weir__job *self)
{
    atomic_store (&self->stop, 1);
    atomic_store (&self->abort, 1);
}

/*  Asked to stop, or failed.  */
static inline int weir__job_stopping (weir__job *self)
{
    return atomic_load_explicit (&self->stop, memory_order_relaxed)
           || atomic_load_explicit (&self->failed, memory_order_relaxed);
}

/*  A message worth a person's attention, through the log callback (level
    WEIR_LOG_INFO or WEIR_LOG_WARNING).  */
void weir__job_log (weir__job *self, int level, const char *fmt, ...) WEIR_PRINTF (3, 4);

/*  A warning kept for the end of the run.  */
void weir__job_warn (weir__job *self, const char *fmt, ...) WEIR_PRINTF (2, 3);

/*  The run's clock: started when the threads start, stopped when they are
    joined.  Wall seconds so far, or of the whole run once it ended.  */
void weir__job_clock_start (weir__job *self);
void weir__job_clock_stop (weir__job *self);
double weir__job_wall_seconds (weir__job *self);

/*  Seconds since the job first failed (an abort, the stop timeout, an
    error), or -1 while it has not.  Any thread may ask.  */
double weir__job_failed_for (weir__job *self);

#endif

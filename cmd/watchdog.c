/*  cmd/watchdog.c - the bound on an abort that does not end.

    An abort (a second signal, the stop timeout, a failure) ends every
    wait of weir's own at once; what it cannot end is a processor stuck in
    its own code or a write blocked in the kernel (a hung NFS server),
    which keeps weir_pipe_run from returning.  The watchdog is a thread of
    the command's that looks at the pipe every 100 ms and, once it has been
    ending for longer than its bound, says so and leaves the process as an
    abort would have: no checkpoint is written after an abort, so the last
    one stays valid, as after a SIGKILL.  */
#include "cmd.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define S_LOOK_MS 100

struct cmd_watchdog {
    weir_pipe *pipe;
    double seconds;
    const atomic_int *signal;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t done_cond;
    int done;
};

static void s_give_up (cmd_watchdog *self)
{
    char text[400];
    int n = snprintf (text, sizeof text,
                      "weir: the run did not end %g s after it began to abort (--abort-timeout): a thread is "
                      "stuck, in a processor's own code or a write blocked in the kernel; exiting without it. "
                      "The last checkpoint stays valid\n",
                      self->seconds);
    if (n > 0 && write (STDERR_FILENO, text, (size_t) n) < 0)
        n = 0;
    //  At once: exit() would run the library's destructors under the
    //  threads still in it
    int sig = atomic_load (self->signal);
    _exit (sig ? 128 + sig : CMD_EXIT_FAILURE);
}

static void *s_watch (void *arg)
{
    cmd_watchdog *self = arg;
    pthread_mutex_lock (&self->lock);
    while (!self->done) {
        struct timespec until;
        clock_gettime (CLOCK_MONOTONIC, &until);
        until.tv_nsec += S_LOOK_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait (&self->done_cond, &self->lock, &until);
        if (!self->done && weir_pipe_failed_for (self->pipe) >= self->seconds)
            s_give_up (self);
    }
    pthread_mutex_unlock (&self->lock);
    return NULL;
}

cmd_watchdog *cmd_watchdog_new (weir_pipe *pipe, double seconds, const atomic_int *signal)
{
    if (!(seconds > 0))
        return NULL;
    cmd_watchdog *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->pipe = pipe;
    self->seconds = seconds;
    self->signal = signal;
    pthread_condattr_t attr;
    pthread_condattr_init (&attr);
    pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
    pthread_mutex_init (&self->lock, NULL);
    pthread_cond_init (&self->done_cond, &attr);
    pthread_condattr_destroy (&attr);
    if (pthread_create (&self->thread, NULL, s_watch, self)) {
        pthread_mutex_destroy (&self->lock);
        pthread_cond_destroy (&self->done_cond);
        free (self);
        return NULL;
    }
    return self;
}

void cmd_watchdog_destroy (cmd_watchdog **self_p)
{
    cmd_watchdog *self = *self_p;
    if (!self)
        return;
    pthread_mutex_lock (&self->lock);
    self->done = 1;
    pthread_cond_signal (&self->done_cond);
    pthread_mutex_unlock (&self->lock);
    pthread_join (self->thread, NULL);
    pthread_mutex_destroy (&self->lock);
    pthread_cond_destroy (&self->done_cond);
    free (self);
    *self_p = NULL;
}

/*  pipeline/job.c - the first error, stop, log and clock of a run.  */
#include "config.h"
#include "pipeline/job.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"

void weir__job_init (weir__job *self, weir_pipe *pipe)
{
    memset (self, 0, sizeof *self);
    pthread_mutex_init (&self->lock, NULL);
    weir__err_init (&self->err);
    atomic_init (&self->failed, 0);
    atomic_init (&self->stop, 0);
    atomic_init (&self->running, 0);
    atomic_init (&self->abort, 0);
    atomic_init (&self->start_ns, 0);
    atomic_init (&self->end_ns, 0);
    self->pipe = pipe;
}

void weir__job_release (weir__job *self)
{
    for (size_t i = 0; i < self->warning_count; i++)
        free (self->warnings[i]);
    free (self->warnings);
    self->warnings = NULL;
    self->warning_count = 0;
    pthread_mutex_destroy (&self->lock);
}

int weir__job_refuse (weir__job *self, const weir__err *err)
{
    pthread_mutex_lock (&self->lock);
    self->err = *err;
    pthread_mutex_unlock (&self->lock);
    return err->code;
}

void weir__job_fail (weir__job *self, const weir__err *err)
{
    pthread_mutex_lock (&self->lock);
    int first = !atomic_load (&self->failed);
    weir__job_hook *hook = NULL;
    void *arg = NULL;
    if (first) {
        self->err = *err;
        atomic_store (&self->failed_ns, weir__now_ns ());
        atomic_store (&self->failed, 1);
        hook = self->on_fail;
        arg = self->on_fail_arg;
    }
    pthread_mutex_unlock (&self->lock);
    //  Outside the lock: the hook takes other locks, and the threads it
    //  wakes may fail in turn
    if (hook)
        hook (arg);
}

void weir__job_error (weir__job *self, weir__err *out)
{
    pthread_mutex_lock (&self->lock);
    *out = self->err;
    pthread_mutex_unlock (&self->lock);
}

void weir__job_set_hook (weir__job *self, weir__job_hook *hook, void *arg)
{
    pthread_mutex_lock (&self->lock);
    self->on_fail = hook;
    self->on_fail_arg = arg;
    int failed = atomic_load (&self->failed);
    pthread_mutex_unlock (&self->lock);
    if (hook && failed)
        hook (arg);
}

void weir__job_log (weir__job *self, int level, const char *fmt, ...)
{
    if (!self->log)
        return;
    char text[1200];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (text, sizeof text, fmt, ap);
    va_end (ap);
    self->log (self->pipe, self->log_arg, level, text);
}

void weir__job_warn (weir__job *self, const char *fmt, ...)
{
    char *text = NULL;
    va_list ap;
    va_start (ap, fmt);
    int n = vasprintf (&text, fmt, ap);
    va_end (ap);
    if (n < 0)
        return;
    pthread_mutex_lock (&self->lock);
    char **list = realloc (self->warnings, (self->warning_count + 1) * sizeof *list);
    if (list) {
        self->warnings = list;
        list[self->warning_count++] = text;
        text = NULL;
    }
    pthread_mutex_unlock (&self->lock);
    free (text);
}

void weir__job_clock_start (weir__job *self)
{
    atomic_store (&self->start_ns, weir__now_ns ());
}

void weir__job_clock_stop (weir__job *self)
{
    atomic_store (&self->end_ns, weir__now_ns ());
}

double weir__job_wall_seconds (weir__job *self)
{
    uint64_t start = atomic_load (&self->start_ns), end = atomic_load (&self->end_ns);
    if (!start)
        return 0;
    return (double) ((end ? end : weir__now_ns ()) - start) / 1e9;
}

double weir__job_failed_for (weir__job *self)
{
    uint64_t at = atomic_load (&self->failed_ns);
    return at ? (double) (weir__now_ns () - at) / 1e9 : -1.0;
}

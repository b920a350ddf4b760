/*  pipeline/budget.c - claims on an epoch's records.  */
#include "config.h"
#include "pipeline/budget.h"

#include <time.h>

#include "lib/clock.h"

void weir__budget_init (weir__budget *self, weir__job *job)
{
    pthread_mutex_init (&self->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init (&attr);
    pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
    pthread_cond_init (&self->cond, &attr);
    pthread_condattr_destroy (&attr);
    self->remaining = 0;
    self->holders = 0;
    self->deadline_ns = 0;
    self->job = job;
}

void weir__budget_release (weir__budget *self)
{
    pthread_mutex_destroy (&self->lock);
    pthread_cond_destroy (&self->cond);
}

void weir__budget_reset (weir__budget *self, uint64_t records, double seconds)
{
    pthread_mutex_lock (&self->lock);
    self->remaining = records ? records : UINT64_MAX;
    self->holders = 0;
    self->deadline_ns = seconds > 0 ? weir__now_ns () + (uint64_t) (seconds * 1e9) : 0;
    pthread_mutex_unlock (&self->lock);
}

static uint64_t s_claim (weir__budget *self, uint64_t want, int released)
{
    uint64_t got = 0;
    pthread_mutex_lock (&self->lock);
    if (released && --self->holders == 0)
        pthread_cond_broadcast (&self->cond);
    for (;;) {
        if (weir__job_stopping (self->job))
            break;
        if (self->deadline_ns && weir__now_ns () >= self->deadline_ns)
            break;
        if (self->remaining > 0) {
            got = self->remaining < want ? self->remaining : want;
            self->remaining -= got;
            self->holders++;
            break;
        }
        if (self->holders == 0)
            break;
        //  Another thread holds records it may yet give back.  A timed
        //  wait: a stop from a signal handler cannot signal the condition.
        struct timespec until;
        clock_gettime (CLOCK_MONOTONIC, &until);
        until.tv_nsec += 20000000;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait (&self->cond, &self->lock, &until);
    }
    pthread_mutex_unlock (&self->lock);
    return got;
}

uint64_t weir__budget_claim (weir__budget *self, uint64_t want)
{
    return s_claim (self, want, 0);
}

uint64_t weir__budget_reclaim (weir__budget *self, uint64_t want)
{
    return s_claim (self, want, 1);
}

void weir__budget_unclaim (weir__budget *self, uint64_t unused)
{
    pthread_mutex_lock (&self->lock);
    self->remaining += unused;
    self->holders--;
    pthread_cond_broadcast (&self->cond);
    pthread_mutex_unlock (&self->lock);
}

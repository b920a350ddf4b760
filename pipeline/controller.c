/*  pipeline/controller.c - barriers and the loop of epochs.  */
#include "config.h"
#include "pipeline/controller.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "lib/clock.h"
#include "lib/killpoint.h"
#include "lib/error.h"

//  How often a wait for the threads looks at abort and the stop timeout
#define S_WATCH_NS 20000000u

//  The threads of one reader that meet: how many, how many came in this
//  round and of those how many ran out of input, the round, and whether
//  every one of the last round had
typedef struct {
    unsigned size, met, exhausted, round;
    int all;
} s_meeting;

struct weir__controller {
    weir__job *job;
    weir__epoch_rules rules;
    weir__budget budget;
    pthread_mutex_t lock;
    pthread_cond_t arrived_cond;  //  the controller waits on it
    pthread_cond_t release_cond;  //  threads at a barrier wait on it
    unsigned threads, readers;
    //  Guarded by lock
    uint64_t epoch;  //  the epoch running now
    unsigned pass;   //  0-based pass over the input
    unsigned arrived, exhausted;
    unsigned generation;  //  bumped at each release
    //  The meetings of reader threads before their barriers, one per
    //  reader with a fused processor (weir__controller_meet)
    s_meeting *meetings;
    size_t nmeetings;
    int release;          //  WEIR__GO / STOP / ABORT for the waiting threads
    uint64_t stop_ns;     //  when a stop was first seen (0: not yet)
    int ending;           //  the ranks agreed that this epoch ends the run
    weir__agree_fn *agree;
    void *agree_arg;
    //  Read by any thread
    _Atomic uint64_t done;
    _Atomic uint64_t pauses, pause_ns, pause_max_ns;
    _Atomic uint64_t pause_buckets[WEIR__PAUSE_BUCKETS];
};

//  The upper bounds of the pause buckets, in seconds (the last is
//  infinite): a millisecond's pause (a writer's flush) to a minute's (a
//  large checkpoint on a slow disk)
static const double s_bounds[WEIR__PAUSE_BUCKETS] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,     0.25,
                                                     0.5,   1,      2.5,   5,    10,    60,   INFINITY};

weir__controller *weir__controller_new (weir__job *job, const weir__epoch_rules *rules)
{
    weir__controller *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->job = job;
    self->rules = *rules;
    if (self->rules.passes == 0)
        self->rules.passes = 1;
    weir__budget_init (&self->budget, job);
    pthread_mutex_init (&self->lock, NULL);
    //  The progress waits use the monotonic clock: a clock change must not
    //  stall or flood the progress line
    pthread_condattr_t attr;
    pthread_condattr_init (&attr);
    pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
    pthread_cond_init (&self->arrived_cond, &attr);
    pthread_condattr_destroy (&attr);
    pthread_cond_init (&self->release_cond, NULL);
    self->epoch = 1;
    return self;
}

void weir__controller_destroy (weir__controller **self_p)
{
    weir__controller *self = *self_p;
    if (!self)
        return;
    weir__budget_release (&self->budget);
    pthread_mutex_destroy (&self->lock);
    pthread_cond_destroy (&self->arrived_cond);
    pthread_cond_destroy (&self->release_cond);
    free (self->meetings);
    free (self);
    *self_p = NULL;
}

void weir__controller_start (weir__controller *self, uint64_t first, unsigned pass, unsigned passes,
                             unsigned threads, unsigned readers)
{
    pthread_mutex_lock (&self->lock);
    if (passes)
        self->rules.passes = passes;
    self->epoch = first;
    self->pass = pass;
    self->threads = threads;
    self->readers = readers;
    self->arrived = self->exhausted = 0;
    atomic_store (&self->done, first - 1);
    pthread_mutex_unlock (&self->lock);
    weir__budget_reset (&self->budget, self->rules.records, self->rules.seconds);
}

int weir__controller_set_meetings (weir__controller *self, const unsigned *sizes, size_t n)
{
    s_meeting *meetings = n ? calloc (n, sizeof *meetings) : NULL;
    if (n && !meetings)
        return WEIR_ENOMEM;
    for (size_t i = 0; i < n; i++)
        meetings[i].size = sizes[i];
    pthread_mutex_lock (&self->lock);
    free (self->meetings);
    self->meetings = meetings;
    self->nmeetings = n;
    pthread_mutex_unlock (&self->lock);
    return 0;
}

int weir__controller_meet (weir__controller *self, size_t meeting, int exhausted)
{
    pthread_mutex_lock (&self->lock);
    assert (meeting < self->nmeetings);
    s_meeting *m = &self->meetings[meeting];
    unsigned round = m->round;
    m->met++;
    m->exhausted += exhausted != 0;
    if (m->met >= m->size) {
        m->all = m->exhausted == m->met;
        m->met = m->exhausted = 0;
        m->round++;
        //  The threads at a barrier wait on the same condition, and look
        //  at their generation: they sleep on
        pthread_cond_broadcast (&self->release_cond);
    }
    while (round == m->round && self->release != WEIR__ABORT)
        pthread_cond_wait (&self->release_cond, &self->lock);
    //  The next round cannot end before this thread meets again: all is
    //  still this round's
    int all = round == m->round || self->release == WEIR__ABORT ? -1 : m->all;
    pthread_mutex_unlock (&self->lock);
    return all;
}

void weir__controller_default_seconds (weir__controller *self, double seconds)
{
    if (!self->rules.records && !(self->rules.seconds > 0))
        self->rules.seconds = seconds;
}

weir__budget *weir__controller_budget (weir__controller *self)
{
    return &self->budget;
}

int weir__controller_arrive (weir__controller *self, int exhausted, int *new_pass)
{
    pthread_mutex_lock (&self->lock);
    unsigned generation = self->generation, pass = self->pass;
    self->arrived++;
    self->exhausted += exhausted != 0;
    pthread_cond_signal (&self->arrived_cond);
    while (generation == self->generation && self->release != WEIR__ABORT)
        pthread_cond_wait (&self->release_cond, &self->lock);
    int release = self->release;
    if (new_pass)
        *new_pass = self->pass != pass;
    pthread_mutex_unlock (&self->lock);
    return release;
}

void weir__controller_abort (weir__controller *self)
{
    pthread_mutex_lock (&self->lock);
    self->release = WEIR__ABORT;
    pthread_cond_broadcast (&self->release_cond);
    pthread_cond_broadcast (&self->arrived_cond);
    pthread_mutex_unlock (&self->lock);
}

//  Fail the job (lock held, released meanwhile) when it was asked to
//  abort, or when a stop has taken longer than the stop timeout: threads
//  stuck behind a slow writer or a blocked read must not hold the process
//  forever.  The failure wakes everything blocked; no checkpoint follows.
static void s_watch (weir__controller *self, uint64_t now)
{
    weir__job *job = self->job;
    if (weir__job_failed (job) || !atomic_load (&job->stop))
        return;
    weir__err err;
    weir__err_init (&err);
    if (atomic_load (&job->abort))
        weir__err_set (&err, WEIR_EABORTED, "aborted in epoch %llu; the last checkpoint stays valid",
                       (unsigned long long) self->epoch);
    else if (self->rules.stop_timeout > 0) {
        if (!self->stop_ns)
            self->stop_ns = now;
        if ((double) (now - self->stop_ns) < self->rules.stop_timeout * 1e9)
            return;
        weir__err_set (&err, WEIR_EABORTED,
                       "aborted in epoch %llu: stopping took longer than %g s (the stop timeout); "
                       "the last checkpoint stays valid",
                       (unsigned long long) self->epoch, self->rules.stop_timeout);
    }
    else
        return;
    pthread_mutex_unlock (&self->lock);
    weir__job_fail (job, &err);
    pthread_mutex_lock (&self->lock);
}

int weir__controller_gave_up (weir__controller *self)
{
    pthread_mutex_lock (&self->lock);
    //  An abort, always; the stop timeout until the ranks agreed on the
    //  stop, which is the drain: the boundary of an epoch they agreed to
    //  go on from (a rank may be stuck in it) counts, while the stop's own
    //  checkpoint and the totals after it are not cut short (a large
    //  blob's synced write may take longer)
    if (!self->ending || atomic_load (&self->job->abort))
        s_watch (self, weir__now_ns ());
    pthread_mutex_unlock (&self->lock);
    return weir__job_failed (self->job);
}

//  Wait (lock held) until every thread arrived or the job aborts, ticking
//  every TICK_MS: by the clock, not by the waits that time out, since
//  epochs shorter than a tick would never let one time out.  The waits
//  are bounded in any case, so that abort and the stop timeout are seen.
static void s_wait_arrivals (weir__controller *self, weir__tick_fn *tick, void *tick_arg, unsigned tick_ms,
                             uint64_t *next_tick)
{
    while (self->arrived < self->threads && self->release != WEIR__ABORT) {
        uint64_t now = weir__now_ns ();
        s_watch (self, now);
        if (self->arrived >= self->threads || self->release == WEIR__ABORT)
            break;
        if (!tick)
            *next_tick = UINT64_MAX;
        else if (now >= *next_tick) {
            *next_tick = now + (uint64_t) tick_ms * 1000000u;
            pthread_mutex_unlock (&self->lock);
            tick (tick_arg);
            pthread_mutex_lock (&self->lock);
            continue;
        }
        uint64_t wake = *next_tick < now + S_WATCH_NS ? *next_tick : now + S_WATCH_NS;
        struct timespec until = {(time_t) (wake / 1000000000u), (long) (wake % 1000000000u)};
        pthread_cond_timedwait (&self->arrived_cond, &self->lock, &until);
    }
}

void weir__controller_run (weir__controller *self, weir__boundary_fn *boundary, void *arg,
                           weir__tick_fn *tick, void *tick_arg, unsigned tick_ms)
{
    uint64_t next_tick = weir__now_ns () + (uint64_t) tick_ms * 1000000u;
    pthread_mutex_lock (&self->lock);
    for (;;) {
        s_wait_arrivals (self, tick, tick_arg, tick_ms, &next_tick);
        if (self->release == WEIR__ABORT)
            break;
        //  Quiescent: every thread waits for the release, so the fields
        //  below are the controller's alone until then
        uint64_t paused = weir__now_ns ();
        WEIR_KILL_POINT ("pipe-drained");
        weir__boundary b = {0};
        b.epoch = self->epoch;
        int exhausted = self->exhausted == self->readers;
        int stopping = weir__job_stopping (self->job);
        if (self->agree) {
            pthread_mutex_unlock (&self->lock);
            int failed = self->agree (self->agree_arg, self->epoch, &exhausted, &stopping);
            pthread_mutex_lock (&self->lock);
            if (failed || self->release == WEIR__ABORT)
                break;
        }
        int last_pass = self->pass + 1 >= self->rules.passes;
        b.finished = exhausted && last_pass;
        b.new_pass = exhausted && !last_pass;
        if (b.new_pass)
            self->pass++;
        b.pass = self->pass;
        b.over = b.finished || stopping || (self->rules.last && b.epoch >= self->rules.last);
        self->ending = b.over;
        pthread_mutex_unlock (&self->lock);
        if (boundary (arg, &b))
            b.over = 1;
        else
            atomic_store (&self->done, b.epoch);
        if (!b.over)
            weir__budget_reset (&self->budget, self->rules.records, self->rules.seconds);
        pthread_mutex_lock (&self->lock);
        if (self->release == WEIR__ABORT)
            break;
        self->arrived = 0;
        self->exhausted = 0;
        if (!b.over)
            self->epoch++;
        self->release = b.over ? WEIR__STOP : WEIR__GO;
        self->generation++;
        pthread_cond_broadcast (&self->release_cond);
        WEIR_KILL_POINT ("readers-resumed");
        uint64_t pause = weir__now_ns () - paused;
        atomic_fetch_add (&self->pauses, 1);
        atomic_fetch_add (&self->pause_ns, pause);
        if (pause > atomic_load (&self->pause_max_ns))
            atomic_store (&self->pause_max_ns, pause);
        size_t bucket = 0;
        while ((double) pause / 1e9 > s_bounds[bucket])
            bucket++;
        atomic_fetch_add (&self->pause_buckets[bucket], 1);
        if (b.over)
            break;
    }
    pthread_mutex_unlock (&self->lock);
}

void weir__controller_set_agree (weir__controller *self, weir__agree_fn *agree, void *arg)
{
    self->agree = agree;
    self->agree_arg = arg;
}

uint64_t weir__controller_epoch (const weir__controller *self)
{
    return self->epoch;
}

int weir__controller_last_pass (const weir__controller *self)
{
    return self->pass + 1 >= self->rules.passes;
}

uint64_t weir__controller_done (const weir__controller *self)
{
    return atomic_load (&((weir__controller *) self)->done);
}

void weir__controller_pauses (const weir__controller *self, uint64_t *count, double *total, double *longest)
{
    weir__controller *c = (weir__controller *) self;
    if (count)
        *count = atomic_load (&c->pauses);
    if (total)
        *total = (double) atomic_load (&c->pause_ns) / 1e9;
    if (longest)
        *longest = (double) atomic_load (&c->pause_max_ns) / 1e9;
}

size_t weir__controller_pause_buckets (const weir__controller *self, size_t n, double *bounds,
                                       uint64_t *counts)
{
    for (size_t b = 0; b < n && b < WEIR__PAUSE_BUCKETS; b++) {
        if (bounds)
            bounds[b] = s_bounds[b];
        if (counts)
            counts[b] = self ? atomic_load (&self->pause_buckets[b]) : 0;
    }
    return WEIR__PAUSE_BUCKETS;
}

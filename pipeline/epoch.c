/*  pipeline/epoch.c - the epoch controller: budgets, barriers, checkpoints,
    resume.

    An epoch's record budget is shared by the reader threads: a thread
    claims up to a batch of records at a time, and the epoch is full when
    the budget is spent and no thread still holds an unused claim, so an
    epoch holds exactly --epoch-records records whatever the threads do
    (a thread that runs out of input gives its claim back).

    At the end of an epoch every reader sends a barrier behind its data;
    each thread of each stage forwards it once it has one from every
    producer, then waits here.  When every thread waits, the pipe is
    quiescent: no record is in flight, no callback runs.  The controller
    then syncs the writers, writes the checkpoint and releases the threads
    into the next epoch (or tells them to stop).  Waiting on the controller's
    lock is also what orders a processor's writes to a blob before the
    checkpoint's copy of it, and that copy before the next epoch's writes.

    Offsets are kept per shard, so a job may resume with other thread
    counts; a checkpoint records them with the writers' committed lengths
    and the blobs, all from the same quiescent instant.  */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "checkpoint/load.h"
#include "checkpoint/resume.h"
#include "checkpoint/saver.h"
#include "lib/clock.h"
#include "pipeline/pipe.h"

//  ---------------------------------------------------------------------
//  Budgets

//  Claim up to WANT records; a thread whose previous claim is used up
//  (RELEASED) stops holding one in the same critical section, since this
//  runs once per batch.
static uint64_t s_claim (weir__stage *stage, uint64_t want, int released)
{
    weir_pipe *pipe = stage->pipe;
    uint64_t got = 0;
    pthread_mutex_lock (&stage->claim_lock);
    if (released && --stage->holders == 0)
        pthread_cond_broadcast (&stage->claim_cond);
    for (;;) {
        if (atomic_load (&pipe->stop) || atomic_load (&pipe->failed))
            break;
        if (stage->deadline_ns && weir__now_ns () >= stage->deadline_ns)
            break;
        if (stage->remaining > 0) {
            got = stage->remaining < want ? stage->remaining : want;
            stage->remaining -= got;
            stage->holders++;
            break;
        }
        if (stage->holders == 0)
            break;
        //  Another thread holds records it may yet give back.  A timed
        //  wait: weir_pipe_stop, from a signal handler, cannot signal.
        struct timespec until;
        clock_gettime (CLOCK_MONOTONIC, &until);
        until.tv_nsec += 20000000;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait (&stage->claim_cond, &stage->claim_lock, &until);
    }
    pthread_mutex_unlock (&stage->claim_lock);
    return got;
}

uint64_t weir__epoch_claim (weir__stage *stage, uint64_t want)
{
    return s_claim (stage, want, 0);
}

uint64_t weir__epoch_reclaim (weir__stage *stage, uint64_t want)
{
    return s_claim (stage, want, 1);
}

void weir__epoch_unclaim (weir__stage *stage, uint64_t unused)
{
    pthread_mutex_lock (&stage->claim_lock);
    stage->remaining += unused;
    stage->holders--;
    pthread_cond_broadcast (&stage->claim_cond);
    pthread_mutex_unlock (&stage->claim_lock);
}

static void s_reset_budget (weir_pipe *pipe)
{
    weir__stage *reader = pipe->stages[0];
    pthread_mutex_lock (&reader->claim_lock);
    reader->remaining = pipe->epoch_records ? pipe->epoch_records : UINT64_MAX;
    reader->holders = 0;
    reader->deadline_ns =
        pipe->epoch_seconds > 0 ? weir__now_ns () + (uint64_t) (pipe->epoch_seconds * 1e9) : 0;
    pthread_mutex_unlock (&reader->claim_lock);
}

//  ---------------------------------------------------------------------
//  Barriers

int weir__epoch_arrive (weir_stage *h, int exhausted, int *new_pass)
{
    weir_pipe *pipe = h->stage->pipe;
    pthread_mutex_lock (&pipe->epoch_lock);
    unsigned generation = pipe->generation, pass = pipe->pass;
    pipe->arrived++;
    pipe->exhausted += exhausted != 0;
    pthread_cond_signal (&pipe->arrived_cond);
    while (generation == pipe->generation && pipe->release != WEIR__ABORT)
        pthread_cond_wait (&pipe->release_cond, &pipe->epoch_lock);
    int release = pipe->release;
    if (new_pass)
        *new_pass = pipe->pass != pass;
    pthread_mutex_unlock (&pipe->epoch_lock);
    return release;
}

void weir__epoch_abort (weir_pipe *pipe)
{
    pthread_mutex_lock (&pipe->epoch_lock);
    pipe->release = WEIR__ABORT;
    pthread_cond_broadcast (&pipe->release_cond);
    pthread_cond_broadcast (&pipe->arrived_cond);
    pthread_mutex_unlock (&pipe->epoch_lock);
}

//  ---------------------------------------------------------------------
//  Checkpoints

//  Save the state of the quiescent pipe at the end of EPOCH (FIRST: the
//  checkpoint after init, which every resume needs).  0 to go on.
static int s_checkpoint (weir_pipe *pipe, uint64_t epoch, int finished, int first, weir__err *err)
{
    weir__snapshot_stage *stages = calloc (pipe->count, sizeof *stages);
    if (!stages)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    for (size_t i = 0; i < pipe->count; i++) {
        weir__stage *stage = pipe->stages[i];
        stages[i].element = stage->name;
        stages[i].records_in = stage->base_records_in
                               + (stage->kind == WEIR_ELEMENT_READER ? atomic_load (&stage->records_out)
                                                                     : atomic_load (&stage->records_in));
        stages[i].records_out = stage->base_records_out + atomic_load (&stage->records_out);
        stages[i].writer_state = stage->writer ? stage->committed : NULL;
    }
    weir__stage *reader = pipe->stages[0];
    weir__snapshot s = {
        .epoch = epoch,
        .finished = finished,
        .pass = pipe->pass,
        .wall_seconds = pipe->base_wall + weir_pipe_wall_seconds (pipe),
        .description = pipe->description,
        .shape = pipe->shape,
        .stages = stages,
        .nstages = pipe->count,
        .shards = &reader->shards,
        .offsets = reader->offsets,
        .workspace = pipe->workspace,
    };
    int rc = first ? weir__saver_save_first (pipe->saver, &s, err) : weir__saver_save (pipe->saver, &s, err);
    free (stages);
    return rc;
}

static void s_warn (void *arg, const char *message)
{
    weir__pipe_log (arg, WEIR_LOG_WARNING, "%s", message);
}

//  ---------------------------------------------------------------------
//  Before and after the run

//  The description with threads, capacity and batch left out: a job may
//  resume with other values of those, and nothing else may differ.
static char *s_shape (weir_pipe *pipe)
{
    size_t size = 64;
    for (size_t i = 0; i < pipe->count; i++) {
        size += strlen (pipe->stages[i]->name) + 8;
        for (size_t k = 0; k < pipe->stages[i]->props.count; k++)
            size += strlen (pipe->stages[i]->props.items[k].key) + strlen (pipe->stages[i]->props.items[k].value) + 4;
    }
    char *out = malloc (size);
    if (!out)
        return NULL;
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < pipe->count; i++) {
        weir__stage *stage = pipe->stages[i];
        used += (size_t) snprintf (out + used, size - used, "%s%s", i ? " ! " : "", stage->name);
        //  Properties in key order, so that their order does not matter
        size_t n = stage->props.count;
        const weir__prop **sorted = calloc (n ? n : 1, sizeof *sorted);
        if (!sorted) {
            free (out);
            return NULL;
        }
        for (size_t k = 0; k < n; k++)
            sorted[k] = &stage->props.items[k];
        for (size_t a = 1; a < n; a++)
            for (size_t b = a; b > 0 && strcmp (sorted[b - 1]->key, sorted[b]->key) > 0; b--) {
                const weir__prop *t = sorted[b];
                sorted[b] = sorted[b - 1];
                sorted[b - 1] = t;
            }
        for (size_t k = 0; k < n; k++) {
            const char *key = sorted[k]->key;
            if (!strcmp (key, "threads") || !strcmp (key, "capacity") || !strcmp (key, "batch"))
                continue;
            used += (size_t) snprintf (out + used, size - used, " %s=%s", key, sorted[k]->value);
        }
        free (sorted);
    }
    return out;
}

int weir__epoch_prepare (weir_pipe *pipe, weir__err *err)
{
    pipe->fresh = 1;
    pipe->epoch = 1;
    pipe->first_epoch = 1;
    if (!(pipe->workspace = weir__workspace_new ()) || !(pipe->shape = s_shape (pipe)))
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    int rc;
    if (pipe->load_blobs_dir) {
        size_t count;
        uint64_t loaded;
        if ((rc = weir__load_blobs (pipe->load_blobs_dir, pipe->load_blobs_epoch, pipe->workspace, &count, &loaded,
                                    err)))
            return rc;
        weir__pipe_log (pipe, WEIR_LOG_INFO, "loaded %zu blobs from checkpoint %" PRIu64 " of '%s'", count, loaded,
                        pipe->load_blobs_dir);
    }
    if (!pipe->checkpoint_dir) {
        if (pipe->resume_mode != WEIR_RESUME_NONE)
            return weir__err_set (err, WEIR_ESTRUCTURE, "resuming needs a checkpoint directory (--checkpoint DIR)");
        return 0;
    }
    if ((rc = weir__store_open (pipe->checkpoint_dir, 1, &pipe->store, err)))
        return rc;
    if ((rc = weir__resume_open (pipe->store, pipe->resume_mode, pipe->resume_epoch, pipe->shape, &pipe->resume,
                                 err)))
        return rc;
    weir__resume *r = pipe->resume;
    if (!r)
        return 0;
    if ((rc = weir__resume_blobs (r, pipe->workspace, err)))
        return rc;
    uint64_t epoch = weir__resume_epoch (r);
    pipe->base_wall = weir__resume_wall_seconds (r);
    pipe->pass = weir__resume_pass (r);
    for (size_t i = 0; i < pipe->count; i++)
        weir__resume_records (r, i, &pipe->stages[i]->base_records_in, &pipe->stages[i]->base_records_out);
    pipe->fresh = 0;
    pipe->epoch = epoch + 1;
    pipe->first_epoch = epoch + 1;
    atomic_store (&pipe->done_epoch, epoch);
    pipe->finished_before = weir__resume_finished (r);
    weir__pipe_log (pipe, WEIR_LOG_INFO, "resuming from checkpoint %" PRIu64 " of '%s'", epoch, pipe->checkpoint_dir);
    return 0;
}

//  Reader offsets of the resumed checkpoint, once the reader is open: the
//  shards planned now must be those checkpointed.
int weir__epoch_resume_stage (weir__stage *stage, weir__err *err)
{
    if (stage->reader) {
        stage->offsets = calloc (stage->shards.count ? stage->shards.count : 1, sizeof *stage->offsets);
        if (!stage->offsets)
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        for (size_t i = 0; i < stage->shards.count; i++)
            stage->offsets[i] = stage->shards.items[i].start;
        if (stage->pipe->resume)
            return weir__resume_offsets (stage->pipe->resume, stage->name, &stage->shards, stage->offsets, err);
    }
    return 0;
}

const char *weir__epoch_writer_resume (weir__stage *stage, weir__err *err)
{
    weir__resume *r = stage->pipe->resume;
    if (!r)
        return NULL;
    if (weir__resume_writer (r, stage->index, stage->name, stage->committed, sizeof stage->committed, err))
        return (const char *) -1;
    return stage->committed;
}

int weir__epoch_begin (weir_pipe *pipe, weir__err *err)
{
    weir__resume_destroy (&pipe->resume);
    s_reset_budget (pipe);
    if (!pipe->store)
        return 0;
    int rc = weir__saver_new (pipe->store, pipe->keep, pipe->async_checkpoint, pipe->checkpoint_failures,
                              pipe->workspace, s_warn, pipe, &pipe->saver, err);
    if (rc || !pipe->fresh)
        return rc;
    //  Checkpoint 0: the state right after init, before any record; the
    //  writers commit their (empty) outputs first, so that resuming from it
    //  knows where they stand
    for (size_t i = 0; i < pipe->count; i++) {
        weir__stage *stage = pipe->stages[i];
        if (stage->writer && stage->writer->commit (stage->writer_state, stage->committed, err))
            return err->code;
    }
    return s_checkpoint (pipe, 0, 0, 1, err);
}

void weir__epoch_end (weir_pipe *pipe)
{
    weir__resume_destroy (&pipe->resume);
    if (pipe->saver) {
        weir__err err;
        weir__err_init (&err);
        //  The last write's failure is reported, never swallowed
        if (weir__saver_finish (pipe->saver, &err))
            weir__pipe_fail (pipe, &err);
        weir__saver_destroy (&pipe->saver);
    }
    weir__store_destroy (&pipe->store);
}

//  ---------------------------------------------------------------------
//  The controller

//  The pipe is quiescent at the end of pipe->epoch: commit, checkpoint,
//  decide what comes next.  1 when the job is over.
static int s_epoch_done (weir_pipe *pipe)
{
    uint64_t epoch = pipe->epoch;
    weir__stage *reader = pipe->stages[0];
    weir__err err;
    weir__err_init (&err);
    for (size_t i = 0; i < pipe->count; i++) {
        weir__stage *stage = pipe->stages[i];
        if (stage->writer && stage->writer->commit (stage->writer_state, stage->committed, &err)) {
            weir__pipe_fail (pipe, &err);
            return 1;
        }
    }
    int exhausted = pipe->exhausted == reader->threads;
    int last_pass = pipe->pass + 1 >= reader->passes;
    int finished = exhausted && last_pass;
    int over = finished || atomic_load (&pipe->stop) || (pipe->max_epochs && epoch >= pipe->max_epochs);
    if (exhausted && !last_pass) {
        //  The next epoch starts the next pass: the checkpoint says so
        pipe->pass++;
        for (size_t i = 0; i < reader->shards.count; i++)
            reader->offsets[i] = reader->shards.items[i].start;
        atomic_store (&reader->next_shard, 0);
    }
    if (pipe->saver && s_checkpoint (pipe, epoch, finished, 0, &err)) {
        weir__pipe_fail (pipe, &err);
        return 1;
    }
    atomic_store (&pipe->done_epoch, epoch);
    return over;
}

void weir__epoch_control (weir_pipe *pipe)
{
    pthread_mutex_lock (&pipe->epoch_lock);
    for (;;) {
        while (pipe->arrived < pipe->total_threads && pipe->release != WEIR__ABORT) {
            if (!pipe->progress) {
                pthread_cond_wait (&pipe->arrived_cond, &pipe->epoch_lock);
                continue;
            }
            struct timespec until;
            clock_gettime (CLOCK_MONOTONIC, &until);
            uint64_t ns = (uint64_t) until.tv_nsec + (uint64_t) pipe->progress_ms * 1000000u;
            until.tv_sec += (time_t) (ns / 1000000000u);
            until.tv_nsec = (long) (ns % 1000000000u);
            if (pthread_cond_timedwait (&pipe->arrived_cond, &pipe->epoch_lock, &until) == ETIMEDOUT) {
                pthread_mutex_unlock (&pipe->epoch_lock);
                pipe->progress (pipe, pipe->progress_arg, 0);
                pthread_mutex_lock (&pipe->epoch_lock);
            }
        }
        if (pipe->release == WEIR__ABORT)
            break;
        pthread_mutex_unlock (&pipe->epoch_lock);
        uint64_t paused = weir__now_ns ();
        int over = s_epoch_done (pipe);
        if (!over)
            s_reset_budget (pipe);
        pthread_mutex_lock (&pipe->epoch_lock);
        if (pipe->release == WEIR__ABORT)
            break;
        pipe->arrived = 0;
        pipe->exhausted = 0;
        if (!over)
            pipe->epoch++;
        pipe->release = over ? WEIR__STOP : WEIR__GO;
        pipe->generation++;
        pthread_cond_broadcast (&pipe->release_cond);
        uint64_t pause = weir__now_ns () - paused;
        atomic_fetch_add (&pipe->pauses, 1);
        atomic_fetch_add (&pipe->pause_ns, pause);
        if (pause > atomic_load (&pipe->pause_max_ns))
            atomic_store (&pipe->pause_max_ns, pause);
        if (over)
            break;
    }
    pthread_mutex_unlock (&pipe->epoch_lock);
}

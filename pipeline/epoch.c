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

#include "lib/clock.h"
#include "pipeline/pipe.h"

//  A blob's copy for the background writer, kept from one checkpoint to the
//  next: the pages of a fresh buffer would be faulted in on every copy,
//  which costs more than the copy itself.
typedef struct {
    void *data;
    size_t size;
} s_staging;

typedef struct {
    weir_pipe *pipe;
    s_staging *staging;         //  one per blob, reused while no write is in flight
    size_t nstaging;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    weir__ckpt *pending;        //  to write
    int busy;                   //  a write is queued or running
    int quit;
    int rc;                     //  of the last write, until collected
    weir__err err;
} s_async;

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
//  Checkpoint contents

static void s_shard_key (const weir__shard *shard, char *out, size_t size)
{
    if (shard->path)
        snprintf (out, size, "%s@%" PRIu64 "-%" PRIu64, shard->path, shard->start, shard->end);
    else
        snprintf (out, size, "#%" PRIu64 "-%" PRIu64, shard->start, shard->end);
}

static void s_writer_key (const weir__stage *stage, char *out, size_t size)
{
    snprintf (out, size, "%zu:%s", stage->index, stage->name);
}

//  Everything of the quiescent pipe at the end of epoch EPOCH.  Blobs are
//  copied into STAGING when given (async), else borrowed.
static weir__ckpt *s_snapshot (weir_pipe *pipe, uint64_t epoch, int finished, void *staging)
{
    s_async *async = staging;
    weir__ckpt *ck = weir__ckpt_new (epoch);
    if (!ck)
        return NULL;
    int rc = 0;
    char key[4400];
    rc |= weir__ckpt_put_u64 (ck, 'm', "epoch", epoch);
    rc |= weir__ckpt_put_u64 (ck, 'm', "finished", (uint64_t) finished);
    rc |= weir__ckpt_put_u64 (ck, 'm', "pass", pipe->pass);
    rc |= weir__ckpt_put_u64 (ck, 'm', "time", (uint64_t) time (NULL));
    char wall[32];
    snprintf (wall, sizeof wall, "%.6f", pipe->base_wall + weir_pipe_wall_seconds (pipe));
    rc |= weir__ckpt_put_text (ck, 'm', "wall_seconds", wall);
    rc |= weir__ckpt_put_text (ck, 'm', "description", pipe->description ? pipe->description : "");
    rc |= weir__ckpt_put_text (ck, 'm', "shape", pipe->shape);
    rc |= weir__ckpt_put_text (ck, 'm', "version", weir_version ());
    for (size_t i = 0; i < pipe->count; i++) {
        weir__stage *stage = pipe->stages[i];
        snprintf (key, sizeof key, "records_in:%zu", i);
        rc |= weir__ckpt_put_u64 (ck, 'm', key,
                                  stage->base_records_in
                                      + (stage->kind == WEIR_ELEMENT_READER ? atomic_load (&stage->records_out)
                                                                            : atomic_load (&stage->records_in)));
        snprintf (key, sizeof key, "records_out:%zu", i);
        rc |= weir__ckpt_put_u64 (ck, 'm', key, stage->base_records_out + atomic_load (&stage->records_out));
        if (stage->writer) {
            s_writer_key (stage, key, sizeof key);
            rc |= weir__ckpt_put_text (ck, 'w', key, stage->committed);
        }
    }
    weir__stage *reader = pipe->stages[0];
    for (size_t i = 0; i < reader->shards.count; i++) {
        s_shard_key (&reader->shards.items[i], key, sizeof key);
        rc |= weir__ckpt_put_u64 (ck, 'o', key, reader->offsets[i]);
    }
    size_t n = weir__workspace_count (pipe->workspace);
    if (async && n > async->nstaging) {
        s_staging *more = realloc (async->staging, n * sizeof *more);
        if (!more) {
            weir__ckpt_destroy (&ck);
            return NULL;
        }
        memset (more + async->nstaging, 0, (n - async->nstaging) * sizeof *more);
        async->staging = more;
        async->nstaging = n;
    }
    for (size_t i = 0; i < n; i++) {
        void *data;
        size_t size;
        const char *name = weir__workspace_item (pipe->workspace, i, &data, &size);
        if (async) {
            s_staging *copy = &async->staging[i];
            if (copy->size != size) {
                free (copy->data);
                copy->size = 0;
                if (!(copy->data = malloc (size ? size : 1))) {
                    weir__ckpt_destroy (&ck);
                    return NULL;
                }
                copy->size = size;
            }
            if (size)
                memcpy (copy->data, data, size);
            data = copy->data;
        }
        rc |= weir__ckpt_put (ck, 'b', name, data, size, 0);
    }
    if (rc)
        weir__ckpt_destroy (&ck);
    return ck;
}

//  ---------------------------------------------------------------------
//  Asynchronous writes

static void *s_async_main (void *arg)
{
    s_async *self = arg;
    pthread_mutex_lock (&self->lock);
    for (;;) {
        while (!self->pending && !self->quit)
            pthread_cond_wait (&self->cond, &self->lock);
        if (!self->pending)
            break;
        weir__ckpt *ck = self->pending;
        pthread_mutex_unlock (&self->lock);
        weir__err err;
        weir__err_init (&err);
        int rc = weir__store_write (self->pipe->store, ck, self->pipe->keep, &err);
        weir__ckpt_destroy (&ck);
        pthread_mutex_lock (&self->lock);
        self->pending = NULL;
        self->busy = 0;
        if (rc) {
            self->rc = rc;
            self->err = err;
        }
        pthread_cond_broadcast (&self->cond);
    }
    pthread_mutex_unlock (&self->lock);
    return NULL;
}

//  Wait for the write in flight; its result (and error) are collected.
static int s_async_wait (s_async *self, weir__err *err)
{
    pthread_mutex_lock (&self->lock);
    while (self->busy)
        pthread_cond_wait (&self->cond, &self->lock);
    int rc = self->rc;
    if (rc)
        *err = self->err;
    self->rc = 0;
    pthread_mutex_unlock (&self->lock);
    return rc;
}

static void s_async_submit (s_async *self, weir__ckpt *ck)
{
    pthread_mutex_lock (&self->lock);
    self->pending = ck;
    self->busy = 1;
    pthread_cond_broadcast (&self->cond);
    pthread_mutex_unlock (&self->lock);
}

//  ---------------------------------------------------------------------
//  Writing a checkpoint, with the failure policy

//  A failed checkpoint: within --checkpoint-failures, report it and go on;
//  beyond, fail the job.  0 to go on.
static int s_failed (weir_pipe *pipe, uint64_t epoch, weir__err *err)
{
    //  LevelDB refuses every write after a failed one until reopened
    weir__err again;
    weir__err_init (&again);
    if (weir__store_reopen (pipe->store, &again)) {
        weir__err_prefix (err, "checkpoint %" PRIu64 " failed: ", epoch);
        weir__pipe_fail (pipe, err);
        return -1;
    }
    pipe->failures++;
    if (pipe->failures <= pipe->checkpoint_failures) {
        weir__pipe_log (pipe, WEIR_LOG_WARNING, "checkpoint %" PRIu64 " failed (%u of %u consecutive failures allowed): %s", epoch,
                        pipe->failures, pipe->checkpoint_failures, err->msg);
        return 0;
    }
    weir__err_prefix (err, "checkpoint %" PRIu64 " failed: ", epoch);
    weir__pipe_fail (pipe, err);
    return -1;
}

//  Write the checkpoint of EPOCH (sync, or staged for the background
//  writer).  0 to go on, -1 when the job failed.
static int s_checkpoint (weir_pipe *pipe, uint64_t epoch, int finished)
{
    weir__err err;
    weir__err_init (&err);
    s_async *async = pipe->async;
    if (async) {
        //  At most one write in flight; its failure surfaces now
        if (s_async_wait (async, &err) && s_failed (pipe, epoch - 1, &err))
            return -1;
        weir__ckpt *ck = s_snapshot (pipe, epoch, finished, async);
        if (!ck) {
            weir__err_set (&err, WEIR_ENOMEM, "out of memory staging checkpoint %" PRIu64, epoch);
            return s_failed (pipe, epoch, &err);
        }
        s_async_submit (async, ck);
        return 0;
    }
    weir__ckpt *ck = s_snapshot (pipe, epoch, finished, NULL);
    int rc = ck ? weir__store_write (pipe->store, ck, pipe->keep, &err)
                : weir__err_set (&err, WEIR_ENOMEM, "out of memory");
    weir__ckpt_destroy (&ck);
    if (rc)
        return s_failed (pipe, epoch, &err);
    pipe->failures = 0;
    return 0;
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

static int s_load_blobs (weir_pipe *pipe, weir__err *err)
{
    weir__store *store;
    int rc = weir__store_open (pipe->load_blobs_dir, 0, &store, err);
    if (rc)
        return rc;
    uint64_t epoch = (uint64_t) pipe->load_blobs_epoch;
    if (pipe->load_blobs_epoch < 0 && (rc = weir__store_latest (store, &epoch, err)) != 0) {
        if (rc == 1)
            rc = weir__err_set (err, WEIR_EIO, "--load-blobs: '%s' holds no checkpoint", pipe->load_blobs_dir);
        weir__store_destroy (&store);
        return rc;
    }
    weir__ckpt *ck;
    if ((rc = weir__store_read (store, epoch, &ck, err))) {
        weir__store_destroy (&store);
        return rc;
    }
    size_t n = weir__ckpt_count (ck, 'b');
    for (size_t i = 0; i < n && !rc; i++) {
        const void *data;
        size_t size;
        const char *name = weir__ckpt_item (ck, 'b', i, &data, &size);
        if (weir__workspace_restore (pipe->workspace, name, data, size))
            rc = weir__err_set (err, WEIR_ENOMEM, "out of memory loading blob '%s'", name);
    }
    weir__pipe_log (pipe, WEIR_LOG_INFO, "loaded %zu blobs from checkpoint %" PRIu64 " of '%s'", n, epoch, pipe->load_blobs_dir);
    weir__ckpt_destroy (&ck);
    weir__store_destroy (&store);
    return rc;
}

//  Resume from checkpoint EPOCH: everything but what needs the stages open.
static int s_resume (weir_pipe *pipe, uint64_t epoch, weir__err *err)
{
    weir__ckpt *ck;
    int rc = weir__store_read (pipe->store, epoch, &ck, err);
    if (rc)
        return rc;
    size_t len;
    const char *shape = weir__ckpt_get (ck, 'm', "shape", &len);
    if (!shape || len != strlen (pipe->shape) || memcmp (shape, pipe->shape, len) != 0) {
        const char *was = weir__ckpt_get (ck, 'm', "description", &len);
        weir__err_set (err, WEIR_ESTRUCTURE,
                       "checkpoint %" PRIu64 " of '%s' was written by another pipeline: '%.*s'; only threads=, "
                       "capacity= and batch= may change on resume",
                       epoch, pipe->checkpoint_dir, was ? (int) len : 0, was ? was : "");
        weir__ckpt_destroy (&ck);
        return WEIR_ESTRUCTURE;
    }
    uint64_t pass = 0, finished = 0;
    const char *wall = weir__ckpt_get (ck, 'm', "wall_seconds", &len);
    if (wall && len < 32) {
        char text[32];
        memcpy (text, wall, len);
        text[len] = '\0';
        pipe->base_wall = strtod (text, NULL);
    }
    weir__ckpt_get_u64 (ck, 'm', "pass", &pass);
    weir__ckpt_get_u64 (ck, 'm', "finished", &finished);
    pipe->pass = (unsigned) pass;
    char key[64];
    for (size_t i = 0; i < pipe->count; i++) {
        weir__stage *stage = pipe->stages[i];
        snprintf (key, sizeof key, "records_in:%zu", i);
        weir__ckpt_get_u64 (ck, 'm', key, &stage->base_records_in);
        snprintf (key, sizeof key, "records_out:%zu", i);
        weir__ckpt_get_u64 (ck, 'm', key, &stage->base_records_out);
    }
    size_t n = weir__ckpt_count (ck, 'b');
    for (size_t i = 0; i < n; i++) {
        const void *data;
        size_t size;
        const char *name = weir__ckpt_item (ck, 'b', i, &data, &size);
        if (weir__workspace_restore (pipe->workspace, name, data, size)) {
            weir__ckpt_destroy (&ck);
            return weir__err_set (err, WEIR_ENOMEM, "out of memory restoring blob '%s'", name);
        }
    }
    pipe->fresh = 0;
    pipe->epoch = epoch + 1;
    pipe->first_epoch = epoch + 1;
    atomic_store (&pipe->done_epoch, epoch);
    //  Kept until the stages have opened: their offsets and states are in it
    pipe->resume_ckpt = ck;
    pipe->finished_before = finished != 0;
    weir__pipe_log (pipe, WEIR_LOG_INFO, "resuming from checkpoint %" PRIu64 " of '%s'", epoch, pipe->checkpoint_dir);
    return 0;
}

int weir__epoch_prepare (weir_pipe *pipe, weir__err *err)
{
    pipe->fresh = 1;
    pipe->epoch = 1;
    pipe->first_epoch = 1;
    if (!(pipe->workspace = weir__workspace_new ()) || !(pipe->shape = s_shape (pipe)))
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    int rc;
    if (pipe->load_blobs_dir && (rc = s_load_blobs (pipe, err)))
        return rc;
    if (!pipe->checkpoint_dir) {
        if (pipe->resume_mode != WEIR_RESUME_NONE)
            return weir__err_set (err, WEIR_ESTRUCTURE, "resuming needs a checkpoint directory (--checkpoint DIR)");
        return 0;
    }
    if ((rc = weir__store_open (pipe->checkpoint_dir, 1, &pipe->store, err)))
        return rc;
    uint64_t latest = 0;
    rc = weir__store_latest (pipe->store, &latest, err);
    if (rc < 0)
        return rc;
    int has = rc == 0;
    switch (pipe->resume_mode) {
    case WEIR_RESUME_NONE:
        if (has)
            return weir__err_set (err, WEIR_ESTATE,
                                  "'%s' already holds checkpoints (the latest is epoch %" PRIu64
                                  "): add --resume to go on from it, or choose another directory",
                                  pipe->checkpoint_dir, latest);
        return 0;
    case WEIR_RESUME_LATEST:
        return has ? s_resume (pipe, latest, err) : 0;
    default:
        return s_resume (pipe, pipe->resume_epoch, err);
    }
}

//  Reader offsets and writer states of the resumed checkpoint, once the
//  stages are open: the shards planned now must be those checkpointed.
int weir__epoch_resume_stage (weir__stage *stage, weir__err *err)
{
    weir__ckpt *resume = stage->pipe->resume_ckpt;
    if (stage->reader) {
        stage->offsets = calloc (stage->shards.count ? stage->shards.count : 1, sizeof *stage->offsets);
        if (!stage->offsets)
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        for (size_t i = 0; i < stage->shards.count; i++)
            stage->offsets[i] = stage->shards.items[i].start;
        if (!resume)
            return 0;
        char key[4400];
        for (size_t i = 0; i < stage->shards.count; i++) {
            const weir__shard *shard = &stage->shards.items[i];
            s_shard_key (shard, key, sizeof key);
            uint64_t offset;
            if (weir__ckpt_get_u64 (resume, 'o', key, &offset)
                || offset < shard->start || (offset > shard->end))
                return weir__err_set (err, WEIR_ECORRUPT,
                                      "%s: the input changed since checkpoint %" PRIu64
                                      ": it has no offset for shard '%s'; resuming would lose or repeat records",
                                      stage->name, weir__ckpt_epoch (resume), key);
            stage->offsets[i] = offset;
        }
        if (weir__ckpt_count (resume, 'o') != stage->shards.count)
            return weir__err_set (err, WEIR_ECORRUPT,
                                  "%s: the input changed since checkpoint %" PRIu64 ": it had %zu shards, now %zu",
                                  stage->name, weir__ckpt_epoch (resume),
                                  weir__ckpt_count (resume, 'o'), stage->shards.count);
    }
    return 0;
}

const char *weir__epoch_writer_resume (weir__stage *stage, weir__err *err)
{
    weir__ckpt *resume = stage->pipe->resume_ckpt;
    if (!resume)
        return NULL;
    char key[4400];
    s_writer_key (stage, key, sizeof key);
    size_t len;
    const char *value = weir__ckpt_get (resume, 'w', key, &len);
    if (!value || len >= sizeof stage->committed) {
        weir__err_set (err, WEIR_ECORRUPT, "checkpoint %" PRIu64 " has no committed state for writer '%s'",
                       weir__ckpt_epoch (resume), key);
        return (const char *) -1;
    }
    memcpy (stage->committed, value, len);
    stage->committed[len] = '\0';
    return stage->committed;
}

int weir__epoch_begin (weir_pipe *pipe, weir__err *err)
{
    weir__ckpt_destroy (&pipe->resume_ckpt);
    s_reset_budget (pipe);
    if (!pipe->store)
        return 0;
    //  Checkpoint 0: the state right after init, before any record; the
    //  writers commit their (empty) outputs first, so that resuming from it
    //  knows where they stand
    if (pipe->fresh) {
        for (size_t i = 0; i < pipe->count; i++) {
            weir__stage *stage = pipe->stages[i];
            if (stage->writer && stage->writer->commit (stage->writer_state, stage->committed, err))
                return err->code;
        }
        weir__ckpt *ck = s_snapshot (pipe, 0, 0, NULL);
        int rc = ck ? weir__store_write (pipe->store, ck, pipe->keep, err)
                    : weir__err_set (err, WEIR_ENOMEM, "out of memory");
        weir__ckpt_destroy (&ck);
        if (rc) {
            weir__err_prefix (err, "checkpoint 0 failed: ");
            return rc;
        }
    }
    if (pipe->async_checkpoint) {
        s_async *async = calloc (1, sizeof *async);
        if (!async)
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        async->pipe = pipe;
        pthread_mutex_init (&async->lock, NULL);
        pthread_cond_init (&async->cond, NULL);
        if (pthread_create (&async->thread, NULL, s_async_main, async)) {
            pthread_mutex_destroy (&async->lock);
            pthread_cond_destroy (&async->cond);
            free (async);
            return weir__err_set (err, WEIR_ESYSTEM, "cannot start the checkpoint writer thread");
        }
        pipe->async = async;
        //  Staging buffers for the blobs that exist now, faulted in before
        //  the pipe starts rather than during the first pause
        size_t n = weir__workspace_count (pipe->workspace);
        if (n && (async->staging = calloc (n, sizeof *async->staging))) {
            async->nstaging = n;
            for (size_t i = 0; i < n; i++) {
                void *data;
                size_t size;
                weir__workspace_item (pipe->workspace, i, &data, &size);
                if ((async->staging[i].data = malloc (size ? size : 1))) {
                    memset (async->staging[i].data, 0, size);
                    async->staging[i].size = size;
                }
            }
        }
    }
    return 0;
}

void weir__epoch_end (weir_pipe *pipe)
{
    weir__ckpt_destroy (&pipe->resume_ckpt);
    s_async *async = pipe->async;
    if (async) {
        weir__err err;
        weir__err_init (&err);
        //  The last write's failure is reported, never swallowed
        if (s_async_wait (async, &err)) {
            weir__err_prefix (&err, "the last checkpoint failed: ");
            weir__pipe_fail (pipe, &err);
        }
        pthread_mutex_lock (&async->lock);
        async->quit = 1;
        pthread_cond_broadcast (&async->cond);
        pthread_mutex_unlock (&async->lock);
        pthread_join (async->thread, NULL);
        pthread_mutex_destroy (&async->lock);
        pthread_cond_destroy (&async->cond);
        for (size_t i = 0; i < async->nstaging; i++)
            free (async->staging[i].data);
        free (async->staging);
        free (async);
        pipe->async = NULL;
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
    if (pipe->store && s_checkpoint (pipe, epoch, finished))
        return 1;
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

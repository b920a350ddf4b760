/*  checkpoint/saver.c - checkpoint writes, in the foreground or on a
    background thread, and what to do when one fails.  */
#include "config.h"
#include "checkpoint/saver.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/killpoint.h"

struct weir__saver {
    weir__store *store;
    unsigned keep;
    unsigned failures;  //  consecutive failures allowed
    unsigned failed;    //  consecutive failures so far
    _Atomic uint64_t *failed_count;  //  every failure, for whoever watches (or NULL)
    weir__warn_fn *warn;
    void *warn_arg;
    int64_t durable;  //  the epoch of the newest checkpoint written, or -1 (under LOCK when async)

    //  Asynchronous mode
    int async;
    weir__staging *staging;  //  reused while no write is in flight
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    weir__ckpt *pending;  //  to write
    int busy;             //  a write is queued or running
    int quit;
    int rc;          //  of the last write, until collected
    uint64_t epoch;  //  of the last write
    weir__err err;
};

static void *s_writer_main (void *arg)
{
    weir__saver *self = arg;
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
        int rc = weir__store_write (self->store, ck, self->keep, &err);
        weir__ckpt_destroy (&ck);
        pthread_mutex_lock (&self->lock);
        self->pending = NULL;
        self->busy = 0;
        if (!rc)
            self->durable = (int64_t) self->epoch;
        if (rc) {
            self->rc = rc;
            self->err = err;
        }
        pthread_cond_broadcast (&self->cond);
    }
    pthread_mutex_unlock (&self->lock);
    return NULL;
}

int weir__saver_new (weir__store *store, unsigned keep, int async, unsigned failures,
                     _Atomic uint64_t *failed, weir__workspace *ws, weir__warn_fn *warn, void *arg,
                     weir__saver **out, weir__err *err)
{
    *out = NULL;
    weir__saver *self = calloc (1, sizeof *self);
    if (!self)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    self->store = store;
    self->keep = keep;
    self->failures = failures;
    self->failed_count = failed;
    self->durable = -1;
    self->warn = warn;
    self->warn_arg = arg;
    if (async) {
        if (!(self->staging = weir__staging_new ()) || weir__staging_prefault (self->staging, ws)) {
            weir__staging_destroy (&self->staging);
            free (self);
            return weir__err_set (err, WEIR_ENOMEM, "out of memory staging the checkpoints");
        }
        pthread_mutex_init (&self->lock, NULL);
        pthread_cond_init (&self->cond, NULL);
        if (pthread_create (&self->thread, NULL, s_writer_main, self)) {
            pthread_mutex_destroy (&self->lock);
            pthread_cond_destroy (&self->cond);
            weir__staging_destroy (&self->staging);
            free (self);
            return weir__err_set (err, WEIR_ESYSTEM, "cannot start the checkpoint writer thread");
        }
        self->async = 1;
    }
    *out = self;
    return 0;
}

//  Wait for the write in flight; its result and error are collected.
static int s_wait (weir__saver *self, weir__err *err)
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

void weir__saver_destroy (weir__saver **self_p)
{
    weir__saver *self = *self_p;
    if (!self)
        return;
    if (self->async) {
        weir__err err;
        weir__err_init (&err);
        s_wait (self, &err);
        pthread_mutex_lock (&self->lock);
        self->quit = 1;
        pthread_cond_broadcast (&self->cond);
        pthread_mutex_unlock (&self->lock);
        pthread_join (self->thread, NULL);
        pthread_mutex_destroy (&self->lock);
        pthread_cond_destroy (&self->cond);
    }
    weir__staging_destroy (&self->staging);
    free (self);
    *self_p = NULL;
}

//  A failed checkpoint of EPOCH: within the allowance, warn and go on (0);
//  beyond, the job fails (ERR says which checkpoint).
static int s_failed (weir__saver *self, uint64_t epoch, weir__err *err)
{
    if (self->failed_count)
        atomic_fetch_add_explicit (self->failed_count, 1, memory_order_relaxed);
    //  LevelDB refuses every write after a failed one until reopened
    weir__err again;
    weir__err_init (&again);
    if (weir__store_reopen (self->store, &again) == 0 && ++self->failed <= self->failures) {
        if (self->warn) {
            char text[1200];
            snprintf (text, sizeof text,
                      "checkpoint %" PRIu64 " failed (%u of %u consecutive failures allowed): %s", epoch,
                      self->failed, self->failures, err->msg);
            self->warn (self->warn_arg, text);
        }
        return 0;
    }
    weir__err_prefix (err, "checkpoint %" PRIu64 " failed: ", epoch);
    return err->code ? err->code : WEIR_EIO;
}

int weir__saver_save_first (weir__saver *self, const weir__snapshot *s, weir__err *err)
{
    weir__ckpt *ck = weir__snapshot_take (s, NULL);
    int rc = ck ? weir__store_write (self->store, ck, self->keep, err)
                : weir__err_set (err, WEIR_ENOMEM, "out of memory");
    weir__ckpt_destroy (&ck);
    if (rc)
        weir__err_prefix (err, "checkpoint %" PRIu64 " failed: ", s->epoch);
    else if (self->async) {
        pthread_mutex_lock (&self->lock);
        self->durable = (int64_t) s->epoch;
        pthread_mutex_unlock (&self->lock);
    }
    else
        self->durable = (int64_t) s->epoch;
    return rc;
}

int weir__saver_save (weir__saver *self, const weir__snapshot *s, weir__err *err)
{
    if (self->async) {
        //  At most one write in flight; its failure surfaces now
        if (s_wait (self, err)) {
            int rc = s_failed (self, self->epoch, err);
            if (rc)
                return rc;
            weir__err_init (err);
        }
        else
            self->failed = 0;
        weir__ckpt *ck = weir__snapshot_take (s, self->staging);
        if (!ck) {
            weir__err_set (err, WEIR_ENOMEM, "out of memory staging checkpoint %" PRIu64, s->epoch);
            return s_failed (self, s->epoch, err);
        }
        WEIR_KILL_POINT ("blobs-copied");
        pthread_mutex_lock (&self->lock);
        self->pending = ck;
        self->busy = 1;
        self->epoch = s->epoch;
        pthread_cond_broadcast (&self->cond);
        pthread_mutex_unlock (&self->lock);
        return 0;
    }
    weir__ckpt *ck = weir__snapshot_take (s, NULL);
    int rc = ck ? weir__store_write (self->store, ck, self->keep, err)
                : weir__err_set (err, WEIR_ENOMEM, "out of memory");
    weir__ckpt_destroy (&ck);
    if (rc)
        return s_failed (self, s->epoch, err);
    self->failed = 0;
    self->durable = (int64_t) s->epoch;
    return 0;
}

int weir__saver_durable (weir__saver *self, uint64_t *epoch)
{
    if (self->async)
        pthread_mutex_lock (&self->lock);
    int64_t durable = self->durable;
    if (self->async)
        pthread_mutex_unlock (&self->lock);
    if (durable < 0)
        return -1;
    *epoch = (uint64_t) durable;
    return 0;
}

int weir__saver_finish (weir__saver *self, weir__err *err)
{
    if (!self->async)
        return 0;
    if (!s_wait (self, err))
        return 0;
    weir__err_prefix (err, "the last checkpoint failed: ");
    return err->code ? err->code : WEIR_EIO;
}

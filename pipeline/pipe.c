/*  pipeline/pipe.c - building a pipe, resolving its elements, statistics.  */
#include "config.h"
#include "pipeline/pipe.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "pipeline/parse.h"

weir_pipe *weir_pipe_new (void)
{
    weir_pipe *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    pthread_mutex_init (&self->lock, NULL);
    //  The controller's progress waits use the monotonic clock: a clock
    //  change must not stall or flood the progress line
    pthread_condattr_t attr;
    pthread_condattr_init (&attr);
    pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
    pthread_cond_init (&self->arrived_cond, &attr);
    pthread_condattr_destroy (&attr);
    pthread_mutex_init (&self->epoch_lock, NULL);
    pthread_cond_init (&self->release_cond, NULL);
    self->load_blobs_epoch = -1;
    weir__err_init (&self->err);
    return self;
}

static void s_stage_destroy (weir__stage **stage_p)
{
    weir__stage *stage = *stage_p;
    if (!stage)
        return;
    free (stage->name);
    weir__props_release (&stage->props);
    weir__shards_release (&stage->shards);
    free (stage->handles);
    free (stage->offsets);
    pthread_mutex_destroy (&stage->claim_lock);
    pthread_cond_destroy (&stage->claim_cond);
    //  Last: the plugin's code and its table go away with it
    weir_plugin_destroy (&stage->plugin);
    free (stage);
    *stage_p = NULL;
}

void weir_pipe_destroy (weir_pipe **self_p)
{
    weir_pipe *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < self->count; i++)
        s_stage_destroy (&self->stages[i]);
    free (self->stages);
    free (self->description);
    for (size_t i = 0; i < self->warning_count; i++)
        free (self->warnings[i]);
    free (self->warnings);
    pthread_mutex_destroy (&self->lock);
    pthread_mutex_destroy (&self->epoch_lock);
    pthread_cond_destroy (&self->arrived_cond);
    pthread_cond_destroy (&self->release_cond);
    free (self->checkpoint_dir);
    free (self->load_blobs_dir);
    free (self->shape);
    weir__workspace_destroy (&self->workspace);
    free (self);
    *self_p = NULL;
}

static int s_set_error (weir_pipe *self, const weir__err *err)
{
    pthread_mutex_lock (&self->lock);
    self->err = *err;
    pthread_mutex_unlock (&self->lock);
    return err->code;
}

static weir__stage *s_stage_append (weir_pipe *self, const char *name, long offset)
{
    weir__stage **stages = realloc (self->stages, (self->count + 1) * sizeof *stages);
    if (!stages)
        return NULL;
    self->stages = stages;
    weir__stage *stage = calloc (1, sizeof *stage);
    if (!stage || !(stage->name = strdup (name))) {
        free (stage);
        return NULL;
    }
    stage->pipe = self;
    stage->index = self->count;
    pthread_mutex_init (&stage->claim_lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init (&attr);
    pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
    pthread_cond_init (&stage->claim_cond, &attr);
    pthread_condattr_destroy (&attr);
    stage->name_offset = offset;
    weir__props_init (&stage->props);
    weir__shards_init (&stage->shards);
    stages[self->count++] = stage;
    return stage;
}

int weir_pipe_parse (weir_pipe *self, const char *description)
{
    assert (self && description);
    weir__err err;
    weir__err_init (&err);
    if (self->ran)
        return s_set_error (self, (weir__err_set (&err, WEIR_ESTATE, "the pipe already ran"), &err));
    char *copy = strdup (description);
    if (!copy)
        return s_set_error (self, (weir__err_set (&err, WEIR_ENOMEM, "out of memory"), &err));
    free (self->description);
    self->description = copy;

    //  Offsets of earlier stages pointed into another text
    for (size_t i = 0; i < self->count; i++) {
        weir__stage *stage = self->stages[i];
        stage->name_offset = -1;
        for (size_t k = 0; k < stage->props.count; k++)
            stage->props.items[k].key_offset = stage->props.items[k].value_offset = -1;
    }

    weir__spec spec;
    weir__spec_init (&spec);
    int rc = weir__parse (description, &spec, &err);
    for (size_t i = 0; !rc && i < spec.count; i++) {
        weir__stage *stage = s_stage_append (self, spec.items[i].name, spec.items[i].name_offset);
        if (!stage) {
            rc = weir__err_set (&err, WEIR_ENOMEM, "out of memory");
            break;
        }
        //  Move the properties over
        stage->props = spec.items[i].props;
        weir__props_init (&spec.items[i].props);
    }
    weir__spec_release (&spec);
    return rc ? s_set_error (self, &err) : 0;
}

static int s_add_props (weir_pipe *self, weir__stage *stage, const char *const *props)
{
    weir__err err;
    weir__err_init (&err);
    for (size_t i = 0; props && props[i]; i++) {
        int rc = weir__props_add_text (&stage->props, props[i], &err);
        if (rc) {
            weir__err_prefix (&err, "%s: ", stage->name);
            return s_set_error (self, &err);
        }
    }
    return 0;
}

int weir_pipe_add (weir_pipe *self, const char *element, const char *const *props)
{
    assert (self && element);
    weir__err err;
    weir__err_init (&err);
    if (self->ran)
        return s_set_error (self, (weir__err_set (&err, WEIR_ESTATE, "the pipe already ran"), &err));
    weir__stage *stage = s_stage_append (self, element, -1);
    if (!stage)
        return s_set_error (self, (weir__err_set (&err, WEIR_ENOMEM, "out of memory"), &err));
    return s_add_props (self, stage, props);
}

int weir_pipe_add_processor (weir_pipe *self, const weir_processor *proc, void *user,
                             const char *const *props)
{
    assert (self && proc);
    weir__err err;
    weir__err_init (&err);
    if (self->ran)
        return s_set_error (self, (weir__err_set (&err, WEIR_ESTATE, "the pipe already ran"), &err));
    const char *name = proc->name ? proc->name : "processor";
    if (proc->abi != WEIR_PLUGIN_ABI)
        return s_set_error (self, (weir__err_set (&err, WEIR_EPROCESSOR,
                                                  "%s: built for processor ABI %d, this weir has ABI %d",
                                                  name, proc->abi, WEIR_PLUGIN_ABI),
                                   &err));
    if (!proc->process)
        return s_set_error (self, (weir__err_set (&err, WEIR_EPROCESSOR,
                                                  "%s: the processor has no process callback", name),
                                   &err));
    weir__stage *stage = s_stage_append (self, name, -1);
    if (!stage)
        return s_set_error (self, (weir__err_set (&err, WEIR_ENOMEM, "out of memory"), &err));
    stage->kind = WEIR_ELEMENT_PROCESSOR;
    stage->proc = proc;
    stage->user = user;
    return s_add_props (self, stage, props);
}

void weir_pipe_set_epoch_records (weir_pipe *self, uint64_t records)
{
    self->epoch_records = records;
}

void weir_pipe_set_epoch_seconds (weir_pipe *self, double seconds)
{
    self->epoch_seconds = seconds > 0 ? seconds : 0;
}

void weir_pipe_set_epochs (weir_pipe *self, uint64_t last_epoch)
{
    self->max_epochs = last_epoch;
}

int weir_pipe_set_checkpoint (weir_pipe *self, const char *dir)
{
    char *copy = dir ? strdup (dir) : NULL;
    if (dir && !copy)
        return WEIR_ENOMEM;
    free (self->checkpoint_dir);
    self->checkpoint_dir = copy;
    return 0;
}

void weir_pipe_set_keep (weir_pipe *self, unsigned keep)
{
    self->keep = keep;
}

void weir_pipe_set_async_checkpoint (weir_pipe *self, int on)
{
    self->async_checkpoint = on;
}

void weir_pipe_set_checkpoint_failures (weir_pipe *self, unsigned failures)
{
    self->checkpoint_failures = failures;
}

void weir_pipe_set_resume (weir_pipe *self, int mode, uint64_t epoch)
{
    self->resume_mode = mode;
    self->resume_epoch = epoch;
}

int weir_pipe_set_load_blobs (weir_pipe *self, const char *dir, int64_t epoch)
{
    char *copy = dir ? strdup (dir) : NULL;
    if (dir && !copy)
        return WEIR_ENOMEM;
    free (self->load_blobs_dir);
    self->load_blobs_dir = copy;
    self->load_blobs_epoch = epoch;
    return 0;
}

void weir_pipe_set_log (weir_pipe *self, weir_log_fn *fn, void *arg)
{
    self->log = fn;
    self->log_arg = arg;
}

void weir_pipe_pauses (const weir_pipe *self, uint64_t *count, double *total, double *longest)
{
    weir_pipe *pipe = (weir_pipe *) self;
    if (count)
        *count = atomic_load (&pipe->pauses);
    if (total)
        *total = (double) atomic_load (&pipe->pause_ns) / 1e9;
    if (longest)
        *longest = (double) atomic_load (&pipe->pause_max_ns) / 1e9;
}

uint64_t weir_pipe_epoch (const weir_pipe *self)
{
    return atomic_load (&((weir_pipe *) self)->done_epoch);
}

void weir__pipe_log (weir_pipe *pipe, int level, const char *fmt, ...)
{
    if (!pipe->log)
        return;
    char text[1200];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (text, sizeof text, fmt, ap);
    va_end (ap);
    pipe->log (pipe, pipe->log_arg, level, text);
}

void weir_pipe_stop (weir_pipe *self)
{
    atomic_store (&self->stop, 1);
}

const char *weir_pipe_error (const weir_pipe *self)
{
    return self->err.msg;
}

long weir_pipe_error_offset (const weir_pipe *self)
{
    return self->err.offset;
}

void weir_pipe_set_progress (weir_pipe *self, weir_progress_fn *fn, void *arg, unsigned interval_ms)
{
    self->progress = fn;
    self->progress_arg = arg;
    self->progress_ms = interval_ms ? interval_ms : 500;
}

size_t weir_pipe_warning_count (const weir_pipe *self)
{
    return self->warning_count;
}

const char *weir_pipe_warning (const weir_pipe *self, size_t index)
{
    return index < self->warning_count ? self->warnings[index] : NULL;
}

size_t weir_pipe_stage_count (const weir_pipe *self)
{
    return self->count;
}

double weir_pipe_wall_seconds (const weir_pipe *self)
{
    uint64_t start = atomic_load (&((weir_pipe *) self)->start_ns);
    uint64_t end = atomic_load (&((weir_pipe *) self)->end_ns);
    if (!start)
        return 0;
    return (double) ((end ? end : weir__now_ns ()) - start) / 1e9;
}

int weir_pipe_stats (const weir_pipe *self, size_t index, weir_stage_stats *stats)
{
    if (index >= self->count)
        return WEIR_ESTATE;
    weir__stage *stage = self->stages[index];
    memset (stats, 0, sizeof *stats);
    stats->name = stage->name;
    stats->kind = stage->kind;
    stats->threads = stage->threads;
    stats->records_in = atomic_load_explicit (&stage->records_in, memory_order_relaxed);
    stats->records_out = atomic_load_explicit (&stage->records_out, memory_order_relaxed);
    if (stage->kind == WEIR_ELEMENT_READER)
        stats->records_in = stats->records_out;
    stats->batches_in = atomic_load_explicit (&stage->batches_in, memory_order_relaxed);
    uint64_t now = weir__now_ns (), busy = 0;
    for (unsigned t = 0; stage->handles && t < stage->threads; t++) {
        weir_stage *h = &stage->handles[t];
        uint64_t start = atomic_load (&h->start_ns), end = atomic_load (&h->end_ns);
        uint64_t wait = atomic_load (&h->wait_ns);
        if (!start)
            continue;
        uint64_t life = (end ? end : now) - start;
        busy += life > wait ? life - wait : 0;
    }
    stats->busy_seconds = (double) busy / 1e9;
    if (stage->in) {
        stats->queue_fill = weir__queue_fill (stage->in);
        stats->queue_capacity = weir__queue_capacity (stage->in);
    }
    return 0;
}

void weir__pipe_fail (weir_pipe *pipe, const weir__err *err)
{
    pthread_mutex_lock (&pipe->lock);
    int first = !atomic_load (&pipe->failed);
    if (first) {
        pipe->err = *err;
        atomic_store (&pipe->failed, 1);
    }
    pthread_mutex_unlock (&pipe->lock);
    if (!first)
        return;
    atomic_store (&pipe->stop, 1);
    for (size_t i = 0; i < pipe->count; i++)
        if (pipe->stages[i]->in)
            weir__queue_abort (pipe->stages[i]->in);
    weir__epoch_abort (pipe);
    //  Every blocking ZeroMQ call in the job now returns ETERM
    if (pipe->zmq_ctx)
        zmq_ctx_shutdown (pipe->zmq_ctx);
}

int weir_pipe_run (weir_pipe *self)
{
    assert (self);
    weir__err err;
    weir__err_init (&err);
    if (self->ran)
        return s_set_error (self, (weir__err_set (&err, WEIR_ESTATE, "a pipe runs once"), &err));
    self->ran = 1;
    return weir__pipe_run (self);
}

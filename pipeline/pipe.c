/*  pipeline/pipe.c - the pipe of <weir/weir.h>: building it, setting its
    options, running it, its statistics.  */
#include "config.h"

#include <assert.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <weir/weir.h>

#include "lib/key.h"
#include "pipeline/build.h"
#include "pipeline/controller.h"
#include "pipeline/graph.h"
#include "pipeline/job.h"
#include "pipeline/options.h"
#include "pipeline/ranks.h"
#include "pipeline/runtime.h"
#include "pipeline/stage.h"

struct weir_pipe {
    weir__job job;
    weir__stages stages;
    char *description;  //  text of the last weir_pipe_parse
    weir__options options;
    weir__controller *controller;  //  made when it runs
    weir__ranks *ranks;            //  the ranks of the job, known when it runs
    weir_progress_fn *progress;
    void *progress_arg;
    unsigned progress_ms;
    atomic_int ran;  //  S_NEW, S_RUNNING inside weir_pipe_run, then S_RAN
    int checked;     //  resolved: 1, refused: -1 (with check_rc), not yet: 0
    int check_rc;
};

enum { S_NEW, S_RUNNING, S_RAN };

int weir_pipe_new (weir_pipe **out)
{
    assert (out);
    weir_pipe *self = *out = calloc (1, sizeof *self);
    if (!self)
        return WEIR_ENOMEM;
    weir__job_init (&self->job, self);
    weir__stages_init (&self->stages);
    self->options.load_blobs_epoch = -1;
    return 0;
}

void weir_pipe_destroy (weir_pipe **self_p)
{
    weir_pipe *self = *self_p;
    if (!self)
        return;
    weir__ranks_destroy (&self->ranks);
    weir__stages_release (&self->stages);
    weir__controller_destroy (&self->controller);
    free (self->description);
    free (self->options.checkpoint_dir);
    free (self->options.load_blobs_dir);
    weir__job_release (&self->job);
    free (self);
    *self_p = NULL;
}

//  Refuse a call: the message becomes the pipe's error.
static int s_refuse (weir_pipe *self, int code, const char *message)
{
    weir__err err;
    weir__err_set (&err, code, "%s", message);
    return weir__job_refuse (&self->job, &err);
}

//  Refuse a call that would change the pipe once it started: nothing the
//  run uses may change or be freed under it.  While it runs, the job's
//  error is the run's first failure and no refusal replaces it; after,
//  the refusal is the pipe's error, as other refusals are.
static int s_late (weir_pipe *self, const char *message)
{
    if (atomic_load (&self->ran) == S_RUNNING)
        return WEIR_ESTATE;
    return s_refuse (self, WEIR_ESTATE, message);
}

//  Refuse a call that would change a pipe already checked or run.  A
//  checked pipe may still run: its error is not replaced.
static int s_checked (weir_pipe *self)
{
    return self->ran ? s_late (self, "the pipe already ran") : WEIR_ESTATE;
}

int weir_pipe_parse (weir_pipe *self, const char *description)
{
    assert (self && description);
    if (self->ran || self->checked)
        return s_checked (self);
    char *copy = strdup (description);
    if (!copy)
        return s_refuse (self, WEIR_ENOMEM, "out of memory");
    free (self->description);
    self->description = copy;
    weir__err err;
    weir__err_init (&err);
    int rc = weir__build_parse (&self->stages, description, &err);
    return rc ? weir__job_refuse (&self->job, &err) : 0;
}

int weir_pipe_add (weir_pipe *self, const char *element, const char *const *props)
{
    assert (self && element);
    if (self->ran || self->checked)
        return s_checked (self);
    weir__err err;
    weir__err_init (&err);
    int rc = weir__build_add (&self->stages, element, props, &err);
    return rc ? weir__job_refuse (&self->job, &err) : 0;
}

int weir_pipe_add_processor (weir_pipe *self, const weir_processor *proc, void *user,
                             const char *const *props)
{
    assert (self && proc);
    if (self->ran || self->checked)
        return s_checked (self);
    weir__err err;
    weir__err_init (&err);
    int rc = weir__build_add_processor (&self->stages, proc, user, props, &err);
    return rc ? weir__job_refuse (&self->job, &err) : 0;
}

int weir_pipe_branch (weir_pipe *self, const char *from)
{
    assert (self);
    if (self->ran || self->checked)
        return s_checked (self);
    weir__err err;
    weir__err_init (&err);
    int rc = weir__graph_branch (&self->stages, from, &err);
    return rc ? weir__job_refuse (&self->job, &err) : 0;
}

int weir_pipe_link (weir_pipe *self, const char *from, const char *to)
{
    assert (self && from && to);
    if (self->ran || self->checked)
        return s_checked (self);
    weir__err err;
    weir__err_init (&err);
    int rc = weir__graph_link (&self->stages, from, to, &err);
    return rc ? weir__job_refuse (&self->job, &err) : 0;
}

//  Resolved once, by weir_pipe_check or the run
static int s_resolve (weir_pipe *self)
{
    if (self->checked)
        return self->checked < 0 ? self->check_rc : 0;
    weir__err err;
    weir__err_init (&err);
    int rc = weir__build_resolve (&self->stages, &err);
    self->checked = rc ? -1 : 1;
    self->check_rc = rc ? weir__job_refuse (&self->job, &err) : 0;
    return self->check_rc;
}

int weir_pipe_check (weir_pipe *self)
{
    assert (self);
    if (self->ran)
        return s_late (self, "the pipe already ran");
    return s_resolve (self);
}

int weir_pipe_stage_property (const weir_pipe *self, size_t stage, size_t index, const char **key,
                              const char **value)
{
    if (stage >= self->stages.count || index >= self->stages.items[stage]->props.count)
        return WEIR_EINVAL;
    const weir__prop *p = &self->stages.items[stage]->props.items[index];
    *key = p->key;
    *value = p->value;
    return 0;
}

size_t weir_pipe_link_count (const weir_pipe *self)
{
    size_t n = 0;
    for (size_t i = 0; self->checked > 0 && i < self->stages.count; i++)
        n += self->stages.items[i]->nouts;
    return n;
}

int weir_pipe_link_info (const weir_pipe *self, size_t link, size_t *from, size_t *to, uint64_t *records)
{
    for (size_t i = 0; self->checked > 0 && i < self->stages.count; i++) {
        const weir__stage *stage = self->stages.items[i];
        if (link >= stage->nouts) {
            link -= stage->nouts;
            continue;
        }
        weir__edge *e = &stage->outs[link];
        *from = i;
        *to = e->to->index;
        *records = atomic_load_explicit (&e->records, memory_order_relaxed);
        return 0;
    }
    return WEIR_EINVAL;
}

const char *weir_pipe_link_port (const weir_pipe *self, size_t link)
{
    for (size_t i = 0; self->checked > 0 && i < self->stages.count; i++) {
        const weir__stage *stage = self->stages.items[i];
        if (link < stage->nouts)
            return stage->outs[link].port;
        link -= stage->nouts;
    }
    return NULL;
}

int weir_pipe_set_epoch_records (weir_pipe *self, uint64_t records)
{
    if (self->ran)
        return s_late (self, "the pipe already ran");
    self->options.epoch_records = records;
    return 0;
}

int weir_pipe_set_epoch_seconds (weir_pipe *self, double seconds)
{
    if (self->ran)
        return s_late (self, "the pipe already ran");
    self->options.epoch_seconds = seconds > 0 ? seconds : 0;
    return 0;
}

int weir_pipe_set_epochs (weir_pipe *self, uint64_t last_epoch)
{
    if (self->ran)
        return s_late (self, "the pipe already ran");
    self->options.max_epochs = last_epoch;
    return 0;
}

//  Replace *FIELD with a copy of TEXT (or NULL).
static int s_set_text (weir_pipe *self, char **field, const char *text)
{
    char *copy = text ? strdup (text) : NULL;
    if (text && !copy)
        return s_refuse (self, WEIR_ENOMEM, "out of memory");
    free (*field);
    *field = copy;
    return 0;
}

int weir_pipe_set_checkpoint (weir_pipe *self, const char *dir)
{
    if (self->ran)
        return s_late (self, "the pipe already ran");
    return s_set_text (self, &self->options.checkpoint_dir, dir);
}

int weir_pipe_set_keep (weir_pipe *self, unsigned keep)
{
    if (self->ran)
        return s_late (self, "the pipe already ran");
    self->options.keep = keep;
    return 0;
}

int weir_pipe_set_async_checkpoint (weir_pipe *self, int on)
{
    if (self->ran)
        return s_late (self, "the pipe already ran");
    self->options.async_checkpoint = on;
    return 0;
}

int weir_pipe_set_checkpoint_failures (weir_pipe *self, unsigned failures)
{
    if (self->ran)
        return s_late (self, "the pipe already ran");
    self->options.checkpoint_failures = failures;
    return 0;
}

int weir_pipe_set_resume (weir_pipe *self, int mode, uint64_t epoch)
{
    if (self->ran)
        return s_late (self, "the pipe already ran");
    self->options.resume_mode = mode;
    self->options.resume_epoch = epoch;
    return 0;
}

int weir_pipe_set_load_blobs (weir_pipe *self, const char *dir, int64_t epoch)
{
    if (self->ran)
        return s_late (self, "the pipe already ran");
    if (epoch < 0 && epoch != -1 && epoch != WEIR_LOAD_BEST) {
        weir__err err;
        weir__err_init (&err);
        weir__err_set (&err, WEIR_EINVAL,
                       "weir_pipe_set_load_blobs: epoch %" PRId64
                       " is neither a checkpoint, -1 (the latest) nor WEIR_LOAD_BEST",
                       epoch);
        return weir__job_refuse (&self->job, &err);
    }
    self->options.load_blobs_epoch = epoch;
    return s_set_text (self, &self->options.load_blobs_dir, dir);
}

int weir_pipe_set_log (weir_pipe *self, weir_log_fn *fn, void *arg)
{
    if (self->ran)
        return s_late (self, "the pipe already ran");
    self->job.log = fn;
    self->job.log_arg = arg;
    return 0;
}

int weir_pipe_set_progress (weir_pipe *self, weir_progress_fn *fn, void *arg, unsigned interval_ms)
{
    if (self->ran)
        return s_late (self, "the pipe already ran");
    self->progress = fn;
    self->progress_arg = arg;
    self->progress_ms = interval_ms ? interval_ms : 500;
    return 0;
}

static void s_tick (void *arg)
{
    weir_pipe *self = arg;
    self->progress (self, self->progress_arg, 0);
}

//  The run of weir_pipe_run, from resolving the stages to the last
//  progress call.
static int s_run (weir_pipe *self)
{
    weir__err err;
    weir__err_init (&err);
    int rc = s_resolve (self);
    if (rc)
        return rc;
    //  The shape keeps a writer's path as written, "{rank}" included, so
    //  that a job may resume with another number of ranks
    char *shape = weir__build_shape (&self->stages), *older = weir__build_shape_older (&self->stages);
    if (!shape || !older) {
        free (shape);
        free (older);
        return s_refuse (self, WEIR_ENOMEM, "out of memory");
    }
    if (weir__ranks_new (&self->stages, &self->job, self->options.epoch_timeout, &self->ranks, &err)) {
        free (shape);
        free (older);
        return weir__job_refuse (&self->job, &err);
    }
    //  The passes are known once the reader opened: the runtime says them
    weir__epoch_rules rules = {
        self->options.epoch_records, self->options.epoch_seconds, self->options.max_epochs, 1,
        self->options.stop_timeout,
    };
    self->controller = weir__controller_new (&self->job, &rules);
    if (!self->controller) {
        free (shape);
        free (older);
        return s_refuse (self, WEIR_ENOMEM, "out of memory");
    }
    weir__run run = {
        .job = &self->job,
        .stages = &self->stages,
        .options = &self->options,
        .description = self->description,
        .shape = shape,
        .older_shape = older,
        .controller = self->controller,
        .ranks = self->ranks,
        .tick = self->progress ? s_tick : NULL,
        .tick_arg = self,
        .tick_ms = self->progress_ms,
    };
    rc = weir__runtime_run (&run);
    free (shape);
    free (older);
    if (self->progress)
        self->progress (self, self->progress_arg, 1);
    return rc;
}

int weir_pipe_run (weir_pipe *self)
{
    assert (self);
    if (self->ran)
        return s_late (self, "a pipe runs once");
    self->ran = S_RUNNING;
    int rc = s_run (self);
    self->ran = S_RAN;
    return rc;
}

void weir_pipe_stop (weir_pipe *self)
{
    weir__job_stop (&self->job);
}

void weir_pipe_abort (weir_pipe *self)
{
    weir__job_abort (&self->job);
}

int weir_pipe_set_epoch_timeout (weir_pipe *self, double seconds)
{
    if (self->ran)
        return s_late (self, "the pipe already ran");
    self->options.epoch_timeout = seconds > 0 ? seconds : 0;
    return 0;
}

int weir_pipe_set_key_groups (weir_pipe *self, unsigned groups)
{
    if (self->ran)
        return s_late (self, "the pipe already ran");
    if (groups < 1 || groups > WEIR__KEY_GROUPS_MAX)
        return WEIR_EINVAL;
    self->options.key_groups = groups;
    return 0;
}

int weir_pipe_rank (const weir_pipe *self, int *ranks)
{
    if (self && self->ranks) {
        if (ranks)
            *ranks = weir__ranks_size (self->ranks);
        return weir__ranks_rank (self->ranks);
    }
    //  Not run yet: what the launcher says, without starting MPI
    int rank, size = weir__ranks_launched (&rank);
    if (ranks)
        *ranks = size;
    return rank;
}

int weir_pipe_set_stop_timeout (weir_pipe *self, double seconds)
{
    if (self->ran)
        return s_late (self, "the pipe already ran");
    self->options.stop_timeout = seconds > 0 ? seconds : 0;
    return 0;
}

const char *weir_pipe_error (const weir_pipe *self)
{
    return self->job.err.msg;
}

long weir_pipe_error_offset (const weir_pipe *self)
{
    return self->job.err.offset;
}

size_t weir_pipe_warning_count (const weir_pipe *self)
{
    return self->job.warning_count;
}

const char *weir_pipe_warning (const weir_pipe *self, size_t index)
{
    return index < self->job.warning_count ? self->job.warnings[index] : NULL;
}

void weir_pipe_pauses (const weir_pipe *self, uint64_t *count, double *total, double *longest)
{
    if (self->controller)
        weir__controller_pauses (self->controller, count, total, longest);
    else {
        if (count)
            *count = 0;
        if (total)
            *total = 0;
        if (longest)
            *longest = 0;
    }
}

size_t weir_pipe_pause_buckets (const weir_pipe *self, size_t n, double *bounds, uint64_t *counts)
{
    assert (self);
    return weir__controller_pause_buckets (self->controller, n, bounds, counts);
}

uint64_t weir_pipe_checkpoint_failures (const weir_pipe *self)
{
    assert (self);
    return atomic_load_explicit (&self->job.checkpoint_failures, memory_order_relaxed);
}

uint64_t weir_pipe_epoch (const weir_pipe *self)
{
    return self->controller ? weir__controller_done (self->controller) : 0;
}

size_t weir_pipe_metric_count (const weir_pipe *self)
{
    size_t n = 0;
    for (size_t i = 0; i < self->stages.count; i++)
        n += weir__metrics_count (&self->stages.items[i]->metrics);
    return n;
}

int weir_pipe_metric (const weir_pipe *self, size_t index, size_t *stage, const char **name, double *value)
{
    for (size_t i = 0; i < self->stages.count; i++) {
        weir__metrics *m = &self->stages.items[i]->metrics;
        size_t n = weir__metrics_count (m);
        if (index < n) {
            *stage = i;
            *name = weir__metrics_get (m, index, value);
            return 0;
        }
        index -= n;
    }
    return WEIR_EINVAL;
}

size_t weir_pipe_stage_count (const weir_pipe *self)
{
    return self->stages.count;
}

double weir_pipe_wall_seconds (const weir_pipe *self)
{
    return weir__job_wall_seconds ((weir__job *) &self->job);
}

double weir_pipe_failed_for (const weir_pipe *self)
{
    return weir__job_failed_for ((weir__job *) &self->job);
}

int weir_pipe_stats (const weir_pipe *self, size_t index, weir_stage_stats *stats)
{
    size_t size = stats->size;
    if (size < offsetof (weir_stage_stats, name) + sizeof stats->name)
        return WEIR_EINVAL;
    if (index >= self->stages.count)
        return WEIR_EINVAL;
    //  Fill all, hand over what the caller's struct has room for
    weir_stage_stats all;
    memset (&all, 0, sizeof all);
    weir__stage_stats (self->stages.items[index], &all);
    all.size = size < sizeof all ? size : sizeof all;
    memcpy (stats, &all, all.size);
    return 0;
}

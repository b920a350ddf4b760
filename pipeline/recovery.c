/*  pipeline/recovery.c - starting from a checkpoint, and committing epochs.  */
#include "config.h"
#include "pipeline/recovery.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint/load.h"
#include "checkpoint/resume.h"
#include "checkpoint/saver.h"
#include "checkpoint/store.h"
#include "pipeline/deadletter.h"
#include "lib/killpoint.h"

struct weir__recovery {
    const weir__options *options;
    weir__stages *stages;
    const char *description, *shape;
    weir__job *job;
    weir__workspace *workspace;
    weir__store *store;    //  NULL without a checkpoint directory
    weir__resume *resume;  //  the checkpoint gone on from, until the stages opened
    weir__saver *saver;
    int fresh;
    int finished;
    uint64_t first_epoch;
    unsigned pass;
    double base_wall;  //  the job's wall seconds before this run
};

int weir__recovery_new (const weir__options *options, weir__stages *stages, const char *description,
                        const char *shape, weir__job *job, weir__recovery **out, weir__err *err)
{
    *out = NULL;
    weir__recovery *self = calloc (1, sizeof *self);
    if (!self || !(self->workspace = weir__workspace_new ())) {
        free (self);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    self->options = options;
    self->stages = stages;
    self->description = description;
    self->shape = shape;
    self->job = job;
    self->fresh = 1;
    self->first_epoch = 1;
    *out = self;

    int rc;
    if (options->load_blobs_dir) {
        size_t count;
        uint64_t loaded;
        if ((rc = weir__load_blobs (options->load_blobs_dir, options->load_blobs_epoch, self->workspace,
                                    &count, &loaded, err)))
            return rc;
        weir__job_log (job, WEIR_LOG_INFO, "loaded %zu blobs from checkpoint %" PRIu64 " of '%s'", count,
                       loaded, options->load_blobs_dir);
    }
    if (!options->checkpoint_dir) {
        if (options->resume_mode != WEIR_RESUME_NONE)
            return weir__err_set (err, WEIR_ESTRUCTURE,
                                  "resuming needs a checkpoint directory (--checkpoint DIR)");
        //  Nothing could go on from there: the rest of the input would be
        //  skipped without a word
        if (options->max_epochs)
            return weir__err_set (
                err, WEIR_ESTRUCTURE,
                "--epochs stops the job after epoch %llu so that --resume goes on later, which "
                "needs a checkpoint directory (--checkpoint DIR)",
                (unsigned long long) options->max_epochs);
        return 0;
    }
    if ((rc = weir__store_open (options->checkpoint_dir, 1, &self->store, err)))
        return rc;
    if ((rc = weir__resume_open (self->store, options->resume_mode, options->resume_epoch, shape,
                                 &self->resume, err)))
        return rc;
    weir__resume *r = self->resume;
    //  A store that went back in time (a log cut by a power failure) is
    //  said, never gone on from silently
    uint64_t written = weir__store_written (self->store), at = r ? weir__resume_epoch (r) : 0;
    if (options->resume_mode != WEIR_RESUME_EPOCH && written > at)
        weir__job_log (job, WEIR_LOG_WARNING,
                       "the checkpoint store '%s' had written epoch %" PRIu64 " but holds only %s%" PRIu64
                       ": its last writes did not survive (a power failure?); going on from there",
                       options->checkpoint_dir, written, r ? "up to epoch " : "nothing, not even epoch ",
                       r ? at : (uint64_t) 0);
    if (!r)
        return 0;
    if ((rc = weir__resume_blobs (r, self->workspace, err)))
        return rc;
    uint64_t epoch = weir__resume_epoch (r);
    self->fresh = 0;
    self->first_epoch = epoch + 1;
    self->pass = weir__resume_pass (r);
    self->finished = weir__resume_finished (r);
    self->base_wall = weir__resume_wall_seconds (r);
    for (size_t i = 0; i < stages->count; i++)
        weir__resume_records (r, i, &stages->items[i]->base_records_in, &stages->items[i]->base_records_out,
                              &stages->items[i]->base_rejected);
    weir__job_log (job, WEIR_LOG_INFO, "resuming from checkpoint %" PRIu64 " of '%s'", epoch,
                   options->checkpoint_dir);
    return 0;
}

void weir__recovery_destroy (weir__recovery **self_p)
{
    weir__recovery *self = *self_p;
    if (!self)
        return;
    weir__resume_destroy (&self->resume);
    weir__saver_destroy (&self->saver);
    weir__store_destroy (&self->store);
    weir__workspace_destroy (&self->workspace);
    free (self);
    *self_p = NULL;
}

weir__workspace *weir__recovery_workspace (weir__recovery *self)
{
    return self->workspace;
}

int weir__recovery_fresh (const weir__recovery *self)
{
    return self->fresh;
}

uint64_t weir__recovery_first_epoch (const weir__recovery *self)
{
    return self->first_epoch;
}

unsigned weir__recovery_pass (const weir__recovery *self)
{
    return self->pass;
}

int weir__recovery_finished (const weir__recovery *self)
{
    return self->finished;
}

int weir__recovery_reader (weir__recovery *self, weir__stage *stage, weir__err *err)
{
    int follow = stage->shards.follow;
    if (follow && self->resume && weir__resume_follow (self->resume, stage->name, &stage->shards, err))
        return err->code;
    size_t n = stage->shards.count;
    stage->offsets = calloc (n ? n : 1, sizeof *stage->offsets);
    if (!stage->offsets)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        stage->offsets[i] = stage->shards.items[i].start;
    int rc = !self->resume ? 0
             : follow      ? weir__resume_follow_offsets (self->resume, &stage->shards, stage->offsets)
                      : weir__resume_offsets (self->resume, stage->name, &stage->shards, stage->offsets, err);
    if (!rc)
        weir__stage_input_plan (stage, self->pass);
    return rc;
}

int weir__recovery_writer (weir__recovery *self, weir__stage *stage, const char **resume, weir__err *err)
{
    *resume = NULL;
    if (!self->resume)
        return 0;
    int rc = weir__resume_writer (self->resume, stage->index, stage->name, stage->committed,
                                  sizeof stage->committed, err);
    if (!rc)
        *resume = stage->committed;
    return rc;
}

int weir__recovery_dead_letter (weir__recovery *self, weir__stage *stage, const char **resume, weir__err *err)
{
    *resume = NULL;
    if (!self->resume)
        return 0;
    int rc = weir__resume_dead_letter (self->resume, stage->index, stage->name, stage->dead_committed,
                                       sizeof stage->dead_committed, err);
    if (!rc)
        *resume = stage->dead_committed;
    return rc;
}

//  Every writer and dead letter makes its output durable and says what it
//  committed.
static int s_commit_writers (weir__recovery *self, weir__err *err)
{
    for (size_t i = 0; i < self->stages->count; i++) {
        weir__stage *stage = self->stages->items[i];
        if (stage->writer && stage->writer->commit (stage->writer_state, stage->committed, err))
            return err->code;
        if (stage->dead && weir__deadletter_commit (stage->dead, stage->dead_committed, err))
            return err->code;
    }
    return 0;
}

//  Save the state of the quiescent pipe at the end of EPOCH (FIRST: the
//  checkpoint after init, which every resume needs).
static int s_save (weir__recovery *self, uint64_t epoch, unsigned pass, int finished, int first,
                   weir__err *err)
{
    weir__stages *stages = self->stages;
    weir__snapshot_stage *items = calloc (stages->count, sizeof *items);
    if (!items)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    for (size_t i = 0; i < stages->count; i++) {
        weir__stage *stage = stages->items[i];
        uint64_t in = stage->kind == WEIR_ELEMENT_READER ? atomic_load (&stage->records_out)
                                                         : atomic_load (&stage->records_in);
        items[i].element = stage->name;
        items[i].records_in = stage->base_records_in + in;
        items[i].records_out = stage->base_records_out + atomic_load (&stage->records_out);
        items[i].writer_state = stage->writer ? stage->committed : NULL;
        items[i].rejected = stage->base_rejected + atomic_load (&stage->rejected);
        items[i].dead_state = stage->dead ? stage->dead_committed : NULL;
    }
    weir__stage *reader = stages->items[0];
    weir__snapshot s = {
        .epoch = epoch,
        .finished = finished,
        .pass = pass,
        .wall_seconds = self->base_wall + weir__job_wall_seconds (self->job),
        .description = self->description,
        .shape = self->shape,
        .stages = items,
        .nstages = stages->count,
        .shards = &reader->shards,
        .offsets = reader->offsets,
        .workspace = self->workspace,
    };
    int rc = first ? weir__saver_save_first (self->saver, &s, err) : weir__saver_save (self->saver, &s, err);
    free (items);
    return rc;
}

static void s_warn (void *arg, const char *message)
{
    weir__job_log (arg, WEIR_LOG_WARNING, "%s", message);
}

int weir__recovery_begin (weir__recovery *self, weir__err *err)
{
    //  The stages took their state: what is left of the checkpoint goes
    weir__resume_destroy (&self->resume);
    if (!self->store)
        return 0;
    const weir__options *o = self->options;
    int rc = weir__saver_new (self->store, o->keep, o->async_checkpoint, o->checkpoint_failures,
                              self->workspace, s_warn, self->job, &self->saver, err);
    if (rc || !self->fresh)
        return rc;
    //  Checkpoint 0: the state right after init, before any record; the
    //  writers commit their (empty) outputs first, so that resuming from it
    //  knows where they stand
    if ((rc = s_commit_writers (self, err)))
        return rc;
    return s_save (self, 0, self->pass, 0, 1, err);
}

int weir__recovery_commit (void *arg, const weir__boundary *b)
{
    weir__recovery *self = arg;
    weir__err err;
    weir__err_init (&err);
    if (s_commit_writers (self, &err)) {
        weir__job_fail (self->job, &err);
        return 1;
    }
    WEIR_KILL_POINT ("writers-synced");
    if (b->new_pass) {
        //  The next epoch reads the input again, from the start
        weir__stage *reader = self->stages->items[0];
        for (size_t i = 0; i < reader->shards.count; i++)
            reader->offsets[i] = reader->shards.items[i].start;
        atomic_store (&reader->next_shard, 0);
    }
    if (self->saver && s_save (self, b->epoch, b->pass, b->finished, 0, &err)) {
        weir__job_fail (self->job, &err);
        return 1;
    }
    return 0;
}

int weir__recovery_finish (weir__recovery *self, weir__err *err)
{
    weir__resume_destroy (&self->resume);
    return self->saver ? weir__saver_finish (self->saver, err) : 0;
}

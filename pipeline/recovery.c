/*  pipeline/recovery.c - starting from a checkpoint, and committing epochs.  */
#include "config.h"
#include "pipeline/recovery.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint/keys.h"
#include "checkpoint/load.h"
#include "checkpoint/resume.h"
#include "checkpoint/saver.h"
#include "checkpoint/store.h"
#include "lib/key.h"
#include "lib/killpoint.h"
#include "pipeline/change.h"

struct weir__recovery {
    weir__recovery_of of;
    int rank;  //  this rank of the job's
    weir__workspace *workspace;
    weir__store *store;    //  NULL without a checkpoint directory, and on ranks but 0
    weir__resume *resume;  //  the checkpoint gone on from, until the stages opened
    weir__saver *saver;
    int fresh;
    int finished;
    uint64_t first_epoch;
    unsigned pass;
    double base_wall;     //  the job's wall seconds before this run
    uint64_t generation;  //  the runs of the job, this one included
    size_t new_files;     //  followed files found on resume that the checkpoint did not know
    unsigned key_groups;  //  of the job: the checkpoint's, or the option's for a new one
};

//  Blobs of another job's checkpoint (--load-blobs), before init.
static int s_load_blobs (weir__recovery *self, weir__err *err)
{
    const weir__options *o = self->of.options;
    size_t count;
    uint64_t loaded;
    int rc = weir__load_blobs (o->load_blobs_dir, o->load_blobs_epoch, self->workspace, &count, &loaded, err);
    if (!rc)
        weir__job_log (self->of.job, WEIR_LOG_INFO, "loaded %zu blobs from checkpoint %" PRIu64 " of '%s'",
                       count, loaded, o->load_blobs_dir);
    return rc;
}

//  Without a checkpoint directory, what would need one is refused.
static int s_without_store (const weir__options *o, weir__err *err)
{
    if (o->resume_mode != WEIR_RESUME_NONE)
        return weir__err_set (err, WEIR_ESTRUCTURE,
                              "resuming needs a checkpoint directory (--checkpoint DIR)");
    //  Nothing could go on from there: the rest of the input would be
    //  skipped without a word
    if (o->max_epochs)
        return weir__err_set (err, WEIR_ESTRUCTURE,
                              "--epochs stops the job after epoch %llu so that --resume goes on later, which "
                              "needs a checkpoint directory (--checkpoint DIR)",
                              (unsigned long long) o->max_epochs);
    return 0;
}

//  A checkpoint is gone on from only by the pipeline that wrote it:
//  another is refused, saying what differs first.
static int s_same_pipeline (weir__recovery *self, weir__err *err)
{
    const char *was;
    size_t len;
    weir__shapes shapes = {self->of.shape, self->of.older_shape};
    if (!self->resume)
        return 0;
    if (weir__resume_same (self->resume, &shapes, &was, &len)) {
        //  Where an element connects may change: said, as it may be a slip
        char moved[400];
        was = weir__resume_description (self->resume, &len);
        if (self->rank == 0 && weir__change_moved (was, len, self->of.stages, moved, sizeof moved))
            weir__job_log (self->of.job, WEIR_LOG_INFO, "%s since checkpoint %" PRIu64 ": going on there",
                           moved, weir__resume_epoch (self->resume));
        return 0;
    }
    size_t shape_len;
    const char *shape = weir__resume_shape (self->resume, &shape_len);
    int rc = weir__change_explain (was, len, self->of.description, self->of.stages,
                                   weir__resume_epoch (self->resume), weir__store_dir (self->store),
                                   weir__change_older_shape (shape, shape_len), err);
    weir__resume_destroy (&self->resume);
    return rc;
}

//  A store that went back in time (a log cut by a power failure) is said,
//  never gone on from silently.
static void s_went_back (weir__recovery *self)
{
    const weir__options *o = self->of.options;
    weir__resume *r = self->resume;
    uint64_t written = self->store ? weir__store_written (self->store) : 0,
             at = r ? weir__resume_epoch (r) : 0;
    if (o->resume_mode != WEIR_RESUME_EPOCH && written > at)
        weir__job_log (self->of.job, WEIR_LOG_WARNING,
                       "the checkpoint store '%s' had written epoch %" PRIu64 " but holds only %s%" PRIu64
                       ": its last writes did not survive (a power failure?); going on from there",
                       o->checkpoint_dir, written, r ? "up to epoch " : "nothing, not even epoch ",
                       r ? at : (uint64_t) 0);
}

//  --resume-from E: the checkpoints after E are dropped, synced, before
//  any output is cut back to E's lengths.  Were they kept, a crash before
//  the next checkpoint would leave the newest one "latest", and a plain
//  --resume would cut outputs that hold this run's bytes to its lengths.
static int s_roll_back (weir__recovery *self, weir__err *err)
{
    uint64_t epoch = weir__resume_epoch (self->resume);
    unsigned dropped;
    int rc = weir__store_rollback (self->store, epoch, &dropped, err);
    if (!rc && dropped)
        weir__job_log (self->of.job, WEIR_LOG_WARNING,
                       "--resume-from %" PRIu64
                       ": the %u newer checkpoint%s of '%s' dropped; the job goes on "
                       "from epoch %" PRIu64,
                       epoch, dropped, dropped == 1 ? "" : "s", self->of.options->checkpoint_dir, epoch);
    return rc;
}

//  Go on from the checkpoint in hand: its blobs, its place, and on rank 0
//  the job's counts so far (they are summed over the ranks: the job's
//  count once).
static int s_go_on (weir__recovery *self, weir__err *err)
{
    weir__resume *r = self->resume;
    uint64_t epoch = weir__resume_epoch (r);
    //  Keyed state is kept per group: another number would scatter it
    uint64_t groups = weir__resume_key_groups (r);
    unsigned asked = self->of.options->key_groups;
    if (groups && asked && groups != asked)
        return weir__err_set (err, WEIR_ESTRUCTURE,
                              "--key-groups %u, and the job in '%s' was created with %" PRIu64
                              " key groups (checkpoint %" PRIu64
                              "): the number is fixed when a job is created, since its keyed state is kept "
                              "per group; leave --key-groups out, or give %" PRIu64 ", to resume",
                              asked, self->of.options->checkpoint_dir, groups, epoch, groups);
    if (groups)
        self->key_groups = (unsigned) groups;
    int rc = weir__resume_blobs (r, self->workspace, err);
    if (rc)
        return rc;
    self->fresh = 0;
    self->first_epoch = epoch + 1;
    self->pass = weir__resume_pass (r);
    self->finished = weir__resume_finished (r);
    self->base_wall = weir__resume_wall_seconds (r);
    self->generation = weir__resume_generation (r) + 1;
    weir__stages *stages = self->of.stages;
    for (size_t i = 0; i < stages->count && self->rank == 0; i++) {
        weir__stage *stage = stages->items[i];
        uint64_t rejected;
        weir__resume_records (r, i, &stage->counts.base_in, &stage->counts.base_out, &rejected);
        if (stage->rejects)
            weir__rejects_resumed (stage->rejects, rejected);
    }
    if (self->rank == 0)
        weir__job_log (self->of.job, WEIR_LOG_INFO, "resuming from checkpoint %" PRIu64 " of '%s'", epoch,
                       self->of.options->checkpoint_dir);
    return 0;
}

int weir__recovery_new (const weir__recovery_of *what, weir__recovery **out, weir__err *err)
{
    *out = NULL;
    weir__recovery *self = calloc (1, sizeof *self);
    if (!self || !(self->workspace = weir__workspace_new ())) {
        free (self);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    self->of = *what;
    self->rank = weir__ranks_rank (what->ranks);
    self->generation = 1;
    self->key_groups = what->options->key_groups ? what->options->key_groups : WEIR__KEY_GROUPS;
    self->fresh = 1;
    self->first_epoch = 1;
    *out = self;
    const weir__options *o = what->options;
    int rc = o->load_blobs_dir ? s_load_blobs (self, err) : 0;
    if (rc || !o->checkpoint_dir)
        return rc ? rc : s_without_store (o, err);
    //  The checkpoints of a job of several ranks are rank 0's alone
    if (self->rank == 0
        && ((rc = weir__store_open (o->checkpoint_dir, 1, &self->store, err))
            || (rc = weir__resume_open (self->store, o->resume_mode, o->resume_epoch, &self->resume, err))
            || (rc = s_same_pipeline (self, err))))
        return rc;
    if (self->store && self->resume && o->resume_mode == WEIR_RESUME_EPOCH && (rc = s_roll_back (self, err)))
        return rc;
    weir__shapes shapes = {what->shape, what->older_shape};
    if ((rc = weir__ranks_hand_out (what->ranks, &self->resume, &shapes, err)))
        return rc;
    s_went_back (self);
    return self->resume ? s_go_on (self, err) : 0;
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

unsigned weir__recovery_key_groups (const weir__recovery *self)
{
    return self->key_groups;
}

int weir__recovery_fresh (const weir__recovery *self)
{
    return self->fresh;
}

int weir__recovery_checkpoints (const weir__recovery *self)
{
    return self->of.options->checkpoint_dir != NULL;
}

int weir__recovery_replaces (const weir__recovery *self)
{
    const weir__stages *stages = self->of.stages;
    int live = 0;
    for (size_t i = 0; i < stages->count; i++)
        live |= stages->items[i]->input && weir__input_live (stages->items[i]->input);
    return !self->of.options->checkpoint_dir && !live;
}

//  The prefix of the checkpoint keys of reader STAGE (checkpoint/keys.h)
static void s_prefix (const weir__recovery *self, const weir__stage *stage, char *out)
{
    weir__key_reader_prefix (stage->index, weir__stages_readers (self->of.stages) > 1, out, WEIR__PREFIX_MAX);
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

static void s_warn (void *arg, const char *message)
{
    weir__job_log (arg, WEIR_LOG_WARNING, "%s", message);
}

//  A job resumed over files that grew, or new files, or shards that have
//  more (SHARDS, a Kafka partition's new messages; APPEARED of them new
//  since: partitions added to the topic): says so, and a job that had
//  finished has work again.
static void s_grown (weir__recovery *self, size_t grown, size_t added, size_t shards, size_t appeared)
{
    if (!grown && !added && !shards && !appeared)
        return;
    char what[128];
    if (appeared)
        snprintf (what, sizeof what, "%zu shard%s new (read from the start), %zu with more to read", appeared,
                  appeared == 1 ? " is" : "s are", shards);
    else if (shards)
        snprintf (what, sizeof what, "%zu shard%s more", shards, shards == 1 ? " has" : "s have");
    else if (grown && added)
        snprintf (what, sizeof what, "%zu file%s grew and %zu %s new", grown, grown == 1 ? "" : "s", added,
                  added == 1 ? "is" : "are");
    else if (grown)
        snprintf (what, sizeof what, "%zu file%s grew", grown, grown == 1 ? "" : "s");
    else
        snprintf (what, sizeof what, "%zu file%s new", added, added == 1 ? " is" : "s are");
    if (self->rank == 0)
        weir__job_log (self->of.job, WEIR_LOG_INFO,
                       "since checkpoint %" PRIu64 ", %s: reading what was added", self->first_epoch - 1,
                       what);
    self->finished = 0;
}

int weir__recovery_input (weir__recovery *self, weir__stage *stage, weir__err *err)
{
    weir__input *input = stage->input;
    int follow = weir__input_follows (input);
    weir__shards *shards = weir__input_shards (input);
    char prefix[WEIR__PREFIX_MAX];
    s_prefix (self, stage, prefix);
    int rc =
        follow && self->resume ? weir__resume_follow (self->resume, stage->name, prefix, shards, err) : 0;
    weir__replan how = {
        .element = stage->name,
        .prefix = prefix,
        .passes = weir__input_passes (input),
        .warn = s_warn,
        .arg = self->of.job,
    };
    if (!rc && !follow && self->resume)
        rc = weir__resume_files (self->resume, &how, shards, err);
    if (rc || (rc = weir__input_start (input, err))) {
        free (how.offsets);
        return rc;
    }
    uint64_t *offsets = weir__input_offsets (input);
    if (self->resume && follow)
        self->new_files += weir__resume_follow_offsets (self->resume, prefix, shards, offsets);
    else if (self->resume) {
        memcpy (offsets, how.offsets, shards->count * sizeof *offsets);
        s_grown (self, how.grown, how.added, weir__input_grown (input), how.appeared);
    }
    free (how.offsets);
    weir__input_plan (input, self->pass);
    return 0;
}

int weir__recovery_output (weir__recovery *self, weir__stage *stage, char *state, const char **resume,
                           weir__err *err)
{
    *resume = NULL;
    int rc = weir__ranks_adopt (self->of.ranks, stage, self->resume, err);
    if (rc || !self->resume)
        return rc;
    //  1: the checkpoint has no output of this rank, which never wrote
    rc = weir__resume_writer_slot (self->resume, stage->index, stage->name, (unsigned) self->rank, state,
                                   WEIR__WRITER_STATE_MAX, err);
    if (rc == 0)
        *resume = state;
    return rc < 0 ? rc : 0;
}

int weir__recovery_rejects (weir__recovery *self, weir__stage *stage, char *state, const char **resume,
                            weir__err *err)
{
    *resume = NULL;
    if (!self->resume)
        return 0;
    int rc = weir__resume_dead_letter (self->resume, stage->index, stage->name, state, WEIR__WRITER_STATE_MAX,
                                       err);
    if (!rc)
        *resume = state;
    return rc;
}

//  Every output and dead letter makes what it was given durable and says
//  what it committed.
static int s_commit_outputs (weir__recovery *self, weir__err *err)
{
    weir__stages *stages = self->of.stages;
    for (size_t i = 0; i < stages->count; i++) {
        weir__stage *stage = stages->items[i];
        if (stage->output && weir__output_commit (stage->output, err))
            return err->code;
        if (stage->rejects && weir__rejects_commit (stage->rejects, err))
            return err->code;
    }
    return 0;
}

//  Save the state of the quiescent pipe at the end of EPOCH (FIRST: the
//  checkpoint after init, which every resume needs).  In a job of several
//  ranks every rank's part goes to rank 0, whose synced write of the whole
//  is the commit point of the epoch for every rank.
static int s_save (weir__recovery *self, uint64_t epoch, unsigned pass, int finished, int first,
                   weir__err *err)
{
    weir__stages *stages = self->of.stages;
    weir__snapshot_stage *items = calloc (stages->count, sizeof *items);
    if (!items)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    for (size_t i = 0; i < stages->count; i++) {
        weir__stage *stage = stages->items[i];
        weir__stage_records (stage, &items[i].records_in, &items[i].records_out, &items[i].rejected);
        items[i].element = stage->name;
        items[i].writer_state = stage->output ? weir__output_committed (stage->output) : NULL;
        if (stage->output)
            weir__output_saving (stage->output, epoch);
        if (stage->input && weir__input_saving (stage->input, epoch, err)) {
            free (items);
            return err->code;
        }
        items[i].dead_state = stage->rejects ? weir__rejects_committed (stage->rejects) : NULL;
    }
    //  Every reader's input
    size_t n = weir__stages_readers (stages), k = 0;
    weir__snapshot_input *inputs = calloc (n ? n : 1, sizeof *inputs);
    char (*prefixes)[WEIR__PREFIX_MAX] = calloc (n ? n : 1, sizeof *prefixes);
    if (!inputs || !prefixes) {
        free (items);
        free (inputs);
        free (prefixes);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < stages->count && k < n; i++) {
        weir__stage *stage = stages->items[i];
        if (!stage->input)
            continue;
        s_prefix (self, stage, prefixes[k]);
        inputs[k].element = stage->name;
        inputs[k].prefix = prefixes[k];
        inputs[k].shards = weir__input_shards (stage->input);
        inputs[k].offsets = weir__input_offsets (stage->input);
        k++;
    }
    weir__snapshot s = {
        .epoch = epoch,
        .finished = finished,
        .best = atomic_exchange (&self->of.job->best, 0),
        .pass = pass,
        .wall_seconds = self->base_wall + weir__job_wall_seconds (self->of.job),
        .description = self->of.description,
        .shape = self->of.shape,
        .stages = items,
        .nstages = stages->count,
        .inputs = inputs,
        .ninputs = k,
        .workspace = self->workspace,
        .ranks = (unsigned) weir__ranks_size (self->of.ranks),
        .generation = self->generation,
        .key_groups = self->key_groups,
    };
    int rc = weir__ranks_snapshot (self->of.ranks, &s, err);
    if (!rc && self->saver)
        rc = first ? weir__saver_save_first (self->saver, &s, err) : weir__saver_save (self->saver, &s, err);
    free (items);
    free (inputs);
    free (prefixes);
    return rc;
}

//  What the newest checkpoint written records becomes final in every
//  output (writers/writer.h, settle): rank 0's saver knows which it is,
//  the other ranks hear it from rank 0 at the next boundary
//  (pipeline/ranks.h).  Without checkpoints every commit is final as it
//  returns (WEIR__WRITER_CHECKPOINTED is not given).
static int s_settle (weir__recovery *self, weir__err *err)
{
    uint64_t durable;
    if (!self->of.options->checkpoint_dir)
        return 0;
    if (self->rank != 0) {
        if (weir__ranks_durable (self->of.ranks, &durable))
            return 0;
    }
    else if (!self->saver || weir__saver_durable (self->saver, &durable))
        return 0;
    else
        weir__ranks_set_durable (self->of.ranks, durable);
    weir__stages *stages = self->of.stages;
    for (size_t i = 0; i < stages->count; i++)
        if (stages->items[i]->output && weir__output_settle (stages->items[i]->output, durable, err))
            return err->code;
    //  What readers tell others is advice: a failure is said, not fatal
    for (size_t i = 0; i < stages->count; i++) {
        weir__err told;
        weir__err_init (&told);
        if (stages->items[i]->input && weir__input_settle (stages->items[i]->input, durable, &told))
            weir__job_log (self->of.job, WEIR_LOG_WARNING, "%s: %s", stages->items[i]->name, told.msg);
    }
    return 0;
}

int weir__recovery_begin (weir__recovery *self, weir__err *err)
{
    //  The stages took their state: what is left of the checkpoint goes
    weir__resume_destroy (&self->resume);
    //  What ranks add to a summed blob counts from here, after init; and
    //  the key groups a rank sends rank 0 are those its threads store
    //  from here, not those the checkpoint gave back (ranks.c)
    weir__workspace_reduce_rebase (self->workspace);
    weir__workspace_untouch (self->workspace);
    const weir__options *o = self->of.options;
    if (!o->checkpoint_dir)
        return 0;
    int rc = self->store ? weir__saver_new (self->store, o->keep, o->async_checkpoint, o->checkpoint_failures,
                                            &self->of.job->checkpoint_failures, self->workspace, s_warn,
                                            self->of.job, &self->saver, err)
                         : 0;
    if (rc)
        return rc;
    if (self->fresh) {
        const weir__stages *stages = self->of.stages;
        for (size_t i = 0; i < stages->count; i++) {
            const weir__stage *reader = stages->items[i];
            const char *stream = reader->input ? weir__input_stream (reader->input) : NULL;
            if (stream && self->rank == 0)
                weir__job_log (self->of.job, WEIR_LOG_WARNING,
                               "%s: '%s' is not a file (a pipe or a terminal) and cannot be read again: to "
                               "resume this job, feed it the same input again from its start, and --resume "
                               "reads past what the checkpoint committed",
                               reader->name, stream);
        }
        //  Checkpoint 0: the state right after init, before any record;
        //  the outputs commit their (empty) state first, so that resuming
        //  from it knows where they stand
        if ((rc = s_commit_outputs (self, err)) || (rc = s_save (self, 0, self->pass, 0, 1, err)))
            return rc;
        return s_settle (self, err);
    }
    int grew = weir__ranks_grew (self->of.ranks);
    if (grew || self->new_files) {
        //  The checkpoint gone on from is written again, before a record
        //  flows, knowing what this run found that it did not:
        //  - resumed on more ranks, the new ranks' (empty) outputs.  Were
        //    they unknown, a crash before the next checkpoint and a resume
        //    on fewer ranks would leave them holding records that the
        //    resume writes again elsewhere;
        //  - followed files found since, each at offset 0 with its
        //    identity.  Were they unknown, a crash before the next
        //    checkpoint and a rotation would leave a file no resume finds.
        uint64_t epoch = self->first_epoch - 1;
        if ((rc = s_commit_outputs (self, err))
            || (rc = s_save (self, epoch, self->pass, self->finished, 1, err)))
            return rc;
        if (grew && self->rank == 0)
            weir__job_log (self->of.job, WEIR_LOG_INFO,
                           "checkpoint %" PRIu64
                           " written again with the outputs of the %d ranks of this run",
                           epoch, weir__ranks_size (self->of.ranks));
        else if (!grew)
            weir__job_log (self->of.job, WEIR_LOG_INFO,
                           "checkpoint %" PRIu64 " written again with the %zu file%s found since", epoch,
                           self->new_files, self->new_files == 1 ? "" : "s");
    }
    return 0;
}

int weir__recovery_commit (void *arg, const weir__boundary *b)
{
    weir__recovery *self = arg;
    weir__err err;
    weir__err_init (&err);
    int rc = s_commit_outputs (self, &err);
    if (!rc) {
        WEIR_KILL_POINT ("writers-synced");
        //  The next epoch reads the input again, from the start
        for (size_t i = 0; b->new_pass && i < self->of.stages->count; i++)
            if (self->of.stages->items[i]->input)
                weir__input_rewind (self->of.stages->items[i]->input);
        rc = weir__ranks_reduce (self->of.ranks, self->workspace, b->epoch, &err);
    }
    if (!rc && self->of.options->checkpoint_dir)
        rc = s_save (self, b->epoch, b->pass, b->finished, 0, &err);
    if (!rc)
        rc = s_settle (self, &err);
    if (rc)
        weir__job_fail (self->of.job, &err);
    return rc ? 1 : 0;
}

int weir__recovery_settle (weir__recovery *self, weir__err *err)
{
    if (!self->of.options->checkpoint_dir)
        return 0;
    int rc = self->saver ? weir__saver_finish (self->saver, err) : 0;
    uint64_t durable;
    if (!rc && self->rank == 0 && self->saver && !weir__saver_durable (self->saver, &durable))
        weir__ranks_set_durable (self->of.ranks, durable);
    if (!rc)
        rc = weir__ranks_share_durable (self->of.ranks, err);
    return rc ? rc : s_settle (self, err);
}

int weir__recovery_finish (weir__recovery *self, weir__err *err)
{
    weir__resume_destroy (&self->resume);
    return self->saver ? weir__saver_finish (self->saver, err) : 0;
}

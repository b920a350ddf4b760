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
#include "lib/number.h"
#include "pipeline/deadletter.h"
#include "pipeline/ranks.h"
#include "pipeline/reduce.h"
#include "lib/killpoint.h"

struct weir__recovery {
    const weir__options *options;
    weir__stages *stages;
    const char *description, *shape;
    weir__job *job;
    weir__cluster *cluster;
    int rank, size;  //  this rank of the job's
    weir__workspace *workspace;
    weir__store *store;    //  NULL without a checkpoint directory
    weir__resume *resume;  //  the checkpoint gone on from, until the stages opened
    weir__saver *saver;
    int fresh;
    int finished;
    uint64_t first_epoch;
    unsigned pass;
    double base_wall;     //  the job's wall seconds before this run
    uint64_t generation;  //  the runs of the job, this one included
};

//  Rank 0 hands the checkpoint the job goes on from (or none) to the
//  others, which wait for it.
static int s_hand_out (weir__recovery *self, weir__err *err)
{
    char *buf = NULL;
    size_t len = 0;
    int rc = 0;
    if (self->rank == 0 && self->resume && (rc = weir__resume_pack (self->resume, &buf, &len, err)))
        return rc;
    rc = weir__cluster_bcast (self->cluster, &buf, &len, self->options->epoch_timeout,
                              "handing out the checkpoint to go on from", err);
    if (!rc && self->rank != 0 && len)
        rc = weir__resume_unpack (buf, len, self->shape, &self->resume, err);
    free (buf);
    return rc;
}

int weir__recovery_new (const weir__options *options, weir__stages *stages, const char *description,
                        const char *shape, weir__job *job, weir__cluster *cluster, weir__recovery **out,
                        weir__err *err)
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
    self->cluster = cluster;
    self->rank = weir__cluster_rank (cluster);
    self->size = weir__cluster_size (cluster);
    self->generation = 1;
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
    //  The checkpoints of a job of several ranks are rank 0's alone
    if (self->rank == 0) {
        if ((rc = weir__store_open (options->checkpoint_dir, 1, &self->store, err)))
            return rc;
        if ((rc = weir__resume_open (self->store, options->resume_mode, options->resume_epoch, shape,
                                     &self->resume, err)))
            return rc;
    }
    if (self->size > 1 && (rc = s_hand_out (self, err)))
        return rc;
    weir__resume *r = self->resume;
    //  A store that went back in time (a log cut by a power failure) is
    //  said, never gone on from silently
    uint64_t written = self->store ? weir__store_written (self->store) : 0,
             at = r ? weir__resume_epoch (r) : 0;
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
    self->generation = weir__resume_generation (r) + 1;
    //  Counts are summed over the ranks: the job's so far count once
    for (size_t i = 0; i < stages->count && self->rank == 0; i++)
        weir__resume_records (r, i, &stages->items[i]->base_records_in, &stages->items[i]->base_records_out,
                              &stages->items[i]->base_rejected);
    if (self->rank == 0)
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
    if (follow && self->size > 1)
        return weir__err_at (err, WEIR_ESTRUCTURE, stage->name_offset,
                             "%s: follow=1 is not supported yet in a job of several ranks (%d)", stage->name,
                             self->size);
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

//  The output of rank SLOT, gone since the checkpoint, is this rank's to
//  keep: back to its committed STATE (a file truncated to its length),
//  then closed, its state carried into every checkpoint.
static int s_adopt (weir__recovery *self, weir__stage *stage, unsigned slot, const char *state,
                    weir__err *err)
{
    weir__props props;
    if (weir__ranks_props (stage, slot, &props))
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    void *st = NULL;
    int rc = stage->writer->open (&props, 1, state, &st, err);
    if (!rc) {
        rc = stage->writer->commit (st, stage->slot_committed[slot], err);
        weir__err other;
        weir__err_init (&other);
        int closed = stage->writer->close (st, rc ? &other : err);
        rc = rc ? rc : closed;
    }
    weir__props_release (&props);
    if (rc)
        weir__err_prefix (err, "rank %d, taking back the output of rank %u: ", self->rank, slot);
    else
        weir__job_log (self->job, WEIR_LOG_INFO, "%s (stage %zu): rank %d keeps the output of rank %u, gone",
                       stage->name, stage->index + 1, self->rank, slot);
    return rc;
}

int weir__recovery_writer (weir__recovery *self, weir__stage *stage, const char **resume, weir__err *err)
{
    *resume = NULL;
    unsigned rank = (unsigned) self->rank, size = (unsigned) self->size;
    unsigned old = self->resume ? weir__resume_slots (self->resume, stage->index, stage->name) : 1;
    stage->slots = old > size ? old : size;
    stage->slot_committed = calloc (stage->slots, sizeof *stage->slot_committed);
    if (!stage->slot_committed)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    if (!self->resume)
        return 0;
    int rc = weir__resume_writer_slot (self->resume, stage->index, stage->name, rank, stage->committed,
                                       sizeof stage->committed, err);
    if (rc < 0)
        return rc;
    if (rc == 0)
        *resume = stage->committed;
    for (unsigned slot = size; slot < old; slot++) {
        if (slot % size != rank)
            continue;
        char state[WEIR__WRITER_STATE_MAX];
        if ((rc = weir__resume_writer_slot (self->resume, stage->index, stage->name, slot, state,
                                            sizeof state, err))
            || (rc = s_adopt (self, stage, slot, state, err)))
            return rc;
    }
    return 0;
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
        if (stage->writer)
            memcpy (stage->slot_committed[stage->rank], stage->committed, sizeof stage->committed);
        if (stage->dead && weir__deadletter_commit (stage->dead, stage->dead_committed, err))
            return err->code;
    }
    return 0;
}

//  STAGE's record counts over the job's life (this rank's, and on rank 0
//  the runs' before), into C.
static void s_counts (weir__stage *stage, weir__snapshot_stage *c)
{
    //  A reader takes from its input what it sends on
    uint64_t in = stage->kind == WEIR_ELEMENT_READER ? atomic_load (&stage->records_out)
                                                     : atomic_load (&stage->records_in);
    c->records_in = stage->base_records_in + in;
    c->records_out = stage->base_records_out + atomic_load (&stage->records_out);
    c->rejected = stage->base_rejected + atomic_load (&stage->rejected);
}

//  One rank's part of a checkpoint, as text lines sent to rank 0:
//    C STAGE IN OUT REJECTED   the stage's record counts (rank 0's include
//                              the job's before this run)
//    W STAGE SLOT STATE        the committed state of an output it holds
//    O SHARD OFFSET            where reading goes on in a shard of its own
static int s_part (weir__recovery *self, weir__buf *out)
{
    int rc = 0;
    weir__stages *stages = self->stages;
    for (size_t i = 0; i < stages->count; i++) {
        weir__stage *stage = stages->items[i];
        weir__snapshot_stage c;
        s_counts (stage, &c);
        rc |= weir__buf_printf (out, "C %zu %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", i, c.records_in,
                                c.records_out, c.rejected);
        for (unsigned s = 0; stage->writer && s < stage->slots; s++)
            if (s % stage->ranks == stage->rank)
                rc |= weir__buf_printf (out, "W %zu %u %s\n", i, s, stage->slot_committed[s]);
    }
    weir__stage *reader = stages->items[0];
    for (size_t i = 0; i < reader->shards.count; i++)
        if (i % (size_t) self->size == (size_t) self->rank)
            rc |= weir__buf_printf (out, "O %zu %" PRIu64 "\n", i, reader->offsets[i]);
    return rc ? WEIR_ENOMEM : 0;
}

//  What rank 0 makes of every rank's part: the job's counts, the state of
//  every output, every shard's offset.
typedef struct {
    weir__snapshot_stage *items;
    uint64_t *offsets;
    char (**slots)[WEIR__WRITER_STATE_MAX];  //  per stage
    const char ***slot_states;
} s_merged;

static void s_merged_release (s_merged *m, size_t nstages)
{
    for (size_t i = 0; i < nstages; i++) {
        free (m->slots[i]);
        free (m->slot_states[i]);
    }
    free (m->items);
    free (m->offsets);
    free (m->slots);
    free (m->slot_states);
}

static int s_merge (weir__recovery *self, const char *all, const size_t *lens, s_merged *m, weir__err *err)
{
    weir__stages *stages = self->stages;
    weir__stage *reader = stages->items[0];
    size_t n = stages->count, nshards = reader->shards.count;
    m->items = calloc (n, sizeof *m->items);
    m->offsets = calloc (nshards ? nshards : 1, sizeof *m->offsets);
    m->slots = calloc (n, sizeof *m->slots);
    m->slot_states = calloc (n, sizeof *m->slot_states);
    if (!m->items || !m->offsets || !m->slots || !m->slot_states)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        weir__stage *stage = stages->items[i];
        m->items[i].element = stage->name;
        if (!stage->writer)
            continue;
        m->slots[i] = calloc (stage->slots, sizeof *m->slots[i]);
        m->slot_states[i] = calloc (stage->slots, sizeof *m->slot_states[i]);
        if (!m->slots[i] || !m->slot_states[i])
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        for (unsigned s = 0; s < stage->slots; s++)
            m->slot_states[i][s] = m->slots[i][s];
        m->items[i].writer_state = m->slots[i][0];
        m->items[i].slot_states = m->slot_states[i];
        m->items[i].nslots = stage->slots;
    }
    size_t at = 0;
    for (int r = 0; r < self->size; r++) {
        const char *p = all + at, *end = p + lens[r];
        at += lens[r];
        while (p < end) {
            const char *nl = memchr (p, '\n', (size_t) (end - p));
            if (!nl)
                break;
            char line[WEIR__WRITER_STATE_MAX + 64];
            size_t len = (size_t) (nl - p) < sizeof line - 1 ? (size_t) (nl - p) : sizeof line - 1;
            memcpy (line, p, len);
            line[len] = '\0';
            p = nl + 1;
            size_t i;
            uint64_t a, b, c;
            unsigned s;
            int used = 0;
            if (sscanf (line, "C %zu %" SCNu64 " %" SCNu64 " %" SCNu64, &i, &a, &b, &c) == 4 && i < n) {
                m->items[i].records_in += a;
                m->items[i].records_out += b;
                m->items[i].rejected += c;
            }
            else if (sscanf (line, "W %zu %u %n", &i, &s, &used) == 2 && used && i < n && m->slots[i]
                     && s < stages->items[i]->slots)
                snprintf (m->slots[i][s], WEIR__WRITER_STATE_MAX, "%s", line + used);
            else if (sscanf (line, "O %zu %" SCNu64, &i, &a) == 2 && i < nshards)
                m->offsets[i] = a;
            else
                return weir__err_set (err, WEIR_ESYSTEM,
                                      "rank %d sent a part of the checkpoint that is not one: '%s'", r, line);
        }
    }
    return 0;
}

//  Hand the saver the checkpoint of EPOCH made of ITEMS (a snapshot stage
//  per stage) and OFFSETS (the reader's shards').
static int s_write (weir__recovery *self, uint64_t epoch, unsigned pass, int finished, int first,
                    const weir__snapshot_stage *items, const uint64_t *offsets, weir__err *err)
{
    weir__snapshot s = {
        .epoch = epoch,
        .finished = finished,
        .pass = pass,
        .wall_seconds = self->base_wall + weir__job_wall_seconds (self->job),
        .description = self->description,
        .shape = self->shape,
        .stages = items,
        .nstages = self->stages->count,
        .shards = &self->stages->items[0]->shards,
        .offsets = offsets,
        .workspace = self->workspace,
        .ranks = (unsigned) self->size,
        .generation = self->generation,
    };
    return first ? weir__saver_save_first (self->saver, &s, err) : weir__saver_save (self->saver, &s, err);
}

//  Save the state of the quiescent pipe at the end of EPOCH (FIRST: the
//  checkpoint after init, which every resume needs).  In a job of several
//  ranks every rank's part goes to rank 0, whose synced write of the whole
//  is the commit point of the epoch for every rank.
static int s_save (weir__recovery *self, uint64_t epoch, unsigned pass, int finished, int first,
                   weir__err *err)
{
    weir__stages *stages = self->stages;
    weir__stage *reader = stages->items[0];
    //  One rank, but outputs that ranks of an earlier run wrote: kept
    int slots = 0;
    for (size_t i = 0; i < stages->count; i++)
        slots |= stages->items[i]->writer && stages->items[i]->slots > 1;
    if (self->size > 1 || slots) {
        weir__buf part;
        weir__buf_init (&part);
        char *all = NULL;
        size_t *lens = calloc ((size_t) self->size, sizeof *lens);
        char what[96];
        snprintf (what, sizeof what, "gathering the checkpoint of epoch %" PRIu64, epoch);
        int rc = !lens ? weir__err_set (err, WEIR_ENOMEM, "out of memory")
                 : s_part (self, &part)
                     ? weir__err_set (err, WEIR_ENOMEM, "out of memory")
                     : weir__cluster_gather (self->cluster, part.data, part.len, &all, lens,
                                             self->options->epoch_timeout, what, err);
        weir__buf_release (&part);
        s_merged m = {0};
        if (!rc && self->rank == 0)
            rc = s_merge (self, all, lens, &m, err);
        free (all);
        free (lens);
        if (!rc && self->rank == 0) {
            WEIR_KILL_POINT ("ranks-prepared");
            rc = s_write (self, epoch, pass, finished, first, m.items, m.offsets, err);
        }
        if (self->rank == 0)
            s_merged_release (&m, stages->count);
        return rc;
    }
    weir__snapshot_stage *items = calloc (stages->count, sizeof *items);
    if (!items)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    for (size_t i = 0; i < stages->count; i++) {
        weir__stage *stage = stages->items[i];
        s_counts (stage, &items[i]);
        items[i].element = stage->name;
        items[i].writer_state = stage->writer ? stage->committed : NULL;
        items[i].dead_state = stage->dead ? stage->dead_committed : NULL;
    }
    int rc = s_write (self, epoch, pass, finished, first, items, reader->offsets, err);
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
    //  What ranks add to a summed blob counts from here, after init
    weir__workspace_reduce_rebase (self->workspace);
    if (!self->options->checkpoint_dir)
        return 0;
    const weir__options *o = self->options;
    int rc = self->store ? weir__saver_new (self->store, o->keep, o->async_checkpoint, o->checkpoint_failures,
                                            self->workspace, s_warn, self->job, &self->saver, err)
                         : 0;
    if (rc || !self->fresh)
        return rc;
    //  Checkpoint 0: the state right after init, before any record; the
    //  writers commit their (empty) outputs first, so that resuming from it
    //  knows where they stand
    if ((rc = s_commit_writers (self, err)))
        return rc;
    return s_save (self, 0, self->pass, 0, 1, err);
}

int weir__recovery_agree (void *arg, uint64_t epoch, int *exhausted, int *stopping)
{
    weir__recovery *self = arg;
    if (self->size <= 1)
        return 0;
    weir__err err;
    weir__err_init (&err);
    char what[96];
    snprintf (what, sizeof what, "the end of epoch %" PRIu64, epoch);
    //  Who has not come is named here; then one all-reduce: the inputs are
    //  exhausted when all are, the job stops when any rank stops
    int64_t flags[2] = {*exhausted ? 1 : 0, *stopping ? 0 : 1};
    if (weir__cluster_barrier (self->cluster, self->options->epoch_timeout, what, &err)
        || weir__cluster_allreduce (self->cluster, flags, 2, WEIR__REDUCE_I64, WEIR__REDUCE_MIN,
                                    self->options->epoch_timeout, what, &err)) {
        weir__job_fail (self->job, &err);
        return 1;
    }
    *exhausted = flags[0] != 0;
    *stopping = flags[1] == 0;
    return 0;
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
    if (weir__reduce_run (self->workspace, self->cluster, b->epoch, self->options->epoch_timeout, &err)) {
        weir__job_fail (self->job, &err);
        return 1;
    }
    if (self->options->checkpoint_dir && s_save (self, b->epoch, b->pass, b->finished, 0, &err)) {
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

/*  pipeline/runtime.c - building the queues, opening the stages, starting
    and joining the threads, tearing down.  */
#include "config.h"
#include "pipeline/runtime.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/hash.h"
#include "pipeline/fuse.h"
#include "pipeline/guard.h"
#include "pipeline/path.h"
#include "pipeline/recovery.h"
#include "pipeline/worker.h"

//  What the fail hook wakes.
typedef struct {
    weir__stages *stages;
    weir__controller *controller;
    weir__queue_ctx *ctx;
    weir__exchange *exchange;  //  the keyed links between ranks, or NULL
} s_wakeable;

//  The job failed: wake blocked producers and everything waiting at the
//  controller, and shut the ZeroMQ context down so that blocked receivers
//  return.
static void s_wake (void *arg)
{
    s_wakeable *self = arg;
    for (size_t i = 0; i < self->stages->count; i++)
        if (self->stages->items[i]->in)
            weir__queue_abort (self->stages->items[i]->in);
    weir__controller_abort (self->controller);
    if (self->ctx)
        weir__queue_ctx_shutdown (self->ctx);
    weir__exchange_shutdown (self->exchange);
}

//  A reader's or processor's dead letter, if it has one, back to its
//  checkpointed state.
static int s_open_rejects (weir__stage *stage, weir__recovery *recovery, weir__err *err)
{
    char state[WEIR__WRITER_STATE_MAX];
    const char *resume;
    int rc = 0;
    if (weir__rejects_path (stage->rejects)
        && !(rc = weir__recovery_rejects (recovery, stage, state, &resume, err)))
        rc = weir__rejects_open (stage->rejects, resume, err);
    return rc;
}

//  A reader opened first of all (s_open_reader): its offsets now.
static int s_open_input (weir__stage *stage, weir__recovery *recovery, weir__err *err)
{
    int rc = s_open_rejects (stage, recovery, err);
    return rc ? rc : weir__recovery_input (recovery, stage, err);
}

//  open, and init on a fresh start: init sets up what a checkpoint
//  restores.
static int s_open_callbacks (weir__stage *stage, weir__recovery *recovery, weir__err *err)
{
    int rc = s_open_rejects (stage, recovery, err);
    return rc ? rc
              : weir__callbacks_open (stage->callbacks, &stage->workers[0], weir__recovery_fresh (recovery),
                                      stage->run->job, stage->name, err);
}

//  An output goes back to its committed state (a file is cut to its
//  committed length), or starts empty.  Without a checkpoint nothing can
//  go on from a failure: a batch job writes a file beside the old one,
//  which it replaces only if the job succeeds.
//  A record a writer of STAGE (ARG) cannot write, with on-error=skip
static int s_writer_reject (void *arg, const msgpack_object *record, const char *reason, weir__err *err)
{
    weir__stage *stage = arg;
    uint64_t epoch = weir__controller_epoch (stage->run->controller);
    return weir__rejects_record (stage->rejects, stage->run->job, epoch, record, reason, "", err);
}

static int s_open_output (weir__stage *stage, weir__recovery *recovery, weir__err *err)
{
    char state[WEIR__WRITER_STATE_MAX];
    const char *resume;
    unsigned flags = weir__recovery_replaces (recovery) ? WEIR__WRITER_REPLACE : 0;
    if (weir__recovery_checkpoints (recovery))
        flags |= WEIR__WRITER_CHECKPOINTED;
    int rc = s_open_rejects (stage, recovery, err);
    if (!rc)
        rc = weir__recovery_output (recovery, stage, state, &resume, err);
    if (!rc)
        rc = weir__output_open (stage->output, &stage->props, stage->threads, resume, flags, err);
    if (!rc && weir__rejects_skip (stage->rejects))
        weir__output_rejecting (stage->output, s_writer_reject, stage);
    return rc;
}

//  Close what opening opened; an output's close flushes.  The first
//  failure is returned.
static int s_close_input (weir__stage *stage, weir__err *err)
{
    weir__input_close (stage->input);
    return weir__rejects_close (stage->rejects, err);
}

//  A property that no callback of a processor read is most likely a
//  typo: said once it closed (builtin readers and writers refuse unknown
//  ones at once).
static int s_close_callbacks (weir__stage *stage, weir__err *err)
{
    if (stage->workers)
        weir__callbacks_close (stage->callbacks, &stage->workers[0]);
    weir__callbacks_warn_unread (stage->callbacks, &stage->props, stage->name, stage->run->job);
    return weir__rejects_close (stage->rejects, err);
}

static int s_close_output (weir__stage *stage, weir__err *err)
{
    if (weir__job_failed (stage->run->job))
        weir__output_discard (stage->output);
    int rc = weir__output_close (stage->output, err);
    weir__err other;
    weir__err_init (&other);
    int closed = weir__rejects_close (stage->rejects, rc ? &other : err);
    return rc ? rc : closed;
}

//  What opening and closing a stage is, by its kind.
static const struct {
    int (*open) (weir__stage *stage, weir__recovery *recovery, weir__err *err);
    int (*close) (weir__stage *stage, weir__err *err);
} s_kinds[] = {
    [WEIR_ELEMENT_READER] = {s_open_input, s_close_input},
    [WEIR_ELEMENT_PROCESSOR] = {s_open_callbacks, s_close_callbacks},
    [WEIR_ELEMENT_WRITER] = {s_open_output, s_close_output},
};

//  A graph of several readers.  A pass ends when every reader has read
//  its input to its end, and the next reads every input again: the
//  readers' passes are the graph's, so they must agree (FIRST, the first
//  reader, gives them).  A reader that follows its files has one pass
//  and never ends, so neither does the graph: the others read their
//  inputs to the end and wait.
static int s_several (const weir__stage *reader, const weir__stage *first, size_t readers, weir__err *err)
{
    if (readers < 2)
        return 0;
    unsigned mine = weir__input_passes (reader->input), theirs = weir__input_passes (first->input);
    if (mine == theirs)
        return 0;
    weir__prop *p = weir__stage_prop (mine > 1 ? reader : first, "passes");
    const weir__stage *at = mine > 1 ? reader : first;
    return weir__stage_error (at, err, WEIR_EPROPERTY, p ? p->key_offset : -1,
                              "%s has passes=%u and %s passes=%u: a pass of a graph of %zu readers ends when "
                              "every reader has read its input, so they all take the same passes=; give each "
                              "passes=%u",
                              reader->name, mine, first->name, theirs, readers,
                              mine > theirs ? mine : theirs);
}

//  Open every reader and plan its input, before anything else: a missing
//  input, or an output that is one of the inputs, is found before the
//  checkpoint directory or any output is touched.
static int s_open_reader (const weir__run *run, weir__err *err)
{
    size_t readers = weir__stages_readers (run->stages);
    const weir__stage *first = NULL;
    int rc = 0;
    for (size_t i = 0; i < run->stages->count && !rc; i++) {
        weir__stage *reader = run->stages->items[i];
        if (reader->kind != WEIR_ELEMENT_READER)
            continue;
        rc = weir__input_open (reader->input, reader->name, reader->name_offset, &reader->props,
                               reader->threads, err);
        first = first ? first : reader;
        if (!rc)
            rc = s_several (reader, first, readers, err);
    }
    return rc ? rc : weir__guard_check (run->stages, run->options, err);
}

//  STAGE's input: one queue, in which each link into the stage is a group
//  of producers (the threads of the stage it leaves) with CAPACITY
//  credits of its own, so that every link is bounded apart: a fast branch
//  of a merge never takes a slow one's room.
static weir__queue *s_input (const weir__stages *stages, const weir__stage *stage, weir__queue_ctx *ctx,
                             weir__err *err)
{
    unsigned *group = calloc (stage->producers, sizeof *group), links = 0;
    if (!group) {
        weir__err_set (err, WEIR_ENOMEM, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < stages->count; i++)
        for (size_t k = 0; k < stages->items[i]->nouts; k++) {
            const weir__edge *e = &stages->items[i]->outs[k];
            if (e->to != stage)
                continue;
            for (unsigned t = 0; t < stages->items[i]->threads * e->ranks; t++)
                group[e->first + t] = links;
            links++;
        }
    weir__queue *q =
        weir__queue_new_grouped (ctx, stage->producers, stage->threads, stage->capacity, group, links, err);
    free (group);
    return q;
}

//  Where each worker of STAGE sends: each link's queue, as its producer
//  number there, or for a link into a tee it hosts, each of the tee's.
static int s_targets (weir__stage *stage, weir__err *err)
{
    for (size_t k = 0; k < stage->nouts; k++)
        stage->keyed_outs |= stage->outs[k].to->key != NULL;
    size_t n = 0;
    for (size_t k = 0; k < stage->nouts; k++)
        n += stage->outs[k].to->host == stage ? stage->outs[k].to->nouts : 1;
    for (unsigned t = 0; t < stage->threads && n && !stage->host; t++) {
        weir__worker *w = &stage->workers[t];
        if (!(w->targets = calloc (n, sizeof *w->targets)))
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        for (size_t k = 0; k < stage->nouts; k++) {
            const weir__stage *to = stage->outs[k].to;
            const weir__edge *e = to->host == stage ? to->outs : &stage->outs[k];
            size_t links = to->host == stage ? to->nouts : 1;
            for (size_t j = 0; j < links; j++)
                w->targets[w->ntargets++] = (weir__queue_target){e[j].queue, e[j].base + t};
        }
    }
    return 0;
}

//  A bridge from other ranks (lib/exchange.h) failed: so does the job
static void s_bridge_failed (void *job, const weir__err *err)
{
    weir__err copy = *err;
    weir__job_fail (job, &copy);
}

//  The workers of every stage (a reader's with its sink), the ZeroMQ
//  context and the queues between the stages.
static int s_build (const weir__run *run, s_wakeable *wakeable, weir__err *err)
{
    weir__stages *stages = run->stages;
    const weir__sink sink = {
        .send = weir__path_sink_send,
        .idle = weir__path_sink_idle,
        .reject = weir__path_sink_reject,
        .warn = weir__path_sink_warn,
        .truncated = weir__path_sink_truncated,
        .seen = weir__path_sink_seen,
    };
    int rc = 0;
    //  A tee that runs in its host's threads sends as they do: its links
    //  hold a producer number for each of them
    for (size_t i = 0; i < stages->count; i++)
        if (stages->items[i]->host)
            stages->items[i]->threads = stages->items[i]->host->threads;
    for (size_t i = 0; i < stages->count && !rc; i++)
        rc = weir__stage_workers_new (stages->items[i], &sink, err);
    //  A processor fused with its reader: each reader thread drives the
    //  processor's worker of its index, and its sink hands it each batch
    for (size_t i = 0; i < stages->count && !rc; i++) {
        weir__stage *stage = stages->items[i];
        for (unsigned t = 0; stage->runs_in && t < stage->threads; t++) {
            weir__worker *r = &stage->runs_in->workers[t];
            r->fused = &stage->workers[t];
            r->sink.send = weir__fuse_sink_send;
            r->sink.idle = weir__fuse_sink_idle;
        }
    }
    //  A socket per producer and consumer thread: the stage of most
    //  threads is where to take some, should the process not be allowed
    //  that many files
    const weir__stage *most = stages->items[0];
    size_t sockets = 16;
    for (size_t i = 0; i < stages->count; i++) {
        weir__stage *stage = stages->items[i];
        stage->producers = 0;
        most = stage->threads > most->threads ? stage : most;
    }
    //  A stage's input is one queue, fed by every link into it: each
    //  producing stage's threads have their own numbers in it, and on a
    //  keyed link across ranks, those of every rank
    unsigned rank = (unsigned) weir__ranks_rank (run->ranks),
             ranks = (unsigned) weir__ranks_size (run->ranks);
    unsigned xlinks = 0, capacity = 0;
    for (size_t i = 0; i < stages->count; i++)
        for (size_t k = 0; k < stages->items[i]->nouts; k++) {
            weir__edge *e = &stages->items[i]->outs[k];
            unsigned threads = stages->items[i]->threads;
            e->ranks = e->to->key && ranks > 1 ? ranks : 1;
            e->first = e->to->producers;
            e->base = e->first + (e->ranks > 1 ? rank * threads : 0);
            e->to->producers += threads * e->ranks;
            e->xlink = e->ranks > 1 ? xlinks++ : 0;
            capacity = e->ranks > 1 && e->to->capacity > capacity ? e->to->capacity : capacity;
        }
    for (size_t i = 0; i < stages->count; i++)
        if (stages->items[i]->nins && !stages->items[i]->host && !stages->items[i]->runs_in)
            sockets += weir__queue_sockets (stages->items[i]->producers, stages->items[i]->threads);
    char hint[300];
    snprintf (hint, sizeof hint, "give '%s' fewer than threads=%u, or raise the limit", most->name,
              most->threads);
    if (rc || (rc = weir__queue_descriptors (sockets, hint, err))
        || !(wakeable->ctx = weir__queue_ctx_new (sockets, err)))
        return rc ? rc : err->code;
    for (size_t i = 0; i < stages->count; i++) {
        weir__stage *stage = stages->items[i];
        if (!stage->nins || stage->host || stage->runs_in)
            continue;
        if (!(stage->in = s_input (stages, stage, wakeable->ctx, err)))
            return err->code;
    }
    for (size_t i = 0; i < stages->count; i++)
        for (size_t k = 0; k < stages->items[i]->nouts; k++)
            stages->items[i]->outs[k].queue = stages->items[i]->outs[k].to->in;
    for (size_t i = 0; i < stages->count && !rc; i++)
        rc = s_targets (stages->items[i], err);
    //  The keyed links between ranks: connected, greeted with what each
    //  is here (so that ranks of other threads= or builds are refused
    //  before they number producers differently), and a bridge each
    //  into its stage's queue
    uint64_t *shapes = xlinks ? calloc (xlinks, sizeof *shapes) : NULL;
    if (!rc && xlinks && !shapes)
        rc = weir__err_set (err, WEIR_ENOMEM, "out of memory");
    for (size_t i = 0; i < stages->count && !rc && shapes; i++)
        for (size_t k = 0; k < stages->items[i]->nouts; k++) {
            const weir__edge *e = &stages->items[i]->outs[k];
            if (e->ranks <= 1)
                continue;
            uint64_t shape[7] = {e->first,
                                 stages->items[i]->threads,
                                 e->to->threads,
                                 e->to->producers,
                                 e->to->combine ? e->to->combine->combiner.value_size : 0,
                                 sizeof (void *),
                                 WEIR_VERSION};
            shapes[e->xlink] = weir__hash64 (0, shape, sizeof shape);
        }
    if (!rc && xlinks)
        rc = weir__ranks_exchange (run->ranks, xlinks, shapes, capacity, &wakeable->exchange, err);
    free (shapes);
    for (size_t i = 0; i < stages->count && !rc; i++)
        for (size_t k = 0; k < stages->items[i]->nouts && !rc; k++) {
            weir__edge *e = &stages->items[i]->outs[k];
            if (e->ranks > 1) {
                e->exchange = wakeable->exchange;
                rc = weir__exchange_start (e->exchange, e->xlink, e->queue, e->first,
                                           stages->items[i]->threads, s_bridge_failed, run->job, err);
            }
        }
    return rc;
}

//  Start every thread.  A thread that cannot start fails the job; those
//  already started wait at the first barrier, and the failure wakes them.
static void s_start (weir__stages *stages, weir__job *job)
{
    for (size_t i = 0; i < stages->count; i++) {
        weir__stage *stage = stages->items[i];
        for (unsigned t = 0; t < stage->threads && !stage->host && !stage->runs_in; t++) {
            weir__worker *w = &stage->workers[t];
            atomic_store (&w->start_ns, weir__now_ns ());
            if (pthread_create (&w->thread, NULL, weir__worker_main, w)) {
                atomic_store (&w->end_ns, atomic_load (&w->start_ns));
                weir__err err;
                weir__err_set (&err, WEIR_ESYSTEM, "cannot start thread %u of '%s'", t, stage->name);
                weir__job_fail (job, &err);
                return;
            }
            w->started = 1;
        }
    }
}

static void s_join (weir__stages *stages)
{
    for (size_t i = 0; i < stages->count; i++)
        for (unsigned t = 0; t < stages->items[i]->threads; t++)
            if (stages->items[i]->workers[t].started)
                pthread_join (stages->items[i]->workers[t].thread, NULL);
}

//  Resumed from the checkpoint of a job that had finished, or past the
//  epoch limit: nothing to run.  Says so.
static int s_nothing_to_do (const weir__run *run, weir__recovery *recovery)
{
    uint64_t done = weir__recovery_first_epoch (recovery) - 1;
    uint64_t last = run->options->max_epochs;
    if (weir__recovery_finished (recovery))
        weir__job_log (run->job, WEIR_LOG_INFO, "the job finished at epoch %" PRIu64 ": nothing left to do",
                       done);
    else if (last && done >= last)
        weir__job_log (run->job, WEIR_LOG_INFO,
                       "epoch %" PRIu64 " is done and --epochs %" PRIu64 " stops there", done, last);
    else
        return 0;
    return 1;
}

//  Everything a run needs before its threads start: the workers, the
//  queues, every stage opened (the reader first of all, so that a missing
//  input is found before a writer truncates its output), and on a fresh
//  start the first checkpoint.
static int s_prepare (const weir__run *run, weir__recovery *recovery, weir__shared *shared,
                      s_wakeable *wakeable, weir__err *err)
{
    weir__stages *stages = run->stages;
    weir__job_set_hook (run->job, s_wake, wakeable);
    shared->workspace = weir__recovery_workspace (recovery);
    shared->key_groups = weir__recovery_key_groups (recovery);
    shared->keeps_keys = run->options->checkpoint_dir != NULL;
    shared->rank = (unsigned) weir__ranks_rank (run->ranks);
    shared->ranks = (unsigned) weir__ranks_size (run->ranks);
    shared->stages = stages->items;
    shared->nstages = stages->count;
    for (size_t i = 0; i < stages->count; i++)
        stages->items[i]->run = shared;
    //  A keyed stage's threads of every rank share the groups
    unsigned groups = weir__recovery_key_groups (recovery);
    for (size_t i = 0; i < stages->count; i++) {
        const weir__stage *stage = stages->items[i];
        unsigned all = stage->threads * shared->ranks;
        if (!stage->key || all <= groups)
            continue;
        if (shared->ranks > 1)
            return weir__stage_error (
                stage, err, WEIR_ESTRUCTURE, -1,
                "%s has threads=%u on each of %u ranks and the job %u key groups: a "
                "keyed stage's thread owns whole groups, and %u of its %u would own none "
                "(give a new job --key-groups %u or more)",
                stage->name, stage->threads, shared->ranks, groups, all - groups, all, all);
        return weir__stage_error (stage, err, WEIR_ESTRUCTURE, -1,
                                  "%s has threads=%u and the job %u key groups: a keyed stage's thread "
                                  "owns whole groups, and %u of them would own none (give a new job "
                                  "--key-groups %u or more)",
                                  stage->name, stage->threads, groups, stage->threads - groups,
                                  stage->threads);
    }
    int rc = s_build (run, wakeable, err);
    for (size_t i = 0; i < stages->count && !rc; i++)
        rc = s_kinds[stages->items[i]->kind].open (stages->items[i], recovery, err);
    return rc ? rc : weir__recovery_begin (recovery, err);
}

//  The threads at work, the controller running the epochs, until the
//  job ends; then, in a job of several ranks, the job's counts.
static int s_work (const weir__run *run, weir__recovery *recovery, weir__err *err)
{
    weir__job *job = run->job;
    weir__stages *stages = run->stages;
    weir__input *input = weir__stages_reader (stages)->input;
    if (weir__ranks_size (run->ranks) > 1)
        weir__controller_set_agree (run->controller, weir__ranks_agree, run->ranks);
    //  An input without an end needs epochs that end: by time, unless told
    //  otherwise
    unsigned threads = 0, reading = 0;
    unsigned *meetings = calloc (stages->count, sizeof *meetings);
    if (!meetings)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    for (size_t i = 0; i < stages->count; i++) {
        const weir__stage *stage = stages->items[i];
        if (stage->input && weir__input_follows (stage->input))
            weir__controller_default_seconds (run->controller, 1.0);
        //  A tee hosted or a processor fused runs in other threads
        threads += stage->host || stage->runs_in ? 0 : stage->threads;
        reading += stage->kind == WEIR_ELEMENT_READER ? stage->threads : 0;
        //  The threads of a reader with a fused processor meet
        if (stage->runs_in)
            meetings[stage->runs_in->index] = stage->runs_in->threads;
    }
    int rc = weir__controller_set_meetings (run->controller, meetings, stages->count);
    free (meetings);
    if (rc)
        return weir__err_set (err, rc, "out of memory");
    //  A large input read again every pass: say how not to
    for (size_t i = 0; i < stages->count; i++) {
        weir__stage *st = stages->items[i];
        uint64_t pass = st->input ? weir__input_uncached_pass (st->input, (uint64_t) 64 << 20) : 0;
        if (pass)
            weir__job_log (job, WEIR_LOG_INFO,
                           "%s: passes=%u reads its %.0f MB again in every pass; cache=SIZE would keep its "
                           "records in memory after the first (about their size, and 16 bytes each)",
                           st->name, weir__input_passes (st->input), (double) pass / 1e6);
    }
    //  Every reader takes the same passes (s_several)
    weir__controller_start (run->controller, weir__recovery_first_epoch (recovery),
                            weir__recovery_pass (recovery), weir__input_passes (input), threads, reading);
    weir__job_clock_start (job);
    if (s_nothing_to_do (run, recovery)) {
        weir__job_clock_stop (job);
        return 0;
    }
    atomic_store (&job->running, 1);
    s_start (stages, job);
    weir__controller_run (run->controller, weir__recovery_commit, recovery, run->tick, run->tick_arg,
                          run->tick_ms);
    s_join (stages);
    atomic_store (&job->running, 0);
    weir__job_clock_stop (job);
    if (weir__job_failed (job))
        return 0;
    //  What the last checkpoint records becomes final before the outputs
    //  close
    rc = weir__recovery_settle (recovery, err);
    return rc ? rc : weir__ranks_totals (run->ranks, stages, err);
}

//  Close every stage (an output's failure to is the job's), let nothing
//  wake what goes away, free the workers' batches, the queues and the
//  context.
static void s_teardown (const weir__run *run, s_wakeable *wakeable)
{
    weir__stages *stages = run->stages;
    for (size_t i = 0; i < stages->count; i++) {
        weir__err err;
        weir__err_init (&err);
        if (s_kinds[stages->items[i]->kind].close (stages->items[i], &err))
            weir__job_fail (run->job, &err);
    }
    weir__job_set_hook (run->job, NULL, NULL);
    //  What crossed between the ranks, as metrics of the keyed stages;
    //  then the exchange, whose bridges put into the queues, goes first
    for (size_t i = 0; i < stages->count && wakeable->exchange; i++)
        for (size_t k = 0; k < stages->items[i]->nouts; k++) {
            const weir__edge *e = &stages->items[i]->outs[k];
            uint64_t sent, sent_bytes, received, received_bytes;
            //  (a link whose bridge was not started, the build having
            //  failed before, has none)
            if (e->ranks <= 1 || !e->exchange)
                continue;
            weir__exchange_counts (e->exchange, e->xlink, &sent, &sent_bytes, &received, &received_bytes);
            weir__metrics_add (&e->to->metrics, "bytes_to_ranks", (double) sent_bytes);
            weir__metrics_add (&e->to->metrics, "bytes_from_ranks", (double) received_bytes);
        }
    weir__exchange_destroy (&wakeable->exchange);
    for (size_t i = 0; i < stages->count; i++) {
        weir__stage *stage = stages->items[i];
        stage->run = NULL;
        for (size_t k = 0; k < stage->nouts; k++) {
            stage->outs[k].queue = NULL;
            stage->outs[k].exchange = NULL;
        }
        weir__stage_workers_release (stage);
        weir__queue_destroy (&stage->in);
    }
    weir__queue_ctx_destroy (&wakeable->ctx);
}

//  Whether the job ended while a rank waits for the others (see
//  weir__ranks_watch): failed, aborted, or over its stop timeout
static int s_gave_up (void *controller)
{
    return weir__controller_gave_up (controller);
}

int weir__runtime_run (const weir__run *run)
{
    weir__job *job = run->job;
    weir__err err;
    weir__err_init (&err);
    weir__recovery *recovery = NULL;
    weir__recovery_of of = {run->options,     run->stages, run->description, run->shape,
                            run->older_shape, job,         run->ranks};
    weir__ranks_watch (run->ranks, s_gave_up, run->controller);
    //  A refused run has opened nothing but the reader, which its pipe
    //  closes with its stages
    if (s_open_reader (run, &err) || weir__recovery_new (&of, &recovery, &err)) {
        weir__recovery_destroy (&recovery);
        weir__ranks_watch (run->ranks, NULL, NULL);
        //  Aborted while it waited for the other ranks: the abort is what
        //  the job says, not the wait it ended
        if (weir__job_failed (job)) {
            weir__job_error (job, &err);
            return err.code;
        }
        return weir__job_refuse (job, &err);
    }
    weir__shared shared = {job, run->controller, NULL, 0, 0, 0, 1, NULL, 0};
    s_wakeable wakeable = {run->stages, run->controller, NULL, NULL};
    if (s_prepare (run, recovery, &shared, &wakeable, &err) || s_work (run, recovery, &err))
        weir__job_fail (job, &err);
    s_teardown (run, &wakeable);
    //  The last write's failure is reported, never swallowed
    weir__err_init (&err);
    if (weir__recovery_finish (recovery, &err))
        weir__job_fail (job, &err);
    weir__recovery_destroy (&recovery);
    weir__job_error (job, &err);
    weir__ranks_watch (run->ranks, NULL, NULL);
    weir__ranks_ended (run->ranks, err.code == 0);
    return err.code;
}

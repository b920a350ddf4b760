/*  pipeline/runtime.c - building the queues, opening the stages, starting
    and joining the threads, tearing down.  */
#include "config.h"
#include "pipeline/runtime.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "lib/clock.h"
#include "pipeline/deadletter.h"
#include "pipeline/elements.h"
#include "pipeline/guard.h"
#include "pipeline/path.h"
#include "pipeline/recovery.h"
#include "pipeline/worker.h"

//  What the fail hook wakes.
typedef struct {
    weir__stages *stages;
    weir__controller *controller;
    weir__queue_ctx *ctx;
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
}

//  A processor's open or init returned -1: its weir_fail message if it
//  gave one (the job's first error), else one naming the callback.
static int s_callback_error (weir__stage *stage, const char *callback, weir__err *err)
{
    if (weir__job_failed (stage->job))
        weir__job_error (stage->job, err);
    else
        weir__err_set (err, WEIR_EPROCESSOR, "%s: %s returned an error without a message", stage->name,
                       callback);
    return err->code;
}

static int s_open_stage (weir__stage *stage, weir__recovery *recovery, weir__err *err)
{
    if (stage->dead_path) {
        const char *resume;
        int rc = weir__recovery_dead_letter (recovery, stage, &resume, err);
        if (rc || (rc = weir__deadletter_open (stage->name, stage->dead_path, resume, &stage->dead, err)))
            return rc;
    }
    //  The reader opened first of all (s_open_reader)
    if (stage->reader)
        return weir__recovery_reader (recovery, stage, err);
    if (stage->writer) {
        const char *resume;
        int rc = weir__recovery_writer (recovery, stage, &resume, err);
        return rc ? rc
                  : stage->writer->open (&stage->props, stage->threads, resume, &stage->writer_state, err);
    }
    const weir_processor *proc = stage->proc;
    weir__worker *w = &stage->workers[0];
    if (proc->open && proc->open (w, &stage->proc_state))
        return s_callback_error (stage, "open", err);
    stage->proc_opened = 1;
    stage->proc_opened_once = 1;
    //  init sets up what a checkpoint restores: only on a fresh start
    if (weir__recovery_fresh (recovery) && proc->init && proc->init (w, stage->proc_state))
        return s_callback_error (stage, "init", err);
    return 0;
}

//  Open the reader and plan its input, before anything else: a missing
//  input, or an output that is one of the inputs, is found before the
//  checkpoint directory or any output is touched.
static int s_open_reader (const weir__run *run, weir__err *err)
{
    weir__stage *reader = run->stages->items[0];
    int rc = reader->reader->open (&reader->props, &reader->reader_state, &reader->shards, err);
    if (!rc && reader->shards.follow) {
        //  Following is waiting, not work: one thread serves every file
        const weir__prop *p = weir__props_find (&reader->props, "threads");
        if (reader->threads > 1)
            return weir__err_at (err, WEIR_EPROPERTY, p ? p->value_offset : reader->name_offset,
                                 "%s: follow=1 reads its files with one thread, not threads=%u", reader->name,
                                 reader->threads);
        p = weir__props_find (&reader->props, "passes");
        if (reader->passes > 1)
            return weir__err_at (err, WEIR_EPROPERTY, p ? p->value_offset : reader->name_offset,
                                 "%s: follow=1 never reaches the end of its input, so passes=%u cannot be",
                                 reader->name, reader->passes);
        //  An input without an end needs epochs that end: by time, unless
        //  told otherwise
        weir__controller_default_seconds (run->controller, 1.0);
    }
    return rc ? rc : weir__guard_check (run->stages, run->options, err);
}

//  Close what s_open_stage opened.  A writer's close flushes: its failure
//  is the job's failure.
static void s_close_stage (weir__stage *stage)
{
    weir__err err;
    weir__err_init (&err);
    if (stage->dead && weir__deadletter_close (&stage->dead, &err))
        weir__job_fail (stage->job, &err);
    if (stage->reader && stage->reader_state) {
        stage->reader->close (stage->reader_state);
        stage->reader_state = NULL;
    }
    else if (stage->writer && stage->writer_state) {
        if (stage->writer->close (stage->writer_state, &err))
            weir__job_fail (stage->job, &err);
        stage->writer_state = NULL;
    }
    else if (stage->proc && stage->proc_opened) {
        if (stage->proc->close)
            stage->proc->close (&stage->workers[0], stage->proc_state);
        stage->proc_opened = 0;
    }
}

//  A property that no callback of a processor ever read is most likely a
//  typo: say so (builtin readers and writers refuse unknown ones at once).
//  On resume init does not run, and what only init reads would look unread.
static void s_warn_unread (weir__job *job, weir__stages *stages)
{
    for (size_t i = 0; i < stages->count; i++) {
        weir__stage *stage = stages->items[i];
        if (stage->kind != WEIR_ELEMENT_PROCESSOR || stage->passthrough || !stage->proc_opened_once)
            continue;
        for (size_t k = 0; k < stage->props.count; k++) {
            weir__prop *p = &stage->props.items[k];
            int common = 0;
            for (const weir_property_info *c = weir__processor_common_props; c->name; c++)
                common |= strcmp (c->name, p->key) == 0;
            if (!common && !atomic_load (&p->used))
                weir__job_warn (job, "%s: property '%s' was never read by the processor (a typo?)",
                                stage->name, p->key);
        }
    }
}

//  Queues between the stages, and the workers of every stage.
static int s_build (const weir__run *run, weir__recovery *recovery, weir__queue_ctx *ctx, weir__err *err)
{
    weir__stages *stages = run->stages;
    for (size_t i = 0; i < stages->count; i++) {
        weir__stage *stage = stages->items[i];
        stage->job = run->job;
        stage->controller = run->controller;
        stage->workspace = weir__recovery_workspace (recovery);
        int rc = weir__stage_workers_new (stage, err);
        if (rc)
            return rc;
        if (stage->reader)
            for (unsigned t = 0; t < stage->threads; t++) {
                stage->workers[t].sink.send = weir__path_sink_send;
                stage->workers[t].sink.idle = weir__path_sink_idle;
                stage->workers[t].sink.skip = stage->skip;
                stage->workers[t].sink.reject = weir__path_sink_reject;
                stage->workers[t].sink.linger_ms = stage->linger_ms;
                stage->workers[t].sink.warn = weir__path_sink_warn;
                stage->workers[t].sink.truncated = weir__path_sink_truncated;
            }
        if (i == 0)
            continue;
        weir__stage *before = stages->items[i - 1];
        stage->in = weir__queue_new (ctx, before->threads, stage->threads, stage->capacity, err);
        if (!stage->in)
            return err->code;
        stage->producers = before->threads;
        before->out = stage->in;
    }
    return 0;
}

//  Each ZeroMQ socket takes a file descriptor: make sure SOCKETS more can
//  be opened, raising the soft limit towards the hard one if need be (as
//  many runtimes do), or say which limit stands in the way.
static int s_descriptors (const weir__stages *stages, size_t sockets, weir__err *err)
{
    struct rlimit lim;
    if (getrlimit (RLIMIT_NOFILE, &lim))
        return 0;
    //  Room for what the process holds already: inputs, outputs, LevelDB
    rlim_t want = (rlim_t) sockets + 256;
    if (lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur >= want)
        return 0;
    if (lim.rlim_max == RLIM_INFINITY || lim.rlim_max >= want) {
        lim.rlim_cur = want;
        if (setrlimit (RLIMIT_NOFILE, &lim) == 0)
            return 0;
    }
    const weir__stage *most = stages->items[0];
    for (size_t i = 1; i < stages->count; i++)
        if (stages->items[i]->threads > most->threads)
            most = stages->items[i];
    return weir__err_set (
        err, WEIR_ESYSTEM,
        "the pipe's threads need %zu ZeroMQ sockets, a file descriptor each, and this process may "
        "open %llu (ulimit -n): give '%s' fewer than threads=%u, or raise the limit",
        sockets, (unsigned long long) lim.rlim_max, most->name, most->threads);
}

//  Start every thread.  A thread that cannot start fails the job; those
//  already started wait at the first barrier, and the failure wakes them.
static void s_start (weir__stages *stages, weir__job *job)
{
    for (size_t i = 0; i < stages->count; i++) {
        weir__stage *stage = stages->items[i];
        for (unsigned t = 0; t < stage->threads; t++) {
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

//  A job of several ranks that ended well: every rank's counts, summed,
//  for rank 0 to show.  Every rank ends after the same epoch, so all come.
static int s_job_totals (const weir__run *run, weir__err *err)
{
    weir__stages *stages = run->stages;
    int64_t *v = calloc (stages->count * 3, sizeof *v);
    if (!v)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    for (size_t i = 0; i < stages->count; i++) {
        weir_stage_stats st = WEIR_STAGE_STATS_INIT;
        weir__stage_stats (stages->items[i], &st);
        v[3 * i] = (int64_t) st.records_in;
        v[3 * i + 1] = (int64_t) st.records_out;
        v[3 * i + 2] = (int64_t) st.records_rejected;
    }
    int rc = weir__cluster_allreduce (run->cluster, v, stages->count * 3, WEIR__REDUCE_I64, WEIR__REDUCE_SUM,
                                      run->options->epoch_timeout, "summing the ranks' record counts", err);
    for (size_t i = 0; i < stages->count && !rc; i++) {
        for (int k = 0; k < 3; k++)
            stages->items[i]->job_records[k] = (uint64_t) v[3 * i + k];
        stages->items[i]->job_known = 1;
    }
    free (v);
    return rc;
}

int weir__runtime_run (const weir__run *run)
{
    weir__job *job = run->job;
    weir__stages *stages = run->stages;
    weir__err err;
    weir__err_init (&err);
    weir__recovery *recovery = NULL;
    if (s_open_reader (run, &err)
        || weir__recovery_new (run->options, stages, run->description, run->shape, job, run->cluster,
                               &recovery, &err)) {
        s_close_stage (stages->items[0]);
        weir__recovery_destroy (&recovery);
        return weir__job_refuse (job, &err);
    }

    //  Build: the context, queues and workers, then the stages' own state
    //  (readers first, so that a missing input is found before a writer
    //  truncates its output)
    size_t sockets = 16;
    for (size_t i = 1; i < stages->count; i++)
        sockets += weir__queue_sockets (stages->items[i - 1]->threads, stages->items[i]->threads);
    s_wakeable wakeable = {stages, run->controller, NULL};
    if (s_descriptors (stages, sockets, &err) || !(wakeable.ctx = weir__queue_ctx_new (sockets, &err)))
        goto failed;
    weir__job_set_hook (job, s_wake, &wakeable);
    if (s_build (run, recovery, wakeable.ctx, &err))
        goto failed;
    for (size_t i = 0; i < stages->count; i++)
        if (s_open_stage (stages->items[i], recovery, &err))
            goto failed;
    if (weir__recovery_begin (recovery, &err))
        goto failed;
    if (weir__cluster_size (run->cluster) > 1)
        weir__controller_set_agree (run->controller, weir__recovery_agree, recovery);
    unsigned threads = 0;
    for (size_t i = 0; i < stages->count; i++)
        threads += stages->items[i]->threads;
    weir__controller_start (run->controller, weir__recovery_first_epoch (recovery),
                            weir__recovery_pass (recovery), threads, stages->items[0]->threads);
    weir__job_clock_start (job);
    if (s_nothing_to_do (run, recovery)) {
        weir__job_clock_stop (job);
        goto teardown;
    }
    atomic_store (&job->running, 1);
    s_start (stages, job);
    weir__controller_run (run->controller, weir__recovery_commit, recovery, run->tick, run->tick_arg,
                          run->tick_ms);
    s_join (stages);
    atomic_store (&job->running, 0);
    weir__job_clock_stop (job);
    if (!weir__job_failed (job) && weir__cluster_size (run->cluster) > 1 && s_job_totals (run, &err))
        goto failed;
    goto teardown;

failed:
    weir__job_fail (job, &err);
teardown:
    for (size_t i = 0; i < stages->count; i++)
        s_close_stage (stages->items[i]);
    //  Nothing may wake what goes away now
    weir__job_set_hook (job, NULL, NULL);
    for (size_t i = 0; i < stages->count; i++) {
        weir__stage *stage = stages->items[i];
        weir__stage_workers_release (stage);
        weir__queue_destroy (&stage->in);
        stage->out = NULL;
    }
    weir__queue_ctx_destroy (&wakeable.ctx);
    //  The last write's failure is reported, never swallowed
    weir__err_init (&err);
    if (weir__recovery_finish (recovery, &err))
        weir__job_fail (job, &err);
    if (weir__recovery_fresh (recovery))
        s_warn_unread (job, stages);
    weir__recovery_destroy (&recovery);
    weir__job_error (job, &err);
    return err.code;
}

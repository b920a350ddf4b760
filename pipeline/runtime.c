/*  pipeline/runtime.c - running a pipe: queues, stage threads, teardown.

    The thread inside weir_pipe_run builds everything (the ZeroMQ context,
    every queue and socket, every stage's state), starts the runtime
    threads, waits for them while it reports progress, joins them and tears
    everything down.  Each socket is used by exactly one runtime thread
    between its start and its join; creating and closing them around that
    window is what lets shutdown never hang: when every thread is joined,
    every message has been received, so sockets close with no linger and
    the context terminates at once.

    End of stream travels in-band: each producer thread sends one EOS
    marker to every consumer thread behind its last batch, and a consumer
    is done when it has one from every producer.  A failure anywhere calls
    weir__pipe_fail, which wakes everybody (see there).  */
#include "config.h"

#include <assert.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "pipeline/pipe.h"
#include "pipeline/plugin.h"

static const char *s_kind_name (weir_element_kind kind)
{
    return kind == WEIR_ELEMENT_READER ? "reader" : kind == WEIR_ELEMENT_WRITER ? "writer" : "processor";
}

//  Find every stage's element and read the properties every stage takes.
static int s_resolve (weir_pipe *pipe, weir__err *err)
{
    if (pipe->count < 2)
        return weir__err_at (err, WEIR_ESTRUCTURE, pipe->count ? pipe->stages[0]->name_offset : 0,
                             "a pipe needs at least a reader and a writer, as in "
                             "'range count=10 ! lines path=out.txt'");
    for (size_t i = 0; i < pipe->count; i++) {
        weir__stage *stage = pipe->stages[i];
        weir_element_kind want = i == 0                ? WEIR_ELEMENT_READER
                                 : i == pipe->count - 1 ? WEIR_ELEMENT_WRITER
                                                       : WEIR_ELEMENT_PROCESSOR;
        const char *place = i == 0 ? "first" : i == pipe->count - 1 ? "last" : "middle";
        const weir_property_info *known = NULL;
        if (stage->proc) {
            if (want != WEIR_ELEMENT_PROCESSOR)
                return weir__err_at (err, WEIR_ESTRUCTURE, stage->name_offset,
                                     "'%s' is a processor, but the %s element must be a %s",
                                     stage->name, place, s_kind_name (want));
        }
        else {
            const weir__element *e = weir__plugin_is_path (stage->name)
                                         ? NULL
                                         : weir__element_find (stage->name, (int) want);
            const weir__element *other = e ? NULL : weir__element_find (stage->name, -1);
            if (!e && want == WEIR_ELEMENT_PROCESSOR && !other) {
                //  Not a builtin: a plugin, by path or by name
                int rc = weir__plugin_load (stage->name, &stage->plugin, err);
                if (rc == WEIR_EUNKNOWN)
                    err->offset = stage->name_offset;
                if (rc)
                    return rc;
                stage->proc = weir_plugin_table (stage->plugin);
                stage->kind = want;
                goto common;
            }
            if (!e && weir__plugin_is_path (stage->name))
                return weir__err_at (err, WEIR_ESTRUCTURE, stage->name_offset,
                                     "'%s' is a plugin, and plugins are processors, but the %s element "
                                     "must be a %s",
                                     stage->name, place, s_kind_name (want));
            if (!e) {
                if (other)
                    return weir__err_at (err, WEIR_ESTRUCTURE, stage->name_offset,
                                         "'%s' is a %s, but the %s element must be a %s (%ss: %s)",
                                         stage->name, s_kind_name (other->kind), place,
                                         s_kind_name (want), s_kind_name (want),
                                         weir__element_names (want));
                return weir__err_at (err, WEIR_EUNKNOWN, stage->name_offset,
                                     "unknown element '%s' (readers: %s; processors: %s; writers: %s)",
                                     stage->name, weir__element_names (WEIR_ELEMENT_READER),
                                     weir__element_names (WEIR_ELEMENT_PROCESSOR),
                                     weir__element_names (WEIR_ELEMENT_WRITER));
            }
            stage->reader = e->reader;
            stage->writer = e->writer;
            stage->proc = e->processor;
            stage->passthrough = e->passthrough;
            known = e->reader ? e->reader->props : e->writer ? e->writer->props : NULL;
            static const weir_property_info none[] = {{NULL, NULL, NULL}};
            int rc = weir__props_check (&stage->props, stage->name, known ? known : none,
                                        e->reader ? weir__reader_common_props : weir__common_props, err);
            if (rc)
                return rc;
            if (e->reader) {
                int64_t passes;
                if ((rc = weir__props_int (&stage->props, stage->name, "passes", 1, 1, 1000000, &passes, err)))
                    return rc;
                stage->passes = (unsigned) passes;
            }
        }
        stage->kind = want;
    common:;
        int64_t threads, capacity, batch;
        int rc = weir__props_int (&stage->props, stage->name, "threads", 1, 1, WEIR__MAX_THREADS,
                                  &threads, err);
        if (!rc)
            rc = weir__props_int (&stage->props, stage->name, "capacity", WEIR__DEFAULT_CAPACITY, 1,
                                  1 << 20, &capacity, err);
        if (!rc)
            rc = weir__props_int (&stage->props, stage->name, "batch", WEIR__DEFAULT_BATCH, 1,
                                  1 << 20, &batch, err);
        if (rc)
            return rc;
        stage->threads = (unsigned) threads;
        stage->capacity = (unsigned) capacity;
        stage->batch = (unsigned) batch;
    }
    return 0;
}

static void s_thread_done (weir_stage *h)
{
    atomic_store (&h->end_ns, weir__now_ns ());
}

static void s_add_wait (weir_stage *h, uint64_t wait)
{
    if (wait)
        atomic_fetch_add_explicit (&h->wait_ns, wait, memory_order_relaxed);
}

//  One control marker (barrier, end of stream) to every consumer thread
//  downstream, behind everything this thread sent before.
static int s_send_marker (weir_stage *h, uint32_t kind, uint32_t flag)
{
    weir__queue *out = h->stage->out;
    unsigned consumers = h->stage->pipe->stages[h->stage->index + 1]->threads;
    for (unsigned c = 0; c < consumers; c++) {
        zmq_msg_t msg;
        weir__batch_header marker = {kind, flag};
        if (zmq_msg_init_size (&msg, sizeof marker))
            return -1;
        memcpy (zmq_msg_data (&msg), &marker, sizeof marker);
        uint64_t wait = 0;
        int rc = weir__queue_send_to (out, h->index, c, &msg, &wait);
        s_add_wait (h, wait);
        if (rc) {
            zmq_msg_close (&msg);
            return -1;
        }
    }
    return 0;
}

//  The reader's sink: send full batches on, claim more of the epoch's
//  budget when this thread's claim is used up.
static int s_reader_flush (weir__sink *sink)
{
    weir_stage *h = (weir_stage *) ((char *) sink - offsetof (weir_stage, sink));
    weir__stage *stage = h->stage;
    if (sink->batch.count >= sink->limit && weir__stage_flush (h))
        return WEIR__SINK_ABORT;
    if (atomic_load_explicit (&stage->pipe->failed, memory_order_relaxed))
        return WEIR__SINK_ABORT;
    if (sink->quota == 0 && (sink->quota = weir__epoch_reclaim (stage, stage->batch)) == 0)
        return WEIR__SINK_PAUSE;
    return 0;
}

//  The next shard with something left to read, or SIZE_MAX.
static size_t s_take_shard (weir__stage *stage)
{
    for (;;) {
        size_t i = atomic_fetch_add (&stage->next_shard, 1);
        if (i >= stage->shards.count)
            return SIZE_MAX;
        if (stage->offsets[i] < stage->shards.items[i].end)
            return i;
    }
}

static void *s_reader_main (void *arg)
{
    weir_stage *h = arg;
    weir__stage *stage = h->stage;
    weir_pipe *pipe = stage->pipe;
    weir__err err;
    weir__err_init (&err);
    size_t current = SIZE_MAX;      //  the shard in hand, kept across epochs
    for (;;) {
        int exhausted = 0, rc = 0;
        h->sink.quota = weir__epoch_claim (stage, stage->batch);
        while (h->sink.quota > 0) {
            if (current == SIZE_MAX && (current = s_take_shard (stage)) == SIZE_MAX) {
                //  No more input: give the rest of the claim to the others
                exhausted = 1;
                weir__epoch_unclaim (stage, h->sink.quota);
                h->sink.quota = 0;
                break;
            }
            rc = stage->reader->read (stage->reader_state, &stage->shards.items[current],
                                      &stage->offsets[current], &h->sink, &err);
            if (rc)
                break;
            current = SIZE_MAX;
        }
        if (rc < 0)
            weir__pipe_fail (pipe, &err);
        if (rc < 0 || rc == WEIR__SINK_ABORT)
            break;
        //  The epoch is over for this thread: its data, then the barrier
        //  The barrier says whether this reader ran out of input, so that
        //  every stage can tell the last epoch (weir_last_epoch)
        if (weir__stage_flush (h) || s_send_marker (h, WEIR__BATCH_BARRIER, (uint32_t) exhausted))
            break;
        int new_pass = 0;
        int release = weir__epoch_arrive (h, exhausted, &new_pass);
        if (new_pass)
            current = SIZE_MAX;
        if (release == WEIR__GO)
            continue;
        if (release == WEIR__STOP)
            s_send_marker (h, WEIR__BATCH_EOS, 0);
        break;
    }
    s_thread_done (h);
    return NULL;
}

//  A callback returned -1.  weir_fail() has usually said why already; the
//  first error of the job wins, so this only speaks when nobody did.
static void s_callback_failed (weir_stage *h, const char *callback)
{
    weir__err err;
    weir__err_set (&err, WEIR_EPROCESSOR, "%s: %s returned an error without a message (epoch %" PRIu64 ")",
                   h->stage->name, callback, h->stage->pipe->epoch);
    weir__pipe_fail (h->stage->pipe, &err);
}

//  Receive the next message into MSG and its header; 0, or -1 when the job
//  is being torn down.  Data batches are counted here.
static int s_recv (weir_stage *h, zmq_msg_t *msg, weir__batch_header *hdr)
{
    weir__stage *stage = h->stage;
    uint64_t wait = 0;
    zmq_msg_init (msg);
    int rc = weir__queue_recv (stage->in, h->index, msg, &wait);
    s_add_wait (h, wait);
    if (rc) {
        zmq_msg_close (msg);
        return -1;
    }
    if (weir__batch_header_read (zmq_msg_data (msg), zmq_msg_size (msg), hdr)) {
        zmq_msg_close (msg);
        weir__err err;
        weir__err_set (&err, WEIR_ESYSTEM, "%s: short message on the queue", stage->name);
        weir__pipe_fail (stage->pipe, &err);
        return -1;
    }
    if (hdr->kind == WEIR__BATCH_DATA) {
        atomic_fetch_add_explicit (&stage->records_in, hdr->count, memory_order_relaxed);
        atomic_fetch_add_explicit (&stage->batches_in, 1, memory_order_relaxed);
    }
    return 0;
}

//  What a consumer thread does with a control marker: 1 when the stream
//  ended (every producer sent EOS), 0 to go on, -1 to quit.  AT_BARRIER
//  runs when every producer's barrier is in, before this thread passes it
//  on and waits for the controller.
static int s_marker (weir_stage *h, const weir__batch_header *hdr, unsigned *eos, unsigned *barriers,
                     int (*at_barrier) (weir_stage *h))
{
    weir__stage *stage = h->stage;
    unsigned producers = stage->pipe->stages[stage->index - 1]->threads;
    if (hdr->kind == WEIR__BATCH_EOS)
        return ++*eos == producers;
    if (*barriers == 0)
        h->inputs_done = 1;
    h->inputs_done &= hdr->count != 0;
    if (++*barriers < producers)
        return 0;
    *barriers = 0;
    weir_pipe *pipe = stage->pipe;
    //  Only the end of the input finishes a job: --epochs and stops pause it,
    //  and a resume goes on
    h->last_epoch = h->inputs_done && pipe->pass + 1 >= pipe->stages[0]->passes;
    if (at_barrier (h))
        return -1;
    if (stage->out && (weir__stage_flush (h) || s_send_marker (h, WEIR__BATCH_BARRIER, (uint32_t) h->inputs_done)))
        return -1;
    return weir__epoch_arrive (h, 0, NULL) == WEIR__ABORT ? -1 : 0;
}

static int s_processor_barrier (weir_stage *h)
{
    const weir_processor *proc = h->stage->proc;
    if (proc->epoch_end && proc->epoch_end (h, h->tstate, h->stage->pipe->epoch)) {
        s_callback_failed (h, "epoch_end");
        return -1;
    }
    return 0;
}

static void *s_processor_main (void *arg)
{
    weir_stage *h = arg;
    weir__stage *stage = h->stage;
    const weir_processor *proc = stage->proc;
    h->tstate = stage->proc_state;
    if (proc->thread_open && proc->thread_open (h, stage->proc_state, &h->tstate)) {
        s_callback_failed (h, "thread_open");
        s_thread_done (h);
        return NULL;
    }
    zmq_msg_t msg;
    weir__batch_header hdr;
    unsigned eos = 0, barriers = 0;
    int ended = 0;
    while (!ended && s_recv (h, &msg, &hdr) == 0) {
        if (hdr.kind != WEIR__BATCH_DATA) {
            zmq_msg_close (&msg);
            ended = s_marker (h, &hdr, &eos, &barriers, s_processor_barrier);
            if (ended < 0)
                break;
            continue;
        }
        if (stage->passthrough) {
            //  Untouched batches go on as they are: no decoding, no copy
            uint64_t wait = 0;
            int rc = weir__queue_send (stage->out, h->index, &msg, &wait);
            s_add_wait (h, wait);
            if (rc) {
                zmq_msg_close (&msg);
                break;
            }
            atomic_fetch_add_explicit (&stage->records_out, hdr.count, memory_order_relaxed);
            continue;
        }
        const char *data = zmq_msg_data (&msg);
        weir__records_reset (&h->decoder, data + WEIR__BATCH_HEADER,
                             zmq_msg_size (&msg) - WEIR__BATCH_HEADER);
        msgpack_object obj;
        int more;
        while ((more = weir__records_next (&h->decoder, &obj)) == 1)
            if (proc->process (h, h->tstate, &obj)) {
                s_callback_failed (h, "process");
                break;
            }
        zmq_msg_close (&msg);
        if (more < 0) {
            weir__err err;
            weir__err_set (&err, WEIR_ESYSTEM, "%s: malformed record in a batch", stage->name);
            weir__pipe_fail (stage->pipe, &err);
        }
        if (more != 0)
            break;
    }
    if (ended == 1 && weir__stage_flush (h) == 0)
        s_send_marker (h, WEIR__BATCH_EOS, 0);
    if (proc->thread_close)
        proc->thread_close (h, h->tstate);
    s_thread_done (h);
    return NULL;
}

static int s_writer_barrier (weir_stage *h)
{
    weir__err err;
    weir__err_init (&err);
    //  Everything of the epoch reaches the output before the controller
    //  syncs it
    if (h->stage->writer->flush (h->stage->writer_state, h->index, &err)) {
        weir__pipe_fail (h->stage->pipe, &err);
        return -1;
    }
    return 0;
}

static void *s_writer_main (void *arg)
{
    weir_stage *h = arg;
    weir__stage *stage = h->stage;
    weir_pipe *pipe = stage->pipe;
    zmq_msg_t msg;
    weir__batch_header hdr;
    weir__err err;
    weir__err_init (&err);
    unsigned eos = 0, barriers = 0;
    int ended = 0;
    while (!ended && s_recv (h, &msg, &hdr) == 0) {
        if (hdr.kind != WEIR__BATCH_DATA) {
            zmq_msg_close (&msg);
            if ((ended = s_marker (h, &hdr, &eos, &barriers, s_writer_barrier)) < 0)
                break;
            continue;
        }
        const char *data = zmq_msg_data (&msg);
        int rc = stage->writer->write (stage->writer_state, h->index, data + WEIR__BATCH_HEADER,
                                       zmq_msg_size (&msg) - WEIR__BATCH_HEADER, hdr.count, &err);
        zmq_msg_close (&msg);
        if (rc) {
            weir__pipe_fail (pipe, &err);
            break;
        }
        atomic_fetch_add_explicit (&stage->records_out, hdr.count, memory_order_relaxed);
    }
    s_thread_done (h);
    return NULL;
}

static int s_handles_new (weir__stage *stage, weir__err *err)
{
    stage->handles = calloc (stage->threads, sizeof *stage->handles);
    if (!stage->handles)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    for (unsigned t = 0; t < stage->threads; t++) {
        weir_stage *h = &stage->handles[t];
        h->stage = stage;
        h->index = t;
        h->sink.limit = stage->batch;
        h->sink.flush = s_reader_flush;
        //  Room for a batch of small records; grows for larger ones
        if (weir__batch_init (&h->sink.batch, WEIR__BATCH_HEADER + (size_t) stage->batch * 16))
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        if (weir__records_init (&h->decoder))
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        h->decoder_ready = 1;
    }
    return 0;
}

static void s_handles_destroy (weir__stage *stage)
{
    for (unsigned t = 0; stage->handles && t < stage->threads; t++) {
        weir__batch_release (&stage->handles[t].sink.batch);
        if (stage->handles[t].decoder_ready)
            weir__records_release (&stage->handles[t].decoder);
        stage->handles[t].decoder_ready = 0;
    }
}

//  A processor's open or init returned -1: its weir_fail message if it
//  gave one (the job's first error), else a generic one.
static int s_callback_error (weir__stage *stage, const char *callback, weir__err *err)
{
    if (atomic_load (&stage->pipe->failed))
        *err = stage->pipe->err;
    else
        weir__err_set (err, WEIR_EPROCESSOR, "%s: %s returned an error without a message", stage->name,
                       callback);
    return err->code;
}

static int s_open_stage (weir__stage *stage, weir__err *err)
{
    if (stage->reader) {
        int rc = stage->reader->open (&stage->props, &stage->reader_state, &stage->shards, err);
        return rc ? rc : weir__epoch_resume_stage (stage, err);
    }
    if (stage->writer) {
        const char *resume = weir__epoch_writer_resume (stage, err);
        if (resume == (const char *) -1)
            return err->code;
        return stage->writer->open (&stage->props, stage->threads, resume, &stage->writer_state, err);
    }
    const weir_processor *proc = stage->proc;
    weir_stage *h = &stage->handles[0];
    if (proc->open && proc->open (h, &stage->proc_state))
        return s_callback_error (stage, "open", err);
    stage->proc_opened = 1;
    stage->proc_opened_once = 1;
    //  init sets up what a checkpoint restores: only on a fresh start
    if (stage->pipe->fresh && proc->init && proc->init (h, stage->proc_state))
        return s_callback_error (stage, "init", err);
    return 0;
}

//  Close what s_open_stage opened.  The writer's close flushes: its
//  failure is the job's failure.
static void s_close_stage (weir__stage *stage)
{
    weir__err err;
    weir__err_init (&err);
    if (stage->reader && stage->reader_state) {
        stage->reader->close (stage->reader_state);
        stage->reader_state = NULL;
    }
    else if (stage->writer && stage->writer_state) {
        if (stage->writer->close (stage->writer_state, &err))
            weir__pipe_fail (stage->pipe, &err);
        stage->writer_state = NULL;
    }
    else if (stage->proc && stage->proc_opened) {
        if (stage->proc->close)
            stage->proc->close (&stage->handles[0], stage->proc_state);
        stage->proc_opened = 0;
    }
}

//  A property that no callback of a processor ever read is most likely a
//  typo: say so (builtin readers and writers refuse unknown ones at once).
static void s_warn_unread (weir_pipe *pipe)
{
    for (size_t i = 0; i < pipe->count; i++) {
        weir__stage *stage = pipe->stages[i];
        //  On resume init does not run, and what only init reads would look
        //  unread
        if (stage->kind != WEIR_ELEMENT_PROCESSOR || stage->passthrough || !stage->proc_opened_once
            || !pipe->fresh)
            continue;
        for (size_t k = 0; k < stage->props.count; k++) {
            weir__prop *p = &stage->props.items[k];
            int common = 0;
            for (const weir_property_info *c = weir__common_props; c->name; c++)
                common |= strcmp (c->name, p->key) == 0;
            if (common || atomic_load (&p->used))
                continue;
            char **list = realloc (pipe->warnings, (pipe->warning_count + 1) * sizeof *list);
            if (!list)
                return;
            pipe->warnings = list;
            size_t size = strlen (stage->name) + strlen (p->key) + 96;
            char *text = malloc (size);
            if (!text)
                return;
            snprintf (text, size, "%s: property '%s' was never read by the processor (a typo?)", stage->name,
                      p->key);
            list[pipe->warning_count++] = text;
        }
    }
}

int weir__pipe_run (weir_pipe *pipe)
{
    weir__err err;
    weir__err_init (&err);
    int rc = s_resolve (pipe, &err);
    if (!rc)
        rc = weir__epoch_prepare (pipe, &err);
    if (rc) {
        pipe->err = err;
        weir__epoch_end (pipe);
        return rc;
    }

    //  Build: context, per-thread handles, queues, then the stages' own
    //  state (readers first, so that a missing input is found before a
    //  writer truncates its output).
    size_t sockets = 16;
    for (size_t i = 1; i < pipe->count; i++)
        sockets += (size_t) pipe->stages[i]->threads * (pipe->stages[i - 1]->threads + 1);
    pipe->zmq_ctx = zmq_ctx_new ();
    if (!pipe->zmq_ctx) {
        weir__err_set (&err, WEIR_ESYSTEM, "zmq_ctx_new: %s", zmq_strerror (zmq_errno ()));
        goto failed;
    }
    if (sockets > 1023)
        zmq_ctx_set (pipe->zmq_ctx, ZMQ_MAX_SOCKETS, (int) sockets);
    for (size_t i = 0; i < pipe->count; i++)
        if (s_handles_new (pipe->stages[i], &err))
            goto failed;
    for (size_t i = 1; i < pipe->count; i++) {
        weir__stage *stage = pipe->stages[i];
        stage->in = weir__queue_new (pipe->zmq_ctx, pipe->stages[i - 1]->threads, stage->threads,
                                     stage->capacity, &err);
        if (!stage->in)
            goto failed;
        pipe->stages[i - 1]->out = stage->in;
    }
    for (size_t i = 0; i < pipe->count; i++)
        if (s_open_stage (pipe->stages[i], &err))
            goto failed;
    if (weir__epoch_begin (pipe, &err))
        goto failed;
    atomic_store (&pipe->start_ns, weir__now_ns ());
    if (pipe->finished_before || (pipe->max_epochs && pipe->epoch > pipe->max_epochs)) {
        //  Resumed from the checkpoint of a job that had finished, or past
        //  the epoch limit: done
        if (pipe->finished_before)
            weir__pipe_log (pipe, WEIR_LOG_INFO, "the job finished at epoch %" PRIu64 ": nothing left to do",
                            atomic_load (&pipe->done_epoch));
        else
            weir__pipe_log (pipe, WEIR_LOG_INFO, "epoch %" PRIu64 " is done and --epochs %" PRIu64 " stops there",
                            atomic_load (&pipe->done_epoch), pipe->max_epochs);
        atomic_store (&pipe->end_ns, weir__now_ns ());
        goto teardown;
    }

    //  Start
    pipe->total_threads = 0;
    for (size_t i = 0; i < pipe->count; i++)
        pipe->total_threads += pipe->stages[i]->threads;
    for (size_t i = 0; i < pipe->count; i++) {
        weir__stage *stage = pipe->stages[i];
        void *(*body) (void *) = stage->kind == WEIR_ELEMENT_READER   ? s_reader_main
                                 : stage->kind == WEIR_ELEMENT_WRITER ? s_writer_main
                                                                      : s_processor_main;
        for (unsigned t = 0; t < stage->threads; t++) {
            weir_stage *h = &stage->handles[t];
            atomic_store (&h->start_ns, weir__now_ns ());
            if (pthread_create (&h->thread, NULL, body, h)) {
                //  The threads already started wait at the first barrier;
                //  the failure wakes them
                atomic_store (&h->end_ns, atomic_load (&h->start_ns));
                weir__err_set (&err, WEIR_ESYSTEM, "cannot start thread %u of '%s'", t, stage->name);
                weir__pipe_fail (pipe, &err);
                goto started;
            }
            h->started = 1;
        }
    }
started:
    weir__epoch_control (pipe);
    for (size_t i = 0; i < pipe->count; i++)
        for (unsigned t = 0; t < pipe->stages[i]->threads; t++)
            if (pipe->stages[i]->handles[t].started)
                pthread_join (pipe->stages[i]->handles[t].thread, NULL);
    atomic_store (&pipe->end_ns, weir__now_ns ());
    goto teardown;

failed:
    weir__pipe_fail (pipe, &err);
teardown:
    for (size_t i = 0; i < pipe->count; i++)
        s_close_stage (pipe->stages[i]);
    for (size_t i = 0; i < pipe->count; i++) {
        weir__stage *stage = pipe->stages[i];
        s_handles_destroy (stage);
        weir__queue_destroy (&stage->in);
        stage->out = NULL;
    }
    if (pipe->zmq_ctx) {
        zmq_ctx_term (pipe->zmq_ctx);
        pipe->zmq_ctx = NULL;
    }
    weir__epoch_end (pipe);
    s_warn_unread (pipe);
    if (pipe->progress)
        pipe->progress (pipe, pipe->progress_arg, 1);
    return pipe->err.code;
}

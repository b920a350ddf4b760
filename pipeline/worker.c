/*  pipeline/worker.c - the loops of reader, processor and writer threads.  */
#include "config.h"
#include "pipeline/worker.h"

#include <inttypes.h>
#include <stdint.h>

#include "lib/clock.h"
#include "lib/killpoint.h"
#include "pipeline/controller.h"
#include "pipeline/path.h"

void weir__worker_callback_failed (weir__worker *w, const char *callback)
{
    weir__stage *stage = w->stage;
    weir__err err;
    weir__err_set (&err, WEIR_EPROCESSOR, "%s: %s returned an error without a message (epoch %" PRIu64 ")",
                   stage->name, callback, weir__controller_epoch (stage->controller));
    weir__job_fail (stage->job, &err);
}

//  The next shard with something left to read, or SIZE_MAX.
static size_t s_take_shard (weir__stage *stage)
{
    for (;;) {
        size_t i = atomic_fetch_add (&stage->next_shard, 1);
        if (i >= stage->shards.count)
            return SIZE_MAX;
        //  Another rank's shard
        if (stage->ranks > 1 && i % stage->ranks != stage->rank)
            continue;
        if (stage->offsets[i] < stage->shards.items[i].end)
            return i;
    }
}

static void s_reader (weir__worker *w)
{
    weir__stage *stage = w->stage;
    weir__budget *budget = weir__controller_budget (stage->controller);
    weir__err err;
    weir__err_init (&err);
    size_t current = SIZE_MAX;  //  the shard in hand, kept across epochs
    for (;;) {
        int exhausted = 0, rc = 0;
        w->sink.quota = weir__budget_claim (budget, stage->batch);
        while (w->sink.quota > 0) {
            if (current == SIZE_MAX && (current = s_take_shard (stage)) != SIZE_MAX) {
                w->offset = &stage->offsets[current];
                w->seen = stage->offsets[current];
            }
            if (current == SIZE_MAX) {
                //  No more input: give the rest of the claim to the others
                exhausted = 1;
                weir__budget_unclaim (budget, w->sink.quota);
                w->sink.quota = 0;
                break;
            }
            rc = stage->reader->read (stage->reader_state, &stage->shards.items[current],
                                      &stage->offsets[current], &w->sink, &err);
            weir__stage_input_count (w);
            if (rc)
                break;
            current = SIZE_MAX;
            w->offset = NULL;
        }
        if (rc < 0)
            weir__job_fail (stage->job, &err);
        if (rc < 0 || rc == WEIR__SINK_ABORT)
            break;
        //  The epoch is over for this thread: its data, then the barrier,
        //  which says whether this reader ran out of input
        if (weir__path_send (w) || weir__path_marker (w, WEIR__BATCH_BARRIER, (uint32_t) exhausted))
            break;
        int new_pass = 0;
        WEIR_KILL_POINT ("readers-stopped");
        int release = weir__controller_arrive (stage->controller, exhausted, &new_pass);
        if (new_pass) {
            //  The offsets went back to the start of each shard
            current = SIZE_MAX;
            w->offset = NULL;
        }
        if (release == WEIR__GO)
            continue;
        if (release == WEIR__STOP)
            weir__path_marker (w, WEIR__BATCH_EOS, 0);
        break;
    }
}

//  New followed files become shards, starting from their beginning.
//  Between epochs: the snapshot has read the offsets, and nothing else
//  holds a pointer into them.
static int s_follow_discover (weir__stage *stage, weir__err *err)
{
    size_t had = stage->shards.count;
    int rc = stage->reader->discover (stage->reader_state, &stage->shards, err);
    if (rc || stage->shards.count == had)
        return rc;
    uint64_t *offsets = realloc (stage->offsets, stage->shards.count * sizeof *offsets);
    if (!offsets)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    for (size_t i = had; i < stage->shards.count; i++)
        offsets[i] = stage->shards.items[i].start;
    stage->offsets = offsets;
    return 0;
}

//  A reader that follows its files (follow=1), with one thread: read each
//  file to its end for now in turn, and when none has more, wait for the
//  folder to change.  Its input never runs out: epochs end by time or
//  record count, and the job ends with a stop.
static void s_follower (weir__worker *w)
{
    weir__stage *stage = w->stage;
    weir__budget *budget = weir__controller_budget (stage->controller);
    weir__err err;
    weir__err_init (&err);
    size_t next = 0;  //  the file read first, in turn
    for (;;) {
        int rc = s_follow_discover (stage, &err);
        w->sink.quota = rc ? 0 : weir__budget_claim (budget, stage->batch);
        while (!rc && w->sink.quota > 0) {
            size_t n = stage->shards.count, dry = 0;
            for (size_t k = 0; k < n && !rc; k++) {
                size_t i = (next + k) % n;
                w->offset = &stage->offsets[i];
                w->seen = stage->offsets[i];
                rc = stage->reader->read (stage->reader_state, &stage->shards.items[i], &stage->offsets[i],
                                          &w->sink, &err);
                weir__stage_input_count (w);
                if (rc == WEIR__READ_DRY || rc == 0) {
                    dry++;
                    rc = 0;
                }
                else
                    next = i;  //  paused in this one: it goes first next time
            }
            w->offset = NULL;
            if (!rc && dry == n)
                rc = stage->reader->wait (stage->reader_state, &w->sink);
        }
        if (rc < 0)
            weir__job_fail (stage->job, &err);
        if (rc < 0 || rc == WEIR__SINK_ABORT)
            break;
        if (weir__path_send (w) || weir__path_marker (w, WEIR__BATCH_BARRIER, 0))
            break;
        int release = weir__controller_arrive (stage->controller, 0, NULL);
        if (release == WEIR__GO)
            continue;
        if (release == WEIR__STOP)
            weir__path_marker (w, WEIR__BATCH_EOS, 0);
        break;
    }
}

static int s_processor_epoch_end (weir__worker *w)
{
    const weir_processor *proc = w->stage->proc;
    if (proc->epoch_end && proc->epoch_end (w, w->tstate, weir__controller_epoch (w->stage->controller))) {
        weir__worker_callback_failed (w, "epoch_end");
        return -1;
    }
    return 0;
}

static void s_processor (weir__worker *w)
{
    weir__stage *stage = w->stage;
    const weir_processor *proc = stage->proc;
    w->tstate = stage->proc_state;
    if (proc->thread_open && proc->thread_open (w, stage->proc_state, &w->tstate)) {
        weir__worker_callback_failed (w, "thread_open");
        return;
    }
    weir__batch_header hdr;
    const char *payload;
    size_t len;
    int ended = 0;
    while (!ended && weir__path_recv (w, &hdr, &payload, &len) == 0) {
        if (hdr.kind != WEIR__BATCH_DATA) {
            if ((ended = weir__path_marker_in (w, &hdr, s_processor_epoch_end)) < 0)
                break;
            continue;
        }
        if (stage->passthrough) {
            //  Untouched batches go on as they are: no decoding, no copy
            if (weir__path_forward (w, hdr.count))
                break;
            continue;
        }
        weir__records_reset (&w->decoder, payload, len);
        msgpack_object obj;
        int more;
        //  A failed (or aborted) job leaves the batch at once: behind a slow
        //  callback, the rest of it could take long
        while ((more = weir__records_next (&w->decoder, &obj)) == 1) {
            int rc = proc->process (w, w->tstate, &obj);
            if (rc == WEIR_REJECTED && w->rejecting) {
                w->rejecting = 0;
                rc = weir__path_reject (w, &obj, w->reject_reason);
            }
            if (rc) {
                weir__worker_callback_failed (w, "process");
                break;
            }
            if (weir__job_failed (stage->job)) {
                more = 0;
                break;
            }
        }
        if (more < 0) {
            weir__err err;
            if (more == WEIR__RECORDS_NOMEM)
                weir__err_set (&err, WEIR_ENOMEM,
                               "%s: out of memory decoding a record of a batch of %zu bytes", stage->name,
                               len);
            else
                weir__err_set (&err, WEIR_ESYSTEM, "%s: malformed record in a batch", stage->name);
            weir__job_fail (stage->job, &err);
        }
        if (more != 0)
            break;
    }
    if (ended == 1 && weir__path_send (w) == 0)
        weir__path_marker (w, WEIR__BATCH_EOS, 0);
    if (proc->thread_close)
        proc->thread_close (w, w->tstate);
}

//  Everything of the epoch reaches the output before the controller
//  commits it.
static int s_writer_epoch_end (weir__worker *w)
{
    weir__stage *stage = w->stage;
    weir__err err;
    weir__err_init (&err);
    if (stage->writer->flush (stage->writer_state, w->index, &err)) {
        weir__job_fail (stage->job, &err);
        return -1;
    }
    return 0;
}

static void s_writer (weir__worker *w)
{
    weir__stage *stage = w->stage;
    weir__batch_header hdr;
    const char *payload;
    size_t len;
    weir__err err;
    weir__err_init (&err);
    int ended = 0;
    while (!ended && weir__path_recv (w, &hdr, &payload, &len) == 0) {
        if (hdr.kind != WEIR__BATCH_DATA) {
            if ((ended = weir__path_marker_in (w, &hdr, s_writer_epoch_end)) < 0)
                break;
            continue;
        }
        if (stage->writer->write (stage->writer_state, w->index, payload, len, hdr.count, &err)) {
            weir__job_fail (stage->job, &err);
            break;
        }
        atomic_fetch_add_explicit (&stage->records_out, hdr.count, memory_order_relaxed);
    }
}

void *weir__worker_main (void *arg)
{
    weir__worker *w = arg;
    switch (w->stage->kind) {
    case WEIR_ELEMENT_READER:
        if (w->stage->shards.follow)
            s_follower (w);
        else
            s_reader (w);
        break;
    case WEIR_ELEMENT_PROCESSOR: s_processor (w); break;
    case WEIR_ELEMENT_WRITER: s_writer (w); break;
    }
    atomic_store (&w->end_ns, weir__now_ns ());
    return NULL;
}

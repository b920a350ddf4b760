/*  pipeline/worker.c - the loops of reader, processor and writer threads.  */
#include "config.h"
#include "pipeline/worker.h"

#include <inttypes.h>
#include <stdint.h>

#include "lib/clock.h"
#include "lib/killpoint.h"
#include "pipeline/apply.h"
#include "pipeline/fuse.h"
#include "pipeline/controller.h"
#include "pipeline/origin.h"
#include "pipeline/path.h"

//  Take SHARD into the worker's hand, or none (SIZE_MAX).
static void s_hold (weir__worker *w, size_t shard)
{
    w->shard = shard;
    if (shard != SIZE_MAX)
        w->seen = weir__input_offset (w->stage->input, shard);
}

static void s_reader (weir__worker *w)
{
    weir__stage *stage = w->stage;
    weir__input *input = stage->input;
    weir__budget *budget = weir__controller_budget (stage->run->controller);
    weir__err err;
    weir__err_init (&err);
    if (weir__fuse_open (w))
        return;
    //  The shard in hand (w->shard) is kept across epochs
    for (;;) {
        int exhausted = 0, rc = 0;
        w->sink.quota = weir__budget_claim (budget, stage->batch);
        //  No share of this epoch's records, and no shard in hand: whether
        //  the input has any left is still the barrier's to say, or a
        //  processor would hear of its end only in the epochs this thread
        //  got a share of
        if (w->sink.quota == 0 && w->shard == SIZE_MAX) {
            s_hold (w, weir__input_take (input));
            exhausted = w->shard == SIZE_MAX;
        }
        while (w->sink.quota > 0) {
            if (w->shard == SIZE_MAX)
                s_hold (w, weir__input_take (input));
            if (w->shard == SIZE_MAX) {
                //  No more input: give the rest of the claim to the others
                exhausted = 1;
                weir__budget_unclaim (budget, w->sink.quota);
                w->sink.quota = 0;
                break;
            }
            weir__origin_mark (w);
            rc = weir__input_read (input, w->shard, &w->sink, &err);
            weir__stage_input_count (w);
            if (rc)
                break;
            s_hold (w, SIZE_MAX);
        }
        if (rc < 0)
            weir__job_fail (stage->run->job, &err);
        if (rc < 0 || rc == WEIR__SINK_ABORT)
            break;
        //  The epoch is over for this thread: its data, then the barrier,
        //  which says whether this reader ran out of input
        if (weir__fuse_send (w) || weir__fuse_marker (w, WEIR__BATCH_BARRIER, (uint32_t) exhausted))
            break;
        int new_pass = 0;
        WEIR_KILL_POINT ("readers-stopped");
        int release = weir__controller_arrive (stage->run->controller, exhausted, &new_pass);
        //  The offsets went back to the start of each shard
        if (new_pass)
            s_hold (w, SIZE_MAX);
        if (release == WEIR__GO)
            continue;
        if (release == WEIR__STOP)
            weir__fuse_marker (w, WEIR__BATCH_EOS, 0);
        break;
    }
    weir__fuse_close (w);
}

//  One look at every followed file, each read to its end for now in turn,
//  from *NEXT (the file a read paused in goes first next time); when none
//  has more, a wait for the folder to change.
static int s_follow_round (weir__worker *w, size_t *next, weir__err *err)
{
    weir__input *input = w->stage->input;
    size_t n = weir__input_count_shards (input), dry = 0;
    int rc = 0;
    for (size_t k = 0; k < n && !rc; k++) {
        size_t i = (*next + k) % n;
        s_hold (w, i);
        rc = weir__input_read (input, i, &w->sink, err);
        weir__stage_input_count (w);
        if (rc == WEIR__READ_DRY || rc == 0) {
            dry++;
            rc = 0;
        }
        else
            *next = i;
    }
    s_hold (w, SIZE_MAX);
    if (!rc && dry == n)
        rc = weir__input_wait (input, &w->sink);
    return rc;
}

//  A reader that follows its files (follow=1), with one thread.  Its
//  input never runs out: epochs end by time or record count, and the job
//  ends with a stop.  New files become shards at the end of an epoch,
//  before its barrier (this thread alone holds the shards): the epoch's
//  checkpoint knows each at offset 0 with its identity before a line of
//  it is read, so that a kill in the next epoch and a rotation before the
//  resume still lead to it.
static void s_follower (weir__worker *w)
{
    weir__stage *stage = w->stage;
    weir__budget *budget = weir__controller_budget (stage->run->controller);
    weir__err err;
    weir__err_init (&err);
    size_t next = 0;
    if (weir__fuse_open (w))
        return;
    for (;;) {
        int rc = 0;
        w->sink.quota = weir__budget_claim (budget, stage->batch);
        while (!rc && w->sink.quota > 0)
            rc = s_follow_round (w, &next, &err);
        if (rc >= 0 && rc != WEIR__SINK_ABORT)
            rc = weir__input_discover (stage->input, &err);
        if (rc < 0)
            weir__job_fail (stage->run->job, &err);
        if (rc < 0 || rc == WEIR__SINK_ABORT)
            break;
        if (weir__fuse_send (w) || weir__fuse_marker (w, WEIR__BATCH_BARRIER, 0))
            break;
        int release = weir__controller_arrive (stage->run->controller, 0, NULL);
        if (release == WEIR__GO)
            continue;
        if (release == WEIR__STOP)
            weir__fuse_marker (w, WEIR__BATCH_EOS, 0);
        break;
    }
    weir__fuse_close (w);
}

//  A batch of partial aggregates, folded by the producers of a stage
//  that aggregates by key (lib/shuffle.h), into the thread's state,
//  counted as the records they stand for.  0, or -1 when the job failed.
static int s_merge (weir__worker *w, const weir__batch_header *hdr, const char *payload, size_t len)
{
    weir__stage *stage = w->stage;
    uint64_t records = 0;
    if (stage->combine->merge (w, w->tstate, payload, len, hdr->count, &records))
        return -1;
    atomic_fetch_add_explicit (&stage->counts.in, records, memory_order_relaxed);
    atomic_fetch_add_explicit (&stage->counts.batches, 1, memory_order_relaxed);
    return weir__job_failed (stage->run->job) ? -1 : 0;
}

static void s_processor (weir__worker *w)
{
    weir__stage *stage = w->stage;
    int passthrough = weir__callbacks_passthrough (stage->callbacks);
    if (weir__apply_open (w))
        return;
    weir__batch_header hdr;
    const char *payload;
    size_t len;
    int ended = 0;
    while (!ended && weir__path_recv (w, &hdr, &payload, &len) == 0) {
        if (hdr.kind == WEIR__BATCH_COMBINED) {
            if (s_merge (w, &hdr, payload, len))
                break;
            continue;
        }
        if (hdr.kind != WEIR__BATCH_DATA) {
            if ((ended = weir__path_marker_in (w, &hdr, weir__apply_epoch_end)) < 0)
                break;
            continue;
        }
        //  Untouched batches go on as they are: no decoding, no copy
        if (passthrough ? weir__path_forward (w, payload, len, hdr.count)
                        : weir__apply_batch (w, &hdr, payload, len))
            break;
    }
    if (ended == 1)
        weir__path_end (w);
    weir__apply_close (w);
}

//  Everything of the epoch reaches the output before the controller
//  commits it.
static int s_writer_epoch_end (weir__worker *w)
{
    weir__stage *stage = w->stage;
    weir__err err;
    weir__err_init (&err);
    if (weir__output_flush (stage->output, w->index, &err)) {
        weir__job_fail (stage->run->job, &err);
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
        if (weir__output_write (stage->output, w->index, payload, len, hdr.count, &err)) {
            weir__job_fail (stage->run->job, &err);
            break;
        }
        atomic_fetch_add_explicit (&stage->counts.out, hdr.count, memory_order_relaxed);
    }
}

void *weir__worker_main (void *arg)
{
    weir__worker *w = arg;
    switch (w->stage->kind) {
    case WEIR_ELEMENT_READER:
        if (weir__input_follows (w->stage->input))
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

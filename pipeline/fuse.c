/*  pipeline/fuse.c - a processor that runs in the threads of the reader
    feeding it.  */
#include "config.h"
#include "pipeline/fuse.h"

#include "lib/clock.h"
#include "pipeline/apply.h"
#include "pipeline/controller.h"
#include "pipeline/origin.h"
#include "pipeline/path.h"

//  Time P took in its reader's thread, since START: the processor's, not
//  the reader's (whose busy time is its own)
static void s_took (weir__worker *r, weir__worker *p, uint64_t start)
{
    uint64_t took = weir__now_ns () - start;
    atomic_fetch_add_explicit (&r->wait_ns, took, memory_order_relaxed);
    atomic_fetch_add_explicit (&p->fused_ns, took, memory_order_relaxed);
}

//  P's partial batch on once it held a record linger= ms (NOW): as its own
//  thread's receive would, waiting for more.  0 or WEIR__SINK_ABORT
static int s_linger (weir__worker *p, uint64_t now)
{
    uint64_t first = p->sink.first_ns;
    if (!first || now - first < (uint64_t) p->stage->linger_ms * 1000000u)
        return 0;
    return weir__path_send (p);
}

int weir__fuse_open (weir__worker *r)
{
    weir__worker *p = r->fused;
    if (!p)
        return 0;
    uint64_t start = weir__now_ns ();
    atomic_store (&p->start_ns, start);
    int rc = weir__apply_open (p);
    s_took (r, p, start);
    if (rc)
        atomic_store (&p->end_ns, weir__now_ns ());
    return rc;
}

int weir__fuse_send (weir__worker *r)
{
    weir__worker *p = r->fused;
    if (!p)
        return weir__path_send (r);
    weir__batch *b = &r->sink.batch;
    if (b->count == 0)
        return 0;
    uint32_t count = b->count;
    weir__stage *from = r->stage, *to = p->stage;
    uint64_t start = weir__now_ns ();
    atomic_fetch_add_explicit (&to->counts.in, count, memory_order_relaxed);
    atomic_fetch_add_explicit (&to->counts.batches, 1, memory_order_relaxed);
    //  The records are read where the reader put them, then the buffer is
    //  the reader's again: a processor keeps nothing of a record past its
    //  process call
    weir__batch_header origin;
    weir__batch_header_of (b, &origin);
    int rc = weir__apply_batch (p, &origin, b->data + WEIR__BATCH_HEADER, weir__batch_payload (b));
    weir__batch_clear (b);
    r->sink.first_ns = 0;
    atomic_fetch_add_explicit (&from->counts.out, count, memory_order_relaxed);
    atomic_fetch_add_explicit (&from->outs[0].records, count, memory_order_relaxed);
    if (!rc)
        rc = s_linger (p, weir__now_ns ());
    s_took (r, p, start);
    return rc || weir__job_failed (from->run->job) ? WEIR__SINK_ABORT : 0;
}

int weir__fuse_marker (weir__worker *r, uint32_t kind, uint32_t flag)
{
    weir__worker *p = r->fused;
    if (!p)
        return weir__path_marker (r, kind, flag);
    //  The end of the input is every reader thread's, as the barriers
    //  of all of them would tell a processor with a thread of its own
    if (kind == WEIR__BATCH_BARRIER) {
        int all = weir__controller_meet (r->stage->run->controller, r->stage->index, flag != 0);
        //  A failed job ends no epoch, as a processor's receive would
        //  have heard
        if (all < 0 || weir__job_failed (r->stage->run->job))
            return -1;
        flag = (uint32_t) all;
    }
    uint64_t start = weir__now_ns ();
    weir__batch_header hdr = {.kind = kind, .count = flag};
    int ended = weir__path_marker_in (p, &hdr, weir__apply_epoch_end);
    //  Its stream ends with its reader's
    if (ended == 1 && weir__path_end (p))
        ended = -1;
    s_took (r, p, start);
    return ended < 0 ? -1 : 0;
}

void weir__fuse_close (weir__worker *r)
{
    weir__worker *p = r->fused;
    if (!p)
        return;
    uint64_t start = weir__now_ns ();
    weir__apply_close (p);
    s_took (r, p, start);
    atomic_store (&p->end_ns, weir__now_ns ());
}

int weir__fuse_sink_send (weir__sink *sink)
{
    //  A full batch through the processor first: the path's send then
    //  finds it empty, and claims more of the epoch's budget as it does
    if (sink->batch.count >= sink->limit && weir__fuse_send (weir__sink_worker (sink)))
        return WEIR__SINK_ABORT;
    return weir__path_sink_send (sink);
}

int weir__fuse_sink_idle (weir__sink *sink)
{
    weir__worker *r = weir__sink_worker (sink);
    int rc = weir__path_idle (r);
    if (rc)
        return rc;
    //  As the path's idle: the reader's records since linger= ms through
    //  the processor, whose own then go on too: the input is idle, and
    //  more would only wait; else its own after its linger=
    uint64_t now = weir__now_ns ();
    if (!weir__path_lingered (sink, now))
        return s_linger (r->fused, now);
    rc = weir__fuse_send (r);
    weir__origin_mark (r);
    return rc ? rc : weir__path_send (r->fused);
}

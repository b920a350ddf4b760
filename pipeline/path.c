/*  pipeline/path.c - batches and markers between workers.  */
#include "config.h"
#include "pipeline/path.h"

#include <stddef.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/clock.h"
#include "lib/exchange.h"
#include "lib/killpoint.h"
#include "lib/shuffle.h"
#include "pipeline/controller.h"
#include "pipeline/origin.h"

static void s_wait (weir__worker *w, uint64_t wait)
{
    if (wait)
        atomic_fetch_add_explicit (&w->wait_ns, wait, memory_order_relaxed);
}

//  The batch of port PORT of W's stage (port 0's is the sink's)
static weir__batch *s_batch (weir__worker *w, unsigned port)
{
    return port ? &w->port_batches[port - 1] : &w->sink.batch;
}

//  Whether W holds records not yet sent, in any port's batch
static int s_held (weir__worker *w)
{
    size_t ports = w->stage->nports ? w->stage->nports : 1;
    for (unsigned p = 0; p < ports; p++)
        if (s_batch (w, p)->count)
            return 1;
    return 0;
}

//  COUNT records went down W's link E: and, when E leads into a tee W's
//  stage hosts, through that tee and down each of its links
static void s_crossed (weir__worker *w, weir__edge *e, uint32_t count)
{
    atomic_fetch_add_explicit (&e->records, count, memory_order_relaxed);
    weir__stage *tee = e->to;
    if (tee->host != w->stage)
        return;
    atomic_fetch_add_explicit (&tee->counts.in, count, memory_order_relaxed);
    atomic_fetch_add_explicit (&tee->counts.batches, 1, memory_order_relaxed);
    atomic_fetch_add_explicit (&tee->counts.out, count, memory_order_relaxed);
    for (size_t i = 0; i < tee->nouts; i++)
        atomic_fetch_add_explicit (&tee->outs[i].records, count, memory_order_relaxed);
}

//  A record whose key is too long, for the producer W's bad-record policy
static int s_reject_key (void *ctx, const msgpack_object *rec, const char *reason)
{
    //  An emitted record: its place is not the input record's
    return weir__path_reject (ctx, rec, reason, 0) ? WEIR__SINK_ABORT : 0;
}

//  Where W's parts go down its keyed link E: the stage's threads of
//  this rank, and of every rank on a link across ranks
static weir__shuffle_to s_to (const weir__worker *w, const weir__edge *e)
{
    return (weir__shuffle_to){e->queue, e->base + w->index,  e->exchange,
                              e->xlink, w->stage->run->rank, e->ranks};
}

//  The LEN bytes of records at PAYLOAD down W's link E into a keyed
//  stage: split by key, each part to the thread that owns it.  *SENT is
//  how many went.  0 or what weir__shuffle_send returns.
static int s_shuffle (weir__worker *w, weir__edge *e, const char *payload, size_t len, uint32_t *sent,
                      uint64_t *wait)
{
    weir__stage *stage = w->stage;
    size_t i = (size_t) (e - stage->outs);
    if (!w->shuffles && !(w->shuffles = calloc (stage->nouts, sizeof *w->shuffles)))
        return WEIR_ENOMEM;
    if (!w->shuffles[i] && !(w->shuffles[i] = weir__shuffle_new ()))
        return WEIR_ENOMEM;
    const weir__combiner *combiner = e->to->combine ? &e->to->combine->combiner : NULL;
    weir__shuffle_to to = s_to (w, e);
    return weir__shuffle_send (w->shuffles[i], e->to->key, stage->run->key_groups, combiner, &to, payload,
                               len, s_reject_key, w, sent, wait);
}

//  The records W folded as it emitted them, into its stage's and its
//  first link's counts
static void s_count_folded (weir__worker *w)
{
    if (!w->folded)
        return;
    atomic_fetch_add_explicit (&w->stage->counts.out, w->folded, memory_order_relaxed);
    s_crossed (w, &w->stage->outs[0], w->folded);
    w->folded = 0;
}

//  The partial aggregates W's combiners hold, down their links: before a
//  marker, which must come behind them.  0 or what the queue returned.
static int s_flush_combiners (weir__worker *w, uint64_t *wait)
{
    weir__stage *stage = w->stage;
    int rc = 0;
    for (size_t i = 0; w->shuffles && i < stage->nouts && !rc; i++) {
        weir__edge *e = &stage->outs[i];
        weir__shuffle_to to = s_to (w, e);
        if (w->shuffles[i] && e->to->combine)
            rc = weir__shuffle_flush (w->shuffles[i], &e->to->combine->combiner, &to, wait);
    }
    return rc;
}

//  A send failed with RC: out of memory or a malformed batch fail the job
//  (a rejected record or a closed queue have said why already)
static void s_send_failed (weir__worker *w, int rc)
{
    weir__err err;
    if (rc == WEIR_ENOMEM)
        weir__err_set (&err, WEIR_ENOMEM, "%s: out of memory", w->stage->name);
    else if (rc == WEIR_ECORRUPT)
        weir__err_set (&err, WEIR_ECORRUPT, "%s: a malformed record in a batch it sends", w->stage->name);
    else
        return;
    weir__job_fail (w->stage->run->job, &err);
}

//  Whether W's port 0 leads to a stage whose combiner folds records
//  keyed by their whole selves
static int s_folds_port0 (const weir__worker *w)
{
    const weir__stage *stage = w->stage;
    if (!stage->nouts)
        return 0;
    const weir__stage *to = stage->outs[0].to;
    return to->key && to->combine && weir__key_whole (to->key) && to->host != stage;
}

//  W's port 0 ready to fold what it emits, or known not to: 0 or -1
//  when the job failed
static int s_fold_ready (weir__worker *w)
{
    weir__stage *stage = w->stage;
    if (!s_folds_port0 (w)) {
        w->fold_port0 = -1;
        return 0;
    }
    weir__edge *e = &stage->outs[0];
    w->fold_to = s_to (w, e);
    w->fold_combiner = &e->to->combine->combiner;
    int rc = WEIR_ENOMEM;
    if ((w->shuffles || (w->shuffles = calloc (stage->nouts, sizeof *w->shuffles)))
        && (w->shuffles[0] || (w->shuffles[0] = weir__shuffle_new ())))
        rc = weir__shuffle_ready (w->shuffles[0], stage->run->key_groups, w->fold_combiner, &w->fold_to);
    if (rc) {
        s_send_failed (w, rc);
        return -1;
    }
    w->fold_port0 = 1;
    return 0;
}

int weir__path_fold_first (weir__worker *w, const char *p, size_t n)
{
    if (s_fold_ready (w))
        return -1;
    return weir__path_fold (w, p, n);
}

int weir__path_folded (weir__worker *w, int rc, uint64_t wait)
{
    s_wait (w, wait);
    //  Counted in batches' worth, so that the progress line moves
    if (rc == 1 && ++w->folded >= w->sink.limit)
        s_count_folded (w);
    if (rc < 0) {
        s_send_failed (w, rc);
        return -1;
    }
    return rc;
}

int weir__path_send_port (weir__worker *w, unsigned port)
{
    weir__stage *stage = w->stage;
    weir__batch *b = s_batch (w, port);
    if (port == 0)
        s_count_folded (w);
    if (b->count == 0)
        return 0;
    uint32_t count = b->count;
    uint64_t wait = 0;
    //  A stage that packs its own batches feeds one stage per output
    //  (pipeline/graph.h): its links are in port order; only forwarding
    //  fans out, and a tee the stage hosts, down each of the tee's links
    weir__edge *e = &stage->outs[port];
    int rc;
    if (e->to->key) {
        rc = s_shuffle (w, e, b->data + WEIR__BATCH_HEADER, weir__batch_payload (b), &count, &wait);
        weir__batch_clear (b);
    }
    else
        rc = e->to->host == stage ? weir__queue_send_batch_all (w->targets, w->ntargets, b, &wait)
                                  : weir__queue_send_batch (e->queue, e->base + w->index, b, &wait);
    s_wait (w, wait);
    if (rc) {
        s_send_failed (w, rc);
        return WEIR__SINK_ABORT;
    }
    //  linger= counts from the oldest record still held
    if (!s_held (w))
        w->sink.first_ns = 0;
    atomic_fetch_add_explicit (&stage->counts.out, count, memory_order_relaxed);
    s_crossed (w, e, count);
    return 0;
}

int weir__path_send (weir__worker *w)
{
    size_t ports = w->stage->nports ? w->stage->nports : 1;
    for (unsigned p = 0; p < ports; p++)
        if (weir__path_send_port (w, p))
            return WEIR__SINK_ABORT;
    return 0;
}

int weir__path_marker (weir__worker *w, uint32_t kind, uint32_t flag)
{
    uint64_t wait = 0;
    int rc = s_flush_combiners (w, &wait);
    for (size_t i = 0; i < w->ntargets && !rc; i++)
        rc = weir__queue_send_marker (w->targets[i].queue, w->targets[i].producer, kind, flag, &wait);
    //  A keyed link across ranks: to the stage's threads of every other
    //  rank too, behind this thread's parts for them
    for (size_t i = 0; i < w->stage->nouts && !rc; i++) {
        const weir__edge *e = &w->stage->outs[i];
        if (e->exchange)
            rc = weir__exchange_send_marker (e->exchange, e->xlink, e->base + w->index, kind, flag, &wait);
    }
    s_wait (w, wait);
    if (rc == WEIR_ENOMEM) {
        weir__err err;
        weir__err_set (&err, WEIR_ENOMEM, "%s: out of memory", w->stage->name);
        weir__job_fail (w->stage->run->job, &err);
    }
    return rc ? -1 : 0;
}

int weir__path_recv (weir__worker *w, weir__batch_header *hdr, const char **payload, size_t *len)
{
    weir__stage *stage = w->stage;
    uint64_t wait = 0;
    int rc;
    if (stage->nouts && s_held (w)) {
        //  A partial batch waits for more records only linger= ms from its
        //  first record: a trickle must not be held back until a batch fills
        uint64_t age = w->sink.first_ns ? weir__now_ns () - w->sink.first_ns : 0;
        uint64_t linger = (uint64_t) stage->linger_ms * 1000000u;
        int left = age < linger ? (int) ((linger - age + 999999u) / 1000000u) : 0;
        rc = weir__queue_recv_within (stage->in, w->index, hdr, payload, len, left, &wait);
        if (rc == WEIR__QUEUE_TIMEOUT) {
            s_wait (w, wait);
            wait = 0;
            if (weir__path_send (w))
                return -1;
            rc = weir__queue_recv (stage->in, w->index, hdr, payload, len, &wait);
        }
    }
    else
        rc = weir__queue_recv (stage->in, w->index, hdr, payload, len, &wait);
    s_wait (w, wait);
    if (rc == WEIR_ESYSTEM) {
        weir__err err;
        weir__err_set (&err, WEIR_ESYSTEM, "%s: short message on the queue", stage->name);
        weir__job_fail (stage->run->job, &err);
    }
    if (rc)
        return -1;
    if (hdr->kind == WEIR__BATCH_DATA) {
        atomic_fetch_add_explicit (&stage->counts.in, hdr->count, memory_order_relaxed);
        atomic_fetch_add_explicit (&stage->counts.batches, 1, memory_order_relaxed);
    }
    return 0;
}

int weir__path_forward (weir__worker *w, const char *payload, size_t len, uint32_t count)
{
    weir__stage *stage = w->stage;
    uint64_t wait = 0;
    int rc = 0;
    //  A stage that forwards does not host a tee whose links are keyed
    //  (pipeline/graph.c), so its targets are its links, in order: those
    //  into keyed stages get the batch split by key, the others the batch
    //  itself, down every one but the first a copy that shares the buffer
    const weir__queue_target *plain = w->targets;
    size_t nplain = w->ntargets;
    weir__queue_target some[16], *many = NULL;
    if (stage->keyed_outs) {
        plain = many = w->ntargets > 16 ? malloc (w->ntargets * sizeof *many) : some;
        if (!plain)
            rc = WEIR_ENOMEM;
        nplain = 0;
        for (size_t i = 0; i < w->ntargets && !rc; i++) {
            weir__edge *e = &stage->outs[i];
            uint32_t sent;
            if (!e->to->key)
                many[nplain++] = w->targets[i];
            else if (!(rc = s_shuffle (w, e, payload, len, &sent, &wait)))
                s_crossed (w, e, sent);
        }
    }
    if (!rc && nplain)
        rc = weir__queue_forward_all (stage->in, w->index, plain, nplain, &wait);
    if (many != some)
        free (many);
    s_wait (w, wait);
    if (rc) {
        s_send_failed (w, rc);
        return -1;
    }
    atomic_fetch_add_explicit (&stage->counts.out, count, memory_order_relaxed);
    for (size_t i = 0; i < stage->nouts; i++)
        if (!stage->outs[i].to->key)
            s_crossed (w, &stage->outs[i], count);
    return 0;
}

int weir__path_end (weir__worker *w)
{
    return weir__path_send (w) || weir__path_marker (w, WEIR__BATCH_EOS, 0) ? -1 : 0;
}

int weir__path_marker_in (weir__worker *w, const weir__batch_header *hdr, weir__epoch_end_fn *end)
{
    weir__stage *stage = w->stage;
    //  A marker may stand for several producers (lib/queue.h); a fused
    //  processor's worker has one, the reader thread it runs in
    unsigned weight = stage->runs_in ? 1 : weir__queue_marker_weight (stage->in);
    unsigned producers = stage->runs_in ? 1 : stage->producers;
    if (hdr->kind == WEIR__BATCH_EOS)
        return (w->eos += weight) == producers;
    if (w->barriers == 0)
        w->inputs_done = 1;
    w->inputs_done &= hdr->count != 0;
    if ((w->barriers += weight) < producers)
        return 0;
    w->barriers = 0;
    //  Only the end of the input finishes a job: --epochs and stops pause it,
    //  and a resume goes on
    w->last_epoch = w->inputs_done && weir__controller_last_pass (stage->run->controller);
    if (end (w))
        return -1;
    if (stage->key)
        WEIR_KILL_POINT ("keyed-epoch-ended");
    if (stage->nouts
        && (weir__path_send (w) || weir__path_marker (w, WEIR__BATCH_BARRIER, (uint32_t) w->inputs_done)))
        return -1;
    //  The reader a fused processor runs in waits for both
    if (stage->runs_in)
        return 0;
    return weir__controller_arrive (stage->run->controller, 0, NULL) == WEIR__ABORT ? -1 : 0;
}

int weir__path_sink_reject (weir__sink *sink, const weir__bad *bad)
{
    weir__worker *w = weir__sink_worker (sink);
    weir__stage *stage = w->stage;
    weir__err err;
    weir__err_init (&err);
    uint64_t epoch = weir__controller_epoch (stage->run->controller);
    //  Its bytes are not in the batch: what follows them is not where
    //  the batch's count would find it
    weir__origin_cut (w);
    if (weir__rejects_input (stage->rejects, stage->run->job, epoch, bad, &err)) {
        weir__job_fail (stage->run->job, &err);
        return WEIR__SINK_ABORT;
    }
    return 0;
}

int weir__path_reject (weir__worker *w, const msgpack_object *record, const char *reason, int placed)
{
    weir__stage *stage = w->stage;
    weir__err err;
    weir__err_init (&err);
    uint64_t epoch = weir__controller_epoch (stage->run->controller);
    //  The place is found only for a message: a dead letter keeps the
    //  record and its reason
    char where[WEIR__ORIGIN_WHERE] = "";
    if (placed && !weir__rejects_skip (stage->rejects))
        weir__origin_where (w, where, sizeof where);
    if (weir__rejects_record (stage->rejects, stage->run->job, epoch, record, reason, where, &err)) {
        weir__job_fail (stage->run->job, &err);
        return -1;
    }
    return 0;
}

void weir__path_sink_warn (weir__sink *sink, const char *message)
{
    weir__worker *w = weir__sink_worker (sink);
    weir__job_log (w->stage->run->job, WEIR_LOG_WARNING, "%s: %s", w->stage->name, message);
}

void weir__path_sink_truncated (weir__sink *sink)
{
    weir__worker *w = weir__sink_worker (sink);
    weir__input_truncated (w->stage->input);
}

void weir__path_sink_seen (weir__sink *sink, uint64_t size)
{
    weir__worker *w = weir__sink_worker (sink);
    if (w->shard != SIZE_MAX)
        weir__input_seen (w->stage->input, w->shard, size);
}

int weir__path_idle (weir__worker *w)
{
    weir__stage *stage = w->stage;
    if (weir__job_failed (stage->run->job))
        return WEIR__SINK_ABORT;
    if (weir__job_stopping (stage->run->job)
        || weir__budget_expired (weir__controller_budget (stage->run->controller), weir__now_ns ()))
        return WEIR__SINK_PAUSE;
    return 0;
}

int weir__path_sink_idle (weir__sink *sink)
{
    weir__worker *w = weir__sink_worker (sink);
    int rc = weir__path_idle (w);
    if (rc)
        return rc;
    //  Records in hand since linger= ms: send them on
    if (weir__path_lingered (sink, weir__now_ns ()) && weir__path_send (w))
        return WEIR__SINK_ABORT;
    weir__origin_mark (w);
    return 0;
}

int weir__path_lingered (weir__sink *sink, uint64_t now)
{
    if (sink->batch.count == 0)
        return 0;
    //  A reader of regular files (a followed log) does not say when it
    //  read them: they are as old as the first wait for more
    if (!sink->first_ns)
        sink->first_ns = now;
    return now - sink->first_ns >= (uint64_t) sink->linger_ms * 1000000u;
}

int weir__path_sink_send (weir__sink *sink)
{
    weir__worker *w = weir__sink_worker (sink);
    weir__stage *stage = w->stage;
    weir__stage_input_count (w);
    if (sink->batch.count >= sink->limit && weir__path_send (w))
        return WEIR__SINK_ABORT;
    weir__origin_mark (w);
    if (weir__job_failed (stage->run->job))
        return WEIR__SINK_ABORT;
    if (sink->quota == 0
        && (sink->quota =
                weir__budget_reclaim (weir__controller_budget (stage->run->controller), stage->batch))
               == 0)
        return WEIR__SINK_PAUSE;
    return 0;
}

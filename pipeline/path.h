/*  pipeline/path.h - a record's way from stage to stage, as a worker sees
    it: sending its outgoing batch on, sending and receiving the control
    markers that travel in-band behind the data, and the barrier protocol.

    End of stream: each producer thread sends one EOS marker to every
    consumer thread behind its last batch; a consumer is done when it has
    one from every producer.  Epoch barriers: a reader thread sends one
    behind the epoch's data; a consumer that has one from every producer
    has every record of the epoch, so it ends the epoch (a processor's
    epoch_end, a writer's flush), passes one barrier on and waits at the
    controller.  A barrier's flag says whether its producer's input is
    exhausted, so that every stage can tell the job's last epoch.  */
#ifndef WEIR_PATH_H_INCLUDED
#define WEIR_PATH_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "lib/batch.h"
#include "pipeline/stage.h"

/*  Send the worker's outgoing batches on, those that hold records: the
    sink's, and with named outputs every port's.  0, or WEIR__SINK_ABORT
    when the job is being torn down (or failed here).  */
int weir__path_send (weir__worker *w);

/*  The same for port PORT's batch alone, down the stage's link from that
    port (port 0 and the sink's batch for a stage without ports).  */
int weir__path_send_port (weir__worker *w, unsigned port);

/*  weir__path_fold's rare cases, out of line: the first record (is port
    0's link one to fold into?), and what a fold returned (RC, the WAIT it
    took) when it flushed, waited, completed a batch's worth or failed.  */
int weir__path_fold_first (weir__worker *w, const char *p, size_t n);
int weir__path_folded (weir__worker *w, int rc, uint64_t wait);

/*  The str record of the N bytes at P (a word) folded into the partial
    aggregates of port 0's link as it is emitted rather than packed and
    read back when the batch goes, when that link leads to a stage that
    aggregates keyed by the whole record (a word into 'count key=.'): the
    record is its own key.  N is at most WEIR__KEY_MAX_BYTES less the
    header.  1 when folded, 0 when the record must go into the batch as
    it is, -1 when the job failed.  */
static inline int weir__path_fold (weir__worker *w, const char *p, size_t n)
{
    //  Inline, its rare cases apart (the first record, a flush that
    //  waited, a batch's worth counted, a failure): one call less for
    //  every word a word count emits
    if (w->fold_port0 > 0) {
        uint64_t wait = 0;
        int rc = weir__shuffle_fold (w->shuffles[0], w->fold_combiner, &w->fold_to, p, n, &wait);
        if (rc == 1 && !wait && w->folded + 1 < w->sink.limit) {
            w->folded++;
            return 1;
        }
        return weir__path_folded (w, rc, wait);
    }
    return w->fold_port0 < 0 ? 0 : weir__path_fold_first (w, p, n);
}

/*  A marker of KIND (WEIR__BATCH_EOS, WEIR__BATCH_BARRIER) carrying FLAG
    to every consumer thread downstream, behind everything this worker sent
    before.  0 or -1.  */
int weir__path_marker (weir__worker *w, uint32_t kind, uint32_t flag);

/*  The end of the worker's stream: what it holds sent on, then an EOS
    marker.  0 or -1.  */
int weir__path_end (weir__worker *w);

/*  The next message for the worker: its header and, for a batch, its
    records (valid until the next receive).  Batches are counted here.  0,
    or -1 when the job is being torn down.  */
int weir__path_recv (weir__worker *w, weir__batch_header *hdr, const char **payload, size_t *len);

/*  Pass the batch just received, of COUNT records at PAYLOAD (LEN
    bytes), on untouched; into a keyed stage split by key.  0 or -1.  */
int weir__path_forward (weir__worker *w, const char *payload, size_t len, uint32_t count);

/*  What a stage does at the end of an epoch, before it passes the barrier
    on: 0, or -1 when it failed the job.  */
typedef int (weir__epoch_end_fn) (weir__worker *w);

/*  A marker HDR arrived.  1 when the stream ended (every producer sent
    EOS), 0 to go on, -1 to quit.  When it completes a barrier, END runs,
    the barrier goes on, and the worker waits at the controller.  */
int weir__path_marker_in (weir__worker *w, const weir__batch_header *hdr, weir__epoch_end_fn *end);

/*  The readers' weir__sink send: the full batch on, more of the epoch's
    budget when the quota is used up.  */
int weir__path_sink_send (weir__sink *sink);

/*  The sink's idle: a reader waiting for input ends the epoch when the job
    stops or the epoch's time is up, and leaves when the job failed.  */
int weir__path_sink_idle (weir__sink *sink);

/*  What the sink's idle says before it looks at the batch: 0 to wait
    on, WEIR__SINK_PAUSE or WEIR__SINK_ABORT.  */
int weir__path_idle (weir__worker *w);

/*  Whether the sink's batch holds records that waited linger= ms by NOW
    (from the read that brought the first, or from the first wait for
    more when the reader did not say).  */
int weir__path_lingered (weir__sink *sink, uint64_t now);

/*  The sink's warn (a warning in the job's log, naming the stage) and
    truncated (counted in the stage's statistics).  */
void weir__path_sink_warn (weir__sink *sink, const char *message);
void weir__path_sink_truncated (weir__sink *sink);

/*  The sink's seen: a followed file's size, into the input's figures.  */
void weir__path_sink_seen (weir__sink *sink, uint64_t size);

/*  The sink's reject: count the bad record, keep it in the stage's dead
    letter.  */
int weir__path_sink_reject (weir__sink *sink, const weir__bad *bad);

/*  A processor rejected RECORD for REASON (weir_reject): with on-error=skip
    count and keep it, 0; else fail the job, -1, naming the place in the
    input of the record given to process when PLACED (RECORD is that
    record, not one the processor emitted).  */
int weir__path_reject (weir__worker *w, const msgpack_object *record, const char *reason, int placed);

#endif

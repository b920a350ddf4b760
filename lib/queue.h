/*  lib/queue.h - the bounded queue between two stages: batches of records
    and control markers over ZeroMQ inproc.  With lib/exchange.c (tcp
    between ranks), the files that speak ZeroMQ.

    P producer threads feed C consumer threads over ZeroMQ inproc sockets:
    each consumer binds one PULL socket and each producer holds one PUSH
    per consumer, or, when P x C pairs would take too many sockets and
    pipes, the producers of a consumer share one PUSH to it, under a lock.
    Either way a producer's messages to a consumer arrive in the order
    sent, which is what lets control markers travel in-band: a consumer
    that has an end-of-stream marker from every producer has every record.

    The bound is exact.  ZeroMQ's high-water marks are not (an inproc pipe
    holds the sender's mark plus the receiver's, counted in messages, with
    lagging accounting), so the marks are switched off and the queue keeps
    its own credits: a send takes one of CAPACITY credits, a receive gives
    it back.  Producers may come in groups, each with CAPACITY credits of
    its own (a stage's input, one group per link into it), so that each
    link is bounded apart.  A full queue blocks its producers, never drops.  Blocked
    producers are woken only when the queue has drained to half, so a fast
    producer behind a slow consumer wakes once per capacity/2 batches, not
    once per batch.

    Sockets are created here, by the thread that builds the pipe, and are
    then used by exactly one runtime thread each: producer P uses only its
    own sockets, consumer C only its own (and the message it holds).
    They are closed by weir__queue_destroy after those threads are joined,
    with no linger: by then every message has been received, or the job is
    being torn down and the rest is to be thrown away.

    A message is a batch (lib/batch.h: a header, then records) or a marker
    (a header alone), so markers travel in-band, behind the data they
    follow.  A batch's buffer travels with its message: sending a batch
    copies nothing, and neither does passing a received batch on.  */
#ifndef WEIR_QUEUE_H_INCLUDED
#define WEIR_QUEUE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "lib/batch.h"
#include "lib/error.h"

/*  What the functions below return when the job is being torn down (the
    queue was aborted, or the context shut down): not an error of its own,
    the first error of the job says what happened.  */
#define WEIR__QUEUE_CLOSED 1

/*  What weir__queue_recv_within returns when nothing came in time.  */
#define WEIR__QUEUE_TIMEOUT 2

/*  The ZeroMQ context of a job: created once, before its queues, and
    terminated once they are all destroyed.  */
typedef struct weir__queue_ctx weir__queue_ctx;

/*  A context with room for SOCKETS sockets (weir__queue_sockets of every
    queue).  NULL with ERR on failure.  */
weir__queue_ctx *weir__queue_ctx_new (size_t sockets, weir__err *err);

/*  Each socket takes a file descriptor: make sure SOCKETS more can be
    opened, raising the soft limit towards the hard one if need be (as many
    runtimes do), or say which limit stands in the way, ending with HINT
    (what to change).  0 or WEIR_ESYSTEM.  */
int weir__queue_descriptors (size_t sockets, const char *hint, weir__err *err);

/*  Make every blocking receive of every queue return WEIR__QUEUE_CLOSED.
    Any thread.  */
void weir__queue_ctx_shutdown (weir__queue_ctx *self);

/*  Terminate the context; every queue must be destroyed first.  */
void weir__queue_ctx_destroy (weir__queue_ctx **self_p);

/*  The sockets a queue of PRODUCERS and CONSUMERS threads takes.  */
size_t weir__queue_sockets (unsigned producers, unsigned consumers);

typedef struct weir__queue weir__queue;

weir__queue *weir__queue_new (weir__queue_ctx *ctx, unsigned producers, unsigned consumers, unsigned capacity,
                              weir__err *err);

/*  A queue whose producers come in GROUPS groups (the links into a stage):
    GROUP[p] is producer p's, and each group has CAPACITY credits of its
    own, so that the producers of one link never take another's room.
    With more than one group each message is led by a frame naming its
    group, which the consumer reads to give the credit back.  */
weir__queue *weir__queue_new_grouped (weir__queue_ctx *ctx, unsigned producers, unsigned consumers,
                                      unsigned capacity, const unsigned *group, unsigned groups,
                                      weir__err *err);
void weir__queue_destroy (weir__queue **self_p);

/*  Send the records of B (at least one: a message of a header alone is a
    marker, and takes no credit) from producer thread PRODUCER to the
    consumer with the fewest batches waiting, blocking while the queue is
    full.  B's
    buffer goes with the message (its header is written here) and B gets a
    fresh empty one.  Time spent blocked is added to *WAIT_NS.  0,
    WEIR__QUEUE_CLOSED, or WEIR_ENOMEM (B is left as it was).  */
int weir__queue_send_batch (weir__queue *self, unsigned producer, weir__batch *b, uint64_t *wait_ns);

/*  The same to consumer thread CONSUMER, whoever is least loaded: a
    keyed stage's records go to the thread that owns their key.  */
int weir__queue_send_batch_to (weir__queue *self, unsigned producer, unsigned consumer, weir__batch *b,
                               uint64_t *wait_ns);

/*  Its consumer threads.  */
unsigned weir__queue_consumers (const weir__queue *self);

/*  Where a message goes: a queue, and the producer number it is sent as.  */
typedef struct weir__queue_target {
    weir__queue *queue;
    unsigned producer;
} weir__queue_target;

/*  Send the records of B to each of the N TARGETS (a tee that runs in
    its producer's threads), as weir__queue_send_batch does to one: each
    gets a message that shares B's buffer, which is freed once every
    consumer has let go of it.  0, WEIR__QUEUE_CLOSED, or WEIR_ENOMEM (B
    left as it was).  */
int weir__queue_send_batch_all (const weir__queue_target *targets, size_t n, weir__batch *b, uint64_t *wait_ns);

/*  Send a marker of KIND (WEIR__BATCH_EOS or WEIR__BATCH_BARRIER)
    carrying FLAG (in the header's count) to every consumer thread, behind
    everything PRODUCER sent before.  Markers take no credit.  When the
    producers share sockets, the markers of a round are sent once, by the
    last producer to send its own, standing for all of them (see
    weir__queue_marker_weight), and FLAG is then 1 when every producer's
    was non-zero, else 0.  0 or WEIR__QUEUE_CLOSED (or WEIR_ENOMEM).  */
int weir__queue_send_marker (weir__queue *self, unsigned producer, uint32_t kind, uint32_t flag,
                             uint64_t *wait_ns);

/*  How many producers' markers a received marker stands for: 1, or every
    producer when they share sockets.  A consumer has every producer's
    marker when the weights of those it received add up to the producers.  */
unsigned weir__queue_marker_weight (const weir__queue *self);

/*  Receive the next message for consumer thread CONSUMER, blocking while
    there is none: its header in *HDR and, for a batch, its records in
    *PAYLOAD and *LEN, valid until this consumer's next receive.  0,
    WEIR__QUEUE_CLOSED, or WEIR_ESYSTEM for a message too short to hold a
    header.  */
int weir__queue_recv (weir__queue *self, unsigned consumer, weir__batch_header *hdr, const char **payload,
                      size_t *len, uint64_t *wait_ns);

/*  The same, waiting at most TIMEOUT_MS milliseconds (-1: as long as it
    takes): WEIR__QUEUE_TIMEOUT when nothing came.  */
int weir__queue_recv_within (weir__queue *self, unsigned consumer, weir__batch_header *hdr,
                             const char **payload, size_t *len, int timeout_ms, uint64_t *wait_ns);

/*  Pass the batch CONSUMER received last on to each of the N TARGETS:
    copies that share its buffer, the batch itself to the first.  0 or
    WEIR__QUEUE_CLOSED.  */
int weir__queue_forward_all (weir__queue *self, unsigned consumer, const weir__queue_target *targets, size_t n,
                             uint64_t *wait_ns);

/*  Wake every producer blocked on credits; later sends fail.  Any thread.  */
void weir__queue_abort (weir__queue *self);

/*  Messages sent but not yet received, and the bound (CAPACITY for each
    group).  Any thread.  */
unsigned weir__queue_fill (const weir__queue *self);
unsigned weir__queue_capacity (const weir__queue *self);

#endif

/*  lib/queue.h - the bounded queue between two stages.

    P producer threads feed C consumer threads over ZeroMQ inproc sockets:
    each consumer binds one PULL socket, each producer holds one PUSH per
    consumer.  One socket per pair keeps every producer-to-consumer stream
    FIFO, which is what lets control markers travel in-band: a consumer
    that has an end-of-stream marker from every producer has every record.

    The bound is exact.  ZeroMQ's high-water marks are not (an inproc pipe
    holds the sender's mark plus the receiver's, counted in messages, with
    lagging accounting), so the marks are switched off and the queue keeps
    its own credits: a send takes one of CAPACITY credits, a receive gives
    it back.  A full queue blocks its producers, never drops.  Blocked
    producers are woken only when the queue has drained to half, so a fast
    producer behind a slow consumer wakes once per capacity/2 batches, not
    once per batch.

    Sockets are created here, by the thread that builds the pipe, and are
    then used by exactly one runtime thread each: producer P uses only its
    PUSH sockets, consumer C only its PULL.  They are closed by
    weir__queue_destroy after those threads are joined.  */
#ifndef WEIR_QUEUE_H_INCLUDED
#define WEIR_QUEUE_H_INCLUDED

#include <stdint.h>
#include <zmq.h>

#include "lib/error.h"

typedef struct weir__queue weir__queue;

weir__queue *weir__queue_new (void *zmq_ctx, unsigned producers, unsigned consumers,
                              unsigned capacity, weir__err *err);
void weir__queue_destroy (weir__queue **self_p);

/*  Send MSG (ownership passes on success) from producer thread PRODUCER to
    the consumer with the fewest batches waiting, blocking while the queue
    is full.  Time spent blocked is added to *WAIT_NS.  0, or -1 when the
    queue was aborted or the context shut down.  */
int weir__queue_send (weir__queue *self, unsigned producer, zmq_msg_t *msg, uint64_t *wait_ns);

/*  The same, to one given consumer (for control markers).  */
int weir__queue_send_to (weir__queue *self, unsigned producer, unsigned consumer, zmq_msg_t *msg,
                         uint64_t *wait_ns);

/*  Receive the next message for consumer thread CONSUMER into MSG (an
    initialised zmq_msg_t), blocking while there is none.  0, or -1 when the
    context was shut down.  */
int weir__queue_recv (weir__queue *self, unsigned consumer, zmq_msg_t *msg, uint64_t *wait_ns);

/*  Wake every producer blocked on credits; later sends fail.  Any thread.  */
void weir__queue_abort (weir__queue *self);

/*  Messages sent but not yet received, and the bound.  Any thread.  */
unsigned weir__queue_fill (const weir__queue *self);
unsigned weir__queue_capacity (const weir__queue *self);

#endif

/*  lib/exchange.h - the keyed links of a job of several ranks: records
    sent by key to the threads of another rank, over ZeroMQ tcp.

    A keyed stage (key=) of a job of N ranks has T threads on each rank,
    N x T in all, and every record of a key must reach the one that owns
    the key's group (lib/key.h), whatever rank read it.  Each rank binds,
    for each keyed link, one PULL socket on tcp, and holds one PUSH per
    link and other rank, shared by its producer threads under a lock (as
    lib/queue.h shares a PUSH past 64 pairs), so that a rank has N - 1
    connections per link, not one per thread.  A bridge thread per link
    receives what the other ranks send and puts it into the local queue of
    the keyed stage as the producer that sent it: the queue has a producer
    number for every thread of every rank that feeds the link, so its
    markers and credits work as they do inside one process.

    Order: a producer's messages to a rank go through one PUSH, one TCP
    connection, one PULL and the bridge, each FIFO, then the producer's
    own pipe of the local queue, so a marker still comes behind the data
    it follows.  Bounds: a PUSH holds at most CAPACITY messages per
    connection, and so does the PULL; a full one blocks the producer, and
    the bridge blocks on the local queue's credits: nothing is dropped.

    A message is two frames: its route (the sender's producer number and
    the consumer thread on the receiving rank, UINT32_MAX for a marker to
    all of them) and the batch (lib/batch.h) or the marker.  A batch of
    partial aggregates (WEIR__BATCH_COMBINED) carries the combiner's raw
    values: the ranks of a job run one build of weir on one architecture.

    Sending copies the batch into the message: the sender's buffer never
    goes to libzmq's I/O thread, whose synchronisation ThreadSanitizer
    cannot see.  */
#ifndef WEIR_EXCHANGE_H_INCLUDED
#define WEIR_EXCHANGE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "lib/batch.h"
#include "lib/error.h"
#include "lib/queue.h"

typedef struct weir__exchange weir__exchange;

/*  LINKS keyed links of rank RANK of RANKS, each bounded at CAPACITY
    messages per connection.  NULL with ERR.  */
weir__exchange *weir__exchange_new (unsigned links, unsigned rank, unsigned ranks, unsigned capacity,
                                    weir__err *err);

/*  Shut down (if not yet), join the bridges, close every socket.  */
void weir__exchange_destroy (weir__exchange **self_p);

/*  Bind every link's PULL at HOST (dotted IPv4) on a port of the
    system's choosing; the ports, in link order, into PORTS.  0 or
    WEIR_ESYSTEM.  */
int weir__exchange_bind (weir__exchange *self, const char *host, unsigned *ports, weir__err *err);

/*  Connect the PUSH of LINK to rank RANK at ENDPOINT (tcp://HOST:PORT).
    0 or WEIR_ESYSTEM.  */
int weir__exchange_connect (weir__exchange *self, unsigned link, unsigned rank, const char *endpoint,
                            weir__err *err);

/*  Make sure every other rank reaches this one on every link, before
    any record goes: each rank sends each other a greeting down each
    link, carrying SHAPES[link] (what the link is on this rank: its
    threads, the build), and waits at most TIMEOUT_MS for theirs (a
    connection that cannot be made is otherwise silent: libzmq retries
    it for ever), which must carry the same.  Call it once connected,
    before the bridges start, and let no rank send records before every
    rank returned (the ranks meet after it).  0, WEIR_ESYSTEM with ERR
    naming a rank not heard from and where this one listens, or
    WEIR_EINVAL naming a rank whose link differs.  */
int weir__exchange_greet (weir__exchange *self, const uint64_t *shapes, int timeout_ms, weir__err *err);

/*  What a bridge does with a failure (a malformed message from another
    rank, out of memory): fail the job.  Called from the bridge thread.  */
typedef void (weir__exchange_fail_fn) (void *arg, const weir__err *err);

/*  Start LINK's bridge into QUEUE, whose producers FIRST to FIRST +
    RANKS x THREADS - 1 are the link's (rank r's threads from FIRST + r x
    THREADS): a message from another rank must name one of those of its
    ranks, and a consumer of QUEUE.  0 or WEIR_ESYSTEM.  */
int weir__exchange_start (weir__exchange *self, unsigned link, weir__queue *queue, unsigned first,
                          unsigned threads, weir__exchange_fail_fn *fail, void *arg, weir__err *err);

/*  Send the records of B (its kind and count in the header) as PRODUCER
    to consumer thread CONSUMER of rank RANK, down LINK.  B is cleared.
    0, WEIR__QUEUE_CLOSED or WEIR_ENOMEM.  */
int weir__exchange_send (weir__exchange *self, unsigned link, unsigned rank, unsigned producer,
                         unsigned consumer, weir__batch *b, uint64_t *wait_ns);

/*  Send a marker of KIND carrying FLAG as PRODUCER to every consumer
    thread of every other rank, down LINK.  0, WEIR__QUEUE_CLOSED or
    WEIR_ENOMEM.  */
int weir__exchange_send_marker (weir__exchange *self, unsigned link, unsigned producer, uint32_t kind,
                                uint32_t flag, uint64_t *wait_ns);

/*  Make every blocked send and every bridge return: the job is being
    torn down.  Any thread.  */
void weir__exchange_shutdown (weir__exchange *self);

/*  Messages and bytes this rank sent to others down LINK, and received
    from them: batches and markers, since the greetings.  */
void weir__exchange_counts (const weir__exchange *self, unsigned link, uint64_t *sent, uint64_t *sent_bytes,
                            uint64_t *received, uint64_t *received_bytes);

#endif

/*  lib/exchange.c - keyed links between ranks over ZeroMQ tcp.  */
#include "config.h"
#include "lib/exchange.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zmq.h>

#include "lib/clock.h"

//  The route frame: who sent, and to which thread
typedef struct {
    uint32_t producer;
    uint32_t consumer;  //  S_ALL for a marker
} s_route;

#define S_ALL UINT32_MAX
//  The producer of a greeting (weir__exchange_greet), whose consumer is
//  the rank that sends it
#define S_HELLO (UINT32_MAX - 1)

typedef struct {
    weir__exchange *exchange;
    unsigned link;
    weir__queue *queue;
    unsigned first, threads;
    weir__exchange_fail_fn *fail;
    void *arg;
    pthread_t thread;
    int started;
} s_bridge;

typedef struct {
    _Atomic uint64_t sent, sent_bytes, received, received_bytes;
} s_counts;

struct weir__exchange {
    void *zmq;
    unsigned links, rank, ranks, capacity;
    char (*listening)[64];  //  [link]: the endpoint its PULL is bound to
    void **in;              //  [link]: a PULL
    void **out;             //  [link * ranks + rank]: a PUSH, NULL for this rank
    pthread_mutex_t *lock;  //  the same: held by the producer sending on it
    s_bridge *bridges;      //  [link]
    atomic_int down;
    //  [link]: messages and bytes this rank sent to others, and received
    s_counts *counts;
};

static void *s_socket (weir__exchange *self, int type, weir__err *err)
{
    void *s = zmq_socket (self->zmq, type);
    int zero = 0, hwm = (int) self->capacity;
    if (!s) {
        weir__err_set (err, WEIR_ESYSTEM, "cannot make a tcp socket for another rank: %s",
                       zmq_strerror (zmq_errno ()));
        return NULL;
    }
    //  Messages left unsent at close are thrown away: by the time a run
    //  closes its sockets every rank has received all it was sent (the
    //  ranks sum their counts after their threads ended), or the job is
    //  being torn down
    zmq_setsockopt (s, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt (s, type == ZMQ_PUSH ? ZMQ_SNDHWM : ZMQ_RCVHWM, &hwm, sizeof hwm);
    return s;
}

weir__exchange *weir__exchange_new (unsigned links, unsigned rank, unsigned ranks, unsigned capacity,
                                    weir__err *err)
{
    weir__exchange *self = calloc (1, sizeof *self);
    size_t pairs = (size_t) links * ranks;
    if (!self || !(self->in = calloc (links, sizeof *self->in))
        || !(self->out = calloc (pairs, sizeof *self->out))
        || !(self->lock = calloc (pairs, sizeof *self->lock))
        || !(self->bridges = calloc (links, sizeof *self->bridges))
        || !(self->listening = calloc (links, sizeof *self->listening))
        || !(self->counts = calloc (links, sizeof *self->counts))) {
        if (self) {
            free (self->in);
            free (self->out);
            free (self->lock);
            free (self->bridges);
            free (self->listening);
        }
        free (self);
        weir__err_set (err, WEIR_ENOMEM, "out of memory");
        return NULL;
    }
    self->links = links;
    self->rank = rank;
    self->ranks = ranks;
    self->capacity = capacity ? capacity : 1;
    for (size_t i = 0; i < pairs; i++)
        pthread_mutex_init (&self->lock[i], NULL);
    //  A context of its own, with one I/O thread for the connections: the
    //  queues' context moves no bytes
    if (!(self->zmq = zmq_ctx_new ())) {
        weir__err_set (err, WEIR_ESYSTEM, "cannot make a ZeroMQ context for the ranks' links");
        weir__exchange_destroy (&self);
        return NULL;
    }
    zmq_ctx_set (self->zmq, ZMQ_MAX_SOCKETS, (int) (pairs + links + 16));
    for (unsigned l = 0; l < links; l++) {
        if (!(self->in[l] = s_socket (self, ZMQ_PULL, err))) {
            weir__exchange_destroy (&self);
            return NULL;
        }
        for (unsigned r = 0; r < ranks; r++)
            if (r != rank && !(self->out[(size_t) l * ranks + r] = s_socket (self, ZMQ_PUSH, err))) {
                weir__exchange_destroy (&self);
                return NULL;
            }
    }
    return self;
}

void weir__exchange_shutdown (weir__exchange *self)
{
    if (self && !atomic_exchange (&self->down, 1))
        zmq_ctx_shutdown (self->zmq);
}

void weir__exchange_destroy (weir__exchange **self_p)
{
    weir__exchange *self = *self_p;
    if (!self)
        return;
    if (self->zmq)
        weir__exchange_shutdown (self);
    for (unsigned l = 0; l < self->links; l++)
        if (self->bridges[l].started)
            pthread_join (self->bridges[l].thread, NULL);
    size_t pairs = (size_t) self->links * self->ranks;
    for (unsigned l = 0; l < self->links; l++)
        if (self->in[l])
            zmq_close (self->in[l]);
    for (size_t i = 0; i < pairs; i++) {
        if (self->out[i])
            zmq_close (self->out[i]);
        pthread_mutex_destroy (&self->lock[i]);
    }
    if (self->zmq)
        zmq_ctx_term (self->zmq);
    free (self->in);
    free (self->out);
    free (self->lock);
    free (self->bridges);
    free (self->listening);
    free (self->counts);
    free (self);
    *self_p = NULL;
}

int weir__exchange_bind (weir__exchange *self, const char *host, unsigned *ports, weir__err *err)
{
    for (unsigned l = 0; l < self->links; l++) {
        char endpoint[64];
        size_t size = sizeof endpoint;
        snprintf (endpoint, sizeof endpoint, "tcp://%s:*", host);
        if (zmq_bind (self->in[l], endpoint))
            return weir__err_set (err, WEIR_ESYSTEM,
                                  "rank %u cannot listen at %s for the ranks' keyed links: %s", self->rank,
                                  endpoint, zmq_strerror (zmq_errno ()));
        //  "tcp://HOST:PORT": the port follows the last colon
        if (zmq_getsockopt (self->in[l], ZMQ_LAST_ENDPOINT, endpoint, &size))
            return weir__err_set (err, WEIR_ESYSTEM, "rank %u: no endpoint bound: %s", self->rank,
                                  zmq_strerror (zmq_errno ()));
        const char *colon = strrchr (endpoint, ':');
        ports[l] = colon ? (unsigned) strtoul (colon + 1, NULL, 10) : 0;
        snprintf (self->listening[l], sizeof self->listening[l], "%s", endpoint);
    }
    return 0;
}

int weir__exchange_connect (weir__exchange *self, unsigned link, unsigned rank, const char *endpoint,
                            weir__err *err)
{
    void *s = self->out[(size_t) link * self->ranks + rank];
    if (!s || zmq_connect (s, endpoint))
        return weir__err_set (err, WEIR_ESYSTEM, "rank %u cannot connect to rank %u at %s: %s", self->rank,
                              rank, endpoint, s ? zmq_strerror (zmq_errno ()) : "no such rank");
    return 0;
}

//  The route, then the body of LEN bytes at DATA, to rank RANK down LINK,
//  as one message: under the socket's lock, so that another producer's
//  frames never come between.  A signal that cut a send short sends that
//  frame again.
static int s_send (weir__exchange *self, unsigned link, unsigned rank, s_route route, const void *data,
                   size_t len, uint64_t *wait_ns)
{
    size_t i = (size_t) link * self->ranks + rank;
    void *s = self->out[i];
    int rc;
    pthread_mutex_lock (&self->lock[i]);
    //  A full connection blocks the first frame of a message (libzmq
    //  judges its mark there), so that one is tried without waiting
    //  first: the time the other rank holds the producer back is its
    //  wait.  The body then goes at once.
    rc = zmq_send (s, &route, sizeof route, ZMQ_SNDMORE | ZMQ_DONTWAIT);
    if (rc < 0 && (zmq_errno () == EAGAIN || zmq_errno () == EINTR)) {
        uint64_t from = weir__now_ns ();
        while ((rc = zmq_send (s, &route, sizeof route, ZMQ_SNDMORE)) < 0 && zmq_errno () == EINTR)
            ;
        *wait_ns += weir__now_ns () - from;
    }
    if (rc >= 0)
        while ((rc = zmq_send (s, data, len, 0)) < 0 && zmq_errno () == EINTR)
            ;
    pthread_mutex_unlock (&self->lock[i]);
    if (rc < 0)
        return zmq_errno () == ENOMEM ? WEIR_ENOMEM : WEIR__QUEUE_CLOSED;
    atomic_fetch_add_explicit (&self->counts[link].sent, 1, memory_order_relaxed);
    atomic_fetch_add_explicit (&self->counts[link].sent_bytes, len, memory_order_relaxed);
    return 0;
}

int weir__exchange_send (weir__exchange *self, unsigned link, unsigned rank, unsigned producer,
                         unsigned consumer, weir__batch *b, uint64_t *wait_ns)
{
    weir__batch_header hdr = {.kind = b->kind, .count = b->count};
    memcpy (b->data, &hdr, sizeof hdr);
    int rc = s_send (self, link, rank, (s_route){producer, consumer}, b->data, b->len, wait_ns);
    weir__batch_clear (b);
    return rc;
}

int weir__exchange_send_marker (weir__exchange *self, unsigned link, unsigned producer, uint32_t kind,
                                uint32_t flag, uint64_t *wait_ns)
{
    weir__batch_header marker = {.kind = kind, .count = flag};
    int rc = 0;
    for (unsigned r = 0; r < self->ranks && !rc; r++)
        if (r != self->rank)
            rc = s_send (self, link, r, (s_route){producer, S_ALL}, &marker, sizeof marker, wait_ns);
    return rc;
}

//  A frame into MSG: 0, or -1 once the context is shut down
static int s_recv (void *s, zmq_msg_t *msg);

int weir__exchange_greet (weir__exchange *self, const uint64_t *shapes, int timeout_ms, weir__err *err)
{
    uint64_t wait = 0;
    for (unsigned l = 0; l < self->links; l++)
        for (unsigned r = 0; r < self->ranks; r++)
            if (r != self->rank
                && s_send (self, l, r, (s_route){S_HELLO, self->rank}, &shapes[l], sizeof shapes[l], &wait))
                return weir__err_set (err, WEIR_ESYSTEM, "rank %u could not greet rank %u", self->rank, r);
    char *heard = calloc (self->ranks, 1);
    if (!heard)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    int rc = 0;
    uint64_t deadline = weir__now_ns () + (uint64_t) timeout_ms * 1000000u;
    for (unsigned l = 0; l < self->links && !rc; l++) {
        memset (heard, 0, self->ranks);
        heard[self->rank] = 1;
        for (unsigned got = 1; got < self->ranks && !rc;) {
            uint64_t now = weir__now_ns ();
            zmq_pollitem_t item = {self->in[l], 0, ZMQ_POLLIN, 0};
            long left = now < deadline ? (long) ((deadline - now) / 1000000u) : 0;
            int ready = zmq_poll (&item, 1, left);
            if (ready < 0 && zmq_errno () == EINTR)
                continue;
            if (ready <= 0) {
                unsigned missing = 0;
                while (heard[missing])
                    missing++;
                rc = weir__err_set (
                    err, WEIR_ESYSTEM,
                    "rank %u heard nothing from rank %u in %g s on keyed link %u (rank %u listens "
                    "at %s): the ranks cannot reach each other there; set WEIR_EXCHANGE_NET to "
                    "the network they share",
                    self->rank, missing, timeout_ms / 1000.0, l, self->rank, self->listening[l]);
                break;
            }
            zmq_msg_t route, body;
            zmq_msg_init (&route);
            zmq_msg_init (&body);
            s_route from = {0, 0};
            uint64_t shape = 0;
            int ok = s_recv (self->in[l], &route) == 0 && zmq_msg_size (&route) == sizeof from
                     && zmq_msg_more (&route) && s_recv (self->in[l], &body) == 0
                     && zmq_msg_size (&body) == sizeof shape;
            if (ok) {
                memcpy (&from, zmq_msg_data (&route), sizeof from);
                memcpy (&shape, zmq_msg_data (&body), sizeof shape);
            }
            zmq_msg_close (&route);
            zmq_msg_close (&body);
            if (!ok || from.producer != S_HELLO || from.consumer >= self->ranks)
                rc = weir__err_set (
                    err, WEIR_ECORRUPT,
                    "rank %u received on keyed link %u something else than the greeting of a rank: "
                    "another program at %s?",
                    self->rank, l, self->listening[l]);
            else if (shape != shapes[l])
                rc = weir__err_set (
                    err, WEIR_EINVAL,
                    "rank %u's keyed link %u is not rank %u's: the ranks run other threads= or "
                    "builds of weir (partial aggregates cross as this build lays them out)",
                    from.consumer, l, self->rank);
            else if (!heard[from.consumer]) {
                heard[from.consumer] = 1;
                got++;
            }
        }
    }
    free (heard);
    //  The counts are of what the job sent, from here
    for (unsigned l = 0; l < self->links; l++) {
        s_counts *c = &self->counts[l];
        atomic_store (&c->sent, 0);
        atomic_store (&c->sent_bytes, 0);
        atomic_store (&c->received, 0);
        atomic_store (&c->received_bytes, 0);
    }
    return rc;
}

//  A frame into MSG: 0, or -1 once the context is shut down
static int s_recv (void *s, zmq_msg_t *msg)
{
    int rc;
    while ((rc = zmq_msg_recv (msg, s, 0)) < 0 && zmq_errno () == EINTR)
        ;
    return rc < 0 ? -1 : 0;
}

//  What another rank sent that cannot be: the job fails, naming it
static void s_refuse (s_bridge *b, const char *what, unsigned a, unsigned c)
{
    weir__err err;
    weir__err_set (&err, WEIR_ECORRUPT,
                   "rank %u received on keyed link %u a message that %s (producer %u, consumer %u): the "
                   "ranks run different builds or descriptions, or something else connected to its port",
                   b->exchange->rank, b->link, what, a, c);
    b->fail (b->arg, &err);
}

//  One message received, put into the local queue: 0, 1 when the bridge
//  is to end (shut down, or the message was refused)
static int s_pass (s_bridge *b, void *in, weir__batch *batch)
{
    weir__exchange *self = b->exchange;
    zmq_msg_t route, body;
    zmq_msg_init (&route);
    zmq_msg_init (&body);
    int rc = 1;
    s_route r;
    weir__batch_header hdr;
    if (s_recv (in, &route))
        goto done;
    if (zmq_msg_size (&route) != sizeof r || !zmq_msg_more (&route)) {
        s_refuse (b, "has no route", 0, 0);
        goto done;
    }
    memcpy (&r, zmq_msg_data (&route), sizeof r);
    if (s_recv (in, &body))
        goto done;
    size_t len = zmq_msg_size (&body);
    unsigned from = r.producer - b->first;
    if (r.producer < b->first || from >= self->ranks * b->threads || from / b->threads == self->rank) {
        s_refuse (b, "names no producer of another rank", r.producer, r.consumer);
        goto done;
    }
    if (zmq_msg_more (&body) || weir__batch_header_read (zmq_msg_data (&body), len, &hdr)) {
        s_refuse (b, "is not a batch", r.producer, r.consumer);
        goto done;
    }
    atomic_fetch_add_explicit (&self->counts[b->link].received, 1, memory_order_relaxed);
    atomic_fetch_add_explicit (&self->counts[b->link].received_bytes, len, memory_order_relaxed);
    uint64_t wait = 0;
    int sent;
    if (len == WEIR__BATCH_HEADER) {
        if (r.consumer != S_ALL || (hdr.kind != WEIR__BATCH_EOS && hdr.kind != WEIR__BATCH_BARRIER)) {
            s_refuse (b, "is not a marker to every thread", r.producer, r.consumer);
            goto done;
        }
        sent = weir__queue_send_marker (b->queue, r.producer, hdr.kind, hdr.count, &wait);
    }
    else {
        if (r.consumer >= weir__queue_consumers (b->queue)
            || (hdr.kind != WEIR__BATCH_DATA && hdr.kind != WEIR__BATCH_COMBINED)) {
            s_refuse (b, "names no thread of this rank, or no kind of batch", r.producer, r.consumer);
            goto done;
        }
        sent = weir__batch_append (batch, (const char *) zmq_msg_data (&body) + WEIR__BATCH_HEADER,
                                   len - WEIR__BATCH_HEADER)
                   ? WEIR_ENOMEM
                   : 0;
        batch->kind = hdr.kind;
        batch->count = hdr.count;
        if (!sent)
            sent = weir__queue_send_batch_to (b->queue, r.producer, r.consumer, batch, &wait);
        weir__batch_clear (batch);
    }
    if (sent == WEIR_ENOMEM) {
        weir__err err;
        weir__err_set (&err, WEIR_ENOMEM, "rank %u: out of memory passing on a batch of another rank",
                       self->rank);
        b->fail (b->arg, &err);
    }
    rc = sent != 0;
done:
    zmq_msg_close (&route);
    zmq_msg_close (&body);
    return rc;
}

static void *s_bridge_main (void *arg)
{
    s_bridge *b = arg;
    weir__batch batch;
    if (weir__batch_init (&batch, WEIR__BATCH_HEADER + 4096)) {
        weir__err err;
        weir__err_set (&err, WEIR_ENOMEM, "out of memory");
        b->fail (b->arg, &err);
        return NULL;
    }
    while (s_pass (b, b->exchange->in[b->link], &batch) == 0)
        ;
    weir__batch_release (&batch);
    return NULL;
}

int weir__exchange_start (weir__exchange *self, unsigned link, weir__queue *queue, unsigned first,
                          unsigned threads, weir__exchange_fail_fn *fail, void *arg, weir__err *err)
{
    s_bridge *b = &self->bridges[link];
    *b = (s_bridge){self, link, queue, first, threads, fail, arg, 0, 0};
    if (pthread_create (&b->thread, NULL, s_bridge_main, b))
        return weir__err_set (err, WEIR_ESYSTEM, "cannot start the thread of keyed link %u from other ranks",
                              link);
    b->started = 1;
    return 0;
}

void weir__exchange_counts (const weir__exchange *self, unsigned link, uint64_t *sent, uint64_t *sent_bytes,
                            uint64_t *received, uint64_t *received_bytes)
{
    const s_counts *c = &self->counts[link];
    *sent = atomic_load_explicit (&c->sent, memory_order_relaxed);
    *sent_bytes = atomic_load_explicit (&c->sent_bytes, memory_order_relaxed);
    *received = atomic_load_explicit (&c->received, memory_order_relaxed);
    *received_bytes = atomic_load_explicit (&c->received_bytes, memory_order_relaxed);
}

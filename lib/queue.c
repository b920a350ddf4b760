/*  lib/queue.c - bounded ZeroMQ inproc queue with exact credits.  */
#include "config.h"
#include "lib/queue.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>

#include <zmq.h>

#include "lib/clock.h"

#define S_YIELDS 8
//  Producer-consumer pairs a queue connects with a socket each; more, and
//  the producers of a consumer share one socket (see weir__queue_new)
#define S_MAX_PAIRS 64

struct weir__queue_ctx {
    void *zmq;
};

//  A round of markers of one kind, when the producers share sockets: how
//  many producers sent theirs, and whether one of them had a zero flag
typedef struct {
    atomic_uint arrived;
    atomic_int zero;
} s_round;

//  The credits of a group of producers (a link into a stage)
typedef struct {
    atomic_uint in_flight;  //  the credits taken: sent, not yet received
} s_group;

struct weir__queue {
    unsigned producers, consumers, capacity;
    zmq_msg_t *held;        //  [consumer]: the message it received last
    unsigned low_water;     //  wake a group's blocked producers at or below this fill
    int shared;             //  a PUSH per consumer, else a PUSH per pair
    void **out;             //  [consumer] PUSHes, or [producer * consumers + consumer]
    pthread_mutex_t *lock;  //  [consumer], when shared: held by the producer sending to it
    s_round rounds[2];      //  when shared: end-of-stream markers, barriers
    void **in;              //  [consumer]: a PULL
    atomic_uint *depth;     //  per consumer: sent, not yet received
    s_group *groups;        //  each with CAPACITY credits
    unsigned ngroups;       //  more than one: a frame naming the group leads each message
    unsigned *group;        //  [producer]: its group
    atomic_uint waiters;    //  producers in the slow path
    atomic_int aborted;
    pthread_mutex_t mutex;  //  guards only the sleep / wake hand-off
    pthread_cond_t drained;
};

weir__queue_ctx *weir__queue_ctx_new (size_t sockets, weir__err *err)
{
    weir__queue_ctx *self = calloc (1, sizeof *self);
    if (!self) {
        weir__err_set (err, WEIR_ENOMEM, "out of memory");
        return NULL;
    }
    self->zmq = zmq_ctx_new ();
    if (!self->zmq) {
        weir__err_set (err, WEIR_ESYSTEM, "zmq_ctx_new: %s", zmq_strerror (zmq_errno ()));
        free (self);
        return NULL;
    }
    //  ZeroMQ allows 1023 sockets by default
    if (sockets > 1023)
        zmq_ctx_set (self->zmq, ZMQ_MAX_SOCKETS, (int) sockets);
    return self;
}

int weir__queue_descriptors (size_t sockets, const char *hint, weir__err *err)
{
    struct rlimit lim;
    if (getrlimit (RLIMIT_NOFILE, &lim))
        return 0;
    //  Room for what the process holds already: inputs, outputs, LevelDB
    rlim_t want = (rlim_t) sockets + 256;
    if (lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur >= want)
        return 0;
    if (lim.rlim_max == RLIM_INFINITY || lim.rlim_max >= want) {
        lim.rlim_cur = want;
        if (setrlimit (RLIMIT_NOFILE, &lim) == 0)
            return 0;
    }
    return weir__err_set (
        err, WEIR_ESYSTEM,
        "the pipe's threads need %zu ZeroMQ sockets, a file descriptor each, and this process "
        "may open %llu (ulimit -n): %s",
        sockets, (unsigned long long) lim.rlim_max, hint);
}

void weir__queue_ctx_shutdown (weir__queue_ctx *self)
{
    zmq_ctx_shutdown (self->zmq);
}

void weir__queue_ctx_destroy (weir__queue_ctx **self_p)
{
    weir__queue_ctx *self = *self_p;
    if (!self)
        return;
    zmq_ctx_term (self->zmq);
    free (self);
    *self_p = NULL;
}

size_t weir__queue_sockets (unsigned producers, unsigned consumers)
{
    //  A PULL per consumer, and a PUSH per pair or per consumer
    uint64_t pairs = (uint64_t) producers * consumers;
    return (size_t) consumers + (pairs > S_MAX_PAIRS ? consumers : pairs);
}

static void *s_socket (void *ctx, int type, weir__err *err)
{
    void *s = zmq_socket (ctx, type);
    if (!s) {
        weir__err_set (err, WEIR_ESYSTEM, "zmq_socket: %s", zmq_strerror (zmq_errno ()));
        return NULL;
    }
    //  No ZeroMQ marks: the credits are the bound.  No linger: every
    //  message has been received by the time sockets close, and on an abort
    //  the rest is to be thrown away.
    int zero = 0;
    zmq_setsockopt (s, ZMQ_SNDHWM, &zero, sizeof zero);
    zmq_setsockopt (s, ZMQ_RCVHWM, &zero, sizeof zero);
    zmq_setsockopt (s, ZMQ_LINGER, &zero, sizeof zero);
    return s;
}

//  The endpoint consumer C binds
static void s_endpoint (const weir__queue *self, unsigned c, char *out, size_t size)
{
    snprintf (out, size, "inproc://weir-%p-%u", (const void *) self, c);
}

//  Every consumer binds a PULL.  0, or -1 with ERR.
static int s_bind_consumers (weir__queue *self, void *ctx, weir__err *err)
{
    for (unsigned c = 0; c < self->consumers; c++) {
        char endpoint[64];
        s_endpoint (self, c, endpoint, sizeof endpoint);
        if (!(self->in[c] = s_socket (ctx, ZMQ_PULL, err)))
            return -1;
        if (zmq_bind (self->in[c], endpoint)) {
            weir__err_set (err, WEIR_ESYSTEM, "zmq_bind %s: %s", endpoint, zmq_strerror (zmq_errno ()));
            return -1;
        }
    }
    return 0;
}

//  The PUSHes: one per producer and consumer, or, shared, one per
//  consumer.  0, or -1 with ERR.
static int s_connect_pushes (weir__queue *self, void *ctx, weir__err *err)
{
    unsigned senders = self->shared ? 1 : self->producers;
    for (unsigned p = 0; p < senders; p++)
        for (unsigned c = 0; c < self->consumers; c++) {
            char endpoint[64];
            s_endpoint (self, c, endpoint, sizeof endpoint);
            void *s = self->out[p * self->consumers + c] = s_socket (ctx, ZMQ_PUSH, err);
            if (!s)
                return -1;
            if (zmq_connect (s, endpoint)) {
                weir__err_set (err, WEIR_ESYSTEM, "zmq_connect %s: %s", endpoint,
                               zmq_strerror (zmq_errno ()));
                return -1;
            }
        }
    return 0;
}

weir__queue *weir__queue_new (weir__queue_ctx *ctx, unsigned producers, unsigned consumers,
                              unsigned capacity, weir__err *err)
{
    return weir__queue_new_grouped (ctx, producers, consumers, capacity, NULL, 1, err);
}

weir__queue *weir__queue_new_grouped (weir__queue_ctx *qctx, unsigned producers, unsigned consumers,
                                      unsigned capacity, const unsigned *group, unsigned groups,
                                      weir__err *err)
{
    if (producers == 0 || consumers == 0 || capacity == 0 || groups == 0) {
        weir__err_set (err, WEIR_ESYSTEM, "queue needs producers, consumers and capacity");
        return NULL;
    }
    for (unsigned p = 0; group && p < producers; p++)
        if (group[p] >= groups) {
            weir__err_set (err, WEIR_ESYSTEM, "queue producer %u is in group %u of %u", p, group[p], groups);
            return NULL;
        }
    weir__queue *self = calloc (1, sizeof *self);
    if (!self) {
        weir__err_set (err, WEIR_ENOMEM, "out of memory");
        return NULL;
    }
    pthread_mutex_init (&self->mutex, NULL);
    pthread_cond_init (&self->drained, NULL);
    self->producers = producers;
    self->consumers = consumers;
    self->capacity = capacity;
    self->low_water = capacity / 2;
    self->shared = (uint64_t) producers * consumers > S_MAX_PAIRS;
    self->out = calloc (self->shared ? consumers : (size_t) producers * consumers, sizeof *self->out);
    if (self->shared && (self->lock = calloc (consumers, sizeof *self->lock)))
        for (unsigned c = 0; c < consumers; c++)
            pthread_mutex_init (&self->lock[c], NULL);
    self->in = calloc (consumers, sizeof *self->in);
    self->depth = calloc (consumers, sizeof *self->depth);
    self->held = calloc (consumers, sizeof *self->held);
    self->groups = calloc (groups, sizeof *self->groups);
    self->group = calloc (producers, sizeof *self->group);
    self->ngroups = groups;
    if (!self->out || !self->in || !self->depth || !self->held || !self->groups || !self->group
        || (self->shared && !self->lock)) {
        weir__err_set (err, WEIR_ENOMEM, "out of memory");
        weir__queue_destroy (&self);
        return NULL;
    }
    for (unsigned c = 0; c < consumers; c++)
        zmq_msg_init (&self->held[c]);
    if (group)
        memcpy (self->group, group, producers * sizeof *group);
    //  With few pairs, each producer has a PUSH connected to each
    //  consumer's PULL: the cheapest send, with no lock.  With many, a
    //  pipe per pair costs what the pairs cost: each socket a file
    //  descriptor (100 threads on three stages ran out of them), each pipe
    //  about 10 kB, and each connection a hand-shake with its consumer's
    //  socket (256 threads on three stages took 11 s and 1.3 GB to run
    //  1,000 records).  So the producers of a consumer share one PUSH,
    //  taken under a lock for the frames of one message (ZeroMQ lets a
    //  socket move between threads behind a full barrier, which the lock
    //  is): C pipes, not P x C.  Either way a producer's messages to a
    //  consumer go down one pipe in the order sent, which keeps its stream
    //  FIFO.
    if (s_bind_consumers (self, qctx->zmq, err) || s_connect_pushes (self, qctx->zmq, err)) {
        weir__queue_destroy (&self);
        return NULL;
    }
    return self;
}

void weir__queue_destroy (weir__queue **self_p)
{
    weir__queue *self = *self_p;
    if (!self)
        return;
    size_t outs = self->shared ? self->consumers : (size_t) self->producers * self->consumers;
    for (size_t i = 0; self->out && i < outs; i++)
        if (self->out[i])
            zmq_close (self->out[i]);
    if (self->in)
        for (unsigned c = 0; c < self->consumers; c++)
            if (self->in[c])
                zmq_close (self->in[c]);
    if (self->held)
        for (unsigned c = 0; c < self->consumers; c++)
            zmq_msg_close (&self->held[c]);
    for (unsigned c = 0; self->lock && c < self->consumers; c++)
        pthread_mutex_destroy (&self->lock[c]);
    pthread_mutex_destroy (&self->mutex);
    pthread_cond_destroy (&self->drained);
    free (self->lock);
    free (self->held);
    free (self->out);
    free (self->in);
    free (self->depth);
    free (self->groups);
    free (self->group);
    free (self);
    *self_p = NULL;
}

//  Take one of GROUP's credits, sleeping while there is none.  -1 once
//  aborted.
static int s_acquire (weir__queue *self, s_group *group, uint64_t *wait_ns)
{
    unsigned n = atomic_load_explicit (&group->in_flight, memory_order_relaxed);
    while (n < self->capacity)
        if (atomic_compare_exchange_weak (&group->in_flight, &n, n + 1))
            return 0;

    //  Slow path.  A consumer that drains to low water after seeing
    //  waiters > 0 takes the mutex to signal, and we re-check the count under
    //  that same mutex before sleeping, so the wake-up cannot be lost.
    uint64_t start = weir__now_ns ();
    int rc = 0;
    pthread_mutex_lock (&self->mutex);
    atomic_fetch_add (&self->waiters, 1);
    for (;;) {
        if (atomic_load (&self->aborted)) {
            rc = -1;
            break;
        }
        n = atomic_load (&group->in_flight);
        if (n < self->capacity) {
            if (atomic_compare_exchange_strong (&group->in_flight, &n, n + 1))
                break;
            continue;
        }
        pthread_cond_wait (&self->drained, &self->mutex);
    }
    atomic_fetch_sub (&self->waiters, 1);
    pthread_mutex_unlock (&self->mutex);
    if (wait_ns)
        *wait_ns += weir__now_ns () - start;
    return rc;
}

static void s_release (weir__queue *self, unsigned consumer, unsigned group)
{
    atomic_fetch_sub_explicit (&self->depth[consumer], 1, memory_order_relaxed);
    unsigned n = atomic_fetch_sub (&self->groups[group].in_flight, 1) - 1;
    //  A producer sleeps only on a full group, which passes low water on
    //  its way down: one wake there, not one per release below it while
    //  the woken thread waits to run.  The mutex orders the wake after a
    //  sleeper's last look at the count; the broadcast itself comes after
    //  it is released, so that the woken thread does not wait for it.
    if (n == self->low_water && atomic_load (&self->waiters) > 0) {
        pthread_mutex_lock (&self->mutex);
        pthread_mutex_unlock (&self->mutex);
        pthread_cond_broadcast (&self->drained);
    }
}

//  Whether a message of SIZE bytes takes a credit.  A batch does; a marker,
//  a header alone (no batch is sent empty), does not: a producer sends each
//  consumer one per epoch and one at its end, and cannot send the next
//  epoch's before the controller has seen every consumer pass this one's,
//  so markers bound themselves.  Their sending every consumer one each
//  made them the most of a wide stage's messages: 256 producers feeding
//  256 consumers through 16 credits sent 65,536 markers, and woke every
//  blocked producer 8,000 times to do it.  Told by size, not by reading
//  the header, so that a consumer gives a batch's credit back before it
//  reads the batch: that atomic is also what tells ThreadSanitizer the
//  producer's writes came first (it cannot see libzmq's own).
static int s_takes_credit (size_t size)
{
    return size > WEIR__BATCH_HEADER;
}

//  Send MSG to CONSUMER; the message is ours again when this fails.
static int s_send_to (weir__queue *self, unsigned producer, unsigned consumer, zmq_msg_t *msg,
                      uint64_t *wait_ns)
{
    unsigned group = self->group[producer];
    int credit = s_takes_credit (zmq_msg_size (msg));
    if (credit) {
        if (s_acquire (self, &self->groups[group], wait_ns))
            return WEIR__QUEUE_CLOSED;
        atomic_fetch_add_explicit (&self->depth[consumer], 1, memory_order_relaxed);
    }
    //  Never blocks: the marks are off and the credits bound the queue.
    //  The group's frame, then the message: ZeroMQ delivers a message's
    //  frames together or not at all
    int rc = 0;
    void *s = self->shared ? self->out[consumer] : self->out[producer * self->consumers + consumer];
    if (self->shared)
        pthread_mutex_lock (&self->lock[consumer]);
    //  Each frame again if a signal cut its send short: with shared
    //  sockets, a group's frame left without its message would lead the
    //  next producer's
    if (self->ngroups > 1)
        while ((rc = zmq_send (s, &group, sizeof group, ZMQ_SNDMORE) < 0) && zmq_errno () == EINTR)
            ;
    if (!rc)
        while ((rc = zmq_msg_send (msg, s, 0) < 0) && zmq_errno () == EINTR)
            ;
    if (self->shared)
        pthread_mutex_unlock (&self->lock[consumer]);
    if (rc) {
        if (credit)
            s_release (self, consumer, group);
        return WEIR__QUEUE_CLOSED;
    }
    return 0;
}

//  The least loaded consumer: a slow thread does not collect a backlog
//  while its siblings idle.  The search starts at a producer-dependent
//  place so that ties spread out.
static unsigned s_target (weir__queue *self, unsigned producer)
{
    unsigned target = 0;
    if (self->consumers > 1) {
        unsigned best = UINT32_MAX;
        for (unsigned i = 0; i < self->consumers; i++) {
            unsigned c = (producer + i) % self->consumers;
            unsigned d = atomic_load_explicit (&self->depth[c], memory_order_relaxed);
            if (d < best) {
                best = d;
                target = c;
            }
        }
    }
    return target;
}

static void s_free (void *data, void *hint)
{
    free (data);
}

//  MSG to each of the N TARGETS: copies that share its buffer down all
//  but the first (ZeroMQ counts the references: the last receiver to let
//  go frees it), then MSG itself, which is then empty.  0 or
//  WEIR__QUEUE_CLOSED (MSG is the caller's to close either way).
static int s_send_all (const weir__queue_target *targets, size_t n, zmq_msg_t *msg, uint64_t *wait_ns)
{
    int rc = 0;
    for (size_t i = n; i-- > 1 && !rc;) {
        weir__queue *q = targets[i].queue;
        zmq_msg_t copy;
        zmq_msg_init (&copy);
        rc = zmq_msg_copy (&copy, msg) < 0 ? WEIR__QUEUE_CLOSED
                                           : s_send_to (q, targets[i].producer, s_target (q, targets[i].producer),
                                                        &copy, wait_ns);
        zmq_msg_close (&copy);
    }
    if (!rc && n) {
        weir__queue *q = targets[0].queue;
        rc = s_send_to (q, targets[0].producer, s_target (q, targets[0].producer), msg, wait_ns);
    }
    return rc;
}

//  B's buffer made message MSG, B given a fresh one.  0 or WEIR_ENOMEM
//  (B left as it was).
static int s_message (weir__batch *b, zmq_msg_t *msg)
{
    size_t len;
    char *data = weir__batch_take (b, &len);
    if (!data)
        return WEIR_ENOMEM;
    if (zmq_msg_init_data (msg, data, len, s_free, NULL)) {
        free (data);
        return WEIR_ENOMEM;
    }
    return 0;
}

int weir__queue_send_batch_all (const weir__queue_target *targets, size_t n, weir__batch *b, uint64_t *wait_ns)
{
    zmq_msg_t msg;
    if (s_message (b, &msg))
        return WEIR_ENOMEM;
    int rc = s_send_all (targets, n, &msg, wait_ns);
    zmq_msg_close (&msg);
    return rc;
}

int weir__queue_send_batch (weir__queue *self, unsigned producer, weir__batch *b, uint64_t *wait_ns)
{
    weir__queue_target one = {self, producer};
    return weir__queue_send_batch_all (&one, 1, b, wait_ns);
}

int weir__queue_send_batch_to (weir__queue *self, unsigned producer, unsigned consumer, weir__batch *b,
                               uint64_t *wait_ns)
{
    zmq_msg_t msg;
    if (s_message (b, &msg))
        return WEIR_ENOMEM;
    int rc = s_send_to (self, producer, consumer, &msg, wait_ns);
    zmq_msg_close (&msg);
    return rc;
}

unsigned weir__queue_consumers (const weir__queue *self)
{
    return self->consumers;
}

//  With shared sockets, a producer's marker only counts it in, and the last
//  of a round sends one marker, standing for every producer, to each
//  consumer.  Sending it after every producer has counted itself in puts
//  it behind every producer's data in each consumer's one pipe, which is
//  what a marker from each would have said.  P x C markers per round were
//  most of what a wide job sent: 3 stages of 256 threads spent half their
//  time on them.  A round is over before the next can start: a producer
//  sends the next barrier only once the controller has seen every
//  consumer pass this one, and a stream ends once.  That rests on every
//  producer waiting at the controller after each barrier: markers sent
//  outside it (a barrier of one stage alone, a thread leaving without
//  its barrier) would mix rounds.
static int s_round_in (weir__queue *self, uint32_t kind, uint32_t *flag)
{
    s_round *r = &self->rounds[kind == WEIR__BATCH_BARRIER];
    if (*flag == 0)
        atomic_store (&r->zero, 1);
    if (atomic_fetch_add (&r->arrived, 1) + 1 < self->producers)
        return 0;
    *flag = !atomic_exchange (&r->zero, 0);
    atomic_store (&r->arrived, 0);
    return 1;
}

int weir__queue_send_marker (weir__queue *self, unsigned producer, uint32_t kind, uint32_t flag,
                             uint64_t *wait_ns)
{
    if (self->shared && self->producers > 1 && !s_round_in (self, kind, &flag))
        return 0;
    weir__batch_header marker = {.kind = kind, .count = flag};
    for (unsigned c = 0; c < self->consumers; c++) {
        zmq_msg_t msg;
        if (zmq_msg_init_size (&msg, sizeof marker))
            return WEIR_ENOMEM;
        memcpy (zmq_msg_data (&msg), &marker, sizeof marker);
        int rc = s_send_to (self, producer, c, &msg, wait_ns);
        if (rc) {
            zmq_msg_close (&msg);
            return rc;
        }
    }
    return 0;
}

unsigned weir__queue_marker_weight (const weir__queue *self)
{
    return self->shared ? self->producers : 1;
}

int weir__queue_recv (weir__queue *self, unsigned consumer, weir__batch_header *hdr, const char **payload,
                      size_t *len, uint64_t *wait_ns)
{
    return weir__queue_recv_within (self, consumer, hdr, payload, len, -1, wait_ns);
}

int weir__queue_recv_within (weir__queue *self, unsigned consumer, weir__batch_header *hdr,
                             const char **payload, size_t *len, int timeout_ms, uint64_t *wait_ns)
{
    void *s = self->in[consumer];
    zmq_msg_t *msg = &self->held[consumer];
    //  Receiving into the held message releases what it held
    int got = zmq_msg_recv (msg, s, ZMQ_DONTWAIT) >= 0;
    //  Before sleeping, give the producer a few chances to deliver: waking
    //  a sleeping thread costs about 10 us, a yield far less; and yielding,
    //  unlike spinning, lets the producer run when both share a core.
    for (int i = 0; !got && i < S_YIELDS; i++) {
        if (zmq_errno () != EAGAIN)
            return WEIR__QUEUE_CLOSED;
        sched_yield ();
        got = zmq_msg_recv (msg, s, ZMQ_DONTWAIT) >= 0;
    }
    if (!got) {
        if (zmq_errno () != EAGAIN)
            return WEIR__QUEUE_CLOSED;
        uint64_t start = weir__now_ns ();
        int rc;
        if (timeout_ms >= 0) {
            zmq_pollitem_t item = {s, 0, ZMQ_POLLIN, 0};
            while ((rc = zmq_poll (&item, 1, timeout_ms)) < 0 && zmq_errno () == EINTR)
                ;
            if (wait_ns)
                *wait_ns += weir__now_ns () - start;
            if (rc == 0)
                return WEIR__QUEUE_TIMEOUT;
            if (rc < 0)
                return WEIR__QUEUE_CLOSED;
            start = weir__now_ns ();
        }
        while ((rc = zmq_msg_recv (msg, s, 0)) < 0 && zmq_errno () == EINTR)
            ;
        if (wait_ns)
            *wait_ns += weir__now_ns () - start;
        if (rc < 0)
            return WEIR__QUEUE_CLOSED;
    }
    //  A group's frame: the message follows it, already delivered
    unsigned group = 0;
    if (self->ngroups > 1) {
        if (zmq_msg_size (msg) != sizeof group)
            return WEIR_ESYSTEM;
        memcpy (&group, zmq_msg_data (msg), sizeof group);
        if (group >= self->ngroups || zmq_msg_recv (msg, s, 0) < 0)
            return WEIR_ESYSTEM;
    }
    const char *data = zmq_msg_data (msg);
    size_t size = zmq_msg_size (msg);
    if (s_takes_credit (size))
        s_release (self, consumer, group);
    if (weir__batch_header_read (data, size, hdr))
        return WEIR_ESYSTEM;
    *payload = data + WEIR__BATCH_HEADER;
    *len = size - WEIR__BATCH_HEADER;
    return 0;
}

int weir__queue_forward_all (weir__queue *self, unsigned consumer, const weir__queue_target *targets, size_t n,
                             uint64_t *wait_ns)
{
    //  A sent message is emptied: the held one is ready for the next receive
    return s_send_all (targets, n, &self->held[consumer], wait_ns);
}

void weir__queue_abort (weir__queue *self)
{
    atomic_store (&self->aborted, 1);
    pthread_mutex_lock (&self->mutex);
    pthread_cond_broadcast (&self->drained);
    pthread_mutex_unlock (&self->mutex);
}

unsigned weir__queue_fill (const weir__queue *self)
{
    unsigned n = 0;
    for (unsigned g = 0; g < self->ngroups; g++)
        n += atomic_load_explicit (&self->groups[g].in_flight, memory_order_relaxed);
    return n;
}

unsigned weir__queue_capacity (const weir__queue *self)
{
    return self->capacity * self->ngroups;
}

/*  tests/check_queue.c - the bounded queue: exact bound, no loss, FIFO per
    producer, wake-ups, abort.  */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "lib/pack.h"
#include "lib/queue.h"
#include "tests/testutil.h"

static void s_sleep_ms (int ms)
{
    struct timespec ts = {ms / 1000, (long) (ms % 1000) * 1000000L};
    nanosleep (&ts, NULL);
}

#define S_STOP 0xffffffffu

//  A batch of one record, the integer V.
static int s_send_u32 (weir__queue *q, unsigned producer, uint32_t v)
{
    weir__batch b;
    ck_assert_int_eq (weir__batch_init (&b, 64), 0);
    ck_assert_int_eq (weir__pack_uint64 (&b, v), 0);
    b.count = 1;
    int rc = weir__queue_send_batch (q, producer, &b, NULL);
    weir__batch_release (&b);
    return rc;
}

//  The integer of the next batch, or S_STOP for an end-of-stream marker.
static uint32_t s_recv_u32 (weir__queue *q, unsigned consumer)
{
    weir__batch_header hdr;
    const char *payload;
    size_t len;
    ck_assert_int_eq (weir__queue_recv (q, consumer, &hdr, &payload, &len, NULL), 0);
    if (hdr.kind == WEIR__BATCH_EOS)
        return S_STOP;
    ck_assert_uint_eq (hdr.kind, WEIR__BATCH_DATA);
    ck_assert_uint_eq (hdr.count, 1);
    weir__records it;
    ck_assert_int_eq (weir__records_init (&it), 0);
    weir__records_reset (&it, payload, len);
    msgpack_object o;
    ck_assert_int_eq (weir__records_next (&it, &o), 1);
    ck_assert_int_eq (o.type, MSGPACK_OBJECT_POSITIVE_INTEGER);
    uint32_t v = (uint32_t) o.via.u64;
    ck_assert_int_eq (weir__records_next (&it, &o), 0);
    weir__records_release (&it);
    return v;
}

typedef struct {
    weir__queue *q;
    unsigned producer;
    unsigned total;    //  messages to send
    atomic_uint sent;  //  sends that returned
    int aborted;       //  a send failed
    int stop;          //  end with a stop marker to every consumer
} s_producer;

static void *s_produce (void *arg)
{
    s_producer *p = arg;
    for (unsigned i = 0; i < p->total; i++) {
        if (s_send_u32 (p->q, p->producer, (p->producer << 24) | i)) {
            p->aborted = 1;
            return NULL;
        }
        atomic_fetch_add (&p->sent, 1);
    }
    //  When asked, end with a stop marker to every consumer, behind the data
    if (p->stop && weir__queue_send_marker (p->q, p->producer, WEIR__BATCH_EOS, 0, NULL))
        p->aborted = 1;
    return NULL;
}

//  Wait until the producers have sent WANT in all, then a while longer to
//  see that they stay blocked there.
static unsigned s_settle (s_producer *ps, int n, unsigned want)
{
    unsigned total = 0;
    for (int tries = 0; tries < 500; tries++) {
        total = 0;
        for (int i = 0; i < n; i++)
            total += atomic_load (&ps[i].sent);
        if (total >= want)
            break;
        s_sleep_ms (10);
    }
    s_sleep_ms (100);
    total = 0;
    for (int i = 0; i < n; i++)
        total += atomic_load (&ps[i].sent);
    return total;
}

START_TEST (test_bound_is_exact)
{
    //  ZeroMQ alone would let sndhwm + rcvhwm messages through; the
    //  credits must stop the producer at exactly the capacity
    const unsigned capacities[] = {1, 2, 5, 16};
    for (size_t k = 0; k < sizeof capacities / sizeof capacities[0]; k++) {
        unsigned cap = capacities[k];
        weir__err err;
        weir__err_init (&err);
        weir__queue_ctx *ctx = weir__queue_ctx_new (0, &err);
        weir__queue *q = weir__queue_new (ctx, 1, 1, cap, &err);
        ck_assert_ptr_nonnull (q);
        s_producer p = {q, 0, cap + 50, 0, 0, 0};
        pthread_t t;
        pthread_create (&t, NULL, s_produce, &p);
        ck_assert_uint_eq (s_settle (&p, 1, cap), cap);
        ck_assert_uint_eq (weir__queue_fill (q), cap);
        //  Drain everything; nothing is lost, order is kept
        for (unsigned i = 0; i < cap + 50; i++) {
            ck_assert_uint_eq (s_recv_u32 (q, 0), i);
            ck_assert_uint_le (weir__queue_fill (q), cap);
        }
        pthread_join (t, NULL);
        ck_assert_int_eq (p.aborted, 0);
        ck_assert_uint_eq (weir__queue_fill (q), 0);
        weir__queue_destroy (&q);
        ck_assert_ptr_null (q);
        weir__queue_ctx_destroy (&ctx);
    }
}
END_TEST

typedef struct {
    weir__queue *q;
    unsigned consumer;
    unsigned seen[3][100];
    int ordered;  //  each producer's messages came in order
} s_consumer;

//  Receive until a stop marker (0xffffffff) came from every producer: a
//  consumer fair-queues between producers, so one producer's marker says
//  nothing about another's data, which is why the engine's end-of-stream
//  works the same way.
static void *s_consume (void *arg)
{
    s_consumer *c = arg;
    int next[3] = {-1, -1, -1};
    int stops = 0;
    c->ordered = 1;
    for (;;) {
        uint32_t v = s_recv_u32 (c->q, c->consumer);
        if (v == S_STOP && ++stops == 3)
            return NULL;
        if (v == S_STOP)
            continue;
        unsigned producer = v >> 24, index = v & 0xffffff;
        if (producer >= 3 || index >= 100)
            continue;
        if ((int) index <= next[producer])
            c->ordered = 0;
        next[producer] = (int) index;
        c->seen[producer][index]++;
    }
}

//  Two consumers drain Q until the three producers TP have ended: every
//  one of their 100 messages once, each producer's in order.
static void s_drain (weir__queue *q, pthread_t *tp)
{
    pthread_t tc[2];
    s_consumer cs[2];
    memset (cs, 0, sizeof cs);
    for (unsigned c = 0; c < 2; c++) {
        cs[c].q = q;
        cs[c].consumer = c;
        pthread_create (&tc[c], NULL, s_consume, &cs[c]);
    }
    for (int i = 0; i < 3; i++)
        pthread_join (tp[i], NULL);
    for (unsigned c = 0; c < 2; c++)
        pthread_join (tc[c], NULL);
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 100; k++)
            ck_assert_uint_eq (cs[0].seen[i][k] + cs[1].seen[i][k], 1);
    ck_assert (cs[0].ordered && cs[1].ordered);
}

START_TEST (test_bound_counts_all_producers)
{
    weir__err err;
    weir__err_init (&err);
    weir__queue_ctx *ctx = weir__queue_ctx_new (0, &err);
    weir__queue *q = weir__queue_new (ctx, 3, 2, 7, &err);
    ck_assert_ptr_nonnull (q);
    s_producer ps[3] = {{q, 0, 100, 0, 0, 1}, {q, 1, 100, 0, 0, 1}, {q, 2, 100, 0, 0, 1}};
    pthread_t tp[3];
    for (int i = 0; i < 3; i++)
        pthread_create (&tp[i], NULL, s_produce, &ps[i]);
    //  Three producers together stop at the one bound
    ck_assert_uint_eq (s_settle (ps, 3, 7), 7);
    s_drain (q, tp);
    weir__queue_destroy (&q);
    weir__queue_ctx_destroy (&ctx);
}
END_TEST

START_TEST (test_groups_are_bounded_apart)
{
    //  The links into a stage: producers 0 and 1 one group, producer 2
    //  another, 4 credits each.  The first group stops at its 4 together,
    //  and its being full leaves the other group its own 4.
    weir__err err;
    weir__err_init (&err);
    weir__queue_ctx *ctx = weir__queue_ctx_new (0, &err);
    const unsigned group[] = {0, 0, 1};
    weir__queue *q = weir__queue_new_grouped (ctx, 3, 2, 4, group, 2, &err);
    ck_assert_ptr_nonnull (q);
    ck_assert_uint_eq (weir__queue_capacity (q), 8);
    s_producer ps[3] = {{q, 0, 100, 0, 0, 1}, {q, 1, 100, 0, 0, 1}, {q, 2, 100, 0, 0, 1}};
    pthread_t tp[3];
    for (int i = 0; i < 3; i++)
        pthread_create (&tp[i], NULL, s_produce, &ps[i]);
    ck_assert_uint_eq (s_settle (ps, 3, 8), 8);
    ck_assert_uint_eq (atomic_load (&ps[0].sent) + atomic_load (&ps[1].sent), 4);
    ck_assert_uint_eq (atomic_load (&ps[2].sent), 4);
    ck_assert_uint_eq (weir__queue_fill (q), 8);
    //  Every message once, each producer's in order, the credits back
    s_drain (q, tp);
    ck_assert_uint_eq (weir__queue_fill (q), 0);
    weir__queue_destroy (&q);
    weir__queue_ctx_destroy (&ctx);
}
END_TEST

START_TEST (test_marker_reaches_every_consumer)
{
    weir__err err;
    weir__err_init (&err);
    weir__queue_ctx *ctx = weir__queue_ctx_new (0, &err);
    weir__queue *q = weir__queue_new (ctx, 2, 3, 2, &err);
    ck_assert_ptr_nonnull (q);
    //  The queue full: a marker takes no credit, so it still goes, behind
    //  the batches, and the credits count batches alone
    ck_assert_int_eq (s_send_u32 (q, 1, 7), 0);
    ck_assert_int_eq (s_send_u32 (q, 1, 8), 0);
    ck_assert_uint_eq (weir__queue_fill (q), 2);
    ck_assert_int_eq (weir__queue_send_marker (q, 1, WEIR__BATCH_BARRIER, 100, NULL), 0);
    ck_assert_uint_eq (weir__queue_fill (q), 2);
    unsigned data = 0;
    for (unsigned c = 3; c-- > 0;) {
        weir__batch_header hdr;
        const char *payload;
        size_t len;
        ck_assert_int_eq (weir__queue_recv (q, c, &hdr, &payload, &len, NULL), 0);
        while (hdr.kind == WEIR__BATCH_DATA) {
            data++;
            ck_assert_int_eq (weir__queue_recv (q, c, &hdr, &payload, &len, NULL), 0);
        }
        ck_assert_uint_eq (hdr.kind, WEIR__BATCH_BARRIER);
        ck_assert_uint_eq (hdr.count, 100);
        ck_assert_uint_eq (len, 0);
    }
    ck_assert_uint_eq (data, 2);
    ck_assert_uint_eq (weir__queue_fill (q), 0);
    weir__queue_destroy (&q);
    weir__queue_ctx_destroy (&ctx);
}
END_TEST

START_TEST (test_shared_markers_stand_for_all)
{
    //  9 x 8 pairs: the producers share a socket per consumer, and a
    //  round's markers go once, when the last producer sends its own,
    //  standing for all 9, with a flag that is 1 only when all were
    //  non-zero.  Each marker still comes behind every producer's data.
    weir__err err;
    weir__err_init (&err);
    weir__queue_ctx *ctx = weir__queue_ctx_new (0, &err);
    weir__queue *q = weir__queue_new (ctx, 9, 8, 100, &err);
    ck_assert_ptr_nonnull (q);
    ck_assert_uint_eq (weir__queue_marker_weight (q), 9);
    for (unsigned round = 0; round < 2; round++) {
        for (unsigned p = 0; p < 9; p++) {
            ck_assert_int_eq (s_send_u32 (q, p, p), 0);
            //  Round 0: producer 4 says 0; round 1: all say 7
            uint32_t flag = round == 0 && p == 4 ? 0 : 7;
            ck_assert_int_eq (weir__queue_send_marker (q, p, WEIR__BATCH_BARRIER, flag, NULL), 0);
        }
        unsigned data = 0;
        for (unsigned c = 0; c < 8; c++) {
            weir__batch_header hdr;
            const char *payload;
            size_t len;
            for (;;) {
                ck_assert_int_eq (weir__queue_recv (q, c, &hdr, &payload, &len, NULL), 0);
                if (hdr.kind != WEIR__BATCH_DATA)
                    break;
                data++;
            }
            ck_assert_uint_eq (hdr.kind, WEIR__BATCH_BARRIER);
            ck_assert_uint_eq (hdr.count, round == 0 ? 0 : 1);
            //  One marker per consumer and round: nothing else waits
            weir__batch_header more;
            ck_assert_int_eq (weir__queue_recv_within (q, c, &more, &payload, &len, 0, NULL),
                              WEIR__QUEUE_TIMEOUT);
        }
        ck_assert_uint_eq (data, 9);
    }
    weir__queue_destroy (&q);
    weir__queue_ctx_destroy (&ctx);
}
END_TEST

START_TEST (test_least_loaded_consumer)
{
    //  With consumer 0 holding a backlog, new batches go to consumer 1
    weir__err err;
    weir__err_init (&err);
    weir__queue_ctx *ctx = weir__queue_ctx_new (0, &err);
    weir__queue *q = weir__queue_new (ctx, 1, 2, 16, &err);
    ck_assert_ptr_nonnull (q);
    //  Ties alternate: 0 and 2 to consumer 0, 1 to consumer 1
    for (uint32_t i = 0; i < 3; i++)
        ck_assert_int_eq (s_send_u32 (q, 0, i), 0);
    ck_assert_uint_eq (s_recv_u32 (q, 1), 1);
    ck_assert_int_eq (s_send_u32 (q, 0, 77), 0);
    ck_assert_int_eq (s_send_u32 (q, 0, 78), 0);
    ck_assert_uint_eq (s_recv_u32 (q, 1), 77);
    ck_assert_uint_eq (s_recv_u32 (q, 1), 78);
    ck_assert_uint_eq (s_recv_u32 (q, 0), 0);
    ck_assert_uint_eq (s_recv_u32 (q, 0), 2);
    weir__queue_destroy (&q);
    weir__queue_ctx_destroy (&ctx);
}
END_TEST

START_TEST (test_forward_passes_the_batch_on)
{
    //  A received batch goes on untouched, to one queue, then to three (a
    //  tee: copies that share the buffer); and a batch sent to three
    //  (a tee in its producer's threads)
    weir__err err;
    weir__err_init (&err);
    weir__queue_ctx *ctx = weir__queue_ctx_new (0, &err);
    weir__queue *a = weir__queue_new (ctx, 1, 1, 4, &err);
    weir__queue *b = weir__queue_new (ctx, 1, 1, 4, &err);
    weir__queue *c = weir__queue_new (ctx, 2, 1, 4, &err);
    ck_assert (a && b && c);
    weir__batch_header hdr;
    const char *payload;
    size_t len;
    ck_assert_int_eq (s_send_u32 (a, 0, 4242), 0);
    ck_assert_int_eq (weir__queue_recv (a, 0, &hdr, &payload, &len, NULL), 0);
    weir__queue_target one = {b, 0};
    ck_assert_int_eq (weir__queue_forward_all (a, 0, &one, 1, NULL), 0);
    ck_assert_uint_eq (weir__queue_fill (a), 0);
    ck_assert_uint_eq (weir__queue_fill (b), 1);
    ck_assert_uint_eq (s_recv_u32 (b, 0), 4242);
    weir__queue_target three[] = {{b, 0}, {c, 0}, {c, 1}};
    ck_assert_int_eq (s_send_u32 (a, 0, 77), 0);
    ck_assert_int_eq (weir__queue_recv (a, 0, &hdr, &payload, &len, NULL), 0);
    ck_assert_int_eq (weir__queue_forward_all (a, 0, three, 3, NULL), 0);
    ck_assert_uint_eq (weir__queue_fill (b), 1);
    ck_assert_uint_eq (weir__queue_fill (c), 2);
    ck_assert_uint_eq (s_recv_u32 (b, 0), 77);
    ck_assert_uint_eq (s_recv_u32 (c, 0), 77);
    ck_assert_uint_eq (s_recv_u32 (c, 0), 77);
    weir__batch batch;
    ck_assert_int_eq (weir__batch_init (&batch, 64), 0);
    ck_assert_int_eq (weir__pack_uint64 (&batch, 99), 0);
    batch.count = 1;
    ck_assert_int_eq (weir__queue_send_batch_all (three, 3, &batch, NULL), 0);
    weir__batch_release (&batch);
    ck_assert_uint_eq (s_recv_u32 (b, 0), 99);
    ck_assert_uint_eq (s_recv_u32 (c, 0), 99);
    ck_assert_uint_eq (s_recv_u32 (c, 0), 99);
    ck_assert_uint_eq (weir__queue_fill (b) + weir__queue_fill (c), 0);
    weir__queue_destroy (&a);
    weir__queue_destroy (&b);
    weir__queue_destroy (&c);
    weir__queue_ctx_destroy (&ctx);
}
END_TEST

START_TEST (test_abort_wakes_blocked_producer)
{
    weir__err err;
    weir__err_init (&err);
    weir__queue_ctx *ctx = weir__queue_ctx_new (0, &err);
    weir__queue *q = weir__queue_new (ctx, 1, 1, 2, &err);
    ck_assert_ptr_nonnull (q);
    s_producer p = {q, 0, 10, 0, 0, 0};
    pthread_t t;
    pthread_create (&t, NULL, s_produce, &p);
    ck_assert_uint_eq (s_settle (&p, 1, 2), 2);
    weir__queue_abort (q);
    pthread_join (t, NULL);
    ck_assert_int_eq (p.aborted, 1);
    ck_assert_uint_eq (atomic_load (&p.sent), 2);
    //  Once aborted, sends fail at once
    ck_assert_int_eq (s_send_u32 (q, 0, 1), WEIR__QUEUE_CLOSED);
    weir__queue_destroy (&q);
    weir__queue_ctx_destroy (&ctx);
}
END_TEST

static void *s_blocked_recv (void *arg)
{
    weir__queue *q = arg;
    weir__batch_header hdr;
    const char *payload;
    size_t len;
    intptr_t rc = weir__queue_recv (q, 0, &hdr, &payload, &len, NULL);
    return (void *) rc;
}

START_TEST (test_context_shutdown_wakes_receiver)
{
    weir__err err;
    weir__err_init (&err);
    weir__queue_ctx *ctx = weir__queue_ctx_new (0, &err);
    weir__queue *q = weir__queue_new (ctx, 1, 1, 4, &err);
    ck_assert_ptr_nonnull (q);
    pthread_t t;
    pthread_create (&t, NULL, s_blocked_recv, q);
    s_sleep_ms (50);
    weir__queue_ctx_shutdown (ctx);
    void *rc;
    pthread_join (t, &rc);
    ck_assert_int_eq ((int) (intptr_t) rc, WEIR__QUEUE_CLOSED);
    weir__queue_destroy (&q);
    weir__queue_ctx_destroy (&ctx);
}
END_TEST

START_TEST (test_bad_arguments)
{
    weir__err err;
    weir__err_init (&err);
    weir__queue_ctx *ctx = weir__queue_ctx_new (0, &err);
    ck_assert_ptr_null (weir__queue_new (ctx, 1, 1, 0, &err));
    ck_assert_int_ne (err.code, 0);
    //  A producer in a group the queue does not have
    const unsigned group[] = {0, 2};
    weir__err_init (&err);
    ck_assert_ptr_null (weir__queue_new_grouped (ctx, 2, 1, 4, group, 2, &err));
    ck_assert_int_ne (err.code, 0);
    weir__queue *q = NULL;
    weir__queue_destroy (&q);
    weir__queue_ctx_destroy (&ctx);
}
END_TEST

#define S_MANY 40

typedef struct {
    weir__queue *q;
    unsigned consumer, producers;
    unsigned seen[S_MANY][50];
    int ordered;
} s_many;

static void *s_consume_many (void *arg)
{
    s_many *c = arg;
    int next[S_MANY];
    for (int i = 0; i < S_MANY; i++)
        next[i] = -1;
    unsigned stops = 0;
    c->ordered = 1;
    while (stops < c->producers) {
        uint32_t v = s_recv_u32 (c->q, c->consumer);
        if (v == S_STOP) {
            stops += weir__queue_marker_weight (c->q);
            continue;
        }
        unsigned producer = v >> 24, index = v & 0xffffff;
        ck_assert_uint_lt (producer, c->producers);
        ck_assert_uint_lt (index, 50);
        if ((int) index <= next[producer])
            c->ordered = 0;
        next[producer] = (int) index;
        c->seen[producer][index]++;
    }
    return NULL;
}

START_TEST (test_many_pairs)
{
    //  12 x 8 pairs, then 40 x 40: past the pairs a queue connects with a
    //  socket each, so the producers of a consumer share one socket to it.
    //  Nothing is lost, each stream stays FIFO, markers reach every
    //  consumer, and the bound holds.
    weir__err err;
    weir__err_init (&err);
    weir__queue_ctx *ctx = weir__queue_ctx_new (0, &err);
    //  With one group and with three (each message led by its group's
    //  frame), each on 12 x 8 and on 40 x 40 threads
    unsigned groups = (unsigned) _i % 2 ? 3 : 1, group[S_MANY];
    unsigned np = _i < 2 ? 12 : S_MANY, nc = _i < 2 ? 8 : S_MANY;
    for (unsigned p = 0; p < np; p++)
        group[p] = p % groups;
    weir__queue *q = weir__queue_new_grouped (ctx, np, nc, 5, group, groups, &err);
    ck_assert_ptr_nonnull (q);
    //  A PULL and a shared PUSH per consumer
    ck_assert_uint_eq (weir__queue_sockets (np, nc), 2 * nc);
    static s_producer ps[S_MANY];
    pthread_t tp[S_MANY], tc[S_MANY];
    for (unsigned i = 0; i < np; i++) {
        ps[i] = (s_producer){q, i, 50, 0, 0, 1};
        pthread_create (&tp[i], NULL, s_produce, &ps[i]);
    }
    ck_assert_uint_eq (s_settle (ps, (int) np, 5 * groups), 5 * groups);
    static s_many cs[S_MANY];
    memset (cs, 0, sizeof cs);
    for (unsigned c = 0; c < nc; c++) {
        cs[c].q = q;
        cs[c].consumer = c;
        cs[c].producers = np;
        pthread_create (&tc[c], NULL, s_consume_many, &cs[c]);
    }
    for (unsigned i = 0; i < np; i++)
        pthread_join (tp[i], NULL);
    for (unsigned c = 0; c < nc; c++)
        pthread_join (tc[c], NULL);
    for (unsigned p = 0; p < np; p++)
        for (unsigned k = 0; k < 50; k++) {
            unsigned n = 0;
            for (unsigned c = 0; c < nc; c++)
                n += cs[c].seen[p][k];
            ck_assert_uint_eq (n, 1);
        }
    for (unsigned c = 0; c < nc; c++)
        ck_assert (cs[c].ordered);
    weir__queue_destroy (&q);
    weir__queue_ctx_destroy (&ctx);
}
END_TEST

Suite *check_suite (void)
{
    Suite *s = suite_create ("queue");
    TCase *tc = tcase_create ("core");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_bound_is_exact);
    tcase_add_test (tc, test_bound_counts_all_producers);
    tcase_add_test (tc, test_marker_reaches_every_consumer);
    tcase_add_test (tc, test_shared_markers_stand_for_all);
    tcase_add_test (tc, test_least_loaded_consumer);
    tcase_add_test (tc, test_forward_passes_the_batch_on);
    tcase_add_loop_test (tc, test_many_pairs, 0, 4);
    tcase_add_test (tc, test_groups_are_bounded_apart);
    tcase_add_test (tc, test_abort_wakes_blocked_producer);
    tcase_add_test (tc, test_context_shutdown_wakes_receiver);
    tcase_add_test (tc, test_bad_arguments);
    suite_add_tcase (s, tc);
    return s;
}

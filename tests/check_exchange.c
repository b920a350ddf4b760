/*  tests/check_exchange.c - the keyed links between ranks (lib/exchange)
    and the address one rank reaches another at (lib/hostaddr): two
    exchanges of one process stand for two ranks, over tcp on loopback.  */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <zmq.h>

#include "lib/exchange.h"
#include "lib/hostaddr.h"
#include "lib/pack.h"
#include "tests/testutil.h"

/*  ---- addresses ----  */

#define S_A "boot-a 4026531840 10.1.0.5/16 192.168.7.2/24 127.0.0.1/8"
#define S_A2 "boot-a 4026531840 127.0.0.1/8"
#define S_B "boot-b 4026531840 10.1.3.9/16 172.16.0.4/12 127.0.0.1/8"
#define S_C "boot-a 4026532999 192.168.7.8/24 127.0.0.1/8"
#define S_LONELY "boot-d 4026531840 127.0.0.1/8"

static char *s_pick (const char *from, const char *to, const char *net, char *out, weir__err *err)
{
    weir__err_init (err);
    return weir__hostaddr_pick (from, to, net, out, 32, err) ? NULL : out;
}

START_TEST (test_pick)
{
    char out[32];
    weir__err err;
    //  One boot and one namespace: one network stack
    ck_assert_str_eq (s_pick (S_A, S_A2, NULL, out, &err), "127.0.0.1");
    //  Other hosts: the first of TO's addresses on one of FROM's networks,
    //  never another stack's loopback
    ck_assert_str_eq (s_pick (S_A, S_B, NULL, out, &err), "10.1.3.9");
    ck_assert_str_eq (s_pick (S_B, S_A, NULL, out, &err), "10.1.0.5");
    //  Another namespace of the same boot is another stack
    ck_assert_str_eq (s_pick (S_A, S_C, NULL, out, &err), "192.168.7.8");
    //  Nor a loopback this host lacks: Debian names a host 127.0.1.1
    ck_assert_ptr_null (s_pick ("boot-a 1 127.0.0.1/8", "boot-b 1 127.0.1.1/8", NULL, out, &err));
    //  An address both hosts have (a containers' bridge) is neither's
    ck_assert_str_eq (
        s_pick ("boot-a 1 172.17.0.1/16 10.5.0.2/24", "boot-b 1 172.17.0.1/16 10.5.0.3/24", NULL, out, &err),
        "10.5.0.3");
    //  Told the network: TO's address in it, even for its own stack
    ck_assert_str_eq (s_pick (S_A, S_A, "192.168.0.0/16", out, &err), "192.168.7.2");
    ck_assert_str_eq (s_pick (S_C, S_A, "192.168.7.0/24", out, &err), "192.168.7.2");
    //  No network in common, or none in NET: said, naming the setting
    ck_assert_ptr_null (s_pick (S_B, S_C, NULL, out, &err));
    ck_assert_int_eq (err.code, WEIR_EINVAL);
    ck_assert_ptr_nonnull (strstr (err.msg, "WEIR_EXCHANGE_NET"));
    ck_assert_ptr_null (s_pick (S_A, S_LONELY, NULL, out, &err));
    ck_assert_ptr_null (s_pick (S_A, S_B, "172.16.0.0/12", out, &err) ? NULL : out + 32);
    ck_assert_ptr_null (s_pick (S_A, S_B, "10.1", out, &err));
    ck_assert_ptr_nonnull (strstr (err.msg, "WEIR_EXCHANGE_NET=10.1 is not a network"));
    ck_assert_ptr_null (s_pick (S_A, S_B, "10.0.0.0/33", out, &err));
    //  A card that is not one
    ck_assert_ptr_null (s_pick (S_A, "boot-x 1 10.0.0.1/99", NULL, out, &err));
    ck_assert_ptr_null (s_pick ("boot-x 1 nonsense", S_A, NULL, out, &err));
}
END_TEST

START_TEST (test_listen)
{
    char out[32];
    weir__err err;
    weir__err_init (&err);
    const char *local[] = {S_A, S_A2};
    const char *spread[] = {S_A, S_B};
    ck_assert_int_eq (weir__hostaddr_listen (S_A, local, 2, NULL, out, sizeof out, &err), 0);
    ck_assert_str_eq (out, "127.0.0.1");
    ck_assert_int_eq (weir__hostaddr_listen (S_A, spread, 2, NULL, out, sizeof out, &err), 0);
    ck_assert_str_eq (out, "0.0.0.0");
    ck_assert_int_eq (weir__hostaddr_listen (S_A, spread, 2, "10.1.0.0/16", out, sizeof out, &err), 0);
    ck_assert_str_eq (out, "10.1.0.5");
    ck_assert_int_eq (weir__hostaddr_listen (S_A, spread, 2, "172.16.0.0/12", out, sizeof out, &err),
                      WEIR_EINVAL);
    ck_assert_ptr_nonnull (strstr (err.msg, "has no address on it"));
}
END_TEST

START_TEST (test_card_of_this_host)
{
    char card[WEIR__HOSTADDR_CARD], out[32];
    weir__err err;
    weir__err_init (&err);
    ck_assert_int_eq (weir__hostaddr_card (card, sizeof card, &err), 0);
    //  Its own stack, and its loopback when told 127.0.0.0/8
    ck_assert (weir__hostaddr_same (card, card));
    ck_assert_str_eq (s_pick (card, card, NULL, out, &err), "127.0.0.1");
    ck_assert_str_eq (s_pick (card, card, "127.0.0.0/8", out, &err), "127.0.0.1");
    ck_assert (!weir__hostaddr_same (card, S_B));
}
END_TEST

/*  ---- two ranks over loopback ----  */

//  Rank R of 2 with one keyed link into Q: 2 producer threads per rank
//  (the link's producers 0..3, rank r's from 2r), 2 consumer threads
typedef struct {
    weir__queue_ctx *ctx;
    weir__queue *q;
    weir__exchange *ex;
    unsigned port;  //  its link's
    atomic_int failed;
    char why[1024];
} s_rank;

static void s_fail (void *arg, const weir__err *err)
{
    s_rank *r = arg;
    snprintf (r->why, sizeof r->why, "%s", err->msg);
    atomic_store (&r->failed, 1);
}

static void s_ranks (s_rank ranks[2], unsigned capacity)
{
    weir__err err;
    weir__err_init (&err);
    unsigned ports[2][1];
    for (unsigned r = 0; r < 2; r++) {
        memset (&ranks[r], 0, sizeof ranks[r]);
        ranks[r].ctx = weir__queue_ctx_new (64, &err);
        ck_assert_ptr_nonnull (ranks[r].ctx);
        ranks[r].q = weir__queue_new (ranks[r].ctx, 4, 2, capacity, &err);
        ck_assert_ptr_nonnull (ranks[r].q);
        ranks[r].ex = weir__exchange_new (1, r, 2, capacity, &err);
        ck_assert_ptr_nonnull (ranks[r].ex);
        ck_assert_int_eq (weir__exchange_bind (ranks[r].ex, "127.0.0.1", ports[r], &err), 0);
        ck_assert_uint_gt (ports[r][0], 0);
        ranks[r].port = ports[r][0];
    }
    for (unsigned r = 0; r < 2; r++) {
        char endpoint[64];
        snprintf (endpoint, sizeof endpoint, "tcp://127.0.0.1:%u", ports[1 - r][0]);
        ck_assert_int_eq (weir__exchange_connect (ranks[r].ex, 0, 1 - r, endpoint, &err), 0);
        ck_assert_int_eq (weir__exchange_start (ranks[r].ex, 0, ranks[r].q, 0, 2, s_fail, &ranks[r], &err),
                          0);
    }
}

static void s_ranks_end (s_rank ranks[2])
{
    for (unsigned r = 0; r < 2; r++) {
        weir__exchange_destroy (&ranks[r].ex);
        ck_assert_ptr_null (ranks[r].ex);
        weir__queue_destroy (&ranks[r].q);
        weir__queue_ctx_destroy (&ranks[r].ctx);
    }
}

//  A batch of the integers FROM .. FROM + N - 1, of KIND
static void s_batch (weir__batch *b, uint32_t kind, uint64_t from, unsigned n)
{
    ck_assert_int_eq (weir__batch_init (b, 64), 0);
    for (unsigned i = 0; i < n; i++)
        ck_assert_int_eq (weir__pack_uint64 (b, from + i), 0);
    b->count = n;
    b->kind = kind;
}

//  The next message of CONSUMER of Q: its header, and its first integer
static uint64_t s_next (weir__queue *q, unsigned consumer, weir__batch_header *hdr)
{
    const char *payload;
    size_t len;
    ck_assert_int_eq (weir__queue_recv (q, consumer, hdr, &payload, &len, NULL), 0);
    if (hdr->kind == WEIR__BATCH_EOS || hdr->kind == WEIR__BATCH_BARRIER)
        return UINT64_MAX;
    weir__records it;
    ck_assert_int_eq (weir__records_init (&it), 0);
    weir__records_reset (&it, payload, len);
    msgpack_object o;
    ck_assert_int_eq (weir__records_next (&it, &o), 1);
    uint64_t v = o.via.u64;
    weir__records_release (&it);
    return v;
}

//  Both ranks greet each other before any record
typedef struct {
    weir__exchange *ex;
    const uint64_t *shapes;
    int rc;
    weir__err err;
} s_greeter;

static void *s_greet (void *arg)
{
    s_greeter *g = arg;
    weir__err_init (&g->err);
    g->rc = weir__exchange_greet (g->ex, g->shapes, 5000, &g->err);
    return NULL;
}

//  Two ranks of 2 links greet each other; with SHAPE_OF_ONE, rank 1's
//  second link is not rank 0's
static void s_two_greet (uint64_t shape_of_one, int *rc0, int *rc1, weir__err *err0, weir__err *err1)
{
    weir__err err;
    weir__err_init (&err);
    weir__exchange *ex[2];
    unsigned ports[2][2];
    for (unsigned r = 0; r < 2; r++) {
        ex[r] = weir__exchange_new (2, r, 2, 4, &err);
        ck_assert_int_eq (weir__exchange_bind (ex[r], "127.0.0.1", ports[r], &err), 0);
    }
    for (unsigned r = 0; r < 2; r++)
        for (unsigned l = 0; l < 2; l++) {
            char endpoint[64];
            snprintf (endpoint, sizeof endpoint, "tcp://127.0.0.1:%u", ports[1 - r][l]);
            ck_assert_int_eq (weir__exchange_connect (ex[r], l, 1 - r, endpoint, &err), 0);
        }
    uint64_t mine[2] = {7, 9}, theirs[2] = {7, shape_of_one};
    s_greeter other = {ex[1], theirs, -1, {0}};
    pthread_t t;
    pthread_create (&t, NULL, s_greet, &other);
    weir__err_init (err0);
    *rc0 = weir__exchange_greet (ex[0], mine, 2000, err0);
    pthread_join (t, NULL);
    *rc1 = other.rc;
    *err1 = other.err;
    for (unsigned r = 0; r < 2; r++)
        weir__exchange_destroy (&ex[r]);
}

START_TEST (test_greet)
{
    int rc0, rc1;
    weir__err e0, e1;
    s_two_greet (9, &rc0, &rc1, &e0, &e1);
    ck_assert_int_eq (rc0, 0);
    ck_assert_int_eq (rc1, 0);
    //  Another shape of link 1 (another threads=, another build): both say so
    s_two_greet (10, &rc0, &rc1, &e0, &e1);
    ck_assert_int_eq (rc0, WEIR_EINVAL);
    ck_assert_msg (
        strstr (e0.msg, "rank 1's keyed link 1 is not rank 0's: the ranks run other threads= or builds"),
        "%s", e0.msg);
    ck_assert_int_eq (rc1, WEIR_EINVAL);
    ck_assert_msg (strstr (e1.msg, "rank 0's keyed link 1 is not rank 1's"), "%s", e1.msg);
}
END_TEST

//  Nobody at the other end: said within the time, naming the rank and
//  where this one listens
START_TEST (test_greet_unreached)
{
    weir__err err;
    weir__err_init (&err);
    weir__exchange *ex = weir__exchange_new (1, 0, 2, 4, &err), *gone = weir__exchange_new (1, 1, 2, 4, &err);
    unsigned port, dead;
    ck_assert_int_eq (weir__exchange_bind (ex, "127.0.0.1", &port, &err), 0);
    ck_assert_int_eq (weir__exchange_bind (gone, "127.0.0.1", &dead, &err), 0);
    weir__exchange_destroy (&gone);  //  its port is closed now
    char endpoint[64];
    snprintf (endpoint, sizeof endpoint, "tcp://127.0.0.1:%u", dead);
    ck_assert_int_eq (weir__exchange_connect (ex, 0, 1, endpoint, &err), 0);
    uint64_t shape = 1;
    ck_assert_int_eq (weir__exchange_greet (ex, &shape, 300, &err), WEIR_ESYSTEM);
    ck_assert_msg (strstr (err.msg,
                           "rank 0 heard nothing from rank 1 in 0.3 s on keyed link 0 (rank 0 listens at "
                           "tcp://127.0.0.1:"),
                   "%s", err.msg);
    ck_assert_ptr_nonnull (strstr (err.msg, "WEIR_EXCHANGE_NET"));
    weir__exchange_destroy (&ex);
}
END_TEST

START_TEST (test_batches_and_markers_cross)
{
    s_rank ranks[2];
    s_ranks (ranks, 16);
    //  Rank 0's producer 1 sends 20 batches to rank 1's thread 1, one of
    //  partial aggregates among them, then a barrier to every thread of
    //  rank 1; rank 1's own producer 3 sends into its queue meanwhile
    uint64_t wait = 0;
    for (unsigned i = 0; i < 20; i++) {
        weir__batch b;
        s_batch (&b, i == 7 ? WEIR__BATCH_COMBINED : WEIR__BATCH_DATA, 100 * i, 3);
        ck_assert_int_eq (weir__exchange_send (ranks[0].ex, 0, 1, 1, 1, &b, &wait), 0);
        ck_assert_uint_eq (b.count, 0);  //  cleared, kept for the next
        weir__batch_release (&b);
    }
    ck_assert_int_eq (weir__exchange_send_marker (ranks[0].ex, 0, 1, WEIR__BATCH_BARRIER, 1, &wait), 0);
    //  In order, from producer 1, the kinds and counts as sent
    weir__batch_header hdr;
    for (unsigned i = 0; i < 20; i++) {
        ck_assert_uint_eq (s_next (ranks[1].q, 1, &hdr), 100 * i);
        ck_assert_uint_eq (hdr.kind, i == 7 ? WEIR__BATCH_COMBINED : WEIR__BATCH_DATA);
        ck_assert_uint_eq (hdr.count, 3);
    }
    //  The marker reached both threads of rank 1, behind the data
    for (unsigned c = 0; c < 2; c++) {
        ck_assert_uint_eq (s_next (ranks[1].q, c, &hdr), UINT64_MAX);
        ck_assert_uint_eq (hdr.kind, WEIR__BATCH_BARRIER);
        ck_assert_uint_eq (hdr.count, 1);
    }
    //  And the other way
    weir__batch b;
    s_batch (&b, WEIR__BATCH_DATA, 7, 1);
    ck_assert_int_eq (weir__exchange_send (ranks[1].ex, 0, 0, 3, 0, &b, &wait), 0);
    weir__batch_release (&b);
    ck_assert_uint_eq (s_next (ranks[0].q, 0, &hdr), 7);
    uint64_t sent, sent_bytes, received, received_bytes;
    weir__exchange_counts (ranks[1].ex, 0, &sent, &sent_bytes, &received, &received_bytes);
    ck_assert_uint_eq (sent, 1);
    ck_assert_uint_eq (received, 21);
    ck_assert_uint_gt (received_bytes, 20 * WEIR__BATCH_HEADER);
    ck_assert (!atomic_load (&ranks[0].failed) && !atomic_load (&ranks[1].failed));
    s_ranks_end (ranks);
}
END_TEST

//  Many batches from both producers of rank 0 to a queue of capacity 2 on
//  rank 1, read slowly: the bound holds, nothing is lost, each producer's
//  order is kept
typedef struct {
    weir__exchange *ex;
    unsigned producer;
} s_sender;

static void *s_send_many (void *arg)
{
    s_sender *s = arg;
    uint64_t wait = 0;
    for (unsigned i = 0; i < 500; i++) {
        weir__batch b;
        s_batch (&b, WEIR__BATCH_DATA, (uint64_t) s->producer << 32 | i, 1);
        ck_assert_int_eq (weir__exchange_send (s->ex, 0, 1, s->producer, i % 2, &b, &wait), 0);
        weir__batch_release (&b);
    }
    ck_assert_int_eq (weir__exchange_send_marker (s->ex, 0, s->producer, WEIR__BATCH_EOS, 0, &wait), 0);
    return NULL;
}

//  One consumer thread of rank 1's queue: each producer's batches to it
//  in order, until both producers' end-of-stream
typedef struct {
    weir__queue *q;
    unsigned consumer;
    unsigned next[2];
    int bound_held;
} s_reader;

static void *s_read_all (void *arg)
{
    s_reader *r = arg;
    r->next[0] = r->next[1] = r->consumer;
    r->bound_held = 1;
    for (unsigned eos = 0; eos < 2;) {
        r->bound_held &= weir__queue_fill (r->q) <= 2;
        weir__batch_header hdr;
        uint64_t v = s_next (r->q, r->consumer, &hdr);
        if (v == UINT64_MAX) {
            ck_assert_uint_eq (hdr.kind, WEIR__BATCH_EOS);
            eos++;
            continue;
        }
        unsigned p = (unsigned) (v >> 32), i = (unsigned) v;
        ck_assert_uint_eq (i, r->next[p]);
        r->next[p] += 2;
    }
    return NULL;
}

START_TEST (test_bounded_and_ordered)
{
    s_rank ranks[2];
    s_ranks (ranks, 2);
    pthread_t t[2], c[2];
    s_sender senders[2] = {{ranks[0].ex, 0}, {ranks[0].ex, 1}};
    s_reader readers[2] = {{ranks[1].q, 0, {0, 0}, 0}, {ranks[1].q, 1, {0, 0}, 0}};
    for (unsigned i = 0; i < 2; i++) {
        pthread_create (&c[i], NULL, s_read_all, &readers[i]);
        pthread_create (&t[i], NULL, s_send_many, &senders[i]);
    }
    for (unsigned i = 0; i < 2; i++) {
        pthread_join (t[i], NULL);
        pthread_join (c[i], NULL);
    }
    for (unsigned i = 0; i < 2; i++) {
        ck_assert (readers[i].bound_held);
        ck_assert_uint_eq (readers[i].next[0], 500 + i);
        ck_assert_uint_eq (readers[i].next[1], 500 + i);
    }
    s_ranks_end (ranks);
}
END_TEST

//  Something else at a bridge's port: the job fails, naming the message
static void s_stranger (const void *route, size_t route_len, int more, const char *why)
{
    s_rank ranks[2];
    s_ranks (ranks, 4);
    void *ctx = zmq_ctx_new ();
    void *push = zmq_socket (ctx, ZMQ_PUSH);
    int zero = 0;
    zmq_setsockopt (push, ZMQ_LINGER, &zero, sizeof zero);
    char endpoint[64];
    snprintf (endpoint, sizeof endpoint, "tcp://127.0.0.1:%u", ranks[1].port);
    ck_assert_int_eq (zmq_connect (push, endpoint), 0);
    weir__batch_header marker = {.kind = WEIR__BATCH_BARRIER, .count = 1};
    ck_assert_int_ge (zmq_send (push, route, route_len, more ? ZMQ_SNDMORE : 0), 0);
    if (more)
        ck_assert_int_ge (zmq_send (push, &marker, sizeof marker, 0), 0);
    for (int i = 0; i < 5000 && !atomic_load (&ranks[1].failed); i++)
        zmq_poll (NULL, 0, 1);
    ck_assert (atomic_load (&ranks[1].failed));
    ck_assert_msg (strstr (ranks[1].why, why), "%s", ranks[1].why);
    ck_assert_ptr_nonnull (strstr (ranks[1].why, "rank 1 received on keyed link 0"));
    zmq_close (push);
    zmq_ctx_term (ctx);
    s_ranks_end (ranks);
}

START_TEST (test_stranger_refused)
{
    //  Producer 2 is rank 1's own; 9 is no producer of the link
    uint32_t own[2] = {2, UINT32_MAX}, none[2] = {9, UINT32_MAX}, thread[2] = {0, 5};
    s_stranger (own, sizeof own, 1, "names no producer of another rank (producer 2");
    s_stranger (none, sizeof none, 1, "names no producer of another rank (producer 9");
    s_stranger ("hello", 5, 0, "has no route");
    //  A marker to one thread only
    s_stranger (thread, sizeof thread, 1, "is not a marker to every thread");
}
END_TEST

Suite *check_suite (void)
{
    Suite *s = suite_create ("exchange");
    TCase *tc = tcase_create ("core");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_pick);
    tcase_add_test (tc, test_listen);
    tcase_add_test (tc, test_card_of_this_host);
    tcase_add_test (tc, test_greet);
    tcase_add_test (tc, test_greet_unreached);
    tcase_add_test (tc, test_batches_and_markers_cross);
    tcase_add_test (tc, test_bounded_and_ordered);
    tcase_add_test (tc, test_stranger_refused);
    suite_add_tcase (s, tc);
    return s;
}

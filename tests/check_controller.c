/*  tests/check_controller.c - the epoch controller and the budget, driven
    by plain threads: barriers wait for everyone, epochs end as the rules
    say, passes, stops and aborts release every waiter.  */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "pipeline/budget.h"
#include "pipeline/controller.h"
#include "tests/testutil.h"

static void s_sleep_ms (int ms)
{
    struct timespec ts = {ms / 1000, (long) (ms % 1000) * 1000000L};
    nanosleep (&ts, NULL);
}

//  One runtime thread, reduced to its barrier: it arrives at every epoch
//  until it is told to stop.
typedef struct {
    weir__controller *ctl;
    atomic_uint *arrivals;  //  shared: every arrival of every thread
    int reader;
    unsigned exhausted_in;  //  a reader runs out of input in this epoch of each pass (0: never)
    unsigned skip;          //  does not arrive in this epoch (0: always arrives)
    int releases[32];       //  what each arrival returned
    int new_pass[32];
    unsigned count;
} s_thread;

static void *s_thread_main (void *arg)
{
    s_thread *t = arg;
    unsigned in_pass = 0;
    for (unsigned epoch = 1; t->count < 32; epoch++) {
        if (t->skip == epoch)
            return NULL;
        in_pass++;
        int exhausted = t->reader && t->exhausted_in && in_pass >= t->exhausted_in;
        atomic_fetch_add (t->arrivals, 1);
        int np = 0;
        int r = weir__controller_arrive (t->ctl, exhausted, &np);
        t->new_pass[t->count] = np;
        t->releases[t->count++] = r;
        if (np)
            in_pass = 0;
        if (r != WEIR__GO)
            return NULL;
    }
    return NULL;
}

//  What the boundary callback saw.
typedef struct {
    atomic_uint *arrivals;
    unsigned threads;
    weir__boundary seen[32];
    unsigned count;
    int all_arrived;  //  at every call, every thread had arrived
    int last_pass[32];
    weir__controller *ctl;
    weir__job *job;
    unsigned fail_at;  //  fail the job at this epoch (0: never)
} s_boundary;

static int s_on_boundary (void *arg, const weir__boundary *b)
{
    s_boundary *self = arg;
    if (atomic_load (self->arrivals) != self->threads * (self->count + 1))
        self->all_arrived = 0;
    self->last_pass[self->count] = weir__controller_last_pass (self->ctl);
    self->seen[self->count++] = *b;
    if (self->fail_at && b->epoch == self->fail_at) {
        weir__err err;
        weir__err_set (&err, WEIR_EIO, "the boundary failed on purpose");
        weir__job_fail (self->job, &err);
        return 1;
    }
    return 0;
}

static void s_abort_hook (void *arg)
{
    weir__controller_abort (arg);
}

//  Run THREADS threads (the first READERS readers) under RULES.
typedef struct {
    weir__job job;
    weir__controller *ctl;
    atomic_uint arrivals;
    s_thread threads[8];
    pthread_t ids[8];
    unsigned n;
    s_boundary boundary;
} s_run;

static void s_start (s_run *run, const weir__epoch_rules *rules, unsigned n, unsigned readers)
{
    memset (run, 0, sizeof *run);
    weir__job_init (&run->job, NULL);
    run->ctl = weir__controller_new (&run->job, rules);
    ck_assert_ptr_nonnull (run->ctl);
    weir__job_set_hook (&run->job, s_abort_hook, run->ctl);
    atomic_init (&run->arrivals, 0);
    run->n = n;
    run->boundary.arrivals = &run->arrivals;
    run->boundary.threads = n;
    run->boundary.all_arrived = 1;
    run->boundary.ctl = run->ctl;
    run->boundary.job = &run->job;
    weir__controller_start (run->ctl, 1, 0, 0, n, readers);
    for (unsigned i = 0; i < n; i++) {
        run->threads[i].ctl = run->ctl;
        run->threads[i].arrivals = &run->arrivals;
        run->threads[i].reader = i < readers;
    }
}

static void s_go (s_run *run)
{
    for (unsigned i = 0; i < run->n; i++)
        pthread_create (&run->ids[i], NULL, s_thread_main, &run->threads[i]);
    weir__controller_run (run->ctl, s_on_boundary, &run->boundary, NULL, NULL, 0);
    for (unsigned i = 0; i < run->n; i++)
        pthread_join (run->ids[i], NULL);
}

static void s_finish (s_run *run)
{
    weir__job_set_hook (&run->job, NULL, NULL);
    weir__controller_destroy (&run->ctl);
    ck_assert_ptr_null (run->ctl);
    weir__job_release (&run->job);
}

START_TEST (test_boundary_waits_for_every_thread)
{
    s_run run;
    weir__epoch_rules rules = {.last = 4, .passes = 1};
    s_start (&run, &rules, 3, 1);
    s_go (&run);
    ck_assert_uint_eq (run.boundary.count, 4);
    ck_assert (run.boundary.all_arrived);
    for (unsigned e = 0; e < 4; e++) {
        ck_assert_uint_eq (run.boundary.seen[e].epoch, e + 1);
        ck_assert_int_eq (run.boundary.seen[e].finished, 0);
        ck_assert_int_eq (run.boundary.seen[e].over, e == 3);
    }
    //  Released into epochs 2, 3, 4, then told to stop
    for (unsigned i = 0; i < 3; i++) {
        ck_assert_uint_eq (run.threads[i].count, 4);
        for (unsigned k = 0; k < 3; k++)
            ck_assert_int_eq (run.threads[i].releases[k], WEIR__GO);
        ck_assert_int_eq (run.threads[i].releases[3], WEIR__STOP);
    }
    ck_assert_uint_eq (weir__controller_done (run.ctl), 4);
    uint64_t pauses;
    weir__controller_pauses (run.ctl, &pauses, NULL, NULL);
    ck_assert_uint_eq (pauses, 4);
    s_finish (&run);
}
END_TEST

START_TEST (test_exhausted_readers_finish_the_job)
{
    //  Two readers: the job is finished only when both ran out
    s_run run;
    weir__epoch_rules rules = {.last = 0, .passes = 1};
    s_start (&run, &rules, 3, 2);
    run.threads[0].exhausted_in = 2;
    run.threads[1].exhausted_in = 3;
    s_go (&run);
    ck_assert_uint_eq (run.boundary.count, 3);
    ck_assert_int_eq (run.boundary.seen[1].finished, 0);
    ck_assert_int_eq (run.boundary.seen[1].over, 0);
    ck_assert_int_eq (run.boundary.seen[2].finished, 1);
    ck_assert_int_eq (run.boundary.seen[2].over, 1);
    ck_assert_int_eq (run.threads[2].releases[2], WEIR__STOP);
    s_finish (&run);
}
END_TEST

START_TEST (test_passes_start_again)
{
    //  Two passes of two epochs each: the end of the first pass starts the
    //  second, and only the end of the second finishes the job
    s_run run;
    weir__epoch_rules rules = {.last = 0, .passes = 2};
    s_start (&run, &rules, 2, 1);
    run.threads[0].exhausted_in = 2;
    s_go (&run);
    ck_assert_uint_eq (run.boundary.count, 4);
    ck_assert_int_eq (run.boundary.seen[1].new_pass, 1);
    ck_assert_uint_eq (run.boundary.seen[1].pass, 1);
    ck_assert_int_eq (run.boundary.seen[1].finished, 0);
    ck_assert_int_eq (run.boundary.seen[3].new_pass, 0);
    ck_assert_int_eq (run.boundary.seen[3].finished, 1);
    //  The last pass is known in its epochs, and only there
    ck_assert_int_eq (run.boundary.last_pass[0], 0);
    ck_assert_int_eq (run.boundary.last_pass[2], 1);
    //  Threads learn of the new pass when released into it
    ck_assert_int_eq (run.threads[0].new_pass[1], 1);
    ck_assert_int_eq (run.threads[0].new_pass[0], 0);
    s_finish (&run);
}
END_TEST

START_TEST (test_stop_ends_the_job_at_the_boundary)
{
    s_run run;
    weir__epoch_rules rules = {.last = 0, .passes = 1};
    s_start (&run, &rules, 2, 1);
    weir__job_stop (&run.job);
    s_go (&run);
    ck_assert_uint_eq (run.boundary.count, 1);
    ck_assert_int_eq (run.boundary.seen[0].over, 1);
    ck_assert_int_eq (run.boundary.seen[0].finished, 0);
    ck_assert_int_eq (run.threads[0].releases[0], WEIR__STOP);
    ck_assert_int_eq (run.threads[1].releases[0], WEIR__STOP);
    s_finish (&run);
}
END_TEST

//  Once the two threads that go on have arrived at epoch 2, abort.
static void *s_abort_later (void *arg)
{
    s_run *run = arg;
    while (atomic_load (&run->arrivals) < 5)
        s_sleep_ms (5);
    s_sleep_ms (20);
    weir__controller_abort (run->ctl);
    return NULL;
}

START_TEST (test_abort_wakes_every_waiter)
{
    //  One thread never arrives at epoch 2: an abort must release the others
    //  and the controller
    s_run run;
    weir__epoch_rules rules = {.last = 0, .passes = 1};
    s_start (&run, &rules, 3, 1);
    run.threads[2].skip = 2;
    pthread_t aborter;
    pthread_create (&aborter, NULL, s_abort_later, &run);
    s_go (&run);
    pthread_join (aborter, NULL);
    ck_assert_uint_eq (run.boundary.count, 1);
    for (unsigned i = 0; i < 2; i++) {
        ck_assert_uint_eq (run.threads[i].count, 2);
        ck_assert_int_eq (run.threads[i].releases[1], WEIR__ABORT);
    }
    ck_assert_uint_eq (weir__controller_done (run.ctl), 1);
    s_finish (&run);
}
END_TEST

START_TEST (test_failed_boundary_aborts)
{
    s_run run;
    weir__epoch_rules rules = {.last = 0, .passes = 1};
    s_start (&run, &rules, 2, 1);
    run.boundary.fail_at = 2;
    s_go (&run);
    ck_assert_uint_eq (run.boundary.count, 2);
    ck_assert_int_eq (run.threads[0].releases[1], WEIR__ABORT);
    //  The failed epoch is not done
    ck_assert_uint_eq (weir__controller_done (run.ctl), 1);
    ck_assert (weir__job_failed (&run.job));
    s_finish (&run);
}
END_TEST

START_TEST (test_resumed_epochs_go_on)
{
    //  A job resumed after epoch 6, with --epochs 8: epochs 7 and 8
    weir__job job;
    weir__job_init (&job, NULL);
    weir__epoch_rules rules = {.last = 8, .passes = 1};
    weir__controller *ctl = weir__controller_new (&job, &rules);
    weir__controller_start (ctl, 7, 0, 0, 1, 1);
    ck_assert_uint_eq (weir__controller_epoch (ctl), 7);
    ck_assert_uint_eq (weir__controller_done (ctl), 6);
    atomic_uint arrivals;
    atomic_init (&arrivals, 0);
    s_thread t = {ctl, &arrivals, 1, 0, 0, {0}, {0}, 0};
    s_boundary b;
    memset (&b, 0, sizeof b);
    b.arrivals = &arrivals;
    b.threads = 1;
    b.all_arrived = 1;
    b.ctl = ctl;
    pthread_t id;
    pthread_create (&id, NULL, s_thread_main, &t);
    weir__controller_run (ctl, s_on_boundary, &b, NULL, NULL, 0);
    pthread_join (id, NULL);
    ck_assert_uint_eq (b.count, 2);
    ck_assert_uint_eq (b.seen[0].epoch, 7);
    ck_assert_uint_eq (b.seen[1].epoch, 8);
    ck_assert_int_eq (b.seen[1].over, 1);
    weir__controller_destroy (&ctl);
    weir__job_release (&job);
}
END_TEST

typedef struct {
    weir__budget *budget;
    uint64_t got;
    int give_back;  //  pretend to run out of input after a while
} s_claimer;

static void *s_claim_all (void *arg)
{
    s_claimer *c = arg;
    uint64_t claim = weir__budget_claim (c->budget, 64);
    unsigned batches = 0;
    while (claim > 0) {
        if (c->give_back && ++batches == 3) {
            //  Read half of this claim, then give the rest back
            c->got += claim / 2;
            weir__budget_unclaim (c->budget, claim - claim / 2);
            return NULL;
        }
        c->got += claim;
        claim = weir__budget_reclaim (c->budget, 64);
    }
    return NULL;
}

START_TEST (test_budget_is_exact)
{
    //  Whatever the threads do, together they take exactly the epoch's records
    weir__job job;
    weir__job_init (&job, NULL);
    weir__budget budget;
    weir__budget_init (&budget, &job);
    for (int round = 0; round < 20; round++) {
        weir__budget_reset (&budget, 1000 + (uint64_t) round, 0);
        s_claimer c[4] = {{&budget, 0, 0}, {&budget, 0, 1}, {&budget, 0, 0}, {&budget, 0, 1}};
        pthread_t t[4];
        for (int i = 0; i < 4; i++)
            pthread_create (&t[i], NULL, s_claim_all, &c[i]);
        uint64_t total = 0;
        for (int i = 0; i < 4; i++) {
            pthread_join (t[i], NULL);
            total += c[i].got;
        }
        ck_assert_uint_eq (total, 1000 + (uint64_t) round);
    }
    weir__budget_release (&budget);
    weir__job_release (&job);
}
END_TEST

START_TEST (test_budget_deadline_and_stop)
{
    weir__job job;
    weir__job_init (&job, NULL);
    weir__budget budget;
    weir__budget_init (&budget, &job);
    //  No record limit, 50 ms: claims stop coming once the time is up
    weir__budget_reset (&budget, 0, 0.05);
    ck_assert_uint_eq (weir__budget_claim (&budget, 10), 10);
    s_sleep_ms (80);
    ck_assert_uint_eq (weir__budget_reclaim (&budget, 10), 0);
    //  A stopping job gets nothing
    weir__budget_reset (&budget, 100, 0);
    weir__job_stop (&job);
    ck_assert_uint_eq (weir__budget_claim (&budget, 10), 0);
    weir__budget_release (&budget);
    weir__job_release (&job);
}
END_TEST

static void s_count_tick (void *arg)
{
    atomic_fetch_add ((atomic_uint *) arg, 1);
}

static void *s_arrive_late (void *arg)
{
    s_sleep_ms (120);
    weir__controller_arrive (arg, 1, NULL);
    return NULL;
}

static int s_go_on (void *arg, const weir__boundary *b)
{
    (void) arg;
    (void) b;
    return 0;
}

START_TEST (test_ticks_while_waiting)
{
    weir__job job;
    weir__job_init (&job, NULL);
    weir__epoch_rules rules = {.last = 0, .passes = 1};
    weir__controller *ctl = weir__controller_new (&job, &rules);
    weir__controller_start (ctl, 1, 0, 0, 1, 1);
    atomic_uint ticks;
    atomic_init (&ticks, 0);
    pthread_t id;
    pthread_create (&id, NULL, s_arrive_late, ctl);
    weir__controller_run (ctl, s_go_on, NULL, s_count_tick, &ticks, 20);
    pthread_join (id, NULL);
    //  About six ticks in 120 ms; a loaded machine may give fewer
    ck_assert_uint_ge (atomic_load (&ticks), 2);
    weir__controller_destroy (&ctl);
    weir__job_release (&job);
}
END_TEST

Suite *check_suite (void)
{
    Suite *s = suite_create ("controller");
    TCase *tc = tcase_create ("epochs");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_boundary_waits_for_every_thread);
    tcase_add_test (tc, test_exhausted_readers_finish_the_job);
    tcase_add_test (tc, test_passes_start_again);
    tcase_add_test (tc, test_stop_ends_the_job_at_the_boundary);
    tcase_add_test (tc, test_abort_wakes_every_waiter);
    tcase_add_test (tc, test_failed_boundary_aborts);
    tcase_add_test (tc, test_resumed_epochs_go_on);
    tcase_add_test (tc, test_ticks_while_waiting);
    suite_add_tcase (s, tc);
    tc = tcase_create ("budget");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_budget_is_exact);
    tcase_add_test (tc, test_budget_deadline_and_stop);
    suite_add_tcase (s, tc);
    return s;
}

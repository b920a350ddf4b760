/*  tests/check_pipe.c - the pipe through its public API: callback order and
    counts, errors from callbacks and the codes of <weir/plugin.h>, stop,
    emission, statistics, setters refused once the pipe runs.  */
#include <pthread.h>
#include <stdatomic.h>
#include <weir/plugin.h>
#include <weir/weir.h>

#include "tests/testutil.h"

/*  A processor that records how it is called.  */
typedef struct {
    atomic_int opens, inits, thread_opens, thread_closes, closes, epoch_ends;
    atomic_uint_fast64_t processed, sum;
    atomic_int bad_tstate;     //  a callback got the wrong thread state
    int fail_in;               //  which callback fails (see s_fail_*)
    int silent;                //  what a silent failure returns (0: -1)
    int stop_after;            //  weir_stop after this many records (0: never)
    int fanout;                //  records emitted per input
    atomic_uint threads_seen;  //  weir_thread_count
    atomic_uint thread_mask;   //  bit per weir_thread_index seen
} s_probe;

enum {
    S_FAIL_NONE,
    S_FAIL_OPEN,
    S_FAIL_INIT,
    S_FAIL_THREAD_OPEN,
    S_FAIL_PROCESS,
    S_FAIL_EPOCH_END,
    S_FAIL_SILENT
};

typedef struct {
    s_probe *probe;
    unsigned index;
} s_tstate;

static int s_open (weir_stage *st, void **state)
{
    s_probe *p = weir_user (st);
    atomic_fetch_add (&p->opens, 1);
    *state = p;
    if (p->fail_in == S_FAIL_OPEN)
        return weir_fail (st, "cannot open: %s", "on purpose");
    return 0;
}

static int s_init (weir_stage *st, void *state)
{
    s_probe *p = state;
    //  init runs after open, before any thread
    ck_assert_int_eq (atomic_load (&p->opens), 1);
    ck_assert_int_eq (atomic_load (&p->thread_opens), 0);
    atomic_fetch_add (&p->inits, 1);
    if (p->fail_in == S_FAIL_INIT)
        return weir_fail (st, "init failed on purpose");
    return 0;
}

static int s_thread_open (weir_stage *st, void *state, void **tstate)
{
    s_probe *p = state;
    atomic_store (&p->threads_seen, weir_thread_count (st));
    atomic_fetch_or (&p->thread_mask, 1u << weir_thread_index (st));
    //  A thread whose thread_open fails gets no thread_close
    if (p->fail_in == S_FAIL_THREAD_OPEN)
        return weir_fail (st, "thread %u refuses", weir_thread_index (st));
    atomic_fetch_add (&p->thread_opens, 1);
    s_tstate *t = malloc (sizeof *t);
    t->probe = p;
    t->index = weir_thread_index (st);
    *tstate = t;
    return 0;
}

static int s_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    s_tstate *t = tstate;
    s_probe *p = t->probe;
    if (t->index != weir_thread_index (st))
        atomic_store (&p->bad_tstate, 1);
    uint64_t n = atomic_fetch_add (&p->processed, 1) + 1;
    atomic_fetch_add (&p->sum, rec->via.u64);
    if (p->fail_in == S_FAIL_PROCESS && n == 1000)
        return weir_fail (st, "record %llu is bad", (unsigned long long) rec->via.u64);
    if (p->fail_in == S_FAIL_SILENT && n == 10)
        return p->silent ? p->silent : -1;
    if (p->stop_after && (int) n == p->stop_after)
        weir_stop (st);
    for (int i = 0; i < p->fanout; i++)
        if (weir_emit (st, rec))
            return -1;
    return 0;
}

static int s_epoch_end (weir_stage *st, void *tstate, uint64_t epoch)
{
    s_tstate *t = tstate;
    atomic_fetch_add (&t->probe->epoch_ends, 1);
    if (t->probe->fail_in == S_FAIL_EPOCH_END)
        return weir_fail (st, "epoch %llu cannot end", (unsigned long long) epoch);
    return 0;
}

static void s_thread_close (weir_stage *st, void *tstate)
{
    s_tstate *t = tstate;
    atomic_fetch_add (&t->probe->thread_closes, 1);
    free (t);
}

static void s_close (weir_stage *st, void *state)
{
    s_probe *p = state;
    //  close comes last, after every thread is done
    ck_assert_int_eq (atomic_load (&p->thread_closes), atomic_load (&p->thread_opens));
    atomic_fetch_add (&p->closes, 1);
}

static const weir_processor s_proc = {
    WEIR_PROCESSOR_INIT,  .name = "probe",          .description = "counts its calls",
    .open = s_open,       .init = s_init,           .thread_open = s_thread_open,
    .process = s_process, .epoch_end = s_epoch_end, .thread_close = s_thread_close,
    .close = s_close,
};

//  A new pipe, which only a lack of memory could refuse
static weir_pipe *s_new (void)
{
    weir_pipe *pipe = (weir_pipe *) 1;
    ck_assert_int_eq (weir_pipe_new (&pipe), 0);
    ck_assert_ptr_nonnull (pipe);
    return pipe;
}

//  range count=COUNT ! probe threads=THREADS ! null; returns weir_pipe_run's code
static int s_run (s_probe *p, const char *count, const char *threads, weir_pipe **pipe_p)
{
    char c[64], t[64];
    snprintf (c, sizeof c, "count=%s", count);
    snprintf (t, sizeof t, "threads=%s", threads);
    const char *rp[] = {c, "batch=100", NULL};
    const char *pp[] = {t, "capacity=4", NULL};
    weir_pipe *pipe = s_new ();
    ck_assert_int_eq (weir_pipe_add (pipe, "range", rp), 0);
    ck_assert_int_eq (weir_pipe_add_processor (pipe, &s_proc, p, pp), 0);
    ck_assert_int_eq (weir_pipe_add (pipe, "null", NULL), 0);
    int rc = weir_pipe_run (pipe);
    *pipe_p = pipe;
    return rc;
}

static void s_check_calls (int threads)
{
    s_probe p;
    memset (&p, 0, sizeof p);
    p.fanout = 1;
    weir_pipe *pipe;
    char t[16];
    snprintf (t, sizeof t, "%d", threads);
    ck_assert_int_eq (s_run (&p, "100000", t, &pipe), 0);
    ck_assert_int_eq (p.opens, 1);
    ck_assert_int_eq (p.inits, 1);
    ck_assert_int_eq (p.thread_opens, threads);
    ck_assert_int_eq (p.epoch_ends, threads);
    ck_assert_int_eq (p.thread_closes, threads);
    ck_assert_int_eq (p.closes, 1);
    ck_assert_uint_eq (p.threads_seen, (unsigned) threads);
    ck_assert_uint_eq (p.thread_mask, (1u << threads) - 1);
    ck_assert_int_eq (p.bad_tstate, 0);
    ck_assert_uint_eq (p.processed, 100000);
    ck_assert_uint_eq (p.sum, 100000ull * 99999 / 2);
    weir_stage_stats st = WEIR_STAGE_STATS_INIT;
    ck_assert_int_eq (weir_pipe_stats (pipe, 1, &st), 0);
    ck_assert_str_eq (st.name, "probe");
    ck_assert_uint_eq (st.records_in, 100000);
    ck_assert_uint_eq (st.records_out, 100000);
    ck_assert_uint_eq (st.batches_in, 1000);
    ck_assert_uint_eq (st.threads, (unsigned) threads);
    ck_assert_int_eq (weir_pipe_stats (pipe, 2, &st), 0);
    ck_assert_uint_eq (st.records_out, 100000);
    ck_assert_int_eq (weir_pipe_stats (pipe, 3, &st), WEIR_EINVAL);
    ck_assert (weir_pipe_wall_seconds (pipe) > 0);
    weir_pipe_destroy (&pipe);
    ck_assert_ptr_null (pipe);
}

START_TEST (test_callbacks_one_thread)
{
    s_check_calls (1);
}
END_TEST

START_TEST (test_callbacks_four_threads)
{
    s_check_calls (4);
}
END_TEST

//  The job fails in callback WHERE, a silent failure returning SILENT
static void s_check_silent (int where, int silent, const char *threads, const char *message)
{
    s_probe p;
    memset (&p, 0, sizeof p);
    p.fail_in = where;
    p.silent = silent;
    p.fanout = 1;
    weir_pipe *pipe;
    ck_assert_int_eq (s_run (&p, "1M", threads, &pipe), WEIR_EPROCESSOR);
    ck_assert_msg (strstr (weir_pipe_error (pipe), message), "error '%s' lacks '%s'", weir_pipe_error (pipe),
                   message);
    ck_assert_msg (strncmp (weir_pipe_error (pipe), "probe: ", 7) == 0,
                   "error '%s' does not name the element", weir_pipe_error (pipe));
    //  Whatever failed, what was opened is closed
    ck_assert_int_eq (p.thread_closes, p.thread_opens);
    ck_assert_int_eq (p.closes, where == S_FAIL_OPEN ? 0 : 1);
    //  A watchdog would have seen the run ending since the failure
    ck_assert (weir_pipe_failed_for (pipe) >= 0);
    weir_pipe_destroy (&pipe);
}

static void s_check_failure (int where, const char *threads, const char *message)
{
    s_check_silent (where, 0, threads, message);
}

START_TEST (test_callback_errors_stop_the_job)
{
    s_check_failure (S_FAIL_OPEN, "2", "cannot open: on purpose");
    s_check_failure (S_FAIL_INIT, "2", "init failed on purpose");
    s_check_failure (S_FAIL_THREAD_OPEN, "2", "refuses");
    s_check_failure (S_FAIL_PROCESS, "1", "record 999 is bad");
    s_check_failure (S_FAIL_PROCESS, "3", "is bad");
    s_check_failure (S_FAIL_EPOCH_END, "2", "epoch 1 cannot end");
    s_check_failure (S_FAIL_SILENT, "2", "process returned an error without a message");
    //  Any value but 0 is a failure: -1 as the first plugin.h asked, a
    //  code passed on, WEIR_REJECTED without weir_reject, anything else
    s_check_silent (S_FAIL_SILENT, WEIR_EIO, "2", "process returned an error without a message");
    s_check_silent (S_FAIL_SILENT, WEIR_REJECTED, "2", "process returned an error without a message");
    s_check_silent (S_FAIL_SILENT, 7, "2", "process returned an error without a message");
}
END_TEST

/*  A processor that parses its records' bytes itself: it checks each is
    one whole msgpack object, sums the integers and rejects every one
    ending in 7.  'process' is called instead on a keyed stage.  */
typedef struct {
    atomic_uint_fast64_t bytes_calls, object_calls, sum, whole;
} s_raw;

static int s_raw_open (weir_stage *st, void **state)
{
    *state = weir_user (st);
    return 0;
}

static int s_raw_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    s_raw *r = tstate;
    atomic_fetch_add (&r->object_calls, 1);
    atomic_fetch_add (&r->sum, rec->via.u64);
    return weir_emit (st, rec);
}

static int s_raw_bytes (weir_stage *st, void *tstate, const char *data, size_t len)
{
    s_raw *r = tstate;
    atomic_fetch_add (&r->bytes_calls, 1);
    msgpack_zone zone;
    msgpack_zone_init (&zone, 256);
    msgpack_object rec;
    size_t off = 0;
    int rc = msgpack_unpack (data, len, &off, &zone, &rec);
    msgpack_zone_destroy (&zone);
    if (rc != MSGPACK_UNPACK_SUCCESS || off != len || rec.type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        return weir_fail (st, "not one whole integer in %zu bytes", len);
    atomic_fetch_add (&r->whole, 1);
    if (rec.via.u64 % 10 == 7)
        return weir_reject (st, "ends in 7");
    atomic_fetch_add (&r->sum, rec.via.u64);
    msgpack_pack_uint64 (weir_packer (st), rec.via.u64);
    return weir_emit_packed (st);
}

static const weir_processor s_raw_proc = {
    WEIR_PROCESSOR_INIT,
    .name = "raw",
    .description = "parses its records itself",
    .open = s_raw_open,
    .process = s_raw_process,
    .process_bytes = s_raw_bytes,
};

//  range count=100000 ! raw PROPS ! null, run to its end: records of
//  several sizes (fixints, uint16s, uint32s)
static weir_pipe *s_run_raw (s_raw *r, const char *const *props)
{
    const char *rp[] = {"count=100000", "batch=100", NULL};
    memset (r, 0, sizeof *r);
    weir_pipe *pipe = s_new ();
    ck_assert_int_eq (weir_pipe_add (pipe, "range", rp), 0);
    ck_assert_int_eq (weir_pipe_add_processor (pipe, &s_raw_proc, r, props), 0);
    ck_assert_int_eq (weir_pipe_add (pipe, "null", NULL), 0);
    ck_assert_int_eq (weir_pipe_run (pipe), 0);
    return pipe;
}

START_TEST (test_process_bytes)
{
    char *dir = testutil_mkdtemp ();
    char dead[4200], dl[4300];
    snprintf (dead, sizeof dead, "%s/dead.mp", dir);
    snprintf (dl, sizeof dl, "dead-letter=%s", dead);
    const char *pp[] = {"threads=2", "on-error=skip", dl, NULL};
    s_raw r;
    weir_pipe *pipe = s_run_raw (&r, pp);
    ck_assert_uint_eq (r.bytes_calls, 100000);
    ck_assert_uint_eq (r.whole, 100000);
    ck_assert_uint_eq (r.object_calls, 0);
    //  Every number but those ending in 7, which went to the dead letter
    uint64_t want = 100000ull * 99999 / 2 - (10000ull * 7 + 10ull * (10000ull * 9999 / 2));
    ck_assert_uint_eq (r.sum, want);
    weir_stage_stats stats = WEIR_STAGE_STATS_INIT;
    ck_assert_int_eq (weir_pipe_stats (pipe, 1, &stats), 0);
    ck_assert_uint_eq (stats.records_out, 90000);
    weir_pipe_destroy (&pipe);
    //  The dead letter holds each rejected record decoded, with its reason
    size_t len;
    char *data = testutil_read (dead, &len);
    msgpack_unpacked u;
    msgpack_unpacked_init (&u);
    size_t off = 0, letters = 0;
    uint64_t dead_sum = 0;
    while (msgpack_unpack_next (&u, data, len, &off) == MSGPACK_UNPACK_SUCCESS) {
        const msgpack_object *rec = NULL, *reason = NULL;
        ck_assert_int_eq (weir_field (&u.data, ".record", &rec), 0);
        ck_assert_int_eq (weir_field (&u.data, ".reason", &reason), 0);
        ck_assert_int_eq (rec->type, MSGPACK_OBJECT_POSITIVE_INTEGER);
        ck_assert_uint_eq (rec->via.u64 % 10, 7);
        ck_assert (reason->type == MSGPACK_OBJECT_STR && reason->via.str.size == 9
                   && !memcmp (reason->via.str.ptr, "ends in 7", 9));
        dead_sum += rec->via.u64;
        letters++;
    }
    ck_assert_uint_eq (off, len);
    ck_assert_uint_eq (letters, 10000);
    ck_assert_uint_eq (dead_sum, 10000ull * 7 + 10ull * (10000ull * 9999 / 2));
    msgpack_unpacked_destroy (&u);
    free (data);

    //  A keyed stage finds each record's state from its decoded key:
    //  'process' gets the records
    const char *kp[] = {"threads=2", "key=.", NULL};
    pipe = s_run_raw (&r, kp);
    ck_assert_uint_eq (r.object_calls, 100000);
    ck_assert_uint_eq (r.bytes_calls, 0);
    ck_assert_uint_eq (r.sum, 100000ull * 99999 / 2);
    weir_pipe_destroy (&pipe);
    testutil_rmdir (dir);
}
END_TEST

START_TEST (test_stop_ends_cleanly)
{
    s_probe p;
    memset (&p, 0, sizeof p);
    p.stop_after = 5000;
    p.fanout = 1;
    weir_pipe *pipe;
    //  A range far too long to finish: stop must end it early and cleanly
    ck_assert_int_eq (s_run (&p, "1G", "2", &pipe), 0);
    ck_assert_uint_ge (p.processed, 5000);
    ck_assert_uint_lt (p.processed, 100000000);
    weir_stage_stats in = WEIR_STAGE_STATS_INIT, out = WEIR_STAGE_STATS_INIT;
    weir_pipe_stats (pipe, 0, &in);
    weir_pipe_stats (pipe, 2, &out);
    //  Everything read reached the writer
    ck_assert_uint_eq (in.records_out, out.records_out);
    ck_assert_int_eq (p.closes, 1);
    //  A stop is no failure: a watchdog has nothing to bound
    ck_assert (weir_pipe_failed_for (pipe) < 0);
    weir_pipe_destroy (&pipe);
}
END_TEST

START_TEST (test_fanout_and_filter)
{
    for (int fanout = 0; fanout <= 3; fanout++) {
        s_probe p;
        memset (&p, 0, sizeof p);
        p.fanout = fanout;
        weir_pipe *pipe;
        ck_assert_int_eq (s_run (&p, "12345", "3", &pipe), 0);
        weir_stage_stats st = WEIR_STAGE_STATS_INIT;
        weir_pipe_stats (pipe, 2, &st);
        ck_assert_uint_eq (st.records_in, 12345u * (unsigned) fanout);
        weir_pipe_destroy (&pipe);
    }
}
END_TEST

//  What weir_emit_packed returned last
static atomic_int s_packed;

static int s_pack_bad (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    //  Declares two elements, packs one: must be refused, not passed on
    msgpack_packer *pk = weir_packer (st);
    msgpack_pack_array (pk, 2);
    msgpack_pack_int (pk, 1);
    return s_packed = weir_emit_packed (st);
}

static int s_pack_two (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    msgpack_packer *pk = weir_packer (st);
    msgpack_pack_int (pk, 1);
    msgpack_pack_int (pk, 2);
    return s_packed = weir_emit_packed (st);
}

static int s_pack_none (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    weir_packer (st);
    return s_packed = weir_emit_packed (st);
}

static void s_check_packer (int (*process) (weir_stage *, void *, const msgpack_object *),
                            const char *message)
{
    weir_processor proc = {WEIR_PROCESSOR_INIT, .name = "packer", .process = process};
    weir_pipe *pipe = s_new ();
    ck_assert_int_eq (weir_pipe_parse (pipe, "range count=10"), 0);
    ck_assert_int_eq (weir_pipe_add_processor (pipe, &proc, NULL, NULL), 0);
    ck_assert_int_eq (weir_pipe_add (pipe, "null", NULL), 0);
    s_packed = 0;
    ck_assert_int_eq (weir_pipe_run (pipe), WEIR_EPROCESSOR);
    ck_assert_int_eq (s_packed, WEIR_EPROCESSOR);
    ck_assert_msg (strstr (weir_pipe_error (pipe), message), "'%s' lacks '%s'", weir_pipe_error (pipe),
                   message);
    weir_pipe_destroy (&pipe);
}

START_TEST (test_emit_packed_checks_the_record)
{
    s_check_packer (s_pack_bad, "packer: weir_emit_packed: the packer holds truncated record");
    s_check_packer (s_pack_two, "more than one object");
    s_check_packer (s_pack_none, "no object");
}
END_TEST

//  What the functions of <weir/plugin.h> returned, each a WEIR_E* code
typedef struct {
    int none, outside, misaligned, type, fail, emit;
} s_codes;

static int s_codes_open (weir_stage *st, void **state)
{
    s_codes *c = weir_user (st);
    ck_assert_ptr_nonnull (weir_blob (st, "w", 64));
    c->none = weir_blob_reduce (st, "none", 0, 1, WEIR_REDUCE_INT64, WEIR_REDUCE_SUM);
    c->outside = weir_blob_reduce (st, "w", 0, 9, WEIR_REDUCE_INT64, WEIR_REDUCE_SUM);
    c->misaligned = weir_blob_reduce (st, "w", 4, 1, WEIR_REDUCE_INT64, WEIR_REDUCE_SUM);
    c->type = weir_blob_reduce (st, "w", 0, 1, (weir_reduce_type) 9, WEIR_REDUCE_SUM);
    c->fail = weir_fail (st, "failed too");
    //  -1, as the first plugin.h asked, is still a failure
    return -1;
}

static int s_codes_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    s_codes *c = weir_user (st);
    c->fail = weir_fail (st, "failed on purpose");
    //  The job is failed: an emit soon finds its batch cannot go on
    int rc = 0;
    for (int i = 0; i < 1000000 && !rc; i++)
        rc = weir_emit (st, rec);
    c->emit = rc;
    return rc;
}

START_TEST (test_plugin_functions_return_codes)
{
    weir_processor proc = {WEIR_PROCESSOR_INIT, .name = "codes", .open = s_codes_open,
                           .process = s_codes_process};
    const char *one[] = {"batch=1", NULL};
    s_codes c;
    memset (&c, 0, sizeof c);
    weir_pipe *pipe = s_new ();
    ck_assert_int_eq (weir_pipe_parse (pipe, "range count=10"), 0);
    ck_assert_int_eq (weir_pipe_add_processor (pipe, &proc, &c, one), 0);
    ck_assert_int_eq (weir_pipe_add (pipe, "null", NULL), 0);
    ck_assert_int_eq (weir_pipe_run (pipe), WEIR_EPROCESSOR);
    //  The first failure is the job's, and says what it was
    ck_assert_msg (
        strstr (weir_pipe_error (pipe),
                "codes: weir_blob_reduce: there is no blob 'none' (create it with weir_blob first)"),
        "%s", weir_pipe_error (pipe));
    ck_assert_int_eq (c.none, WEIR_EINVAL);
    ck_assert_int_eq (c.outside, WEIR_EINVAL);
    ck_assert_int_eq (c.misaligned, WEIR_EINVAL);
    ck_assert_int_eq (c.type, WEIR_EINVAL);
    ck_assert_int_eq (c.fail, WEIR_EPROCESSOR);
    weir_pipe_destroy (&pipe);

    //  weir_emit in a job that failed
    proc.open = NULL;
    memset (&c, 0, sizeof c);
    pipe = s_new ();
    ck_assert_int_eq (weir_pipe_parse (pipe, "range count=10"), 0);
    ck_assert_int_eq (weir_pipe_add_processor (pipe, &proc, &c, one), 0);
    ck_assert_int_eq (weir_pipe_add (pipe, "null", NULL), 0);
    ck_assert_int_eq (weir_pipe_run (pipe), WEIR_EPROCESSOR);
    ck_assert_msg (strstr (weir_pipe_error (pipe), "codes: failed on purpose"), "%s", weir_pipe_error (pipe));
    ck_assert_int_eq (c.fail, WEIR_EPROCESSOR);
    ck_assert_int_eq (c.emit, WEIR_EABORTED);
    weir_pipe_destroy (&pipe);
}
END_TEST

START_TEST (test_processor_table_is_checked)
{
    weir_pipe *pipe = s_new ();
    weir_processor wrong = {
        .abi = WEIR_PLUGIN_ABI + 1, .size = sizeof (weir_processor), .name = "future", .process = s_process};
    ck_assert_int_eq (weir_pipe_add_processor (pipe, &wrong, NULL, NULL), WEIR_EPROCESSOR);
    ck_assert_msg (
        strstr (weir_pipe_error (pipe), "processor was built for processor ABI 3, but this weir has ABI 2"),
        "%s", weir_pipe_error (pipe));
    weir_processor none = {WEIR_PROCESSOR_INIT, .name = "empty"};
    ck_assert_int_eq (weir_pipe_add_processor (pipe, &none, NULL, NULL), WEIR_EPROCESSOR);
    ck_assert_msg (strstr (weir_pipe_error (pipe), "empty has no process callback"), "%s",
                   weir_pipe_error (pipe));
    //  A callback processor cannot stand where a reader must
    ck_assert_int_eq (weir_pipe_add_processor (pipe, &s_proc, NULL, NULL), 0);
    ck_assert_int_eq (weir_pipe_add (pipe, "null", NULL), 0);
    ck_assert_int_eq (weir_pipe_run (pipe), WEIR_ESTRUCTURE);
    ck_assert_msg (
        strstr (weir_pipe_error (pipe), "'probe' is a processor, but the first element must be a reader"),
        "%s", weir_pipe_error (pipe));
    //  A pipe runs once
    ck_assert_int_eq (weir_pipe_run (pipe), WEIR_ESTATE);
    ck_assert_int_eq (weir_pipe_parse (pipe, "range count=1 ! null"), WEIR_ESTATE);
    weir_pipe_destroy (&pipe);
    weir_pipe_destroy (&pipe);  //  NULL: nothing happens
}
END_TEST

START_TEST (test_parse_errors_point_into_the_text)
{
    weir_pipe *pipe = s_new ();
    ck_assert_int_eq (weir_pipe_parse (pipe, "range count=3 ! lines path=\"x"), WEIR_ESYNTAX);
    ck_assert_int_eq (weir_pipe_error_offset (pipe), 27);
    weir_pipe_destroy (&pipe);

    pipe = s_new ();
    ck_assert_int_eq (weir_pipe_parse (pipe, "range count=3 ! null colour=red"), 0);
    ck_assert_int_eq (weir_pipe_run (pipe), WEIR_EPROPERTY);
    ck_assert_int_eq (weir_pipe_error_offset (pipe), 21);
    ck_assert (weir_is_usage_error (WEIR_EPROPERTY));
    ck_assert (!weir_is_usage_error (WEIR_EIO));
    weir_pipe_destroy (&pipe);

    //  Properties given in code have no place in a text
    pipe = s_new ();
    const char *bad[] = {"novalue", NULL};
    ck_assert_int_eq (weir_pipe_add (pipe, "range", bad), WEIR_EPROPERTY);
    ck_assert_msg (strstr (weir_pipe_error (pipe), "range: property 'novalue' is not of the form key=value"),
                   "%s", weir_pipe_error (pipe));
    weir_pipe_destroy (&pipe);
}
END_TEST

START_TEST (test_small_queues_and_batches)
{
    //  capacity=1, batch=1: the tightest queue still moves everything
    weir_pipe *pipe = s_new ();
    ck_assert_int_eq (weir_pipe_parse (pipe, "range count=20000 batch=1 threads=2 ! identity threads=3 "
                                             "capacity=1 batch=1 ! null capacity=1 threads=2"),
                      0);
    ck_assert_int_eq (weir_pipe_run (pipe), 0);
    weir_stage_stats st = WEIR_STAGE_STATS_INIT;
    weir_pipe_stats (pipe, 2, &st);
    ck_assert_uint_eq (st.records_out, 20000);
    ck_assert_uint_eq (st.batches_in, 20000);
    weir_pipe_destroy (&pipe);
}
END_TEST

static atomic_int s_progress_calls, s_progress_finals;

static void s_progress (weir_pipe *pipe, void *arg, int final)
{
    weir_stage_stats st = WEIR_STAGE_STATS_INIT;
    ck_assert_int_eq (weir_pipe_stats (pipe, 0, &st), 0);
    atomic_fetch_add (final ? &s_progress_finals : &s_progress_calls, 1);
}

static int s_slow (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    struct timespec ts = {0, 2000000};
    nanosleep (&ts, NULL);
    return weir_emit (st, rec);
}

START_TEST (test_progress_callback)
{
    weir_processor slow = {WEIR_PROCESSOR_INIT, .name = "slow", .process = s_slow};
    weir_pipe *pipe = s_new ();
    weir_pipe_set_progress (pipe, s_progress, NULL, 10);
    ck_assert_int_eq (weir_pipe_parse (pipe, "range count=50"), 0);
    ck_assert_int_eq (weir_pipe_add_processor (pipe, &slow, NULL, NULL), 0);
    ck_assert_int_eq (weir_pipe_add (pipe, "null", NULL), 0);
    ck_assert_int_eq (weir_pipe_run (pipe), 0);
    //  50 records at 2 ms take 100 ms: several 10 ms ticks, one final call
    ck_assert_int_ge (atomic_load (&s_progress_calls), 2);
    ck_assert_int_eq (atomic_load (&s_progress_finals), 1);
    weir_pipe_destroy (&pipe);
}
END_TEST

//  What the progress callback of a run saw when it tried to change the
//  pipe under the run
typedef struct {
    atomic_int calls, finals, accepted;  //  accepted: calls that were not refused
    atomic_int fail_at;                  //  s_slow_fail fails at this record (0: never)
    atomic_int records;
} s_meddler;

static void s_meddle (weir_pipe *pipe, void *arg, int final)
{
    s_meddler *m = arg;
    atomic_fetch_add (final ? &m->finals : &m->calls, 1);
    //  Each would change what the run uses; the checkpoint directory and
    //  the blobs' one would free a string the recovery still points at
    int rc[] = {
        weir_pipe_set_epoch_records (pipe, 1),
        weir_pipe_set_epoch_seconds (pipe, 0.001),
        weir_pipe_set_epochs (pipe, 1),
        weir_pipe_set_checkpoint (pipe, NULL),
        weir_pipe_set_checkpoint (pipe, "/nonexistent/elsewhere"),
        weir_pipe_set_keep (pipe, 1),
        weir_pipe_set_async_checkpoint (pipe, 1),
        weir_pipe_set_checkpoint_failures (pipe, 9),
        weir_pipe_set_resume (pipe, WEIR_RESUME_EPOCH, 99),
        weir_pipe_set_load_blobs (pipe, "/nonexistent", 3),
        weir_pipe_set_log (pipe, NULL, NULL),
        weir_pipe_set_stop_timeout (pipe, 0.001),
        weir_pipe_set_progress (pipe, NULL, NULL, 1),
        weir_pipe_set_epoch_timeout (pipe, 0.001),
        weir_pipe_parse (pipe, "range count=1"),
        weir_pipe_add (pipe, "null", NULL),
        weir_pipe_run (pipe),
    };
    for (size_t i = 0; i < sizeof rc / sizeof rc[0]; i++)
        if (rc[i] != WEIR_ESTATE)
            atomic_fetch_add (&m->accepted, 1);
}

static int s_slow_fail (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    s_meddler *m = weir_user (st);
    if (atomic_fetch_add (&m->records, 1) + 1 == atomic_load (&m->fail_at))
        return weir_fail (st, "failed on purpose");
    return s_slow (st, tstate, rec);
}

//  range count=55 ! slow ! null, in epochs of 10 records checkpointed into
//  DIR, with M's progress callback every 5 ms
static int s_meddled (s_meddler *m, const char *dir, weir_pipe **pipe_p)
{
    static const weir_processor slow = {WEIR_PROCESSOR_INIT, .name = "slow", .process = s_slow_fail};
    weir_pipe *pipe = *pipe_p = s_new ();
    ck_assert_int_eq (weir_pipe_parse (pipe, "range count=55"), 0);
    ck_assert_int_eq (weir_pipe_add_processor (pipe, &slow, m, NULL), 0);
    ck_assert_int_eq (weir_pipe_add (pipe, "null", NULL), 0);
    ck_assert_int_eq (weir_pipe_set_checkpoint (pipe, dir), 0);
    ck_assert_int_eq (weir_pipe_set_epoch_records (pipe, 10), 0);
    ck_assert_int_eq (weir_pipe_set_progress (pipe, s_meddle, m, 5), 0);
    return weir_pipe_run (pipe);
}

START_TEST (test_setters_refused_once_the_pipe_runs)
{
    char *dir = testutil_mkdtemp ();
    char ck[4200];
    snprintf (ck, sizeof ck, "%s/ck", dir);
    s_meddler m;
    memset (&m, 0, sizeof m);
    weir_pipe *pipe;
    ck_assert_int_eq (s_meddled (&m, ck, &pipe), 0);
    //  Refused every time, and the run went on as it was set up: six
    //  epochs (the last of 5 records), each checkpointed and kept, one
    //  final progress call
    ck_assert_int_ge (m.calls, 2);
    ck_assert_int_eq (m.finals, 1);
    ck_assert_int_eq (m.accepted, 0);
    ck_assert_str_eq (weir_pipe_error (pipe), "");
    ck_assert_uint_eq (weir_pipe_epoch (pipe), 6);
    weir_stage_stats st = WEIR_STAGE_STATS_INIT;
    ck_assert_int_eq (weir_pipe_stats (pipe, 2, &st), 0);
    ck_assert_uint_eq (st.records_out, 55);
    uint64_t *epochs;
    size_t count;
    ck_assert_int_eq (weir_checkpoint_list (ck, &epochs, &count, NULL), 0);
    ck_assert_uint_eq (count, 7);
    ck_assert_uint_eq (epochs[6], 6);
    weir_free (epochs);
    //  After the run a refusal is the pipe's error, as others are
    ck_assert_int_eq (weir_pipe_set_keep (pipe, 1), WEIR_ESTATE);
    ck_assert_str_eq (weir_pipe_error (pipe), "the pipe already ran");
    ck_assert_int_eq (weir_pipe_set_checkpoint (pipe, NULL), WEIR_ESTATE);
    weir_pipe_destroy (&pipe);

    //  A run that fails keeps its first failure as the pipe's error,
    //  whatever the progress callback tried after it (its final call too)
    memset (&m, 0, sizeof m);
    m.fail_at = 25;
    snprintf (ck, sizeof ck, "%s/failed", dir);
    ck_assert_int_eq (s_meddled (&m, ck, &pipe), WEIR_EPROCESSOR);
    ck_assert_int_eq (m.finals, 1);
    ck_assert_int_eq (m.accepted, 0);
    ck_assert_msg (strstr (weir_pipe_error (pipe), "slow: failed on purpose"), "%s", weir_pipe_error (pipe));
    weir_pipe_destroy (&pipe);
    testutil_rmdir (dir);
}
END_TEST

START_TEST (test_index_out_of_range)
{
    weir_pipe *pipe = s_new ();
    ck_assert_int_eq (weir_pipe_parse (pipe, "range count=10 ! null"), 0);
    weir_stage_stats st = WEIR_STAGE_STATS_INIT;
    size_t stage;
    const char *name;
    double value;
    //  Before the run, and after
    ck_assert_int_eq (weir_pipe_stats (pipe, 2, &st), WEIR_EINVAL);
    ck_assert_int_eq (weir_pipe_metric (pipe, 0, &stage, &name, &value), WEIR_EINVAL);
    ck_assert_int_eq (weir_pipe_run (pipe), 0);
    ck_assert_int_eq (weir_pipe_stats (pipe, 1, &st), 0);
    ck_assert_int_eq (weir_pipe_stats (pipe, 2, &st), WEIR_EINVAL);
    ck_assert_int_eq (weir_pipe_stats (pipe, (size_t) -1, &st), WEIR_EINVAL);
    ck_assert_uint_eq (weir_pipe_metric_count (pipe), 0);
    ck_assert_int_eq (weir_pipe_metric (pipe, 0, &stage, &name, &value), WEIR_EINVAL);
    weir_pipe_destroy (&pipe);
}
END_TEST

static void *s_stopper (void *arg)
{
    //  Wait for the run to start (wall time is readable from any thread),
    //  then let records flow a little before stopping
    struct timespec ts = {0, 1000000};
    while (weir_pipe_wall_seconds (arg) == 0)
        nanosleep (&ts, NULL);
    ts.tv_nsec = 20000000;
    nanosleep (&ts, NULL);
    weir_pipe_stop (arg);
    return NULL;
}

START_TEST (test_stop_from_another_thread)
{
    weir_pipe *pipe = s_new ();
    ck_assert_int_eq (weir_pipe_parse (pipe, "range count=1G ! identity threads=2 ! null"), 0);
    pthread_t t;
    pthread_create (&t, NULL, s_stopper, pipe);
    ck_assert_int_eq (weir_pipe_run (pipe), 0);
    pthread_join (t, NULL);
    weir_stage_stats in = WEIR_STAGE_STATS_INIT, out = WEIR_STAGE_STATS_INIT;
    weir_pipe_stats (pipe, 0, &in);
    weir_pipe_stats (pipe, 2, &out);
    ck_assert_uint_gt (in.records_out, 0);
    ck_assert_uint_eq (in.records_out, out.records_out);
    weir_pipe_destroy (&pipe);
}
END_TEST

//  A graph built in code: range ! tee name=t, t. ! probe ! null, and
//  t. ! null, then the probe's branch merged with a second tee branch
//  into one identity: the links and every count as the description would
//  give them
START_TEST (test_graph_in_code)
{
    s_probe p;
    memset (&p, 0, sizeof p);
    p.fanout = 1;
    const char *rp[] = {"count=1000", "batch=64", NULL};
    const char *tp[] = {"name=t", NULL};
    const char *mp[] = {"name=m", NULL};
    weir_pipe *pipe = s_new ();
    ck_assert_int_eq (weir_pipe_add (pipe, "range", rp), 0);
    ck_assert_int_eq (weir_pipe_add (pipe, "tee", tp), 0);
    ck_assert_int_eq (weir_pipe_add_processor (pipe, &s_proc, &p, NULL), 0);  //  2: t. ! probe
    ck_assert_int_eq (weir_pipe_add (pipe, "identity", mp), 0);                //  3: probe ! m
    ck_assert_int_eq (weir_pipe_add (pipe, "null", NULL), 0);                  //  4: m ! null
    ck_assert_int_eq (weir_pipe_branch (pipe, "t."), 0);
    ck_assert_int_eq (weir_pipe_add (pipe, "null", NULL), 0);  //  5: t. ! null
    ck_assert_int_eq (weir_pipe_link (pipe, "t", "m"), 0);     //  t. ! m.
    ck_assert_int_eq (weir_pipe_check (pipe), 0);
    ck_assert_int_eq (weir_pipe_add (pipe, "null", NULL), WEIR_ESTATE);
    ck_assert_uint_eq (weir_pipe_link_count (pipe), 6);
    size_t from, to;
    uint64_t records;
    size_t want[6][2] = {{0, 1}, {1, 2}, {1, 5}, {1, 3}, {2, 3}, {3, 4}};
    for (size_t k = 0; k < 6; k++) {
        ck_assert_int_eq (weir_pipe_link_info (pipe, k, &from, &to, &records), 0);
        ck_assert_uint_eq (from, want[k][0]);
        ck_assert_uint_eq (to, want[k][1]);
    }
    ck_assert_int_eq (weir_pipe_link_info (pipe, 6, &from, &to, &records), WEIR_EINVAL);
    ck_assert_int_eq (weir_pipe_run (pipe), 0);
    ck_assert_uint_eq (p.processed, 1000);
    weir_stage_stats st = WEIR_STAGE_STATS_INIT;
    ck_assert_int_eq (weir_pipe_stats (pipe, 3, &st), 0);
    ck_assert_str_eq (st.label, "m");
    ck_assert_uint_eq (st.records_in, 2000);  //  the probe's 1000 and the tee's
    ck_assert_int_eq (weir_pipe_stats (pipe, 5, &st), 0);
    ck_assert_uint_eq (st.records_out, 1000);
    ck_assert_int_eq (weir_pipe_link_info (pipe, 2, &from, &to, &records), 0);
    ck_assert_uint_eq (records, 1000);
    weir_pipe_destroy (&pipe);

    //  A name no stage has is refused when checked, with the pipe's error
    pipe = s_new ();
    ck_assert_int_eq (weir_pipe_add (pipe, "range", rp), 0);
    ck_assert_int_eq (weir_pipe_add (pipe, "null", NULL), 0);
    ck_assert_int_eq (weir_pipe_link (pipe, "t.", "no such"), WEIR_EINVAL);
    ck_assert_int_eq (weir_pipe_branch (pipe, "nowhere"), 0);
    ck_assert_int_eq (weir_pipe_add (pipe, "null", NULL), 0);
    ck_assert_int_eq (weir_pipe_check (pipe), WEIR_ESTRUCTURE);
    ck_assert_ptr_nonnull (strstr (weir_pipe_error (pipe), "'nowhere.' refers to no element"));
    ck_assert_int_eq (weir_pipe_run (pipe), WEIR_ESTRUCTURE);
    weir_pipe_destroy (&pipe);
}
END_TEST

//  A processor with named outputs: even numbers to 'even', odd ones to
//  'odd' (port 1), and with WEIR_USER set a record to a port it lacks
static const char *const s_split_ports[] = {"even", "odd", NULL};

static int s_split_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    (void) tstate;
    if (weir_user (st) && rec->via.u64 == 7)
        return weir_emit_to (st, 2, rec);
    return rec->via.u64 % 2 ? weir_emit_to (st, 1, rec) : weir_emit (st, rec);
}

static const weir_processor s_split = {
    WEIR_PROCESSOR_INIT, .name = "split", .process = s_split_process, .ports = s_split_ports};

//  range count=1001 ! split name=s  s.odd ! null  s.even ! null, in code
static weir_pipe *s_split_pipe (void *user, const char *first, const char *second)
{
    const char *rp[] = {"count=1001", "batch=64", "threads=2", NULL};
    const char *sp[] = {"name=s", "threads=2", NULL};
    weir_pipe *pipe = s_new ();
    ck_assert_int_eq (weir_pipe_add (pipe, "range", rp), 0);
    ck_assert_int_eq (weir_pipe_add_processor (pipe, &s_split, user, sp), 0);
    ck_assert_int_eq (weir_pipe_branch (pipe, first), 0);
    ck_assert_int_eq (weir_pipe_add (pipe, "null", NULL), 0);  //  2
    if (second) {
        ck_assert_int_eq (weir_pipe_branch (pipe, second), 0);
        ck_assert_int_eq (weir_pipe_add (pipe, "null", NULL), 0);  //  3
    }
    return pipe;
}

START_TEST (test_ports_in_code)
{
    weir_pipe *pipe = s_split_pipe (NULL, "s.odd", "s.even");
    ck_assert_int_eq (weir_pipe_check (pipe), 0);
    //  Links from ports go in port order, whatever order they were given
    size_t from, to;
    uint64_t records;
    ck_assert_int_eq (weir_pipe_link_info (pipe, 1, &from, &to, &records), 0);
    ck_assert_uint_eq (to, 3);
    ck_assert_str_eq (weir_pipe_link_port (pipe, 1), "even");
    ck_assert_str_eq (weir_pipe_link_port (pipe, 2), "odd");
    ck_assert_ptr_null (weir_pipe_link_port (pipe, 0));
    ck_assert_ptr_null (weir_pipe_link_port (pipe, 3));
    ck_assert_int_eq (weir_pipe_run (pipe), 0);
    weir_stage_stats st = WEIR_STAGE_STATS_INIT;
    ck_assert_int_eq (weir_pipe_stats (pipe, 3, &st), 0);
    ck_assert_uint_eq (st.records_in, 501);  //  0, 2, ... 1000
    ck_assert_int_eq (weir_pipe_stats (pipe, 2, &st), 0);
    ck_assert_uint_eq (st.records_in, 500);
    ck_assert_int_eq (weir_pipe_stats (pipe, 1, &st), 0);
    ck_assert_uint_eq (st.records_out, 1001);
    ck_assert_int_eq (weir_pipe_link_info (pipe, 2, &from, &to, &records), 0);
    ck_assert_uint_eq (records, 500);
    weir_pipe_destroy (&pipe);

    //  A port nobody links loses what is sent there: refused, named
    pipe = s_split_pipe (NULL, "s.even", NULL);
    ck_assert_int_eq (weir_pipe_check (pipe), WEIR_ESTRUCTURE);
    ck_assert_msg (strstr (weir_pipe_error (pipe), "'s.odd' goes nowhere"), "%s", weir_pipe_error (pipe));
    weir_pipe_destroy (&pipe);
    //  A link that names no port, and a port the processor lacks
    pipe = s_split_pipe (NULL, "s.", "s.odd");
    ck_assert_int_eq (weir_pipe_check (pipe), WEIR_ESTRUCTURE);
    ck_assert_msg (strstr (weir_pipe_error (pipe), "sends to named outputs, and this link names none"), "%s",
                   weir_pipe_error (pipe));
    weir_pipe_destroy (&pipe);
    pipe = s_split_pipe (NULL, "s.evn", "s.odd");
    ck_assert_int_eq (weir_pipe_check (pipe), WEIR_ESTRUCTURE);
    ck_assert_msg (strstr (weir_pipe_error (pipe), "did you mean 's.even'?"), "%s", weir_pipe_error (pipe));
    weir_pipe_destroy (&pipe);
    //  weir_emit_to a port the processor does not have fails the job
    int flag = 1;
    pipe = s_split_pipe (&flag, "s.odd", "s.even");
    ck_assert_int_eq (weir_pipe_run (pipe), WEIR_EPROCESSOR);
    ck_assert_msg (strstr (weir_pipe_error (pipe), "weir_emit_to: port 2, and the processor has 2"), "%s",
                   weir_pipe_error (pipe));
    weir_pipe_destroy (&pipe);
    //  Port names are checked with the table
    static const char *const bad[] = {"ok", "not ok", NULL};
    static const char *const twice[] = {"a", "a", NULL};
    weir_processor t = s_split;
    t.ports = bad;
    pipe = s_new ();
    ck_assert_int_eq (weir_pipe_add_processor (pipe, &t, NULL, NULL), WEIR_EPROCESSOR);
    ck_assert_msg (strstr (weir_pipe_error (pipe), "its port 'not ok' cannot be written after NAME."), "%s",
                   weir_pipe_error (pipe));
    t.ports = twice;
    ck_assert_int_eq (weir_pipe_add_processor (pipe, &t, NULL, NULL), WEIR_EPROCESSOR);
    ck_assert_msg (strstr (weir_pipe_error (pipe), "declares port 'a' twice"), "%s", weir_pipe_error (pipe));
    weir_pipe_destroy (&pipe);
}
END_TEST

//  Two readers merged, in code: a branch of its own for the second reader
START_TEST (test_readers_merged_in_code)
{
    const char *a[] = {"count=1000", NULL};
    const char *b[] = {"count=500", "start=1000", "threads=2", NULL};
    const char *mp[] = {"name=m", NULL};
    weir_pipe *pipe = s_new ();
    ck_assert_int_eq (weir_pipe_add (pipe, "range", a), 0);      //  0
    ck_assert_int_eq (weir_pipe_add (pipe, "identity", mp), 0);  //  1: the merge
    ck_assert_int_eq (weir_pipe_add (pipe, "null", NULL), 0);    //  2
    ck_assert_int_eq (weir_pipe_branch (pipe, NULL), 0);
    ck_assert_int_eq (weir_pipe_add (pipe, "range", b), 0);  //  3: a reader of its own
    ck_assert_int_eq (weir_pipe_link (pipe, "3", "m"), WEIR_EINVAL);
    weir_pipe_destroy (&pipe);
    //  The second reader named, linked into the merge
    const char *bn[] = {"count=500", "start=1000", "threads=2", "name=second", NULL};
    pipe = s_new ();
    ck_assert_int_eq (weir_pipe_add (pipe, "range", a), 0);
    ck_assert_int_eq (weir_pipe_add (pipe, "identity", mp), 0);
    ck_assert_int_eq (weir_pipe_add (pipe, "null", NULL), 0);
    ck_assert_int_eq (weir_pipe_branch (pipe, NULL), 0);
    ck_assert_int_eq (weir_pipe_add (pipe, "range", bn), 0);
    ck_assert_int_eq (weir_pipe_link (pipe, "second", "m"), 0);
    ck_assert_int_eq (weir_pipe_run (pipe), 0);
    weir_stage_stats st = WEIR_STAGE_STATS_INIT;
    ck_assert_int_eq (weir_pipe_stats (pipe, 3, &st), 0);
    ck_assert_int_eq (st.kind, WEIR_ELEMENT_READER);
    ck_assert_uint_eq (st.records_out, 500);
    ck_assert_int_eq (weir_pipe_stats (pipe, 2, &st), 0);
    ck_assert_uint_eq (st.records_in, 1500);
    weir_pipe_destroy (&pipe);
}
END_TEST

START_TEST (test_elements_are_documented)
{
    int readers = 0, writers = 0, processors = 0, filter_expr = 0;
    for (const weir_element_info *e = weir_elements (); e->name; e++) {
        ck_assert_ptr_nonnull (e->description);
        ck_assert_ptr_nonnull (e->props);
        readers += e->kind == WEIR_ELEMENT_READER;
        writers += e->kind == WEIR_ELEMENT_WRITER;
        processors += e->kind == WEIR_ELEMENT_PROCESSOR;
        //  filter's one property is its expression, required
        if (strcmp (e->name, "filter") == 0)
            filter_expr = strcmp (e->props[0].name, "expr") == 0 && e->props[0].fallback == NULL
                          && e->props[1].name == NULL;
    }
    ck_assert_int_eq (readers, 7);
    ck_assert_int_eq (processors, 11);
    ck_assert (filter_expr);
    ck_assert_int_eq (writers, 8);
    ck_assert_str_eq (weir_common_properties ()[0].name, "threads");
    //  What each kind takes: the common properties first, then its own
    const char *reader[] = {"threads", "capacity", "batch",       "name",  "passes",
                            "linger",  "on-error", "dead-letter", "cache", NULL};
    const char *processor[] = {"threads", "capacity", "batch",       "name", "key",
                               "linger",  "on-error", "dead-letter", "fuse", NULL};
    const char *writer[] = {"threads", "capacity", "batch", "name", "key", NULL};
    const char **want[] = {reader, processor, writer};
    const weir_element_kind kinds[] = {WEIR_ELEMENT_READER, WEIR_ELEMENT_PROCESSOR, WEIR_ELEMENT_WRITER};
    for (size_t k = 0; k < 3; k++) {
        const weir_property_info *got = weir_kind_properties (kinds[k]);
        size_t i = 0;
        for (; want[k][i]; i++)
            ck_assert_str_eq (got[i].name, want[k][i]);
        ck_assert_ptr_null (got[i].name);
    }
    for (const weir_property_info *c = weir_common_properties (); c->name; c++)
        ck_assert_str_ne (c->name, "passes");
    ck_assert_str_eq (weir_strerror (WEIR_ECORRUPT), "corrupt input");
    ck_assert_str_eq (weir_strerror (12345), "unknown error code");
}
END_TEST

Suite *check_suite (void)
{
    Suite *s = suite_create ("pipe");
    TCase *tc = tcase_create ("core");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_callbacks_one_thread);
    tcase_add_test (tc, test_callbacks_four_threads);
    tcase_add_test (tc, test_callback_errors_stop_the_job);
    tcase_add_test (tc, test_process_bytes);
    tcase_add_test (tc, test_stop_ends_cleanly);
    tcase_add_test (tc, test_fanout_and_filter);
    tcase_add_test (tc, test_graph_in_code);
    tcase_add_test (tc, test_ports_in_code);
    tcase_add_test (tc, test_readers_merged_in_code);
    tcase_add_test (tc, test_emit_packed_checks_the_record);
    tcase_add_test (tc, test_plugin_functions_return_codes);
    tcase_add_test (tc, test_processor_table_is_checked);
    tcase_add_test (tc, test_parse_errors_point_into_the_text);
    tcase_add_test (tc, test_small_queues_and_batches);
    tcase_add_test (tc, test_progress_callback);
    tcase_add_test (tc, test_stop_from_another_thread);
    tcase_add_test (tc, test_setters_refused_once_the_pipe_runs);
    tcase_add_test (tc, test_index_out_of_range);
    tcase_add_test (tc, test_elements_are_documented);
    suite_add_tcase (s, tc);
    return s;
}

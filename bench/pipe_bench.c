/*  bench/pipe_bench.c - records per second through weir, against what a
    user would write by hand with libzmq and msgpack-c.

    Configurations (each run --repeat times, interleaved: every repeat runs
    every configuration once, so that machine noise hits them alike):

    - weir identity: range ! identity ! null through the public API; the
      identity stage forwards whole batches without decoding them;
    - weir repack: the middle stage is a C callback processor whose
      process() calls weir_emit(): every record is decoded and packed again;
    - ref_a: three threads over ZeroMQ inproc PUSH/PULL; the middle thread
      unpacks and repacks every record, the consumer unpacks, counts and
      sums them.  What a user writes instead of weir;
    - ref_b: a bare PUSH/PULL pair sending the same pre-packed batch over
      and over; the consumer only counts bytes.  The ceiling for moving
      these bytes through one inproc pipe.

    One JSON document goes to stdout; progress goes to stderr.  */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <msgpack.h>
#include <zmq.h>

#include <weir/plugin.h>
#include <weir/weir.h>

#define S_MAX_REPEAT 99
#define S_REF_BATCH 256

typedef enum { S_WEIR_IDENTITY, S_WEIR_REPACK, S_REF_A, S_REF_B } s_kind;

typedef struct {
    s_kind kind;
    const char *name;
    unsigned threads;  //  0 for the references: fixed thread layout
    unsigned batch;
    double runs[S_MAX_REPEAT];  //  records/s of each repeat
    double cpu[S_MAX_REPEAT];   //  process CPU ns per record of each repeat
} s_config;

static uint64_t s_records;

static double s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

//  CPU time of the whole process, user and system, in seconds.  Wall time
//  on 2 cores mixes work with waiting and preemption; CPU per record says
//  how much work a configuration does, whatever the scheduling.
static double s_cpu (void)
{
    struct rusage ru;
    getrusage (RUSAGE_SELF, &ru);
    return (double) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec)
           + (double) (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static void s_die (const char *fmt, ...) __attribute__ ((format (printf, 1, 2), noreturn));

static void s_die (const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    fprintf (stderr, "pipe_bench: ");
    vfprintf (stderr, fmt, ap);
    fprintf (stderr, "\n");
    va_end (ap);
    exit (1);
}

//  ---------------------------------------------------------------------
//  weir

static int s_repack_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    return weir_emit (st, rec);
}

static const weir_processor s_repack = {
    WEIR_PROCESSOR_INIT,
    .name = "repack",
    .description = "decodes every record and emits a copy",
    .process = s_repack_process,
};

//  The records the writer took must be every record read: a benchmark
//  that loses records measures nothing.
static void s_weir_check (weir_pipe *pipe, const char *what)
{
    size_t stages = weir_pipe_stage_count (pipe);
    weir_stage_stats stats = WEIR_STAGE_STATS_INIT;
    if (stages == 0 || weir_pipe_stats (pipe, stages - 1, &stats))
        s_die ("%s: no statistics for the writer", what);
    if (stats.records_out != s_records)
        s_die ("%s: the writer took %" PRIu64 " records, expected %" PRIu64, what, stats.records_out,
               s_records);
}

static double s_run_weir (const s_config *c)
{
    char count[64], batch[64], threads[64];
    snprintf (count, sizeof count, "count=%" PRIu64, s_records);
    snprintf (batch, sizeof batch, "batch=%u", c->batch);
    snprintf (threads, sizeof threads, "threads=%u", c->threads);

    weir_pipe *pipe;
    if (weir_pipe_new (&pipe))
        s_die ("%s: weir_pipe_new failed", c->name);
    int rc;
    if (c->kind == S_WEIR_IDENTITY) {
        //  batch= is what a stage sends: only the reader's matters, the
        //  identity stage forwards the reader's batches as they are
        char text[320];
        snprintf (text, sizeof text, "range %s %s ! identity %s ! null %s", count, batch, threads, threads);
        rc = weir_pipe_parse (pipe, text);
    }
    else {
        const char *reader[] = {count, batch, NULL};
        const char *middle[] = {threads, batch, NULL};
        const char *writer[] = {threads, NULL};
        rc = weir_pipe_add (pipe, "range", reader);
        if (!rc)
            rc = weir_pipe_add_processor (pipe, &s_repack, NULL, middle);
        if (!rc)
            rc = weir_pipe_add (pipe, "null", writer);
    }
    if (!rc)
        rc = weir_pipe_run (pipe);
    if (rc)
        s_die ("%s threads=%u batch=%u: %s (%s)", c->name, c->threads, c->batch, weir_pipe_error (pipe),
               weir_strerror (rc));
    s_weir_check (pipe, c->name);
    double seconds = weir_pipe_wall_seconds (pipe);
    weir_pipe_destroy (&pipe);
    return seconds;
}

//  ---------------------------------------------------------------------
//  Reference (a): producer -> middle -> consumer, unpacking and repacking

typedef struct {
    void *ctx;
    void *in, *out;  //  sockets; each thread owns its own
    unsigned batch;
    uint64_t count, sum;  //  what the consumer saw
    int failed;
} s_ref;

static int s_send_buffer (void *socket, msgpack_sbuffer *buf)
{
    int rc = zmq_send (socket, buf->data, buf->size, 0);
    msgpack_sbuffer_clear (buf);
    return rc < 0 ? -1 : 0;
}

static void *s_ref_a_producer (void *arg)
{
    s_ref *ref = arg;
    msgpack_sbuffer buf;
    msgpack_sbuffer_init (&buf);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &buf, msgpack_sbuffer_write);
    unsigned in_batch = 0;
    for (uint64_t i = 0; i < s_records; i++) {
        msgpack_pack_int64 (&pk, (int64_t) i);
        if (++in_batch == ref->batch) {
            if (s_send_buffer (ref->out, &buf))
                ref->failed = 1;
            in_batch = 0;
        }
    }
    if (in_batch && s_send_buffer (ref->out, &buf))
        ref->failed = 1;
    //  End of stream: an empty message
    if (zmq_send (ref->out, "", 0, 0) < 0)
        ref->failed = 1;
    msgpack_sbuffer_destroy (&buf);
    zmq_close (ref->out);
    return NULL;
}

static void *s_ref_a_middle (void *arg)
{
    s_ref *ref = arg;
    msgpack_sbuffer buf;
    msgpack_sbuffer_init (&buf);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &buf, msgpack_sbuffer_write);
    msgpack_unpacked result;
    msgpack_unpacked_init (&result);
    unsigned in_batch = 0;
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    for (;;) {
        if (zmq_msg_recv (&msg, ref->in, 0) < 0) {
            ref->failed = 1;
            break;
        }
        size_t size = zmq_msg_size (&msg);
        if (size == 0)
            break;
        const char *data = zmq_msg_data (&msg);
        size_t off = 0;
        msgpack_unpack_return ret;
        while ((ret = msgpack_unpack_next (&result, data, size, &off)) == MSGPACK_UNPACK_SUCCESS) {
            msgpack_pack_object (&pk, result.data);
            if (++in_batch == ref->batch) {
                if (s_send_buffer (ref->out, &buf))
                    ref->failed = 1;
                in_batch = 0;
            }
        }
        if (ret != MSGPACK_UNPACK_CONTINUE || off != size)
            ref->failed = 1;
    }
    zmq_msg_close (&msg);
    if (in_batch && s_send_buffer (ref->out, &buf))
        ref->failed = 1;
    if (zmq_send (ref->out, "", 0, 0) < 0)
        ref->failed = 1;
    msgpack_unpacked_destroy (&result);
    msgpack_sbuffer_destroy (&buf);
    zmq_close (ref->in);
    zmq_close (ref->out);
    return NULL;
}

static void *s_ref_a_consumer (void *arg)
{
    s_ref *ref = arg;
    msgpack_unpacked result;
    msgpack_unpacked_init (&result);
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    uint64_t count = 0, sum = 0;
    for (;;) {
        if (zmq_msg_recv (&msg, ref->in, 0) < 0) {
            ref->failed = 1;
            break;
        }
        size_t size = zmq_msg_size (&msg);
        if (size == 0)
            break;
        const char *data = zmq_msg_data (&msg);
        size_t off = 0;
        msgpack_unpack_return ret;
        while ((ret = msgpack_unpack_next (&result, data, size, &off)) == MSGPACK_UNPACK_SUCCESS) {
            count++;
            sum += result.data.via.u64;
        }
        if (ret != MSGPACK_UNPACK_CONTINUE || off != size)
            ref->failed = 1;
    }
    zmq_msg_close (&msg);
    msgpack_unpacked_destroy (&result);
    zmq_close (ref->in);
    ref->count = count;
    ref->sum = sum;
    return NULL;
}

static void *s_socket (void *ctx, int type, const char *endpoint, int bind)
{
    void *s = zmq_socket (ctx, type);
    if (!s)
        s_die ("zmq_socket: %s", zmq_strerror (zmq_errno ()));
    if ((bind ? zmq_bind (s, endpoint) : zmq_connect (s, endpoint)) != 0)
        s_die ("zmq_%s %s: %s", bind ? "bind" : "connect", endpoint, zmq_strerror (zmq_errno ()));
    return s;
}

//  Start the threads, wait for all of them; the wall time is measured
//  around exactly that, like weir_pipe_wall_seconds (setup excluded).
static double s_run_threads (void *(*bodies[]) (void *), s_ref *refs, size_t n)
{
    pthread_t threads[3];
    double start = s_now ();
    for (size_t i = 0; i < n; i++)
        if (pthread_create (&threads[i], NULL, bodies[i], &refs[i]))
            s_die ("pthread_create failed");
    for (size_t i = 0; i < n; i++)
        pthread_join (threads[i], NULL);
    return s_now () - start;
}

static double s_run_ref_a (const s_config *c)
{
    void *ctx = zmq_ctx_new ();
    if (!ctx)
        s_die ("zmq_ctx_new: %s", zmq_strerror (zmq_errno ()));
    //  Default high-water marks: what a user gets without tuning
    s_ref refs[3];
    memset (refs, 0, sizeof refs);
    for (int i = 0; i < 3; i++)
        refs[i].batch = c->batch;
    refs[1].in = s_socket (ctx, ZMQ_PULL, "inproc://ref-a-1", 1);
    refs[0].out = s_socket (ctx, ZMQ_PUSH, "inproc://ref-a-1", 0);
    refs[2].in = s_socket (ctx, ZMQ_PULL, "inproc://ref-a-2", 1);
    refs[1].out = s_socket (ctx, ZMQ_PUSH, "inproc://ref-a-2", 0);
    void *(*bodies[3]) (void *) = {s_ref_a_producer, s_ref_a_middle, s_ref_a_consumer};
    double seconds = s_run_threads (bodies, refs, 3);
    zmq_ctx_term (ctx);

    uint64_t want_sum =
        s_records % 2 == 0 ? s_records / 2 * (s_records - 1) : (s_records - 1) / 2 * s_records;
    if (refs[0].failed || refs[1].failed || refs[2].failed)
        s_die ("%s: a ZeroMQ call or msgpack decoding failed", c->name);
    if (refs[2].count != s_records || refs[2].sum != want_sum)
        s_die ("%s: consumer saw %" PRIu64 " records summing to %" PRIu64 ", expected %" PRIu64
               " summing to %" PRIu64,
               c->name, refs[2].count, refs[2].sum, s_records, want_sum);
    return seconds;
}

//  ---------------------------------------------------------------------
//  Reference (b): the same bytes through one bare PUSH/PULL pair

typedef struct {
    s_ref ref;
    msgpack_sbuffer full, rest;  //  one full batch, and the last partial one
    uint64_t full_count;         //  how many times to send 'full'
    uint64_t bytes, messages;    //  what the consumer saw
} s_ref_b;

static void *s_ref_b_producer (void *arg)
{
    s_ref_b *self = arg;
    void *out = self->ref.out;
    //  zmq_send copies: the same bytes go out every time, as a user
    //  sending from one reused buffer would do
    for (uint64_t i = 0; i < self->full_count; i++)
        if (zmq_send (out, self->full.data, self->full.size, 0) < 0)
            self->ref.failed = 1;
    if (self->rest.size && zmq_send (out, self->rest.data, self->rest.size, 0) < 0)
        self->ref.failed = 1;
    if (zmq_send (out, "", 0, 0) < 0)
        self->ref.failed = 1;
    zmq_close (out);
    return NULL;
}

static void *s_ref_b_consumer (void *arg)
{
    s_ref_b *self = arg;
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    uint64_t bytes = 0, messages = 0;
    for (;;) {
        int size = zmq_msg_recv (&msg, self->ref.in, 0);
        if (size < 0) {
            self->ref.failed = 1;
            break;
        }
        if (size == 0)
            break;
        bytes += (uint64_t) size;
        messages++;
    }
    zmq_msg_close (&msg);
    zmq_close (self->ref.in);
    self->bytes = bytes;
    self->messages = messages;
    return NULL;
}

static double s_run_ref_b (const s_config *c)
{
    //  Pack once.  The batch holds the last integers of the stream: their
    //  encoding is the widest in it, so the ceiling moves at least as many
    //  bytes per record as the real streams do.
    s_ref_b sides[2];
    memset (sides, 0, sizeof sides);
    s_ref_b *prod = &sides[0], *cons = &sides[1];
    msgpack_sbuffer_init (&prod->full);
    msgpack_sbuffer_init (&prod->rest);
    msgpack_packer pk;
    uint64_t first = s_records > c->batch ? s_records - c->batch : 0;
    msgpack_packer_init (&pk, &prod->full, msgpack_sbuffer_write);
    for (uint64_t i = 0; i < c->batch; i++)
        msgpack_pack_int64 (&pk, (int64_t) (first + i));
    msgpack_packer_init (&pk, &prod->rest, msgpack_sbuffer_write);
    for (uint64_t i = 0; i < s_records % c->batch; i++)
        msgpack_pack_int64 (&pk, (int64_t) (first + i));
    prod->full_count = s_records / c->batch;

    void *ctx = zmq_ctx_new ();
    if (!ctx)
        s_die ("zmq_ctx_new: %s", zmq_strerror (zmq_errno ()));
    cons->ref.in = s_socket (ctx, ZMQ_PULL, "inproc://ref-b", 1);
    prod->ref.out = s_socket (ctx, ZMQ_PUSH, "inproc://ref-b", 0);
    //  Timed like s_run_threads: thread start to the last join
    pthread_t threads[2];
    double start = s_now ();
    if (pthread_create (&threads[0], NULL, s_ref_b_producer, prod)
        || pthread_create (&threads[1], NULL, s_ref_b_consumer, cons))
        s_die ("pthread_create failed");
    pthread_join (threads[0], NULL);
    pthread_join (threads[1], NULL);
    double seconds = s_now () - start;
    zmq_ctx_term (ctx);

    uint64_t want_bytes = prod->full_count * prod->full.size + prod->rest.size;
    uint64_t want_messages = prod->full_count + (prod->rest.size ? 1 : 0);
    msgpack_sbuffer_destroy (&prod->full);
    msgpack_sbuffer_destroy (&prod->rest);
    if (prod->ref.failed || cons->ref.failed)
        s_die ("%s: a ZeroMQ call failed", c->name);
    if (cons->bytes != want_bytes || cons->messages != want_messages)
        s_die ("%s: consumer saw %" PRIu64 " bytes in %" PRIu64 " messages, expected %" PRIu64 " in %" PRIu64,
               c->name, cons->bytes, cons->messages, want_bytes, want_messages);
    return seconds;
}

//  ---------------------------------------------------------------------
//  Driver

static double s_median (const double *values, int n)
{
    double sorted[S_MAX_REPEAT];
    memcpy (sorted, values, (size_t) n * sizeof *values);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
            double t = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = t;
        }
    return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

static uint64_t s_number (const char *option, const char *text, uint64_t max)
{
    char *end;
    errno = 0;
    unsigned long long n = text ? strtoull (text, &end, 10) : 0;
    if (!text || errno || end == text || *end || text[0] == '-' || n == 0 || n > max)
        s_die ("%s needs a whole number from 1 to %" PRIu64, option, max);
    return (uint64_t) n;
}

static void s_usage (void)
{
    fprintf (stderr,
             "usage: pipe_bench [--records N] [--repeat N] [--quick]\n"
             "  --records N   records per run (default 20000000)\n"
             "  --repeat N    runs of every configuration (default 3, at most %d)\n"
             "  --quick       1000000 records, 1 repeat (a smoke run)\n"
             "Prints one JSON document on stdout.\n",
             S_MAX_REPEAT);
}

//  The configuration of KIND with THREADS and BATCH (it must exist).
static const s_config *s_find (const s_config *configs, size_t n, s_kind kind, unsigned threads,
                               unsigned batch)
{
    for (size_t i = 0; i < n; i++)
        if (configs[i].kind == kind && configs[i].threads == threads && configs[i].batch == batch)
            return &configs[i];
    return NULL;
}

//  The options into s_records and *REPEAT: -1 to go on, or the exit
//  status (0 after --help, 2 for a wrong command line)
static int s_parse_args (int argc, char *argv[], int *repeat)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp (argv[i], "--records") == 0 && i + 1 < argc)
            s_records = s_number ("--records", argv[++i], UINT64_C (1) << 40);
        else if (strcmp (argv[i], "--repeat") == 0 && i + 1 < argc)
            *repeat = (int) s_number ("--repeat", argv[++i], S_MAX_REPEAT);
        else if (strcmp (argv[i], "--quick") == 0) {
            s_records = 1000000;
            *repeat = 1;
        }
        else if (strcmp (argv[i], "--help") == 0 || strcmp (argv[i], "-h") == 0) {
            s_usage ();
            return 0;
        }
        else {
            s_usage ();
            return 2;
        }
    }
    return -1;
}

//  REPEAT runs of each of the N CONFIGS, interleaved: a burst of load
//  from elsewhere on the machine slows one repeat of every configuration
//  instead of every repeat of one
static void s_run_all (s_config *configs, size_t n, int repeat)
{
    for (int r = 0; r < repeat; r++)
        for (size_t i = 0; i < n; i++) {
            s_config *c = &configs[i];
            double cpu = s_cpu ();
            double seconds = c->kind == S_REF_A   ? s_run_ref_a (c)
                             : c->kind == S_REF_B ? s_run_ref_b (c)
                                                  : s_run_weir (c);
            c->runs[r] = seconds > 0 ? (double) s_records / seconds : 0;
            c->cpu[r] = (s_cpu () - cpu) * 1e9 / (double) s_records;
            char threads[32] = "";
            if (c->threads)
                snprintf (threads, sizeof threads, "threads=%u", c->threads);
            fprintf (stderr, "[%d/%d] %-30s %-9s batch=%-4u %7.2f M records/s %6.1f cpu ns/record\n", r + 1,
                     repeat, c->name, threads, c->batch, c->runs[r] / 1e6, c->cpu[r]);
        }
}

//  The head of the JSON document and each configuration's results; the
//  median rate of each into MEDIAN
static void s_print_results (const s_config *configs, size_t n, int repeat, double *median)
{
    int zmq_major, zmq_minor, zmq_patch;
    zmq_version (&zmq_major, &zmq_minor, &zmq_patch);
    printf ("{\"bench\":\"pipe\",\"records\":%" PRIu64 ",\"repeat\":%d,\n", s_records, repeat);
    printf (" \"machine\":{\"cpus\":%ld,\"weir\":\"%s\",\"zmq\":\"%d.%d.%d\",\"msgpack\":\"%s\"},\n",
            sysconf (_SC_NPROCESSORS_ONLN), weir_version (), zmq_major, zmq_minor, zmq_patch,
            msgpack_version ());
    printf (" \"results\":[\n");
    for (size_t i = 0; i < n; i++) {
        const s_config *c = &configs[i];
        median[i] = s_median (c->runs, repeat);
        printf ("  {\"name\":\"%s\",", c->name);
        if (c->threads)
            printf ("\"threads\":%u,", c->threads);
        printf ("\"batch\":%u,\"records_per_s\":%.0f,\"runs\":[", c->batch, median[i]);
        for (int r = 0; r < repeat; r++)
            printf ("%s%.0f", r ? "," : "", c->runs[r]);
        printf ("],\"cpu_ns_per_record\":%.1f}%s\n", s_median (c->cpu, repeat), i + 1 < n ? "," : "");
    }
    printf (" ],\n");
}

//  The tail of the JSON document: weir against the references, from the
//  MEDIAN rates, and the best weir configurations
static void s_print_ratios (const s_config *configs, size_t n, const double *median)
{
    double ref_a = median[s_find (configs, n, S_REF_A, 0, S_REF_BATCH) - configs];
    double ref_b = median[s_find (configs, n, S_REF_B, 0, S_REF_BATCH) - configs];
    double id = median[s_find (configs, n, S_WEIR_IDENTITY, 1, 256) - configs];
    double rp = median[s_find (configs, n, S_WEIR_REPACK, 1, 256) - configs];
    size_t best = 0;
    for (size_t i = 0; i < n; i++)
        if ((configs[i].kind == S_WEIR_IDENTITY || configs[i].kind == S_WEIR_REPACK)
            && median[i] > median[best])
            best = i;
    //  The same for the weir configurations that do ref_a's per-record work
    size_t best_repack = 0;
    for (size_t i = 0; i < n; i++)
        if (configs[i].kind == S_WEIR_REPACK
            && (configs[best_repack].kind != S_WEIR_REPACK || median[i] > median[best_repack]))
            best_repack = i;
    printf (" \"ratios\":{\"weir_identity_t1_b256_over_ref_a\":%.3f,"
            "\"weir_identity_t1_b256_over_ref_b\":%.3f,\n"
            "  \"weir_repack_t1_b256_over_ref_a\":%.3f,\"weir_repack_t1_b256_over_ref_b\":%.3f,\n"
            "  \"best_weir_over_ref_a\":%.3f,\"best_weir_repack_over_ref_a\":%.3f},\n",
            id / ref_a, id / ref_b, rp / ref_a, rp / ref_b, median[best] / ref_a,
            median[best_repack] / ref_a);
    printf (" \"best_weir\":{\"name\":\"%s\",\"threads\":%u,\"batch\":%u},\n", configs[best].name,
            configs[best].threads, configs[best].batch);
    printf (" \"best_weir_repack\":{\"name\":\"%s\",\"threads\":%u,\"batch\":%u}}\n",
            configs[best_repack].name, configs[best_repack].threads, configs[best_repack].batch);
}

int main (int argc, char *argv[])
{
    s_records = 20000000;
    int repeat = 3;
    int status = s_parse_args (argc, argv, &repeat);
    if (status >= 0)
        return status;

    s_config configs[] = {
        {S_WEIR_IDENTITY, "weir identity", 1, 64, {0}, {0}},
        {S_WEIR_IDENTITY, "weir identity", 1, 256, {0}, {0}},
        {S_WEIR_IDENTITY, "weir identity", 1, 1024, {0}, {0}},
        {S_WEIR_IDENTITY, "weir identity", 2, 64, {0}, {0}},
        {S_WEIR_IDENTITY, "weir identity", 2, 256, {0}, {0}},
        {S_WEIR_IDENTITY, "weir identity", 2, 1024, {0}, {0}},
        {S_WEIR_REPACK, "weir repack", 1, 256, {0}, {0}},
        {S_WEIR_REPACK, "weir repack", 1, 1024, {0}, {0}},
        {S_WEIR_REPACK, "weir repack", 2, 256, {0}, {0}},
        {S_WEIR_REPACK, "weir repack", 2, 1024, {0}, {0}},
        {S_REF_A, "ref_a zmq chain unpack/repack", 0, S_REF_BATCH, {0}, {0}},
        {S_REF_B, "ref_b zmq pair", 0, S_REF_BATCH, {0}, {0}},
    };
    size_t n = sizeof configs / sizeof configs[0];
    double median[sizeof configs / sizeof configs[0]];
    s_run_all (configs, n, repeat);
    s_print_results (configs, n, repeat, median);
    s_print_ratios (configs, n, median);
    return 0;
}

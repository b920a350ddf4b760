/*  cmd/metrics.c - weir run --metrics: the running job's figures for
    Prometheus.

    A small HTTP server (libmicrohttpd, on a thread of its own) answers
    GET /metrics with the Prometheus text format (version 0.0.4), and
    nothing else.  The text is made at each progress tick, in the thread
    that runs the pipe, from the figures --stats and the progress line
    read, and handed over under a lock: a scrape copies the latest text
    and never waits on the pipe, nor the pipe on a scrape.  Names are
    those of --stats, prefixed weir_ (weir_stage_ for a stage's) and with
    _total for counters.  */
#include "cmd.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

//  libmicrohttpd is loaded when --metrics is given, not linked: it brings
//  GnuTLS and p11-kit into the process, whose threads and memory every
//  job would carry (and under which LeakSanitizer's stop of the world
//  crashes), for a server most jobs never start
static struct {
    struct MHD_Daemon *(*start_daemon) (unsigned int, uint16_t, MHD_AcceptPolicyCallback, void *,
                                        MHD_AccessHandlerCallback, void *, ...);
    void (*stop_daemon) (struct MHD_Daemon *);
    struct MHD_Response *(*create_response_from_buffer) (size_t, void *, enum MHD_ResponseMemoryMode);
    enum MHD_Result (*add_response_header) (struct MHD_Response *, const char *, const char *);
    enum MHD_Result (*queue_response) (struct MHD_Connection *, unsigned int, struct MHD_Response *);
    void (*destroy_response) (struct MHD_Response *);
} s_mhd;

//  The functions of libmicrohttpd into s_mhd: 0, or -1 after saying why
static int s_load (void)
{
    if (s_mhd.start_daemon)
        return 0;
    void *lib = dlopen ("libmicrohttpd.so.12", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        lib = dlopen ("libmicrohttpd.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        cmd_error ("run", "--metrics: cannot load libmicrohttpd (Debian: libmicrohttpd12): %s", dlerror ());
        return -1;
    }
    //  POSIX's way from a void pointer to a function pointer
    *(void **) &s_mhd.stop_daemon = dlsym (lib, "MHD_stop_daemon");
    *(void **) &s_mhd.create_response_from_buffer = dlsym (lib, "MHD_create_response_from_buffer");
    *(void **) &s_mhd.add_response_header = dlsym (lib, "MHD_add_response_header");
    *(void **) &s_mhd.queue_response = dlsym (lib, "MHD_queue_response");
    *(void **) &s_mhd.destroy_response = dlsym (lib, "MHD_destroy_response");
    *(void **) &s_mhd.start_daemon = dlsym (lib, "MHD_start_daemon");
    if (!s_mhd.stop_daemon || !s_mhd.create_response_from_buffer || !s_mhd.add_response_header
        || !s_mhd.queue_response || !s_mhd.destroy_response || !s_mhd.start_daemon) {
        cmd_error ("run", "--metrics: libmicrohttpd lacks a function weir calls: %s", dlerror ());
        s_mhd.start_daemon = NULL;
        return -1;
    }
    return 0;
}

struct cmd_metrics {
    struct MHD_Daemon *daemon;
    char url[128];
    pthread_mutex_t lock;
    char *text;  //  the latest text, under the lock
    size_t len;
};

//  A growing string for the text being made
typedef struct {
    char *data;
    size_t len, cap;
    int oom;
} s_text;

static void s_add (s_text *t, const char *fmt, ...) WEIR_PRINTF (2, 3);

static void s_add (s_text *t, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start (ap, fmt);
        int n = t->oom
                    ? 0
                    : vsnprintf (t->data ? t->data + t->len : NULL, t->data ? t->cap - t->len : 0, fmt, ap);
        va_end (ap);
        if (t->oom || n < 0)
            return;
        if (t->data && (size_t) n < t->cap - t->len) {
            t->len += (size_t) n;
            return;
        }
        size_t cap = (t->cap ? t->cap * 2 : 4096) + (size_t) n;
        char *data = realloc (t->data, cap);
        if (!data) {
            t->oom = 1;
            return;
        }
        t->data = data;
        t->cap = cap;
    }
}

//  VALUE as a label value: backslash, double quote and newline escaped
static void s_label (s_text *t, const char *value)
{
    for (const char *p = value ? value : ""; *p; p++) {
        if (*p == '\\' || *p == '"')
            s_add (t, "\\%c", *p);
        else if (*p == '\n')
            s_add (t, "\\n");
        else
            s_add (t, "%c", *p);
    }
}

static const char *s_kind (weir_element_kind kind)
{
    return kind == WEIR_ELEMENT_READER ? "reader" : kind == WEIR_ELEMENT_WRITER ? "writer" : "processor";
}

//  The labels of stage I: its index, element, kind and name= in a graph
static void s_stage_labels (s_text *t, size_t i, const weir_stage_stats *st)
{
    s_add (t, "{stage=\"%zu\",element=\"", i);
    s_label (t, st->name);
    s_add (t, "\",kind=\"%s\"", s_kind (st->kind));
    if (st->label) {
        s_add (t, ",name=\"");
        s_label (t, st->label);
        s_add (t, "\"");
    }
    s_add (t, "}");
}

//  The figures of a stage, one family at a time
typedef struct {
    const char *name, *type, *help;
    int (*value) (const weir_stage_stats *st, double *v);  //  0 when the stage has it
} s_family;

#define S_FIELD(NAME, EXPR)                                                                                  \
    static int NAME (const weir_stage_stats *st, double *v)                                                  \
    {                                                                                                        \
        *v = (double) (EXPR);                                                                                \
        return 0;                                                                                            \
    }
S_FIELD (s_in, st->records_in)
S_FIELD (s_out, st->records_out)
S_FIELD (s_rejected, st->records_rejected)
S_FIELD (s_batches, st->batches_in)
S_FIELD (s_busy, st->busy_seconds)
S_FIELD (s_threads, st->threads)
S_FIELD (s_truncated, st->files_truncated)

static int s_queue (const weir_stage_stats *st, double *v)
{
    *v = st->queue_fill;
    return st->kind == WEIR_ELEMENT_READER;
}
static int s_capacity (const weir_stage_stats *st, double *v)
{
    *v = st->queue_capacity;
    return st->kind == WEIR_ELEMENT_READER;
}
static int s_done (const weir_stage_stats *st, double *v)
{
    *v = (double) st->input_done;
    return st->kind != WEIR_ELEMENT_READER;
}
static int s_total (const weir_stage_stats *st, double *v)
{
    *v = (double) st->input_total;
    return st->kind != WEIR_ELEMENT_READER || st->input_total == 0;
}
static int s_behind (const weir_stage_stats *st, double *v)
{
    *v = (double) st->input_behind;
    return st->kind != WEIR_ELEMENT_READER;
}
static int s_left (const weir_stage_stats *st, double *v)
{
    *v = st->input_total > st->input_done ? (double) (st->input_total - st->input_done) : 0;
    return st->kind != WEIR_ELEMENT_READER || st->input_total == 0;
}

static const s_family s_families[] = {
    {"weir_stage_records_in_total", "counter",
     "Records a stage took from its input or its queue (records_in)", s_in},
    {"weir_stage_records_out_total", "counter", "Records a stage passed on, or wrote (records_out)", s_out},
    {"weir_stage_records_rejected_total", "counter",
     "Bad records skipped with on-error=skip (records_rejected)", s_rejected},
    {"weir_stage_batches_in_total", "counter", "Batches a stage took from its queue (batches_in)", s_batches},
    {"weir_stage_busy_seconds_total", "counter",
     "Seconds a stage's threads spent not waiting on a queue, summed over its threads (busy_seconds)",
     s_busy},
    {"weir_stage_threads", "gauge", "Threads of a stage (threads)", s_threads},
    {"weir_stage_queue_batches", "gauge", "Batches in the queue that feeds a stage now", s_queue},
    {"weir_stage_queue_capacity", "gauge",
     "The bound of the queue that feeds a stage (capacity= of each link)", s_capacity},
    {"weir_stage_files_truncated_total", "counter",
     "Followed files found truncated in place and read again (files_truncated)", s_truncated},
    {"weir_stage_input_done", "gauge",
     "How far a reader went through its input, over every pass and run: bytes of files, integers of a range",
     s_done},
    {"weir_stage_input_total", "gauge", "All of a reader's input in the same unit, when it is known",
     s_total},
    {"weir_stage_input_left", "gauge", "What a reader has still to read, when its input's size is known",
     s_left},
    {"weir_stage_input_behind", "gauge",
     "Bytes a reader's followed files hold past where reading got (messages, for Kafka partitions), as last "
     "seen: how far it is behind the writers (input_behind)",
     s_behind},
};

//  The text of PIPE now, into T
static void s_render (weir_pipe *pipe, s_text *t)
{
    int ranks, rank = weir_pipe_rank (pipe, &ranks);
    s_add (t,
           "# HELP weir_info The weir that runs the job, and this process's rank\n# TYPE weir_info gauge\n");
    s_add (t, "weir_info{version=\"%s\",rank=\"%d\",ranks=\"%d\"} 1\n", weir_version (), rank, ranks);
    s_add (t, "# HELP weir_wall_seconds Seconds since the run began (wall_seconds)\n# TYPE weir_wall_seconds "
              "gauge\n");
    s_add (t, "weir_wall_seconds %.6f\n", weir_pipe_wall_seconds (pipe));
    s_add (t,
           "# HELP weir_epoch The last epoch completed, and checkpointed when checkpointing\n"
           "# TYPE weir_epoch gauge\nweir_epoch %" PRIu64 "\n",
           weir_pipe_epoch (pipe));
    uint64_t count;
    double total, longest;
    weir_pipe_pauses (pipe, &count, &total, &longest);
    double bounds[64];
    uint64_t counts[64];
    size_t n = weir_pipe_pause_buckets (pipe, 64, bounds, counts);
    if (n > 64)
        n = 64;
    s_add (t, "# HELP weir_pause_seconds Pauses of the pipe at epoch ends: writers' syncs and the checkpoint "
              "(pauses)\n# TYPE weir_pause_seconds histogram\n");
    uint64_t below = 0;
    for (size_t b = 0; b < n; b++) {
        below += counts[b];
        if (isinf (bounds[b]))
            s_add (t, "weir_pause_seconds_bucket{le=\"+Inf\"} %" PRIu64 "\n", below);
        else
            s_add (t, "weir_pause_seconds_bucket{le=\"%g\"} %" PRIu64 "\n", bounds[b], below);
    }
    s_add (t, "weir_pause_seconds_sum %.6f\nweir_pause_seconds_count %" PRIu64 "\n", total, count);
    s_add (t,
           "# HELP weir_pause_longest_seconds The longest pause (pauses.longest_seconds)\n"
           "# TYPE weir_pause_longest_seconds gauge\nweir_pause_longest_seconds %.6f\n",
           longest);
    s_add (t,
           "# HELP weir_checkpoint_failures_total Checkpoints of this run that failed (checkpoint_failures)\n"
           "# TYPE weir_checkpoint_failures_total counter\nweir_checkpoint_failures_total %" PRIu64 "\n",
           weir_pipe_checkpoint_failures (pipe));
    size_t stages = weir_pipe_stage_count (pipe);
    for (size_t f = 0; f < sizeof s_families / sizeof s_families[0]; f++) {
        const s_family *fam = &s_families[f];
        s_add (t, "# HELP %s %s\n# TYPE %s %s\n", fam->name, fam->help, fam->name, fam->type);
        for (size_t i = 0; i < stages; i++) {
            weir_stage_stats st = WEIR_STAGE_STATS_INIT;
            double v;
            if (weir_pipe_stats (pipe, i, &st) || fam->value (&st, &v))
                continue;
            s_add (t, "%s", fam->name);
            s_stage_labels (t, i, &st);
            s_add (t, " %.17g\n", v);
        }
    }
    size_t metrics = weir_pipe_metric_count (pipe);
    if (metrics)
        s_add (t, "# HELP weir_stage_metric What a processor published (weir_metric_set, weir_metric_add; "
                  "metrics)\n# TYPE weir_stage_metric gauge\n");
    for (size_t m = 0; m < metrics; m++) {
        size_t stage;
        const char *name;
        double value;
        weir_stage_stats st = WEIR_STAGE_STATS_INIT;
        if (weir_pipe_metric (pipe, m, &stage, &name, &value) || weir_pipe_stats (pipe, stage, &st))
            continue;
        s_add (t, "weir_stage_metric");
        s_stage_labels (t, stage, &st);
        t->len--;  //  the closing brace: the metric's name joins the labels
        s_add (t, ",metric=\"");
        s_label (t, name);
        s_add (t, "\"} %.17g\n", value);
    }
}

void cmd_metrics_update (cmd_metrics *self, weir_pipe *pipe)
{
    s_text t = {0};
    s_render (pipe, &t);
    if (t.oom) {
        free (t.data);
        return;  //  the last text stays
    }
    pthread_mutex_lock (&self->lock);
    char *old = self->text;
    self->text = t.data;
    self->len = t.len;
    pthread_mutex_unlock (&self->lock);
    free (old);
}

static enum MHD_Result s_reply (struct MHD_Connection *c, unsigned status, const char *type, char *body,
                                size_t len, enum MHD_ResponseMemoryMode mode)
{
    struct MHD_Response *r = s_mhd.create_response_from_buffer (len, body, mode);
    if (!r)
        return MHD_NO;
    s_mhd.add_response_header (r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    enum MHD_Result rc = s_mhd.queue_response (c, status, r);
    s_mhd.destroy_response (r);
    return rc;
}

static enum MHD_Result s_answer (void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                 const char *version, const char *upload, size_t *upload_size, void **state)
{
    (void) version, (void) upload, (void) state;
    cmd_metrics *self = cls;
    static char s_not_found[] = "weir serves /metrics only\n";
    static char s_method[] = "GET or HEAD only\n";
    if (*upload_size)
        return MHD_NO;
    if (strcmp (method, "GET") && strcmp (method, "HEAD"))
        return s_reply (c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", s_method, strlen (s_method),
                        MHD_RESPMEM_PERSISTENT);
    if (strcmp (url, "/metrics"))
        return s_reply (c, MHD_HTTP_NOT_FOUND, "text/plain", s_not_found, strlen (s_not_found),
                        MHD_RESPMEM_PERSISTENT);
    pthread_mutex_lock (&self->lock);
    char *copy = self->len ? malloc (self->len) : NULL;
    size_t len = copy ? self->len : 0;
    if (copy)
        memcpy (copy, self->text, len);
    pthread_mutex_unlock (&self->lock);
    return s_reply (c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", copy ? copy : "", len,
                    copy ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
}

//  SPEC as an address: PORT, or ADDR:PORT (IPv4, or [IPv6]:PORT).  0, or
//  -1 after saying what was wrong
static int s_address (const char *spec, int rank, struct sockaddr_storage *sa, socklen_t *len)
{
    char host[64] = "127.0.0.1";
    const char *colon = strrchr (spec, ':'), *port_text = colon ? colon + 1 : spec;
    if (colon) {
        size_t n = (size_t) (colon - spec);
        if (n >= 2 && spec[0] == '[' && spec[n - 1] == ']')
            spec++, n -= 2;
        if (n == 0 || n >= sizeof host) {
            cmd_error ("run", "--metrics wants PORT or ADDRESS:PORT, not '%s'", spec);
            return -1;
        }
        memcpy (host, spec, n);
        host[n] = '\0';
    }
    char *end;
    long port = strtol (port_text, &end, 10);
    if (*end || end == port_text || port < 0 || port > 65535) {
        cmd_error ("run", "--metrics: '%s' is no port (0 to 65535; 0 picks a free one)", port_text);
        return -1;
    }
    //  Each rank of a job serves its own figures, on the next port
    if (port)
        port += rank;
    memset (sa, 0, sizeof *sa);
    struct sockaddr_in *v4 = (struct sockaddr_in *) sa;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *) sa;
    if (inet_pton (AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons ((uint16_t) port);
        *len = sizeof *v4;
    }
    else if (inet_pton (AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons ((uint16_t) port);
        *len = sizeof *v6;
    }
    else {
        cmd_error ("run", "--metrics: '%s' is no IPv4 or IPv6 address (give 0.0.0.0 for every one)", host);
        return -1;
    }
    return 0;
}

int cmd_metrics_check (const char *spec)
{
    struct sockaddr_storage sa;
    socklen_t len;
    return s_address (spec, 0, &sa, &len);
}

cmd_metrics *cmd_metrics_new (const char *spec, int rank)
{
    struct sockaddr_storage sa;
    socklen_t len;
    if (s_address (spec, rank, &sa, &len) || s_load ())
        return NULL;
    cmd_metrics *self = calloc (1, sizeof *self);
    if (!self) {
        cmd_error ("run", "out of memory");
        return NULL;
    }
    pthread_mutex_init (&self->lock, NULL);
    //  Its own socket, bound here, so that a port in use is said plainly
    int fd = socket (sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd >= 0)
        setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    char shown[INET6_ADDRSTRLEN + 2];
    const void *addr = sa.ss_family == AF_INET ? (const void *) &((struct sockaddr_in *) &sa)->sin_addr
                                               : (const void *) &((struct sockaddr_in6 *) &sa)->sin6_addr;
    inet_ntop (sa.ss_family, addr, shown, sizeof shown);
    if (fd < 0 || bind (fd, (struct sockaddr *) &sa, len) || listen (fd, 16)) {
        unsigned port = ntohs (sa.ss_family == AF_INET ? ((struct sockaddr_in *) &sa)->sin_port
                                                       : ((struct sockaddr_in6 *) &sa)->sin6_port);
        cmd_error ("run", "--metrics: cannot listen on %s port %u: %s", shown, port, strerror (errno));
        if (fd >= 0)
            close (fd);
        pthread_mutex_destroy (&self->lock);
        free (self);
        return NULL;
    }
    struct sockaddr_storage bound;
    socklen_t blen = sizeof bound;
    getsockname (fd, (struct sockaddr *) &bound, &blen);
    unsigned port = ntohs (bound.ss_family == AF_INET ? ((struct sockaddr_in *) &bound)->sin_port
                                                      : ((struct sockaddr_in6 *) &bound)->sin6_port);
    snprintf (self->url, sizeof self->url,
              sa.ss_family == AF_INET6 ? "http://[%s]:%u/metrics" : "http://%s:%u/metrics", shown, port);
    self->daemon =
        s_mhd.start_daemon (MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, s_answer, self,
                            MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned) 10,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned) 16, MHD_OPTION_END);
    if (!self->daemon) {
        cmd_error ("run", "--metrics: cannot start serving %s", self->url);
        close (fd);
        pthread_mutex_destroy (&self->lock);
        free (self);
        return NULL;
    }
    return self;
}

const char *cmd_metrics_url (const cmd_metrics *self)
{
    return self->url;
}

void cmd_metrics_destroy (cmd_metrics **self_p)
{
    cmd_metrics *self = *self_p;
    if (!self)
        return;
    s_mhd.stop_daemon (self->daemon);
    pthread_mutex_destroy (&self->lock);
    free (self->text);
    free (self);
    *self_p = NULL;
}

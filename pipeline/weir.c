/*  pipeline/weir.c - the weir command: a thin layer over <weir/weir.h>.

    It parses arguments, shows errors with a caret under the description,
    draws the progress line and writes the statistics file.  Exit codes: 0
    success, 1 runtime failure, 2 usage error.  */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <weir/weir.h>

#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/number.h"
#include "lib/text.h"

#define S_EXIT_FAILURE 1
#define S_EXIT_USAGE 2

static const char *s_usage =
    "usage: weir run [OPTIONS] 'READER [key=value ...] ! PROCESSOR ... ! WRITER [key=value ...]'\n"
    "       weir elements      list the builtin elements and their properties\n"
    "       weir plugin PATH|NAME   describe a processor plugin\n"
    "       weir checkpoints DIR [--epoch E [--blob NAME]]   list and inspect checkpoints\n"
    "       weir --help | --version\n";

static const char *s_run_help =
    "\n"
    "Run a pipe: the first element reads records, the last writes them, those\n"
    "between process them.  Each element takes key=value properties; quote a\n"
    "value with '...' or \"...\" to put blanks or '!' in it.  The description may\n"
    "be one argument or several (they are joined with blanks).\n"
    "\n"
    "Options:\n"
    "  --progress        a live line on stderr: records/s of each stage and the\n"
    "                    fill of the queue that feeds it (default when stderr\n"
    "                    is a terminal)\n"
    "  --no-progress     no progress line\n"
    "  --progress-interval MS\n"
    "                    time between progress lines (default 500)\n"
    "  --stats FILE      write statistics as JSON to FILE at exit ('-' for stdout):\n"
    "                    records in and out and busy time per stage, wall time,\n"
    "                    records/s\n"
    "  -q, --quiet       print nothing but errors and warnings\n"
    "\n"
    "Epochs and checkpoints:\n"
    "  --epoch-records N end an epoch after exactly N records read (all reader\n"
    "                    threads together; k, M, G suffixes allowed)\n"
    "                    the end of each pass also ends one\n"
    "  --epoch-seconds T end an epoch after T seconds of wall time\n"
    "  --epochs N        stop after epoch N\n"
    "  --checkpoint DIR  checkpoint into the LevelDB at DIR after init (epoch 0)\n"
    "                    and after every epoch: reader offsets, writer lengths,\n"
    "                    blobs, in one atomic synced write\n"
    "  --resume          go on from the latest checkpoint in DIR, or start fresh\n"
    "                    when it has none (safe in a restart loop)\n"
    "  --resume-from E   go on from checkpoint E\n"
    "  --keep K          keep the newest K checkpoints (default: all)\n"
    "  --async-checkpoint  copy the blobs and write the checkpoint on a\n"
    "                    background thread while the pipe runs on\n"
    "  --checkpoint-failures N  go on through N consecutive failed\n"
    "                    checkpoints (each reported) before failing the job\n"
    "  --load-blobs DIR[:E]  before init, load the blobs of checkpoint E\n"
    "                    (default: latest) of another job's directory\n"
    "Without --resume or --resume-from, a directory that holds checkpoints is\n"
    "refused.  Only threads=, capacity= and batch= may change on resume.\n"
    "  -h, --help        this help\n"
    "  -V, --version     print the version\n"
    "\n"
    "Interrupt (Ctrl-C) stops the readers; what was read flows out and the job\n"
    "ends cleanly (exit 1).  A second interrupt kills it.\n"
    "\n"
    "Exit codes: 0 success, 1 runtime failure (input, output, a processor),\n"
    "2 usage error (options, description, unknown element or property).\n"
    "\n"
    "An element that contains '/' or ends in .so is a processor plugin (a shared\n"
    "object); a name that is no builtin is looked up as NAME.so in the folders of\n"
    "$WEIR_PLUGIN_PATH (colon-separated), then in the installed plugin folder.\n"
    "\n"
    "Run 'weir elements' for the builtin elements.\n";

static weir_pipe *volatile s_pipe;
static volatile sig_atomic_t s_interrupted;

static void s_on_interrupt (int sig)
{
    s_interrupted = 1;
    if (s_pipe)
        weir_pipe_stop (s_pipe);
}

static const char *s_kind_name (weir_element_kind kind)
{
    return kind == WEIR_ELEMENT_READER ? "reader" : kind == WEIR_ELEMENT_WRITER ? "writer" : "processor";
}

static void s_print_props (FILE *out, const weir_property_info *p)
{
    for (; p && p->name; p++) {
        char head[64];
        if (p->fallback)
            snprintf (head, sizeof head, "%s=%s", p->name, p->fallback);
        else
            snprintf (head, sizeof head, "%s=...", p->name);
        fprintf (out, "      %-20s %s\n", head, p->description);
    }
}

static int s_elements (void)
{
    const weir_element_kind kinds[] = {WEIR_ELEMENT_READER, WEIR_ELEMENT_PROCESSOR, WEIR_ELEMENT_WRITER};
    for (size_t k = 0; k < 3; k++) {
        printf ("%ss:\n", s_kind_name (kinds[k]));
        for (const weir_element_info *e = weir_elements (); e->name; e++) {
            if (e->kind != kinds[k])
                continue;
            printf ("  %s  %s\n", e->name, e->description);
            s_print_props (stdout, e->props);
        }
        printf ("\n");
    }
    printf ("every element also takes:\n");
    s_print_props (stdout, weir_common_properties ());
    printf ("\nNumbers take k, M and G suffixes (thousand, million, billion).\n");
    return 0;
}

//  The description, and a caret under the byte it points at.
static void s_show_caret (const char *text, long offset)
{
    if (offset < 0 || !text)
        return;
    if ((size_t) offset > strlen (text))
        offset = (long) strlen (text);
    fprintf (stderr, "  ");
    for (const char *p = text; *p; p++)
        fputc (*p == '\n' || *p == '\t' ? ' ' : *p, stderr);
    fprintf (stderr, "\n  %*s^\n", (int) offset, "");
}

static void s_rate (char *out, size_t size, double per_second)
{
    if (per_second >= 1e9)
        snprintf (out, size, "%.1fG", per_second / 1e9);
    else if (per_second >= 1e6)
        snprintf (out, size, "%.1fM", per_second / 1e6);
    else if (per_second >= 1e3)
        snprintf (out, size, "%.1fk", per_second / 1e3);
    else
        snprintf (out, size, "%.0f", per_second);
}

typedef struct {
    int tty;
    uint64_t last_ns;
    uint64_t *last;         //  records out per stage at the last line
} s_progress;

static void s_on_progress (weir_pipe *pipe, void *arg, int final)
{
    s_progress *self = arg;
    size_t n = weir_pipe_stage_count (pipe);
    uint64_t now = weir__now_ns ();
    double dt = self->last_ns ? (double) (now - self->last_ns) / 1e9 : weir_pipe_wall_seconds (pipe);
    if (dt <= 0)
        dt = 1e-9;
    char line[1024];
    size_t used = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        weir_stage_stats st;
        weir_pipe_stats (pipe, i, &st);
        if (i == 0)
            total = st.records_out;
        char rate[32];
        s_rate (rate, sizeof rate, (double) (st.records_out - self->last[i]) / dt);
        self->last[i] = st.records_out;
        int k;
        if (st.queue_capacity)
            k = snprintf (line + used, sizeof line - used, "%s%s %s/s q %u/%u", i ? " | " : "", st.name,
                          rate, st.queue_fill, st.queue_capacity);
        else
            k = snprintf (line + used, sizeof line - used, "%s%s %s/s", i ? " | " : "", st.name, rate);
        if (k > 0 && (size_t) k < sizeof line - used)
            used += (size_t) k;
    }
    self->last_ns = now;
    if (final) {
        if (self->tty)
            fprintf (stderr, "\r\033[K");
        return;
    }
    fprintf (stderr, "%s%s | %llu records %.1fs%s", self->tty ? "\r\033[K" : "", line,
             (unsigned long long) total, weir_pipe_wall_seconds (pipe), self->tty ? "" : "\n");
    fflush (stderr);
}

static int s_write_stats (weir_pipe *pipe, const char *path, int rc)
{
    weir__buf b;
    weir__buf_init (&b);
    size_t n = weir_pipe_stage_count (pipe);
    double wall = weir_pipe_wall_seconds (pipe);
    weir_stage_stats st;
    uint64_t read = 0;
    if (n && weir_pipe_stats (pipe, 0, &st) == 0)
        read = st.records_out;
    weir__buf_printf (&b, "{\n  \"weir_version\": \"%s\",\n  \"exit_code\": %d,\n", weir_version (),
                      rc == 0 ? 0 : weir_is_usage_error (rc) ? S_EXIT_USAGE : S_EXIT_FAILURE);
    weir__buf_printf (&b, "  \"error\": ");
    if (rc)
        weir__text_append_string (&b, weir_pipe_error (pipe), strlen (weir_pipe_error (pipe)));
    else
        weir__buf_printf (&b, "null");
    weir__buf_printf (&b, ",\n  \"wall_seconds\": %.6f,\n  \"records\": %llu,\n", wall,
                      (unsigned long long) read);
    weir__buf_printf (&b, "  \"records_per_second\": %.1f,\n  \"stages\": [", wall > 0 ? (double) read / wall : 0.0);
    for (size_t i = 0; i < n; i++) {
        weir_pipe_stats (pipe, i, &st);
        weir__buf_printf (&b, "%s\n    {\"name\": ", i ? "," : "");
        weir__text_append_string (&b, st.name, strlen (st.name));
        weir__buf_printf (&b,
                          ", \"kind\": \"%s\", \"threads\": %u, \"records_in\": %llu, "
                          "\"records_out\": %llu, \"batches_in\": %llu, \"busy_seconds\": %.6f}",
                          s_kind_name (st.kind), st.threads, (unsigned long long) st.records_in,
                          (unsigned long long) st.records_out, (unsigned long long) st.batches_in,
                          st.busy_seconds);
    }
    weir__buf_printf (&b, "\n  ]\n}\n");
    int failed = 0;
    FILE *out = strcmp (path, "-") == 0 ? stdout : fopen (path, "w");
    if (!out || fwrite (b.data, 1, b.len, out) != b.len || (out != stdout && fclose (out)) ||
        (out == stdout && fflush (stdout))) {
        fprintf (stderr, "weir: cannot write statistics to '%s': %s\n", path, strerror (errno));
        failed = 1;
    }
    weir__buf_release (&b);
    return failed;
}

//  The epoch and checkpoint options of 'weir run'.
typedef struct {
    uint64_t epoch_records, epochs, resume_from;
    double epoch_seconds;
    const char *checkpoint, *load;
    int64_t load_epoch;
    unsigned keep, failures;
    int resume, async;
} s_job;

static int s_count (const char *option, const char *text, uint64_t min, uint64_t *out)
{
    int64_t v;
    if (weir__parse_int (text, &v) || v < 0 || (uint64_t) v < min) {
        fprintf (stderr, "weir run: %s wants a whole number of at least %llu, not '%s'\n", option,
                 (unsigned long long) min, text);
        return -1;
    }
    *out = (uint64_t) v;
    return 0;
}

static int s_job_option (s_job *job, int c, const char *arg)
{
    uint64_t v;
    char *end;
    switch (c) {
    case 'R': return s_count ("--epoch-records", arg, 1, &job->epoch_records);
    case 'E': return s_count ("--epochs", arg, 1, &job->epochs);
    case 'F': job->resume = 2; return s_count ("--resume-from", arg, 0, &job->resume_from);
    case 'K':
        if (s_count ("--keep", arg, 1, &v) || v > 1000000)
            return -1;
        job->keep = (unsigned) v;
        return 0;
    case 'X':
        if (s_count ("--checkpoint-failures", arg, 0, &v) || v > 1000000)
            return -1;
        job->failures = (unsigned) v;
        return 0;
    case 'T':
        job->epoch_seconds = strtod (arg, &end);
        if (*end || end == arg || !(job->epoch_seconds > 0)) {
            fprintf (stderr, "weir run: --epoch-seconds wants a positive number of seconds, not '%s'\n", arg);
            return -1;
        }
        return 0;
    case 'C': job->checkpoint = arg; return 0;
    case 'r': if (job->resume != 2) job->resume = 1; return 0;
    case 'A': job->async = 1; return 0;
    case 'L': {
        //  DIR or DIR:E
        job->load = arg;
        const char *colon = strrchr (arg, ':');
        if (colon && colon[1] && strspn (colon + 1, "0123456789") == strlen (colon + 1)) {
            static char dir[4096];
            snprintf (dir, sizeof dir, "%.*s", (int) (colon - arg), arg);
            job->load = dir;
            job->load_epoch = (int64_t) strtoull (colon + 1, NULL, 10);
        }
        return 0;
    }
    }
    return -1;
}

static void s_on_log (weir_pipe *pipe, void *arg, int level, const char *message)
{
    int quiet = *(int *) arg;
    if (level == WEIR_LOG_WARNING)
        fprintf (stderr, "weir: warning: %s\n", message);
    else if (!quiet)
        fprintf (stderr, "weir: %s\n", message);
}

static void s_job_apply (const s_job *job, weir_pipe *pipe, int quiet)
{
    static int s_quiet;
    s_quiet = quiet;
    weir_pipe_set_log (pipe, s_on_log, &s_quiet);
    weir_pipe_set_epoch_records (pipe, job->epoch_records);
    weir_pipe_set_epoch_seconds (pipe, job->epoch_seconds);
    weir_pipe_set_epochs (pipe, job->epochs);
    weir_pipe_set_checkpoint (pipe, job->checkpoint);
    weir_pipe_set_keep (pipe, job->keep);
    weir_pipe_set_async_checkpoint (pipe, job->async);
    weir_pipe_set_checkpoint_failures (pipe, job->failures);
    weir_pipe_set_resume (pipe, job->resume == 2 ? WEIR_RESUME_EPOCH : job->resume ? WEIR_RESUME_LATEST : WEIR_RESUME_NONE,
                          job->resume_from);
    if (job->load)
        weir_pipe_set_load_blobs (pipe, job->load, job->load_epoch);
}

static int s_run (int argc, char **argv)
{
    static const struct option options[] = {
        {"progress", no_argument, NULL, 'P'}, {"no-progress", no_argument, NULL, 'N'},
        {"stats", required_argument, NULL, 's'}, {"progress-interval", required_argument, NULL, 'I'},
        {"epoch-records", required_argument, NULL, 'R'}, {"epoch-seconds", required_argument, NULL, 'T'},
        {"epochs", required_argument, NULL, 'E'},        {"checkpoint", required_argument, NULL, 'C'},
        {"resume", no_argument, NULL, 'r'},              {"resume-from", required_argument, NULL, 'F'},
        {"keep", required_argument, NULL, 'K'},          {"async-checkpoint", no_argument, NULL, 'A'},
        {"checkpoint-failures", required_argument, NULL, 'X'}, {"load-blobs", required_argument, NULL, 'L'}, {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},      {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    int progress = isatty (STDERR_FILENO), quiet = 0, c;
    const char *stats = NULL;
    unsigned interval_ms = 500;
    s_job job = {0};
    job.load_epoch = -1;
    optind = 1;
    while ((c = getopt_long (argc, argv, "+qhV", options, NULL)) != -1) {
        switch (c) {
        case 'P': progress = 1; break;
        case 'N': progress = 0; break;
        case 's': stats = optarg; break;
        case 'R': case 'T': case 'E': case 'F': case 'K': case 'X': case 'C': case 'r': case 'A': case 'L':
            if (s_job_option (&job, c, optarg))
                return S_EXIT_USAGE;
            break;
        case 'I': {
            char *end;
            long ms = strtol (optarg, &end, 10);
            if (*end || ms < 1 || ms > 3600000) {
                fprintf (stderr, "weir run: --progress-interval wants milliseconds (1 to 3600000), not '%s'\n", optarg);
                return S_EXIT_USAGE;
            }
            interval_ms = (unsigned) ms;
            break;
        }
        case 'q': quiet = 1; break;
        case 'h': printf ("%s%s", s_usage, s_run_help); return 0;
        case 'V': printf ("weir %s\n", weir_version ()); return 0;
        default: fprintf (stderr, "%sTry 'weir run --help'.\n", s_usage); return S_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        fprintf (stderr, "weir run: no pipeline description\n%sTry 'weir run --help'.\n", s_usage);
        return S_EXIT_USAGE;
    }
    if (quiet)
        progress = 0;

    //  Join the remaining arguments: the shell may have split the text
    weir__buf text;
    weir__buf_init (&text);
    for (int i = optind; i < argc; i++)
        if ((i > optind && weir__buf_putc (&text, ' ')) || weir__buf_append (&text, argv[i], strlen (argv[i])))
            return S_EXIT_FAILURE;
    if (weir__buf_putc (&text, '\0'))
        return S_EXIT_FAILURE;

    weir_pipe *pipe = weir_pipe_new ();
    if (!pipe) {
        fprintf (stderr, "weir: out of memory\n");
        weir__buf_release (&text);
        return S_EXIT_FAILURE;
    }
    s_progress state = {isatty (STDERR_FILENO), 0, NULL};
    int rc = weir_pipe_parse (pipe, text.data);
    if (rc == 0) {
        if (progress && (state.last = calloc (weir_pipe_stage_count (pipe), sizeof *state.last)))
            weir_pipe_set_progress (pipe, s_on_progress, &state, interval_ms);
        s_job_apply (&job, pipe, quiet);
        s_pipe = pipe;
        struct sigaction sa;
        memset (&sa, 0, sizeof sa);
        sa.sa_handler = s_on_interrupt;
        sa.sa_flags = SA_RESETHAND;
        sigemptyset (&sa.sa_mask);
        sigaction (SIGINT, &sa, NULL);
        sigaction (SIGTERM, &sa, NULL);
        rc = weir_pipe_run (pipe);
        signal (SIGINT, SIG_DFL);
        signal (SIGTERM, SIG_DFL);
        s_pipe = NULL;
    }
    int exit_code = 0;
    for (size_t i = 0; i < weir_pipe_warning_count (pipe); i++)
        fprintf (stderr, "weir: warning: %s\n", weir_pipe_warning (pipe, i));
    if (rc) {
        fprintf (stderr, "weir: %s\n", weir_pipe_error (pipe));
        if (weir_is_usage_error (rc))
            s_show_caret (text.data, weir_pipe_error_offset (pipe));
        exit_code = weir_is_usage_error (rc) ? S_EXIT_USAGE : S_EXIT_FAILURE;
    }
    weir_stage_stats first;
    if (!weir_is_usage_error (rc) && weir_pipe_stats (pipe, 0, &first) == 0) {
        double wall = weir_pipe_wall_seconds (pipe);
        if (s_interrupted && rc == 0) {
            fprintf (stderr, "weir: interrupted; stopped cleanly after %llu records\n",
                     (unsigned long long) first.records_out);
            exit_code = S_EXIT_FAILURE;
        }
        else if (!quiet && rc == 0)
            fprintf (stderr, "weir: %llu records in %.3f s (%.2f M records/s)\n",
                     (unsigned long long) first.records_out, wall,
                     wall > 0 ? (double) first.records_out / wall / 1e6 : 0.0);
    }
    if (stats && s_write_stats (pipe, stats, rc) && exit_code == 0)
        exit_code = S_EXIT_FAILURE;
    free (state.last);
    weir_pipe_destroy (&pipe);
    weir__buf_release (&text);
    return exit_code;
}

static const char *s_meta (const weir_checkpoint *ck, const char *key, char *buf, size_t size)
{
    size_t len;
    const char *v = weir_checkpoint_get (ck, 'm', key, &len);
    snprintf (buf, size, "%.*s", v ? (int) len : 1, v ? v : "-");
    return buf;
}

static int s_checkpoints (int argc, char **argv)
{
    static const struct option options[] = {
        {"epoch", required_argument, NULL, 'e'}, {"blob", required_argument, NULL, 'b'},
        {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0},
    };
    const char *blob = NULL;
    int64_t epoch = -2;
    int c;
    optind = 1;
    while ((c = getopt_long (argc, argv, "h", options, NULL)) != -1) {
        switch (c) {
        case 'e': {
            char *end;
            epoch = (int64_t) strtoll (optarg, &end, 10);
            if (*end || end == optarg || epoch < 0) {
                fprintf (stderr, "weir checkpoints: --epoch wants an epoch number, not '%s'\n", optarg);
                return S_EXIT_USAGE;
            }
            break;
        }
        case 'b': blob = optarg; break;
        case 'h':
            printf ("usage: weir checkpoints DIR                 one line per checkpoint, the latest marked\n"
                    "       weir checkpoints DIR --epoch E       everything in checkpoint E\n"
                    "       weir checkpoints DIR --epoch E --blob NAME   the blob's raw bytes on stdout\n");
            return 0;
        default: return S_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        fprintf (stderr, "usage: weir checkpoints DIR [--epoch E [--blob NAME]]\n");
        return S_EXIT_USAGE;
    }
    const char *dir = argv[optind];
    char *error = NULL;
    char a[64], b[64], d[64];
    if (epoch == -2) {
        if (blob) {
            fprintf (stderr, "weir checkpoints: --blob needs --epoch\n");
            return S_EXIT_USAGE;
        }
        uint64_t *epochs;
        size_t count;
        if (weir_checkpoint_list (dir, &epochs, &count, &error)) {
            fprintf (stderr, "weir: %s\n", error);
            free (error);
            return S_EXIT_FAILURE;
        }
        printf ("%-8s %-20s %14s %6s %14s\n", "epoch", "time", "records", "blobs", "blob bytes");
        for (size_t i = 0; i < count; i++) {
            weir_checkpoint *ck = weir_checkpoint_load (dir, (int64_t) epochs[i], &error);
            if (!ck) {
                printf ("%-8llu refused: %s\n", (unsigned long long) epochs[i], error);
                free (error);
                error = NULL;
                continue;
            }
            size_t nblobs = weir_checkpoint_count (ck, 'b'), bytes = 0;
            for (size_t k = 0; k < nblobs; k++) {
                size_t size;
                weir_checkpoint_item (ck, 'b', k, NULL, &size);
                bytes += size;
            }
            time_t when = (time_t) strtoll (s_meta (ck, "time", a, sizeof a), NULL, 10);
            struct tm tm;
            gmtime_r (&when, &tm);
            strftime (d, sizeof d, "%Y-%m-%dT%H:%M:%SZ", &tm);
            printf ("%-8llu %-20s %14s %6zu %14zu%s%s\n", (unsigned long long) epochs[i], d,
                    s_meta (ck, "records_out:0", b, sizeof b), nblobs, bytes, i + 1 == count ? "  (latest)" : "",
                    strcmp (s_meta (ck, "finished", a, sizeof a), "1") == 0 ? "  finished" : "");
            weir_checkpoint_destroy (&ck);
        }
        free (epochs);
        return 0;
    }
    weir_checkpoint *ck = weir_checkpoint_load (dir, epoch, &error);
    if (!ck) {
        fprintf (stderr, "weir: %s\n", error);
        free (error);
        return S_EXIT_FAILURE;
    }
    int rc = 0;
    if (blob) {
        size_t size;
        const void *data = weir_checkpoint_get (ck, 'b', blob, &size);
        if (!data) {
            fprintf (stderr, "weir: checkpoint %lld of '%s' has no blob '%s'\n", (long long) epoch, dir, blob);
            rc = S_EXIT_FAILURE;
        }
        else if (fwrite (data, 1, size, stdout) != size || fflush (stdout)) {
            fprintf (stderr, "weir: cannot write the blob to stdout: %s\n", strerror (errno));
            rc = S_EXIT_FAILURE;
        }
        weir_checkpoint_destroy (&ck);
        return rc;
    }
    static const struct {
        char section;
        const char *title;
    } sections[] = {{'m', "metadata"}, {'o', "reader offsets (shard: next offset)"},
                    {'w', "writers (stage: committed)"}, {'b', "blobs (name: bytes)"}};
    printf ("checkpoint %llu of %s\n", (unsigned long long) weir_checkpoint_epoch (ck), dir);
    for (size_t s = 0; s < 4; s++) {
        printf ("%s:\n", sections[s].title);
        size_t n = weir_checkpoint_count (ck, sections[s].section);
        for (size_t k = 0; k < n; k++) {
            const void *data;
            size_t size;
            const char *name = weir_checkpoint_item (ck, sections[s].section, k, &data, &size);
            if (sections[s].section == 'b')
                printf ("  %s: %zu\n", name, size);
            else
                printf ("  %s: %.*s\n", name, (int) size, (const char *) data);
        }
    }
    weir_checkpoint_destroy (&ck);
    return 0;
}

static int s_plugin (int argc, char **argv)
{
    if (argc != 2) {
        fprintf (stderr, "usage: weir plugin PATH|NAME\n");
        return S_EXIT_USAGE;
    }
    char *error = NULL;
    weir_plugin *plugin = weir_plugin_new (argv[1], &error);
    if (!plugin) {
        fprintf (stderr, "weir: %s\n", error ? error : "out of memory");
        free (error);
        return S_EXIT_FAILURE;
    }
    const weir_processor *table = weir_plugin_table (plugin);
    printf ("name:        %s\n", table->name ? table->name : "(none)");
    printf ("description: %s\n", table->description ? table->description : "(none)");
    printf ("abi:         %d\n", table->abi);
    printf ("path:        %s\n", weir_plugin_path (plugin));
    printf ("callbacks:  %s%s%s process%s%s%s\n", table->open ? " open" : "", table->init ? " init" : "",
            table->thread_open ? " thread_open" : "", table->epoch_end ? " epoch_end" : "",
            table->thread_close ? " thread_close" : "", table->close ? " close" : "");
    weir_plugin_destroy (&plugin);
    return 0;
}

int main (int argc, char **argv)
{
    if (argc < 2) {
        fprintf (stderr, "%s", s_usage);
        return S_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp (cmd, "run") == 0)
        return s_run (argc - 1, argv + 1);
    if (strcmp (cmd, "elements") == 0)
        return s_elements ();
    if (strcmp (cmd, "plugin") == 0)
        return s_plugin (argc - 1, argv + 1);
    if (strcmp (cmd, "checkpoints") == 0)
        return s_checkpoints (argc - 1, argv + 1);
    if (strcmp (cmd, "--help") == 0 || strcmp (cmd, "-h") == 0 || strcmp (cmd, "help") == 0) {
        printf ("%s%s", s_usage, s_run_help);
        return 0;
    }
    if (strcmp (cmd, "--version") == 0 || strcmp (cmd, "-V") == 0) {
        printf ("weir %s\n", weir_version ());
        return 0;
    }
    fprintf (stderr, "weir: unknown command '%s'\n%s", cmd, s_usage);
    return S_EXIT_USAGE;
}

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
#include <unistd.h>
#include <weir/weir.h>

#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/text.h"

#define S_EXIT_FAILURE 1
#define S_EXIT_USAGE 2

static const char *s_usage =
    "usage: weir run [OPTIONS] 'READER [key=value ...] ! PROCESSOR ... ! WRITER [key=value ...]'\n"
    "       weir elements      list the builtin elements and their properties\n"
    "       weir plugin PATH|NAME   describe a processor plugin\n"
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
    "  -q, --quiet       print nothing but errors\n"
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

static int s_run (int argc, char **argv)
{
    static const struct option options[] = {
        {"progress", no_argument, NULL, 'P'}, {"no-progress", no_argument, NULL, 'N'},
        {"stats", required_argument, NULL, 's'}, {"progress-interval", required_argument, NULL, 'I'}, {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},      {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    int progress = isatty (STDERR_FILENO), quiet = 0, c;
    const char *stats = NULL;
    unsigned interval_ms = 500;
    optind = 1;
    while ((c = getopt_long (argc, argv, "+qhV", options, NULL)) != -1) {
        switch (c) {
        case 'P': progress = 1; break;
        case 'N': progress = 0; break;
        case 's': stats = optarg; break;
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

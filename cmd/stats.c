/*  cmd/stats.c - the JSON statistics of --stats.  */
#include "cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

//  ", "metrics": {...}" for stage INDEX, when it published any.
static void s_metrics (FILE *out, weir_pipe *pipe, size_t index)
{
    size_t stage;
    const char *name;
    double value;
    int any = 0;
    for (size_t m = 0; weir_pipe_metric (pipe, m, &stage, &name, &value) == 0; m++) {
        if (stage != index)
            continue;
        fputs (any ? ", " : ", \"metrics\": {", out);
        cmd_json_string (out, name);
        //  JSON has no NaN nor infinity
        if (isfinite (value))
            fprintf (out, ": %.17g", value);
        else
            fputs (": null", out);
        any = 1;
    }
    if (any)
        fputc ('}', out);
}

int cmd_stats_kind (weir_pipe *pipe, weir_element_kind kind, weir_stage_stats *sum)
{
    int found = -1;
    size_t size = sum->size;
    memset (sum, 0, sizeof *sum);
    sum->size = size;
    sum->kind = kind;
    for (size_t i = 0; i < weir_pipe_stage_count (pipe); i++) {
        weir_stage_stats st = WEIR_STAGE_STATS_INIT;
        if (weir_pipe_stats (pipe, i, &st) || st.kind != kind)
            continue;
        if (found < 0)
            sum->name = st.name;
        found = 0;
        sum->records_in += st.records_in;
        sum->records_out += st.records_out;
        sum->job_records_in += st.job_records_in;
        sum->job_records_out += st.job_records_out;
        sum->total_records_in += st.total_records_in;
        sum->total_records_out += st.total_records_out;
        sum->threads += st.threads;
    }
    return found;
}

static void s_render (FILE *out, weir_pipe *pipe, int rc, int exit_code)
{
    size_t n = weir_pipe_stage_count (pipe);
    double wall = weir_pipe_wall_seconds (pipe);
    weir_stage_stats st = WEIR_STAGE_STATS_INIT;
    uint64_t read = 0;
    if (n && cmd_stats_kind (pipe, WEIR_ELEMENT_READER, &st) == 0)
        read = st.records_out;
    fprintf (out, "{\n  \"weir_version\": \"%s\",\n  \"exit_code\": %d,\n  \"error\": ", weir_version (),
             exit_code);
    if (rc)
        cmd_json_string (out, weir_pipe_error (pipe));
    else
        fputs ("null", out);
    fprintf (out, ",\n  \"error_code\": ");
    if (rc)
        cmd_json_string (out, weir_error_name (rc));
    else
        fputs ("null", out);
    int ranks, rank = weir_pipe_rank (pipe, &ranks);
    fprintf (out, ",\n  \"rank\": %d,\n  \"ranks\": %d", rank, ranks);
    //  Every rank's records read, summed (the same as records on one rank)
    fprintf (out, ",\n  \"job_records\": %llu", (unsigned long long) (n ? st.job_records_out : 0));
    //  And since the job began: this run's plus the checkpoint's it went on from
    fprintf (out, ",\n  \"total_records\": %llu", (unsigned long long) (n ? st.total_records_out : 0));
    fprintf (out, ",\n  \"wall_seconds\": %.6f,\n  \"records\": %llu,\n", wall, (unsigned long long) read);
    fprintf (out, "  \"records_per_second\": %.1f,\n", wall > 0 ? (double) read / wall : 0.0);
    //  The pauses at epoch ends: the commit of each epoch, and in a job of
    //  several ranks the wait for the others
    uint64_t pauses;
    double paused, longest;
    weir_pipe_pauses (pipe, &pauses, &paused, &longest);
    fprintf (
        out,
        "  \"pauses\": {\"count\": %llu, \"total_seconds\": %.6f, \"longest_seconds\": %.6f, \"buckets\": [",
        (unsigned long long) pauses, paused, longest);
    //  By length, as --metrics' histogram has them (not cumulative here):
    //  [upper bound in seconds, or null for the last, count]
    double bounds[64];
    uint64_t counts[64];
    size_t nb = weir_pipe_pause_buckets (pipe, 64, bounds, counts);
    for (size_t b = 0; b < nb && b < 64; b++) {
        if (isinf (bounds[b]))
            fprintf (out, "%s[null, %llu]", b ? ", " : "", (unsigned long long) counts[b]);
        else
            fprintf (out, "%s[%g, %llu]", b ? ", " : "", bounds[b], (unsigned long long) counts[b]);
    }
    fprintf (out, "]},\n  \"checkpoint_failures\": %llu,\n",
             (unsigned long long) weir_pipe_checkpoint_failures (pipe));
    fprintf (out, "  \"stages\": [");
    for (size_t i = 0; i < n; i++) {
        weir_pipe_stats (pipe, i, &st);
        fprintf (out, "%s\n    {\"name\": ", i ? "," : "");
        cmd_json_string (out, st.name);
        if (st.label) {
            fprintf (out, ", \"label\": ");
            cmd_json_string (out, st.label);
        }
        fprintf (out,
                 ", \"kind\": \"%s\", \"threads\": %u, \"records_in\": %llu, \"records_out\": %llu, "
                 "\"records_rejected\": %llu, \"files_truncated\": %llu, \"input_behind\": %llu, "
                 "\"cache_bytes\": %llu, \"records_replayed\": %llu, \"batches_in\": %llu, "
                 "\"busy_seconds\": %.6f, \"job_records_in\": %llu, \"job_records_out\": %llu, "
                 "\"total_records_in\": %llu, \"total_records_out\": %llu, \"total_records_rejected\": %llu",
                 cmd_kind_name (st.kind), st.threads, (unsigned long long) st.records_in,
                 (unsigned long long) st.records_out, (unsigned long long) st.records_rejected,
                 (unsigned long long) st.files_truncated, (unsigned long long) st.input_behind,
                 (unsigned long long) st.cache_bytes, (unsigned long long) st.records_replayed,
                 (unsigned long long) st.batches_in, st.busy_seconds, (unsigned long long) st.job_records_in,
                 (unsigned long long) st.job_records_out, (unsigned long long) st.total_records_in,
                 (unsigned long long) st.total_records_out, (unsigned long long) st.total_records_rejected);
        //  A processor fused with its reader (fuse=): that reader's index
        if (st.fused_with >= 0)
            fprintf (out, ", \"fused_with\": %ld", st.fused_with);
        s_metrics (out, pipe, i);
        fputc ('}', out);
    }
    //  The links of the graph (a line's too): stages by their index above
    fprintf (out, "\n  ],\n  \"links\": [");
    size_t from, to;
    uint64_t records;
    for (size_t k = 0; weir_pipe_link_info (pipe, k, &from, &to, &records) == 0; k++) {
        fprintf (out, "%s\n    {\"from\": %zu, \"to\": %zu, ", k ? "," : "", from, to);
        //  A port is a name of the description's: letters, digits, _ and -
        const char *port = weir_pipe_link_port (pipe, k);
        if (port)
            fprintf (out, "\"port\": \"%s\", ", port);
        fprintf (out, "\"records\": %llu}", (unsigned long long) records);
    }
    fprintf (out, "\n  ]\n}\n");
}

int cmd_stats_check (const char *path)
{
    if (strcmp (path, "-") == 0)
        return 0;
    //  Created if missing, left as it is otherwise: the job writes it whole
    //  at the end
    int fd = open (path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
    if (fd < 0) {
        fprintf (stderr, "weir run: cannot write statistics to '%s': %s\n", path, strerror (errno));
        return -1;
    }
    close (fd);
    return 0;
}

int cmd_stats_write (weir_pipe *pipe, const char *path, int rc, int exit_code)
{
    //  Rendered whole first: a file is written at once or not at all
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream (&text, &len);
    if (!mem) {
        fprintf (stderr, "weir run: cannot write statistics: %s\n", strerror (errno));
        return -1;
    }
    s_render (mem, pipe, rc, exit_code);
    int failed = fclose (mem) != 0;
    FILE *out = failed ? NULL : strcmp (path, "-") == 0 ? stdout : fopen (path, "w");
    if (!out || fwrite (text, 1, len, out) != len || (out != stdout && fclose (out))
        || (out == stdout && fflush (stdout))) {
        fprintf (stderr, "weir run: cannot write statistics to '%s': %s\n", path, strerror (errno));
        failed = 1;
    }
    free (text);
    return failed ? -1 : 0;
}

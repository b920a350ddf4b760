/*  cmd/graph.c - weir graph: a description drawn as Graphviz DOT.

    The description is checked as weir run checks it (every element found,
    every property and link), nothing is opened, and the graph is printed:
    a node per stage with its element, name, properties and threads, an
    edge per link with the capacity it has in the queue it feeds ("no
    queue" into a tee or a fused processor, which runs in its feeder's
    threads).  With --stats,
    the statistics file of a run of the same description adds the records
    that crossed each link.  */
#include "cmd.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static int s_graph (int argc, char **argv);

static const cmd_option s_options[] = {
    {"file", 'f', "FILE", CMD_VALUE_FILE, NULL,
     "read the description from FILE ('-' for standard input) instead of the arguments", NULL},
    {"stats", 's', "FILE", CMD_VALUE_FILE, NULL,
     "label each link with the records that crossed it in the run that wrote FILE (weir run --stats FILE)",
     NULL},
    {"help", 'h', NULL, CMD_VALUE_ANY, NULL, "print this help", NULL},
    {NULL, 0, NULL, CMD_VALUE_ANY, NULL, NULL, NULL},
};

const cmd_command cmd_graph_command = {
    .name = "graph",
    .main = s_graph,
    .usage = "[--stats FILE] 'DESCRIPTION' | -f FILE",
    .summary = "print a pipeline description as a Graphviz DOT graph",
    .description =
        "Check the description as 'weir run' would, open nothing, and print its graph in Graphviz's "
        "DOT language on standard output: a node per element (its name=, element, properties and "
        "threads; readers and writers drawn round), an edge per link with its capacity in the "
        "queue it feeds ('no queue' into a tee or a fused processor, which runs in the threads of the "
        "one stage feeding it).  Draw it with Graphviz: weir graph 'DESC' | dot -Tsvg > job.svg.",
    .options = s_options,
    .notes = "A mistake in the description is said as 'weir run' says it, with a caret, and exits 2.",
};

//  TEXT as a DOT string's inside: quotes and backslashes escaped, line
//  breaks kept out
static void s_escaped (FILE *out, const char *text)
{
    for (const char *p = text; *p; p++) {
        if (*p == '"' || *p == '\\')
            fputc ('\\', out);
        fputc (*p == '\n' || *p == '\r' || *p == '\t' ? ' ' : *p, out);
    }
}

//  The records of each link in a statistics file: its "links" array, as
//  weir run --stats writes it, into RECORDS[COUNT] by link order.  0, or
//  -1 with the reason said.
static int s_stats_records (const char *path, uint64_t *records, size_t count)
{
    FILE *in = fopen (path, "r");
    if (!in) {
        cmd_error ("graph", "cannot read statistics '%s': %s", path, strerror (errno));
        return -1;
    }
    char *text = NULL;
    size_t cap = 0;
    ssize_t n = getdelim (&text, &cap, '\0', in);
    fclose (in);
    const char *p = n > 0 ? strstr (text, "\"links\": [") : NULL;
    size_t k = 0;
    while (p && k < count && (p = strstr (p, "{\"from\": "))) {
        size_t from, to;
        unsigned long long r;
        if (sscanf (p, "{\"from\": %zu, \"to\": %zu, \"records\": %llu}", &from, &to, &r) != 3)
            break;
        records[k++] = r;
        p++;
    }
    free (text);
    if (k != count) {
        cmd_error ("graph",
                   "'%s' holds no statistics of %zu links: it is not the --stats file of a run of this "
                   "description",
                   path, count);
        return -1;
    }
    return 0;
}

static void s_node (FILE *out, weir_pipe *pipe, size_t i)
{
    weir_stage_stats st = WEIR_STAGE_STATS_INIT;
    weir_pipe_stats (pipe, i, &st);
    fprintf (out, "  s%zu [label=\"", i);
    if (st.label) {
        s_escaped (out, st.label);
        fputs (": ", out);
    }
    s_escaped (out, st.name);
    const char *key, *value;
    for (size_t k = 0; weir_pipe_stage_property (pipe, i, k, &key, &value) == 0; k++) {
        if (!strcmp (key, "name") || !strcmp (key, "threads"))
            continue;
        fputs ("\\n", out);
        s_escaped (out, key);
        fputc ('=', out);
        s_escaped (out, value);
    }
    fprintf (out, "\\nthreads=%u\", shape=%s];\n", st.threads,
             st.kind == WEIR_ELEMENT_PROCESSOR ? "box" : "box, style=rounded");
}

static int s_graph (int argc, char **argv)
{
    cmd_getopt g;
    cmd_getopt_init (&g, &cmd_graph_command);
    const char *file = NULL, *stats = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long (argc, argv, g.shorts, g.longs, NULL)) != -1) {
        if (c == 'f')
            file = optarg;
        else if (c == 's')
            stats = optarg;
        else if (c == 'h') {
            cmd_help_print (&cmd_graph_command, stdout);
            return CMD_EXIT_OK;
        }
        else {
            fprintf (stderr, "Try 'weir graph --help'.\n");
            return CMD_EXIT_USAGE;
        }
    }
    if ((file && optind < argc) || (!file && optind >= argc)) {
        fprintf (stderr, "weir graph: %s\nTry 'weir graph --help'.\n",
                 file ? "a description in a file (-f) and one in the arguments: give one" : "no pipeline description");
        return CMD_EXIT_USAGE;
    }
    char *text, *lines;
    int code = cmd_description_read ("graph", file, argc - optind, argv + optind, &text, &lines);
    if (code)
        return code;
    weir_pipe *pipe = NULL;
    if (weir_pipe_new (&pipe)) {
        cmd_error ("graph", "out of memory");
        free (text);
        free (lines);
        return CMD_EXIT_FAILURE;
    }
    int rc = weir_pipe_parse (pipe, text);
    if (!rc)
        rc = weir_pipe_check (pipe);
    uint64_t *records = NULL;
    size_t links = weir_pipe_link_count (pipe);
    if (rc) {
        cmd_error ("graph", "%s", weir_pipe_error (pipe));
        if (weir_is_usage_error (rc))
            cmd_description_caret (file, text, lines, weir_pipe_error_offset (pipe));
        code = weir_is_usage_error (rc) ? CMD_EXIT_USAGE : CMD_EXIT_FAILURE;
    }
    else if (stats && (!(records = calloc (links + 1, sizeof *records)) || s_stats_records (stats, records, links)))
        code = CMD_EXIT_FAILURE;
    else {
        printf ("digraph weir {\n  rankdir=LR;\n  node [fontname=\"monospace\", fontsize=10];\n"
                "  edge [fontname=\"monospace\", fontsize=9];\n");
        for (size_t i = 0; i < weir_pipe_stage_count (pipe); i++)
            s_node (stdout, pipe, i);
        size_t from, to;
        uint64_t crossed;
        for (size_t k = 0; weir_pipe_link_info (pipe, k, &from, &to, &crossed) == 0; k++) {
            weir_stage_stats st = WEIR_STAGE_STATS_INIT;
            weir_pipe_stats (pipe, to, &st);
            const char *port = weir_pipe_link_port (pipe, k);
            //  The stage's bound is its capacity= for each link into it
            size_t into = 0, f, t;
            for (size_t l = 0; weir_pipe_link_info (pipe, l, &f, &t, &crossed) == 0; l++)
                into += t == to;
            //  No queue: a tee or a fused processor, which runs in the
            //  threads of the stage feeding it
            if (st.queue_capacity)
                printf ("  s%zu -> s%zu [label=\"%s%scapacity=%u", from, to, port ? port : "", port ? "\\n" : "",
                        st.queue_capacity / (unsigned) (into ? into : 1));
            else
                printf ("  s%zu -> s%zu [label=\"%s%sno queue", from, to, port ? port : "", port ? "\\n" : "");
            if (records)
                printf ("\\n%" PRIu64 " records", records[k]);
            printf ("\"];\n");
        }
        printf ("}\n");
        if (fflush (stdout) || ferror (stdout)) {
            cmd_error ("graph", "cannot write the graph: %s", strerror (errno));
            code = CMD_EXIT_FAILURE;
        }
    }
    free (records);
    weir_pipe_destroy (&pipe);
    free (text);
    free (lines);
    return code;
}

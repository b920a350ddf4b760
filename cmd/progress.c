/*  cmd/progress.c - the live line of --progress.

    On a terminal the line is redrawn in place and never wider than the
    terminal (read at every redraw, so a resize takes effect at the next
    one): what does not fit is dropped, least useful first.  Elsewhere each
    draw is one line of a log, whole.  */
#include "cmd.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

struct cmd_progress {
    int tty;
    int epochs;        //  the job counts epochs: show which
    double last_wall;  //  the job's wall seconds at the last line
    uint64_t *last;    //  records taken per stage at the last line
    char *numbered;    //  per stage: its name is not the pipe's only one
    size_t stages;
    int based;            //  input_base holds the reader's progress at the first line
    uint64_t input_base;  //  what earlier runs of a resumed job read
};

cmd_progress *cmd_progress_new (weir_pipe *pipe, int tty, int epochs)
{
    cmd_progress *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->tty = tty;
    self->epochs = epochs;
    self->stages = weir_pipe_stage_count (pipe);
    self->last = calloc (self->stages ? self->stages : 1, sizeof *self->last);
    self->numbered = calloc (self->stages ? self->stages : 1, 1);
    if (!self->last || !self->numbered) {
        free (self->last);
        free (self->numbered);
        free (self);
        return NULL;
    }
    //  'lines 1.2M/s | lines 1.1M/s' would not say which is the reader:
    //  a name the pipe has twice is followed by its stage's number
    for (size_t i = 0; i < self->stages; i++)
        for (size_t j = 0; j < self->stages; j++) {
            weir_stage_stats a = WEIR_STAGE_STATS_INIT, b = WEIR_STAGE_STATS_INIT;
            if (i != j && weir_pipe_stats (pipe, i, &a) == 0 && weir_pipe_stats (pipe, j, &b) == 0 && a.name
                && b.name && !strcmp (a.name, b.name))
                self->numbered[i] = 1;
        }
    return self;
}

void cmd_progress_destroy (cmd_progress **self_p)
{
    cmd_progress *self = *self_p;
    if (!self)
        return;
    free (self->last);
    free (self->numbered);
    free (self);
    *self_p = NULL;
}

void cmd_human (char *out, size_t size, double v)
{
    if (v >= 1e9)
        snprintf (out, size, "%.1f G", v / 1e9);
    else if (v >= 1e6)
        snprintf (out, size, "%.1f M", v / 1e6);
    else if (v >= 1e3)
        snprintf (out, size, "%.1f k", v / 1e3);
    else
        snprintf (out, size, "%.0f", v);
}

//  A rate with no blank, for the compact line: 1.2k, 34M.
static void s_rate (char *out, size_t size, double per_second)
{
    cmd_human (out, size, per_second);
    char *blank = strchr (out, ' ');
    if (blank)
        memmove (blank, blank + 1, strlen (blank));
}

//  The line's parts, from the most to the least worth keeping.
typedef struct {
    char head[32];         //  "epoch 7 | "
    char rate[16][64];     //  per stage: "name 1.2M/s"
    char queue[16][32];    //  per stage: " q 3/16"
    char metrics[16][96];  //  per stage: " loss 0.41"
    char tail[96];         //  " | 123 records 41% ETA 0:12 3.0s"
    int reader[16];        //  per stage: it is a reader
    size_t stages;
} s_parts;

//  Which stages a rendering shows: all, the readers and those that
//  publish metrics (a trainer's loss is worth more than a writer's pace),
//  or the readers alone.
enum { S_ALL, S_WITH_METRICS, S_READER };

//  Render PARTS into LINE: with queue fills and metrics or without.
static size_t s_render (const s_parts *p, char *line, size_t size, int queues, int metrics, int stages)
{
    size_t used = (size_t) snprintf (line, size, "%s", p->head);
    int gap = 0;
    for (size_t i = 0; i < p->stages && used < size; i++) {
        if (!p->reader[i] && (stages == S_READER || (stages == S_WITH_METRICS && !p->metrics[i][0]))) {
            if (!gap)
                used += (size_t) snprintf (line + used, size - used, " | ...");
            gap = 1;
            continue;
        }
        gap = 0;
        used += (size_t) snprintf (line + used, size - used, "%s%s%s%s", i ? " | " : "", p->rate[i],
                                   queues ? p->queue[i] : "", metrics ? p->metrics[i] : "");
    }
    if (used < size)
        used += (size_t) snprintf (line + used, size - used, "%s", p->tail);
    return used < size ? used : size - 1;
}

//  Columns of the terminal on stderr, or 0 when not known.
static size_t s_columns (void)
{
    struct winsize ws;
    if (ioctl (STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return 0;
}

//  What the reader stage says of the input: the records it took, and how
//  far it is through the whole
typedef struct {
    uint64_t total, done, whole;
} s_input;

//  What stage I's processor publishes, after its rate: into OUT
static void s_metrics (weir_pipe *pipe, size_t i, char *out, size_t size)
{
    size_t stage, used = 0;
    const char *name;
    double value;
    for (size_t m = 0; weir_pipe_metric (pipe, m, &stage, &name, &value) == 0; m++) {
        if (stage != i || used >= size)
            continue;
        used += (size_t) snprintf (out + used, size - used, " %s %.4g", name, value);
    }
}

//  Each stage's rate since the last line, DT seconds ago, its queue fill
//  and its metrics into P; the reader's records and progress into *IN
static void s_stages (cmd_progress *self, weir_pipe *pipe, double dt, s_parts *p, s_input *in)
{
    p->stages = self->stages < 16 ? self->stages : 16;
    for (size_t i = 0; i < self->stages; i++) {
        weir_stage_stats st = WEIR_STAGE_STATS_INIT;
        weir_pipe_stats (pipe, i, &st);
        //  Every reader's, summed: a graph may have several
        if (st.kind == WEIR_ELEMENT_READER) {
            in->total += st.records_out;
            in->done += st.input_done;
            in->whole += st.input_total;
        }
        char rate[32];
        s_rate (rate, sizeof rate, (double) (st.records_in - self->last[i]) / dt);
        self->last[i] = st.records_in;
        if (i >= p->stages)
            continue;
        p->reader[i] = st.kind == WEIR_ELEMENT_READER;
        if (st.label)
            snprintf (p->rate[i], sizeof p->rate[i], "%s %s/s", st.label, rate);
        else if (self->numbered[i])
            snprintf (p->rate[i], sizeof p->rate[i], "%s#%zu %s/s", st.name, i + 1, rate);
        else
            snprintf (p->rate[i], sizeof p->rate[i], "%s %s/s", st.name, rate);
        if (st.queue_capacity)
            snprintf (p->queue[i], sizeof p->queue[i], " q %u/%u", st.queue_fill, st.queue_capacity);
        s_metrics (pipe, i, p->metrics[i], sizeof p->metrics[i]);
    }
}

//  Before the stages, the epoch; after them the records, and from the
//  input IN at WALL seconds, the share of it read and the time left
static void s_head_tail (cmd_progress *self, weir_pipe *pipe, double wall, const s_input *in, s_parts *p)
{
    //  The epoch running: the one after the last completed
    uint64_t epoch = weir_pipe_epoch (pipe) + 1;
    if (self->epochs || epoch > 1)
        snprintf (p->head, sizeof p->head, "epoch %llu | ", (unsigned long long) epoch);
    size_t used =
        (size_t) snprintf (p->tail, sizeof p->tail, " | %llu records", (unsigned long long) in->total);
    if (in->whole && in->done <= in->whole) {
        //  Percent of the input and, from this run's pace, the time left
        if (!self->based) {
            self->input_base = in->done;
            self->based = 1;
        }
        used += (size_t) snprintf (p->tail + used, sizeof p->tail - used, " %.0f%%",
                                   100.0 * (double) in->done / (double) in->whole);
        if (in->done > self->input_base && wall > 0) {
            double left = (double) (in->whole - in->done) * wall / (double) (in->done - self->input_base);
            unsigned long s = (unsigned long) left;
            used +=
                (size_t) snprintf (p->tail + used, sizeof p->tail - used, " ETA %lu:%02lu", s / 60, s % 60);
        }
    }
    snprintf (p->tail + used, sizeof p->tail - used, " %.1fs", wall);
}

//  P rendered into LINE within WIDTH columns (0: no limit): what is worth
//  least is dropped until it fits (queue fills, stages without metrics,
//  metrics), and as a last resort the line is cut
static void s_fit (const s_parts *p, char *line, size_t size, size_t width)
{
    size_t n = s_render (p, line, size, 1, 1, S_ALL);
    if (width && n >= width)
        n = s_render (p, line, size, 0, 1, S_ALL);
    if (width && n >= width)
        n = s_render (p, line, size, 0, 1, S_WITH_METRICS);
    if (width && n >= width)
        n = s_render (p, line, size, 0, 0, S_READER);
    if (width && n >= width)
        line[width - 1] = '\0';
}

void cmd_progress_draw (weir_pipe *pipe, void *arg, int final)
{
    //  One progress line for a job of several ranks: rank 0's
    if (weir_pipe_rank (pipe, NULL) != 0)
        return;
    cmd_progress *self = arg;
    if (final) {
        if (self->tty)
            fprintf (stderr, "\r\033[K");
        return;
    }
    double wall = weir_pipe_wall_seconds (pipe);
    double dt = wall - self->last_wall;
    if (dt <= 0)
        dt = 1e-9;
    s_parts p;
    memset (&p, 0, sizeof p);
    s_input in = {0, 0, 0};
    s_stages (self, pipe, dt, &p, &in);
    self->last_wall = wall;
    s_head_tail (self, pipe, wall, &in, &p);

    char line[4096];
    s_fit (&p, line, sizeof line, self->tty ? s_columns () : 0);
    fprintf (stderr, "%s%s%s", self->tty ? "\r\033[K" : "", line, self->tty ? "" : "\n");
    fflush (stderr);
}

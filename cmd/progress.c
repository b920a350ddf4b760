/*  cmd/progress.c - the live line of --progress.  */
#include "config.h"
#include "cmd.h"

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

struct cmd_progress {
    int tty;
    int epochs;        //  the job counts epochs: show which
    double last_wall;  //  the job's wall seconds at the last line
    uint64_t *last;    //  records out per stage at the last line
    size_t stages;
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
    if (!self->last) {
        free (self);
        return NULL;
    }
    return self;
}

void cmd_progress_destroy (cmd_progress **self_p)
{
    cmd_progress *self = *self_p;
    if (!self)
        return;
    free (self->last);
    free (self);
    *self_p = NULL;
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

void cmd_progress_draw (weir_pipe *pipe, void *arg, int final)
{
    cmd_progress *self = arg;
    double wall = weir_pipe_wall_seconds (pipe);
    double dt = wall - self->last_wall;
    if (dt <= 0)
        dt = 1e-9;
    char line[1024];
    size_t used = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < self->stages; i++) {
        weir_stage_stats st = WEIR_STAGE_STATS_INIT;
        weir_pipe_stats (pipe, i, &st);
        if (i == 0)
            total = st.records_out;
        char rate[32];
        s_rate (rate, sizeof rate, (double) (st.records_in - self->last[i]) / dt);
        self->last[i] = st.records_in;
        int k;
        if (st.queue_capacity)
            k = snprintf (line + used, sizeof line - used, "%s%s %s/s q %u/%u", i ? " | " : "", st.name, rate,
                          st.queue_fill, st.queue_capacity);
        else
            k = snprintf (line + used, sizeof line - used, "%s%s %s/s", i ? " | " : "", st.name, rate);
        if (k > 0 && (size_t) k < sizeof line - used)
            used += (size_t) k;
        //  What the stage's processor publishes, after its rate
        size_t stage;
        const char *name;
        double value;
        for (size_t m = 0; weir_pipe_metric (pipe, m, &stage, &name, &value) == 0; m++) {
            if (stage != i)
                continue;
            k = snprintf (line + used, sizeof line - used, " %s %.4g", name, value);
            if (k > 0 && (size_t) k < sizeof line - used)
                used += (size_t) k;
        }
    }
    self->last_wall = wall;
    if (final) {
        if (self->tty)
            fprintf (stderr, "\r\033[K");
        return;
    }
    //  The epoch running: the one after the last completed
    uint64_t epoch = weir_pipe_epoch (pipe) + 1;
    char head[32] = "";
    if (self->epochs || epoch > 1)
        snprintf (head, sizeof head, "epoch %llu | ", (unsigned long long) epoch);
    fprintf (stderr, "%s%s%s | %llu records %.1fs%s", self->tty ? "\r\033[K" : "", head, line,
             (unsigned long long) total, wall, self->tty ? "" : "\n");
    fflush (stderr);
}

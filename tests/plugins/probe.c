/*  tests/plugins/probe.c - a plugin that logs every call it gets.

    Properties: log=PATH (required) where each callback appends one line;
    fail=CALLBACK makes that callback fail (open, init, thread_open,
    process, epoch_end); scale=N multiplies integer records by N;
    reject=N rejects (weir_reject) integer records divisible by N;
    final-blob=BYTES makes a blob of that size, filled, at the end of the
    last epoch (so that only the job's final checkpoint is large);
    last=1 logs a line more at the end of the epoch weir_last_epoch says
    is the last.

    PROBE_SLEEP_US=N in the environment sleeps N microseconds on each
    record: a slow stage, outside the description so that a resume of the
    same pipeline may run at full speed.  */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <weir/plugin.h>

typedef struct {
    int fd;
    const char *fail;
    int64_t scale;
    long sleep_us;
    uint64_t reject;
    size_t final_blob;
    int last;
} probe_state;

typedef struct {
    probe_state *stage;
    uint64_t processed;
} probe_thread;

static void say (const probe_state *self, const char *fmt, unsigned a, unsigned long long b)
{
    char line[128];
    int n = snprintf (line, sizeof line, fmt, a, b);
    //  One write per line with O_APPEND: lines of threads never interleave
    if (write (self->fd, line, (size_t) n) != n)
        abort ();
}

static int probe_open (weir_stage *st, void **state)
{
    const char *log = weir_prop (st, "log", NULL);
    if (!log)
        return weir_fail (st, "property log=PATH is required");
    probe_state *self = calloc (1, sizeof *self);
    self->fd = open (log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (self->fd < 0) {
        free (self);
        return weir_fail (st, "cannot open log '%s'", log);
    }
    self->fail = weir_prop (st, "fail", "");
    self->scale = atoll (weir_prop (st, "scale", "1"));
    self->reject = (uint64_t) atoll (weir_prop (st, "reject", "0"));
    self->final_blob = (size_t) atoll (weir_prop (st, "final-blob", "0"));
    self->last = atoi (weir_prop (st, "last", "0"));
    const char *sleep_us = getenv ("PROBE_SLEEP_US");
    self->sleep_us = sleep_us ? atol (sleep_us) : 0;
    say (self, "open %u%llu\n", 0, 0);
    if (strcmp (self->fail, "open") == 0) {
        //  close will not be called after a failed open: release here
        close (self->fd);
        free (self);
        return weir_fail (st, "open fails as asked");
    }
    *state = self;
    return 0;
}

static int probe_init (weir_stage *st, void *state)
{
    probe_state *self = state;
    say (self, "init %u%llu\n", 0, 0);
    if (strcmp (self->fail, "init") == 0)
        return weir_fail (st, "init fails as asked");
    return 0;
}

static int probe_thread_open (weir_stage *st, void *state, void **tstate)
{
    probe_state *self = state;
    say (self, "thread_open %u of %llu\n", weir_thread_index (st), weir_thread_count (st));
    if (strcmp (self->fail, "thread_open") == 0)
        return weir_fail (st, "thread_open fails as asked");
    probe_thread *t = calloc (1, sizeof *t);
    t->stage = self;
    *tstate = t;
    return 0;
}

static int probe_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    probe_thread *t = tstate;
    if (t->stage->sleep_us > 0) {
        struct timespec pause = {t->stage->sleep_us / 1000000, t->stage->sleep_us % 1000000 * 1000};
        nanosleep (&pause, NULL);
    }
    if (++t->processed == 100 && strcmp (t->stage->fail, "process") == 0)
        return weir_fail (st, "process fails as asked at record %llu", (unsigned long long) rec->via.u64);
    if (rec->type == MSGPACK_OBJECT_POSITIVE_INTEGER && t->stage->reject
        && rec->via.u64 % t->stage->reject == 0)
        return weir_reject (st, "%llu is divisible by %llu", (unsigned long long) rec->via.u64,
                            (unsigned long long) t->stage->reject);
    if (rec->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
        msgpack_pack_uint64 (weir_packer (st), rec->via.u64 * (uint64_t) t->stage->scale);
        return weir_emit_packed (st);
    }
    return weir_emit (st, rec);
}

static int probe_epoch_end (weir_stage *st, void *tstate, uint64_t epoch)
{
    probe_thread *t = tstate;
    say (t->stage, "epoch_end %u %llu\n", weir_thread_index (st), (unsigned long long) epoch);
    if (t->stage->last && weir_last_epoch (st))
        say (t->stage, "last_epoch %u %llu\n", weir_thread_index (st), (unsigned long long) epoch);
    if (strcmp (t->stage->fail, "epoch_end") == 0)
        return weir_fail (st, "epoch_end fails as asked");
    if (t->stage->final_blob && weir_last_epoch (st) && weir_thread_index (st) == 0) {
        char *blob = weir_blob (st, "final", t->stage->final_blob);
        if (!blob)
            return -1;
        memset (blob, 'F', t->stage->final_blob);
    }
    return 0;
}

static void probe_thread_close (weir_stage *st, void *tstate)
{
    probe_thread *t = tstate;
    say (t->stage, "thread_close %u processed %llu\n", weir_thread_index (st),
         (unsigned long long) t->processed);
    free (t);
}

static void probe_close (weir_stage *st, void *state)
{
    (void) st;
    probe_state *self = state;
    say (self, "close %u%llu\n", 0, 0);
    close (self->fd);
    free (self);
}

static const weir_processor probe = {
    WEIR_PROCESSOR_INIT,
    .name = "probe",
    .description = "logs every callback (test plugin)",
    .open = probe_open,
    .init = probe_init,
    .thread_open = probe_thread_open,
    .process = probe_process,
    .epoch_end = probe_epoch_end,
    .thread_close = probe_thread_close,
    .close = probe_close,
};

const weir_processor *weir_plugin_processor (void)
{
    return &probe;
}

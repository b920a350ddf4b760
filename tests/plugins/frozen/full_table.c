/*  tests/plugins/frozen/full_table.c - a plugin of today's ABI with every
    callback of the table and a call of every function of <weir/plugin.h>.
    Never change this file (see README.md).

    Passes non-negative integers on, times scale=N (default 1); rejects
    any other record (weir_reject).  Publishes the metrics "seen" (records
    processed) and "epoch", counts the epochs in blob "full.epochs"
    (summed across ranks), keeps its stage's name in blob "full.name", and
    at the end of the input emits one more record, ["end", EPOCHS].
    stop=N asks the job to stop once a thread has seen N records.  */
#include <stdlib.h>
#include <string.h>
#include <weir/plugin.h>

typedef struct {
    uint64_t scale, stop;
    int64_t *epochs;  //  blob "full.epochs": thread 0 alone writes it
} full_stage;

typedef struct {
    full_stage *stage;
    uint64_t seen;
} full_thread;

static int full_open (weir_stage *st, void **state)
{
    if (weir_user (st))
        return weir_fail (st, "a plugin has no user argument");
    full_stage *self = calloc (1, sizeof *self);
    if (!self)
        return weir_fail (st, "out of memory");
    self->scale = strtoull (weir_prop (st, "scale", "1"), NULL, 10);
    self->stop = strtoull (weir_prop (st, "stop", "0"), NULL, 10);
    self->epochs = weir_blob (st, "full.epochs", sizeof (int64_t));
    int rc =
        self->epochs ? weir_blob_reduce (st, "full.epochs", 0, 1, WEIR_REDUCE_INT64, WEIR_REDUCE_SUM) : -1;
    size_t size;
    const char *name = weir_blob_find (st, "full.name", &size);
    if (!rc && name && (size != strlen (weir_stage_name (st)) || memcmp (name, weir_stage_name (st), size)))
        rc = weir_fail (st, "blob full.name holds another stage's name");
    if (rc) {
        free (self);
        return rc;
    }
    *state = self;
    return 0;
}

static int full_init (weir_stage *st, void *state)
{
    (void) state;
    const char *name = weir_stage_name (st);
    return weir_blob_store (st, "full.name", name, strlen (name));
}

static int full_thread_open (weir_stage *st, void *state, void **tstate)
{
    full_thread *t = calloc (1, sizeof *t);
    if (!t)
        return weir_fail (st, "out of memory in thread %u of %u", weir_thread_index (st),
                          weir_thread_count (st));
    t->stage = state;
    *tstate = t;
    return 0;
}

static int full_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    full_thread *t = tstate;
    if (++t->seen == t->stage->stop)
        weir_stop (st);
    if (rec->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        return weir_reject (st, "not a non-negative integer");
    if (t->stage->scale == 1)
        return weir_emit (st, rec);
    msgpack_pack_uint64 (weir_packer (st), rec->via.u64 * t->stage->scale);
    return weir_emit_packed (st);
}

static int full_epoch_end (weir_stage *st, void *tstate, uint64_t epoch)
{
    full_thread *t = tstate;
    if (epoch != weir_epoch (st))
        return weir_fail (st, "epoch_end of epoch %llu in epoch %llu", (unsigned long long) epoch,
                          (unsigned long long) weir_epoch (st));
    int rc = weir_metric_add (st, "seen", (double) t->seen);
    if (!rc)
        rc = weir_metric_set (st, "epoch", (double) epoch);
    t->seen = 0;
    if (rc || weir_thread_index (st) != 0)
        return rc;
    ++*t->stage->epochs;
    if (!weir_last_epoch (st))
        return 0;
    msgpack_packer *pk = weir_packer (st);
    msgpack_pack_array (pk, 2);
    msgpack_pack_str_with_body (pk, "end", 3);
    msgpack_pack_int64 (pk, *t->stage->epochs);
    return weir_emit_packed (st);
}

static void full_thread_close (weir_stage *st, void *tstate)
{
    (void) st;
    free (tstate);
}

static void full_close (weir_stage *st, void *state)
{
    (void) st;
    free (state);
}

static const weir_processor full = {
    WEIR_PROCESSOR_INIT,
    .name = "full",
    .description = "every callback, every function of <weir/plugin.h> (a frozen test plugin)",
    .open = full_open,
    .init = full_init,
    .thread_open = full_thread_open,
    .process = full_process,
    .epoch_end = full_epoch_end,
    .thread_close = full_thread_close,
    .close = full_close,
};

const weir_processor *weir_plugin_processor (void)
{
    return &full;
}

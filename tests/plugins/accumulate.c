/*  tests/plugins/accumulate.c - adds every integer record into a blob and
    passes it on: a model whose state must be checkpointed with the
    offsets.

    Properties: blob=NAME (default total), slots=N int64 slots (default 1;
    record v goes to slot v % N), init=V the value init puts in every slot
    on a fresh start (default: leave the blob as it is), reduce=sum, mean,
    min or max: in a job of several ranks, the slots are one value for the
    job, combined so at every epoch boundary (weir_blob_reduce; default:
    each rank's own), declared in open, or with declare=init in init (which
    runs on a fresh start only).  Updates are lock-free relaxed atomic adds, as in
    hogwild training.  */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <weir/plugin.h>

typedef struct {
    _Atomic int64_t *slots;
    uint64_t count;
} acc_state;

//  weir_blob_reduce as reduce= says, if it says; 0, or -1 said.
static int acc_declare (weir_stage *st, acc_state *self)
{
    const char *reduce = weir_prop (st, "reduce", NULL);
    if (!reduce)
        return 0;
    static const char *const ops[] = {"sum", "mean", "min", "max", NULL};
    int op = 0;
    while (ops[op] && strcmp (ops[op], reduce) != 0)
        op++;
    if (!ops[op])
        return weir_fail (st, "reduce= is sum, mean, min or max, not '%s'", reduce);
    return weir_blob_reduce (st, weir_prop (st, "blob", "total"), 0, self->count, WEIR_REDUCE_INT64,
                             (weir_reduce_op) op)
               ? -1
               : 0;
}

static int acc_open (weir_stage *st, void **state)
{
    acc_state *self = calloc (1, sizeof *self);
    if (!self)
        return weir_fail (st, "out of memory");
    self->count = strtoull (weir_prop (st, "slots", "1"), NULL, 10);
    if (self->count == 0) {
        free (self);
        return weir_fail (st, "slots must be at least 1");
    }
    self->slots = weir_blob (st, weir_prop (st, "blob", "total"), self->count * sizeof (int64_t));
    if (!self->slots) {
        free (self);
        return -1;
    }
    const char *declare = weir_prop (st, "declare", "open");
    if (strcmp (declare, "open") && strcmp (declare, "init")) {
        free (self);
        return weir_fail (st, "declare= is open or init, not '%s'", declare);
    }
    if (!strcmp (declare, "open") && acc_declare (st, self)) {
        free (self);
        return -1;
    }
    *state = self;
    return 0;
}

static int acc_init (weir_stage *st, void *state)
{
    acc_state *self = state;
    if (!strcmp (weir_prop (st, "declare", "open"), "init") && acc_declare (st, self))
        return -1;
    //  Without init= the blob keeps what it has: zeros, or what
    //  --load-blobs put there
    const char *init = weir_prop (st, "init", NULL);
    if (!init)
        return 0;
    int64_t v = strtoll (init, NULL, 10);
    for (uint64_t i = 0; i < self->count; i++)
        atomic_store_explicit (&self->slots[i], v, memory_order_relaxed);
    return 0;
}

static int acc_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    acc_state *self = tstate;
    if (rec->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        return weir_fail (st, "expected a non-negative integer");
    atomic_fetch_add_explicit (&self->slots[rec->via.u64 % self->count], (int64_t) rec->via.u64,
                               memory_order_relaxed);
    return weir_emit (st, rec);
}

static void acc_close (weir_stage *st, void *state)
{
    (void) st;
    free (state);
}

static const weir_processor acc = {
    WEIR_PROCESSOR_INIT,
    .name = "accumulate",
    .description = "adds integer records into a blob (test plugin)",
    .open = acc_open,
    .init = acc_init,
    .process = acc_process,
    .close = acc_close,
};

const weir_processor *weir_plugin_processor (void)
{
    return &acc;
}

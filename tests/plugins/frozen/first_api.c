/*  tests/plugins/frozen/first_api.c - a plugin written to the first
    documented API: its table names the ABI and no size, and a callback
    returns -1 for an error.  Never change this file (see README.md).

    min=N drops integers below N and passes the rest on: non-negative ones
    packed anew, others copied.  */
#include <stdlib.h>
#include <weir/plugin.h>

typedef struct {
    int64_t min;
} first_state;

static int first_open (weir_stage *st, void **state)
{
    const char *text = weir_prop (st, "min", "0");
    char *end;
    long long min = strtoll (text, &end, 10);
    if (*end || end == text)
        return weir_fail (st, "min=%s is not an integer", text);
    first_state *self = malloc (sizeof *self);
    if (!self)
        return weir_fail (st, "out of memory");
    self->min = min;
    *state = self;
    return 0;
}

static void first_close (weir_stage *st, void *state)
{
    (void) st;
    free (state);
}

static int first_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    const first_state *self = tstate;
    if (rec->type == MSGPACK_OBJECT_POSITIVE_INTEGER && self->min > 0 && rec->via.u64 < (uint64_t) self->min)
        return 0;
    if (rec->type == MSGPACK_OBJECT_NEGATIVE_INTEGER && rec->via.i64 < self->min)
        return 0;
    if (rec->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
        msgpack_pack_uint64 (weir_packer (st), rec->via.u64);
        if (weir_emit_packed (st))
            return -1;
        return 0;
    }
    if (weir_emit (st, rec))
        return -1;
    return 0;
}

static const weir_processor first = {
    .abi = WEIR_PLUGIN_ABI,
    .name = "first",
    .description = "drops integers below min=N (the first documented API)",
    .open = first_open,
    .process = first_process,
    .close = first_close,
};

const weir_processor *weir_plugin_processor (void)
{
    return &first;
}

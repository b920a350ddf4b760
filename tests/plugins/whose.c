/*  tests/plugins/whose.c - emits [RECORD, THREAD] for every record: the
    record as it came and the index of the runtime thread that got it, so
    that a test can see which thread each key of a keyed stage went to.  */
#include <weir/plugin.h>

static int whose_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    (void) tstate;
    msgpack_packer *pk = weir_packer (st);
    msgpack_pack_array (pk, 2);
    msgpack_pack_object (pk, *rec);
    msgpack_pack_unsigned_int (pk, weir_thread_index (st));
    return weir_emit_packed (st);
}

static const weir_processor whose = {
    WEIR_PROCESSOR_INIT,
    .name = "whose",
    .description = "emits [record, thread index] for every record",
    .process = whose_process,
};

const weir_processor *weir_plugin_processor (void)
{
    return &whose;
}

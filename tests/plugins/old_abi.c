/*  tests/plugins/old_abi.c - a plugin built for the ABI before this one.  */
#include <weir/plugin.h>

static int process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    (void) tstate;
    return weir_emit (st, rec);
}

static const weir_processor table = {
    WEIR_PLUGIN_ABI - 1, sizeof (weir_processor), "past", "from the past", 0, 0, 0, process, 0, 0, 0, 0, 0};

const weir_processor *weir_plugin_processor (void)
{
    return &table;
}

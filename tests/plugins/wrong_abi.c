/*  tests/plugins/wrong_abi.c - a plugin built for a future ABI.  */
#include <weir/plugin.h>

static int process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    (void) tstate;
    return weir_emit (st, rec);
}

static const weir_processor table = {.abi = WEIR_PLUGIN_ABI + 1,
                                     .size = sizeof (weir_processor),
                                     .name = "future",
                                     .description = "from the future",
                                     .process = process};

const weir_processor *weir_plugin_processor (void)
{
    return &table;
}

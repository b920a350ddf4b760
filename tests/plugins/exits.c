/*  tests/plugins/exits.c - a plugin whose constructor ends the process
    with status 0, as a badly written library might.  */
#include <stdlib.h>
#include <weir/plugin.h>

__attribute__ ((constructor)) static void s_init (void)
{
    exit (0);
}

static int process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    (void) tstate;
    return weir_emit (st, rec);
}

static const weir_processor table = {WEIR_PROCESSOR_INIT, .name = "exits", .process = process};

const weir_processor *weir_plugin_processor (void)
{
    return &table;
}

/*  tests/plugins/crashes.c - a plugin whose constructor crashes.  */
#include <signal.h>
#include <weir/plugin.h>

__attribute__ ((constructor)) static void s_init (void)
{
    raise (SIGSEGV);
}

static int process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    (void) tstate;
    return weir_emit (st, rec);
}

static const weir_processor table = {WEIR_PROCESSOR_INIT, .name = "crashes", .process = process};

const weir_processor *weir_plugin_processor (void)
{
    return &table;
}

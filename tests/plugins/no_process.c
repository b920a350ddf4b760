/*  tests/plugins/no_process.c - a table without its required callback.  */
#include <weir/plugin.h>

static const weir_processor table = {
    WEIR_PLUGIN_ABI, sizeof (weir_processor), "empty", "has no process", 0, 0, 0, 0, 0, 0, 0, 0, 0};

const weir_processor *weir_plugin_processor (void)
{
    return &table;
}

/*  tests/plugins/no_process.c - a table without its required callback.  */
#include <weir/plugin.h>

static const weir_processor table = {WEIR_PROCESSOR_INIT, .name = "empty", .description = "has no process"};

const weir_processor *weir_plugin_processor (void)
{
    return &table;
}

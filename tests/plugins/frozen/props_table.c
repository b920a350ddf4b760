/*  tests/plugins/frozen/props_table.c - a plugin of the table that
    declares its properties ('props', appended after 'close').  Never
    change this file (see README.md).

    Passes every record on.  Declares keep= (default 1) and label=
    (required), which it does not read: the declaration is what is
    tested.  */
#include <weir/plugin.h>

static int props_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    (void) tstate;
    return weir_emit (st, rec);
}

static const weir_property_info props_props[] = {
    {"keep", "1", "1 keeps every record"},
    {"label", NULL, "a name for the stage's records"},
    {NULL, NULL, NULL},
};

static const weir_processor props_table = {
    WEIR_PROCESSOR_INIT,
    .name = "props",
    .description = "passes every record on, and declares two properties",
    .process = props_process,
    .props = props_props,
};

const weir_processor *weir_plugin_processor (void)
{
    return &props_table;
}

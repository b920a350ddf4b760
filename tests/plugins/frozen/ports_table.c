/*  tests/plugins/frozen/ports_table.c - a plugin of the table with named
    outputs ('ports', appended after 'props').  Never change this file
    (see README.md).

    Sends even integers to its first port, 'even' (weir_emit), odd ones
    to its second, 'odd' (weir_emit_to).  */
#include <weir/plugin.h>

static int ports_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    (void) tstate;
    if (rec->type == MSGPACK_OBJECT_POSITIVE_INTEGER && rec->via.u64 % 2)
        return weir_emit_to (st, 1, rec);
    return weir_emit (st, rec);
}

static const char *const ports_ports[] = {"even", "odd", NULL};

static const weir_processor ports_table = {
    WEIR_PROCESSOR_INIT,
    .name = "ports",
    .description = "even integers to its port 'even', odd ones to 'odd'",
    .process = ports_process,
    .ports = ports_ports,
};

const weir_processor *weir_plugin_processor (void)
{
    return &ports_table;
}

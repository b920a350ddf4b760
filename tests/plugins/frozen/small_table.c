/*  tests/plugins/frozen/small_table.c - a plugin of this ABI built when
    the table ended at 'close': what a plugin built before a callback was
    appended looks like to a newer weir.  Never change this file (see
    README.md).  */
#include <stddef.h>
#include <weir/plugin.h>

static int process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    (void) tstate;
    return weir_emit (st, rec);
}

static const weir_processor table = {
    .abi = WEIR_PLUGIN_ABI,
    .size = offsetof (weir_processor, close) + sizeof (void (*) (weir_stage *, void *)),
    .name = "small",
    .process = process,
};

const weir_processor *weir_plugin_processor (void)
{
    return &table;
}

/*  tests/plugins/words.c - the three ways a plugin emits a str record,
    for the engine's fold of words into a keyed aggregation as they are
    emitted (pipeline/path.h, weir__path_fold).

        ... ! words via=str|packer|object ! count key=. ! ...

    Every str record is cut at spaces; each piece (empty ones between two
    spaces too) is emitted as a str with weir_emit_str, packed with
    weir_packer and weir_emit_packed, or given as an object to
    weir_emit.  Other records are passed on.  */
#include <string.h>
#include <weir/plugin.h>

enum { VIA_STR, VIA_PACKER, VIA_OBJECT };

static int s_via (weir_stage *st)
{
    const char *via = weir_prop (st, "via", "str");
    return !strcmp (via, "packer") ? VIA_PACKER : !strcmp (via, "object") ? VIA_OBJECT : VIA_STR;
}

static int words_open (weir_stage *st, void **state)
{
    (void) state;
    const char *via = weir_prop (st, "via", "str");
    if (strcmp (via, "str") && strcmp (via, "packer") && strcmp (via, "object"))
        return weir_fail (st, "via=%s: expected str, packer or object", via);
    return 0;
}

static int s_emit (weir_stage *st, int via, const char *p, size_t n)
{
    if (via == VIA_STR)
        return weir_emit_str (st, p, n);
    if (via == VIA_PACKER) {
        msgpack_packer *pk = weir_packer (st);
        msgpack_pack_str (pk, n);
        msgpack_pack_str_body (pk, p, n);
        return weir_emit_packed (st);
    }
    msgpack_object o = {.type = MSGPACK_OBJECT_STR};
    o.via.str.ptr = p;
    o.via.str.size = (uint32_t) n;
    return weir_emit (st, &o);
}

static int words_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    (void) tstate;
    if (rec->type != MSGPACK_OBJECT_STR)
        return weir_emit (st, rec);
    int via = s_via (st);
    const char *p = rec->via.str.ptr, *end = p + rec->via.str.size;
    for (;;) {
        const char *space = memchr (p, ' ', (size_t) (end - p));
        const char *stop = space ? space : end;
        if (s_emit (st, via, p, (size_t) (stop - p)))
            return -1;
        if (!space)
            return 0;
        p = space + 1;
    }
}

static const weir_processor words = {
    WEIR_PROCESSOR_INIT,
    .name = "words",
    .description = "cuts str records at spaces (via=str|packer|object: how each piece is emitted)",
    .open = words_open,
    .process = words_process,
};

const weir_processor *weir_plugin_processor (void)
{
    return &words;
}

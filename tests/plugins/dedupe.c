/*  tests/plugins/dedupe.c - the keyed state of <weir/plugin.h> at work:
    passes on the first record of each key and drops the others; a map
    record with "forget": true forgets its key instead (weir_key_delete),
    so that its next record passes again; in the last epoch emits
    ["held", N], N the keys the thread still holds (weir_key_each).  A
    map with "big": true asks for a state of 2 bytes, not 1, which the
    engine refuses.  (No weir_field: the fault suite's static weir keeps
    only the functions it uses itself.)  */
#include <stdint.h>
#include <string.h>
#include <weir/plugin.h>

//  Whether REC is a map whose str key NAME is true
static int s_true (const msgpack_object *rec, const char *name)
{
    if (rec->type != MSGPACK_OBJECT_MAP)
        return 0;
    for (uint32_t i = 0; i < rec->via.map.size; i++) {
        const msgpack_object_kv *kv = &rec->via.map.ptr[i];
        if (kv->key.type == MSGPACK_OBJECT_STR && kv->key.via.str.size == strlen (name)
            && !memcmp (kv->key.via.str.ptr, name, kv->key.via.str.size))
            return kv->val.type == MSGPACK_OBJECT_BOOLEAN && kv->val.via.boolean;
    }
    return 0;
}

static int dedupe_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    (void) tstate;
    if (s_true (rec, "forget"))
        return weir_key_delete (st) < 0 ? -1 : 0;
    int fresh;
    unsigned char *seen = weir_key_state (st, s_true (rec, "big") ? 2 : 1, &fresh);
    if (!seen)
        return -1;
    if (!fresh)
        return 0;
    seen[0] = 1;
    return weir_emit (st, rec);
}

static int dedupe_count (weir_stage *st, const msgpack_object *key, void *state, void *arg)
{
    (void) st;
    (void) key;
    *(uint64_t *) arg += *(const unsigned char *) state;
    return 0;
}

static int dedupe_epoch_end (weir_stage *st, void *tstate, uint64_t epoch)
{
    (void) tstate;
    (void) epoch;
    if (!weir_last_epoch (st))
        return 0;
    uint64_t held = 0;
    int rc = weir_key_each (st, dedupe_count, &held);
    if (rc)
        return rc;
    msgpack_packer *pk = weir_packer (st);
    msgpack_pack_array (pk, 2);
    msgpack_pack_str (pk, 4);
    msgpack_pack_str_body (pk, "held", 4);
    msgpack_pack_uint64 (pk, held);
    return weir_emit_packed (st);
}

static const weir_processor dedupe = {
    WEIR_PROCESSOR_INIT,
    .name = "dedupe",
    .description = "passes the first record of each key (key=); {\"forget\": true} forgets its key",
    .process = dedupe_process,
    .epoch_end = dedupe_epoch_end,
};

const weir_processor *weir_plugin_processor (void)
{
    return &dedupe;
}

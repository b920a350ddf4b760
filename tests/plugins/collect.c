/*  tests/plugins/collect.c - a msgpack value per key (weir_key_value,
    weir_key_set_value, weir_key_each_value): for each key, the map
    {"n": records, "sum": the sum of their "v", "s": their "t" strings one
    after the other}, which grows with every record, so that the engine
    moves it as it outgrows its room; a map with "forget": true forgets
    its key (weir_key_delete).  In the last epoch, emits [key, value] for
    every key.  A map with "fixed": true asks for a state of fixed size
    instead, which a stage of values refuses.  (No weir_field: the fault
    suite's static weir keeps only the functions it uses itself.)  */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <weir/plugin.h>

//  REC's str key NAME's value, or NULL
static const msgpack_object *s_get (const msgpack_object *rec, const char *name)
{
    if (rec->type != MSGPACK_OBJECT_MAP)
        return NULL;
    for (uint32_t i = 0; i < rec->via.map.size; i++) {
        const msgpack_object_kv *kv = &rec->via.map.ptr[i];
        if (kv->key.type == MSGPACK_OBJECT_STR && kv->key.via.str.size == strlen (name)
            && !memcmp (kv->key.via.str.ptr, name, kv->key.via.str.size))
            return &kv->val;
    }
    return NULL;
}

static int64_t s_int (const msgpack_object *o)
{
    if (!o)
        return 0;
    if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
        return (int64_t) o->via.u64;
    return o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER ? o->via.i64 : 0;
}

static int collect_thread_open (weir_stage *st, void *state, void **tstate)
{
    (void) st;
    (void) state;
    msgpack_sbuffer *sb = msgpack_sbuffer_new ();
    *tstate = sb;
    return sb ? 0 : -1;
}

static void collect_thread_close (weir_stage *st, void *tstate)
{
    (void) st;
    msgpack_sbuffer_free (tstate);
}

static void s_str (msgpack_packer *pk, const char *s, size_t n)
{
    msgpack_pack_str (pk, n);
    msgpack_pack_str_body (pk, s, n);
}

static int collect_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    const msgpack_object *flag = s_get (rec, "forget");
    if (flag && flag->type == MSGPACK_OBJECT_BOOLEAN && flag->via.boolean)
        return weir_key_delete (st) < 0 ? -1 : 0;
    flag = s_get (rec, "fixed");
    if (flag && flag->type == MSGPACK_OBJECT_BOOLEAN && flag->via.boolean)
        return weir_key_state (st, 8, NULL) ? 0 : -1;
    msgpack_object value;
    int fresh;
    if (weir_key_value (st, &value, &fresh))
        return -1;
    int64_t n = fresh ? 0 : s_int (s_get (&value, "n")), sum = fresh ? 0 : s_int (s_get (&value, "sum"));
    const msgpack_object *s = fresh ? NULL : s_get (&value, "s"), *t = s_get (rec, "t");
    size_t slen = s && s->type == MSGPACK_OBJECT_STR ? s->via.str.size : 0;
    size_t tlen = t && t->type == MSGPACK_OBJECT_STR ? t->via.str.size : 0;
    msgpack_sbuffer *sb = tstate;
    msgpack_sbuffer_clear (sb);
    msgpack_packer pk;
    msgpack_packer_init (&pk, sb, msgpack_sbuffer_write);
    msgpack_pack_map (&pk, 3);
    s_str (&pk, "n", 1);
    msgpack_pack_int64 (&pk, n + 1);
    s_str (&pk, "sum", 3);
    msgpack_pack_int64 (&pk, sum + s_int (s_get (rec, "v")));
    s_str (&pk, "s", 1);
    //  The old string's bytes, then the record's: both still valid here
    msgpack_pack_str (&pk, slen + tlen);
    msgpack_pack_str_body (&pk, slen ? s->via.str.ptr : "", slen);
    msgpack_pack_str_body (&pk, tlen ? t->via.str.ptr : "", tlen);
    return weir_key_set_value (st, sb->data, sb->size) ? -1 : 0;
}

static int collect_emit (weir_stage *st, const msgpack_object *key, const msgpack_object *value, void *arg)
{
    (void) arg;
    msgpack_packer *pk = weir_packer (st);
    msgpack_pack_array (pk, 2);
    msgpack_pack_object (pk, *key);
    msgpack_pack_object (pk, *value);
    return weir_emit_packed (st);
}

static int collect_epoch_end (weir_stage *st, void *tstate, uint64_t epoch)
{
    (void) tstate;
    (void) epoch;
    return weir_last_epoch (st) ? weir_key_each_value (st, collect_emit, NULL) : 0;
}

static const weir_processor collect = {
    WEIR_PROCESSOR_INIT,
    .name = "collect",
    .description = "keeps {n, sum, s} per key (key=) as a msgpack value; emits [key, value] at the end",
    .thread_open = collect_thread_open,
    .thread_close = collect_thread_close,
    .process = collect_process,
    .epoch_end = collect_epoch_end,
};

const weir_processor *weir_plugin_processor (void)
{
    return &collect;
}

/*  examples/wordcount/wordcount.c - counts str records per word with the
    keyed state of <weir/plugin.h>; emits [word, count].

        ... ! wordcount key=. threads=2 ! ...

    key=. makes the stage keyed by the whole record: every occurrence of
    a word comes to the same thread, so that thread alone counts it, in
    a uint64_t the engine keeps for the word (weir_key_state).  The
    engine checkpoints each key group that changed at every epoch's end,
    so a killed job resumes with its counts, with any thread count.  In
    the last epoch (weir_last_epoch) each thread emits the words it holds
    (weir_key_each).  A record that is not a str is refused with an error
    rather than dropped.

    The builtin 'count key=.' does the same (and folds the records by key
    in its producers, until each epoch's end, when that pays); this plugin shows how a plugin
    keeps state per key: no table, no lock, no merge.

    Build: cc -shared -fPIC $(pkg-config --cflags weir) wordcount.c -o wordcount.so  */
#include <stdint.h>
#include <weir/plugin.h>

static int count_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    (void) tstate;
    if (rec->type != MSGPACK_OBJECT_STR)
        return weir_fail (st, "expected str records (words), got a msgpack %s", weir_type_name (rec));
    uint64_t *count = weir_key_state (st, sizeof *count, NULL);
    if (!count)
        return -1;  //  the job failed, and says why
    ++*count;
    return 0;
}

static int count_emit (weir_stage *st, const msgpack_object *word, void *state, void *arg)
{
    (void) arg;
    msgpack_packer *pk = weir_packer (st);
    msgpack_pack_array (pk, 2);
    msgpack_pack_object (pk, *word);
    msgpack_pack_uint64 (pk, *(const uint64_t *) state);
    return weir_emit_packed (st);
}

static int count_epoch_end (weir_stage *st, void *tstate, uint64_t epoch)
{
    (void) tstate;
    (void) epoch;
    return weir_last_epoch (st) ? weir_key_each (st, count_emit, NULL) : 0;
}

//  It reads no property of its own (key= is the engine's): an empty list
//  says so, where NULL would say nothing
static const weir_property_info count_props[] = {{NULL, NULL, NULL}};

static const weir_processor count = {
    WEIR_PROCESSOR_INIT,
    .name = "wordcount",
    .description = "counts str records per word with keyed state (give it key=.) and emits [word, count] "
                   "in the last epoch",
    .process = count_process,
    .epoch_end = count_epoch_end,
    .props = count_props,
};

const weir_processor *weir_plugin_processor (void)
{
    return &count;
}

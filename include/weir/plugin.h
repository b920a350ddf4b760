/*  weir/plugin.h - the processor interface: what a processor callback sees.

    A processor is a table of callbacks (weir_processor).  An embedding
    program passes one to weir_pipe_add_processor(); a plugin (a shared
    object) returns one from weir_plugin_processor().  Both see the running
    stage only through the opaque weir_stage handle and the functions below.

    Conventions:
    - the functions below that can fail return 0 or a negative WEIR_E*
      code, as every function of <weir/weir.h> does, so a callback can
      pass their result on (return weir_emit (st, rec););
    - callbacks that return int return 0 on success and anything else on
      error (but WEIR_REJECTED, which process returns for a bad record):
      the value of weir_fail(), a code passed on, or -1, which this header
      once asked for and which stays accepted so that no plugin breaks.
      Use weir_fail() to say what went wrong; the engine stops the job
      cleanly and reports the message with the element's name;
    - strings returned as const char * are borrowed: valid while the stage
      runs, never freed by the caller;
    - a weir_stage handle belongs to one runtime thread: call these
      functions only from the callback that was given it.
*/
#ifndef WEIR_PLUGIN_H_INCLUDED
#define WEIR_PLUGIN_H_INCLUDED

#include <msgpack.h>
#include <stddef.h>
#include <stdint.h>
#include <weir/weir.h>

#ifdef __cplusplus
extern "C" {
#endif

/*  The ABI of the table and of the functions below.  The rule: a plugin
    valid once stays valid.  The table only grows at its end (see 'size'),
    no function below changes its signature or its meaning, and this
    number never changes again.  The engine refuses a processor built for
    another value, older or newer: ABI 1, the table before 'size', is laid
    out otherwise.  */
#define WEIR_PLUGIN_ABI 2

/*  The stage a callback runs in, as its runtime thread sees it.  */
typedef struct weir_stage weir_stage;

/*  The callback table.  'abi', 'name' and 'process' are required, and
    'size' is expected (0 reads as the first revision: see below).

    The table only grows at its end (SQLite's sqlite3_vfs and Redis'
    module API grow the same way): 'size' says how much of it the plugin
    was built with, and callbacks added after that are NULL for it, so an
    older plugin keeps working with a newer weir.  A table larger than this
    weir knows comes from a newer weir and is refused.  Start a table with
    WEIR_PROCESSOR_INIT, or set both fields by hand.  A table whose size is
    0 was written to the first documented API, which set 'abi' alone: it
    is read as the first revision of the table, the fields up to 'close'.

    Order of calls, per stage: open, init (fresh start only), then in each
    runtime thread thread_open, process for every record, epoch_end at the
    end of each epoch (the end of the stream ends the last one),
    thread_close; finally close once every thread has finished.

    A failed open gets no close, and a failed thread_open no thread_close:
    release what the failing callback allocated before returning its error.
    Once open succeeded, close is called even if init or a thread
    failed.  */
typedef struct weir_processor {
    int abi;     /*  WEIR_PLUGIN_ABI  */
    size_t size; /*  sizeof (weir_processor)  */
    const char *name, *description;
    int (*open) (weir_stage *st, void **state);
    int (*init) (weir_stage *st, void *state);
    int (*thread_open) (weir_stage *st, void *state, void **tstate);
    int (*process) (weir_stage *st, void *tstate, const msgpack_object *rec);
    int (*epoch_end) (weir_stage *st, void *tstate, uint64_t epoch);
    void (*thread_close) (weir_stage *st, void *tstate);
    void (*close) (weir_stage *st, void *state);
    /*  Appended: the properties the processor reads, for 'weir elements'
        and 'weir plugin' to show (name, default as text or NULL when
        required, what it means), terminated by a NULL name; NULL when it
        does not say.  Data, not a callback: the engine only shows it.  */
    const weir_property_info *props;
    /*  Appended: the processor's named outputs (ports), a NULL-terminated
        list of names (a letter or '_', then letters, digits, '_' or '-'),
        or NULL for one output without a name, as every processor had
        before.  A description links each port to a branch of its own,
        starting it with NAME.PORT (the stage's name=, a port of it):
            ... ! split.so name=s  s.good ! json path=good.jsonl
                                   s.bad ! json path=bad.jsonl
        and every port must be linked (to null, to drop what it gets).
        weir_emit() sends to the first port, weir_emit_to() to any.  */
    const char *const *ports;
    /*  Appended: 'process' for a processor that parses its records'
        msgpack itself, because it knows their form and decoding them into
        objects would cost more than its work (a training record of
        hundreds of features is hundreds of objects).  When set, the
        engine calls it instead of 'process' with the LEN bytes of one
        whole, well-formed msgpack object at DATA, valid during the call,
        and decodes nothing; it returns as 'process' does, and may reject
        the record (weir_reject: the dead letter gets it decoded).
        'process' stays required: the engine calls it instead on a stage
        given key=, whose state is found from the decoded record, and a
        processor may call its own 'process' on a record of a form its
        parser does not take, decoded with msgpack_unpack, so that only
        one of its paths says what is wrong with a record.  */
    int (*process_bytes) (weir_stage *st, void *tstate, const char *data, size_t len);
} weir_processor;

/*  The first two fields, for a designated initializer:
        static const weir_processor table = {WEIR_PROCESSOR_INIT, .name = ...};  */
#define WEIR_PROCESSOR_INIT .abi = WEIR_PLUGIN_ABI, .size = sizeof (weir_processor)

/*  The one symbol a plugin exports: define it to return your table.  */
#if defined(__GNUC__)
__attribute__ ((visibility ("default")))
#endif
const weir_processor *
weir_plugin_processor (void);

/*  The value of the element's property KEY, or FALLBACK when it was not
    given.  */
WEIR_EXPORT const char *weir_prop (weir_stage *st, const char *key, const char *fallback);

/*  Pass a copy of REC downstream.  REC may point into the record being
    processed.  Returns 0, WEIR_ENOMEM when the record cannot be packed,
    or WEIR_EABORTED when the job is being torn down or failed: return
    the code from the callback then.  */
WEIR_EXPORT int weir_emit (weir_stage *st, const msgpack_object *rec);

/*  weir_emit() to the processor's port PORT: its index in the table's
    'ports' (0 is the first, where weir_emit() sends).  A PORT the
    processor does not have fails the job (WEIR_EINVAL).  */
WEIR_EXPORT int weir_emit_to (weir_stage *st, unsigned port, const msgpack_object *rec);

/*  The efficient way to emit a record you build: pack exactly one msgpack
    object with the returned packer, then call weir_emit_packed().  The
    packer writes straight into the outgoing batch; no object tree is
    built.  weir_emit_packed() checks that exactly one well-formed object
    was packed and fails the job otherwise (WEIR_EPROCESSOR); else it
    returns as weir_emit() does.  */
WEIR_EXPORT msgpack_packer *weir_packer (weir_stage *st);
WEIR_EXPORT int weir_emit_packed (weir_stage *st);

/*  The job's workspace blob NAME of SIZE bytes: the same memory for every
    thread of every stage, zeroed when new, copied into every checkpoint
    while the pipe is quiescent, and restored on resume (so a processor's
    init, which only runs on a fresh start, sets its initial value).
    Returns NULL, with the job's error set, when the blob exists with
    another size.  Concurrent updates are the caller's business: use C11
    atomics for lock-free (hogwild) updates.  */
WEIR_EXPORT void *weir_blob (weir_stage *st, const char *name, size_t size);

/*  Variable-sized state in the workspace.  weir_blob_find returns blob
    NAME and its *SIZE, or NULL when there is none (on open, to restore what
    a checkpoint kept).  weir_blob_store replaces blob NAME with a copy of
    SIZE bytes of DATA (creating it, or changing its size); call it from
    open, init or epoch_end, the checkpoint then holds exactly those bytes.
    A pointer earlier returned for NAME is invalid afterwards.  0, or
    WEIR_ENOMEM with the job's error set.  */
WEIR_EXPORT const void *weir_blob_find (weir_stage *st, const char *name, size_t *size);
WEIR_EXPORT int weir_blob_store (weir_stage *st, const char *name, const void *data, size_t size);

/*  A job of several ranks (mpirun -n N weir run ...) runs one pipe per
    rank, each with its own workspace.  weir_blob_reduce makes COUNT
    elements of TYPE from byte OFFSET of blob NAME (created first) one
    value for the job: at every epoch boundary, with every rank's pipe
    quiescent, the region becomes on every rank
      WEIR_REDUCE_SUM   its value at the last boundary plus what every rank
                        added since: a counter or a total counts each
                        rank's additions once (caffe2's summed totals)
      WEIR_REDUCE_MEAN  the mean over the ranks (periodic model averaging,
                        as local SGD does)
      WEIR_REDUCE_MIN, WEIR_REDUCE_MAX   element by element
    so the checkpoint holds one value.  What is not declared stays each
    rank's own, and the checkpoint keeps rank 0's.  Declare regions in open
    or init, alike on every rank, while the blob holds the same value
    everywhere (as init or a resume leaves it); several regions of one blob
    may be declared.  Checkpoints keep the declarations, and a resume makes
    them again before open (init does not run then); declaring a region
    again alike changes nothing.  In a job of one rank this changes
    nothing.  A rank that has declared nothing at a boundary where
    others have (a model made from the first record, on a rank that has
    had none) adopts the regions and their blobs from the lowest rank
    that declared them, and a mean at that boundary counts only the
    ranks that declared: a processor may declare when it makes its
    state, as long as every rank that makes it makes the same.  0, or
    with the job's error set WEIR_EINVAL (no such blob, a region outside
    it, an OFFSET that is not a multiple of the element's size, an unknown
    TYPE or OP) or WEIR_ENOMEM.  */
typedef enum { WEIR_REDUCE_FLOAT32, WEIR_REDUCE_FLOAT64, WEIR_REDUCE_INT64 } weir_reduce_type;
typedef enum { WEIR_REDUCE_SUM, WEIR_REDUCE_MEAN, WEIR_REDUCE_MIN, WEIR_REDUCE_MAX } weir_reduce_op;
WEIR_EXPORT int weir_blob_reduce (weir_stage *st, const char *name, size_t offset, size_t count,
                                  weir_reduce_type type, weir_reduce_op op);

/*  Publish a named value for people watching the job: a training loss, an
    accuracy.  The progress line and the --stats JSON show it with the
    stage.  weir_metric_set replaces the value (the last setter wins, from
    any thread); weir_metric_add adds to it (a count; it starts at 0).
    Cheap enough to call per batch of records, lock-free once the name
    exists.  Names are at most 31 bytes, and a stage has at most 16 of
    them: 0, or WEIR_EINVAL when NAME cannot be added (the job goes on).  */
WEIR_EXPORT int weir_metric_set (weir_stage *st, const char *name, double value);
WEIR_EXPORT int weir_metric_add (weir_stage *st, const char *name, double delta);

/*  The epoch this thread is in (1 for the first epoch of a fresh job).  */
WEIR_EXPORT uint64_t weir_epoch (const weir_stage *st);

/*  In epoch_end: true when this epoch finishes the job, at the end of
    the input (on the last pass): the place to emit final results.  A job
    that ends earlier (--epochs, weir_stop, Ctrl-C) is only paused: its
    state, kept in blobs, carries over to the resumed run, which emits.  */
WEIR_EXPORT int weir_last_epoch (const weir_stage *st);

/*  Ask the job to stop at the end of the current epoch: readers stop at
    their next batch, everything read so far flows through, the last
    checkpoint is written and the job ends normally.  */
WEIR_EXPORT void weir_stop (weir_stage *st);

/*  In epoch_end: the checkpoint that ends this epoch holds the best state
    so far, by the processor's own measure (a validation score), as
    Keras' best-only saving keeps.  The store marks it and keeps it,
    whatever its retention, until a later checkpoint is marked;
    'weir run --load-blobs DIR:best' (weir_pipe_set_load_blobs with
    WEIR_LOAD_BEST) loads it and 'weir checkpoints' shows it.  On several
    ranks rank 0's call decides, as rank 0 writes the checkpoint.  Without
    --checkpoint it does nothing.  */
WEIR_EXPORT void weir_checkpoint_best (weir_stage *st);

/*  Record an error message for the job (printf-style) and return
    WEIR_EPROCESSOR, so that a callback can say:
    return weir_fail (st, "bad record");  The first error of a job
    wins.  */
WEIR_EXPORT int weir_fail (weir_stage *st, const char *fmt, ...) WEIR_PRINTF (2, 3);

/*  In process: the record is bad, for a reason (printf-style), as distinct
    from a failure of the job: return weir_reject (st, "no label");  It
    returns WEIR_REJECTED, which process returns.  With the stage's
    on-error=skip the engine counts the record, keeps it with the reason in
    the stage's dead letter (dead-letter=PATH) and goes on; with
    on-error=fail, the default, the job fails naming it.  What process
    emitted for the record before stays emitted.  */
#define WEIR_REJECTED 1
WEIR_EXPORT int weir_reject (weir_stage *st, const char *fmt, ...) WEIR_PRINTF (2, 3);

/*  This runtime thread's index (0 .. count-1) and the stage's thread
    count.  */
WEIR_EXPORT unsigned weir_thread_index (const weir_stage *st);
WEIR_EXPORT unsigned weir_thread_count (const weir_stage *st);

/*  The element name of the stage, as written in the description.  */
WEIR_EXPORT const char *weir_stage_name (const weir_stage *st);

/*  The user argument given to weir_pipe_add_processor(), or NULL.  */
WEIR_EXPORT void *weir_user (weir_stage *st);

/*  What a msgpack object is, in words for a message: "nil", "boolean",
    "positive integer", "negative integer", "float", "str", "bin",
    "array", "map", "ext" ("unknown" for anything else), so that an error
    says "got a map", not "got msgpack type 7".  */
WEIR_EXPORT const char *weir_type_name (const msgpack_object *o);

/*  Fields of a record, by path, without a loop over map pairs.  A path
    names a value inside a record: '.' the whole record; '.NAME' the value
    of a map under the str key NAME (letters, digits, '_' and '-'; quote
    any other key, ."a b", with \" and \\ inside); '[N]' element N of an
    array, from 0; chained, as in '.user.id' or '.tags[0]'.  These are the
    paths of the flow graph's filter.

    weir_field puts the value at PATH in REC into *OUT, a pointer into
    REC: 0 when it is there; 1 when it is not (a missing key, an index
    past the end, a step into a value that is no map or array: absent is
    no error); WEIR_EINVAL when PATH is malformed.  A map with a key twice
    gives its first.  */
WEIR_EXPORT int weir_field (const msgpack_object *rec, const char *path, const msgpack_object **out);

/*  Emit the map REC with fields changed, the rest packed as they are, in
    their order: each of the N edits sets str key KEY to *VALUE (in place
    of its value when REC has KEY, else as a new pair at the end), or,
    with VALUE NULL, removes KEY.  A key edited twice takes its first
    edit; a key REC has twice keeps one pair.  Returns as weir_emit(); a
    REC that is no map fails the job (WEIR_EPROCESSOR, naming its type).  */
typedef struct weir_field_edit {
    const char *key;
    const msgpack_object *value;
} weir_field_edit;
WEIR_EXPORT int weir_emit_edited (weir_stage *st, const msgpack_object *rec, const weir_field_edit *edits,
                                  size_t n);

/*  ---------------------------------------------------------------------
    Keyed state.  A stage given key=PATH gets every record of one key in
    the same thread (a key is the value at PATH, compared as its msgpack
    value).  Its processor may keep a value of a fixed size per key, and
    the engine owns the rest: the tables, their growth, the checkpoint of
    each key group that changed in an epoch (as the workspace blobs
    "keys/STAGE/GROUP"), and their hand-over to the thread that owns a
    group after a resume with another thread count.  No locks: a key's
    state is only ever seen by one thread.

    weir_key_state gives the state of the key of the record being
    processed (so only inside 'process'), SIZE bytes, the same SIZE on
    every call of the stage: zeroed, with *FRESH set (when FRESH is not
    NULL), the first time the key is seen.  It stays valid until the
    thread's next call of weir_key_state or weir_key_delete.  NULL fails
    the job, saying why: a stage without key=, a call outside 'process',
    another SIZE, out of memory.  */
WEIR_EXPORT void *weir_key_state (weir_stage *st, size_t size, int *fresh);

/*  Forget the state of the key of the record being processed: 1, 0
    when it had none, or a negative WEIR_E* code (the job fails).  */
WEIR_EXPORT int weir_key_delete (weir_stage *st);

/*  FN for every key this thread holds state for (the key as a msgpack
    value, its state), from any callback of a keyed stage's thread, as
    epoch_end emits results in the last epoch; FN may change the states,
    not add or delete keys.  Stops at FN's first non-zero return, which it
    returns; a negative WEIR_E* code when the state cannot be read (the
    job fails).  */
typedef int (*weir_key_fn) (weir_stage *st, const msgpack_object *key, void *state, void *arg);
WEIR_EXPORT int weir_key_each (weir_stage *st, weir_key_fn fn, void *arg);

/*  Instead of a state of a fixed size, a keyed stage may keep one msgpack
    value per key, of any size and shape (a key's last records, a map of
    counters, a string): the engine keeps its bytes, checkpoints them
    with the key's group and hands them over on a resume with other
    thread or rank counts, as it does the fixed states.  A stage keeps
    one kind or the other.

    weir_key_value gives the value of the key of the record being
    processed (so only inside 'process') in *VALUE: nil, with *FRESH set
    (when FRESH is not NULL), while the key has none.  Its strings and
    containers stay valid until the thread's next call of a weir_key_
    function.  0, or a negative WEIR_E* code (the job fails, saying why:
    a stage without key=, a call outside 'process', a stage that keeps
    fixed states, out of memory).  */
WEIR_EXPORT int weir_key_value (weir_stage *st, msgpack_object *value, int *fresh);

/*  The value of the key of the record being processed becomes the LEN
    bytes at PACKED: one whole msgpack value (anything else fails the
    job), copied (pack it with a msgpack_packer of your own over a
    msgpack_sbuffer, not weir_packer, which writes the outgoing batch).
    0, or a negative WEIR_E* code (the job fails).  weir_key_delete
    forgets it.  */
WEIR_EXPORT int weir_key_set_value (weir_stage *st, const void *packed, size_t len);

/*  FN for every key this thread keeps a value for, with the key and the
    value, from any callback of a keyed stage's thread (epoch_end emits
    results in the last epoch); FN may not add, set or delete.  Stops at
    FN's first non-zero return, which it returns; a negative WEIR_E*
    code when the state cannot be read (the job fails).  */
typedef int (*weir_key_value_fn) (weir_stage *st, const msgpack_object *key, const msgpack_object *value,
                                  void *arg);
WEIR_EXPORT int weir_key_each_value (weir_stage *st, weir_key_value_fn fn, void *arg);

/*  Emit a str record of the N bytes at P: what packing it with
    weir_packer and weir_emit_packed does, with no packer calls, the
    quickest way to emit a word or a line.  Returns as weir_emit().  */
WEIR_EXPORT int weir_emit_str (weir_stage *st, const char *p, size_t n);

#ifdef __cplusplus
}
#endif

#endif

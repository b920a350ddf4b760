/*  pipeline/keyed.h - the keyed state of one thread of a keyed stage.

    A thread of a stage with key= owns a contiguous run of the job's key
    groups (lib/key.h), and keeps a value of a fixed size per key of its
    groups: a table per group (lib/keytable.h), no lock, since no other
    thread sees those keys.  A group's table is loaded from the workspace
    blob "keys/STAGE/GROUP" (STAGE the stage's index in the description)
    the first time the thread needs it, and stored there again at each
    epoch's end when it changed in the epoch, so that every checkpoint
    holds the state as of the offsets' instant, and a resume with another
    thread count has each thread load the groups it owns now.

    The builtin aggregations (pipeline/aggregate.h) and the plugins'
    weir_key_state (<weir/plugin.h>) keep their state here.  A blob is
    what weir__keytable_save writes (its value size first).  */
#ifndef WEIR_KEYED_H_INCLUDED
#define WEIR_KEYED_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "lib/workspace.h"
#include "pipeline/stage.h"

typedef struct weir__keyed weir__keyed;

/*  The keyed state of worker W of a keyed stage.  NULL when out of
    memory.  */
weir__keyed *weir__keyed_new (const weir__worker *w);
void weir__keyed_destroy (weir__keyed **self_p);

/*  The value of SIZE bytes of the key of LEN canonical bytes at KEY, of
    hash HASH: zeroed, *FRESH set, when the key is new; its group marked
    changed.  Valid until the next key is added.  NULL with ERR when the
    key is not one of this thread's groups, when SIZE is not the size the
    state has (its first call's, or the checkpoint's), on a malformed
    blob, or out of memory.  */
void *weir__keyed_value (weir__keyed *self, const char *key, size_t len, uint64_t hash, size_t size,
                         int *fresh, weir__err *err);

/*  The same for an entry kept in the group of the key of hash GROUP_HASH
    (a distinct value of that key, pipeline/aggregate.c): its own bytes
    and hash for the table, its key's for the group.  */
void *weir__keyed_value_in (weir__keyed *self, uint64_t group_hash, const char *key, size_t len,
                            uint64_t hash, size_t size, int *fresh, weir__err *err);

/*  The same for the key KEY reads in REC (lib/key.h).  */
void *weir__keyed_record_value (weir__keyed *self, const weir__key *key, const msgpack_object *rec,
                                size_t size, int *fresh, weir__err *err);
int weir__keyed_record_delete (weir__keyed *self, const weir__key *key, const msgpack_object *rec,
                               weir__err *err);

/*  A stage whose state is a msgpack value per key (weir_key_value): the
    bytes kept for the key of LEN canonical bytes at KEY, of hash HASH,
    and their length *VLEN, valid until the thread's state changes; NULL
    when the key has none (ERR's code left 0), or with ERR (a key not of
    the thread's groups, a stage whose state is of fixed size).  */
const void *weir__keyed_get_bytes (weir__keyed *self, const char *key, size_t len, uint64_t hash,
                                   size_t *vlen, weir__err *err);

/*  Keep the VLEN bytes at VALUE for that key (added when new); its group
    marked changed.  0, or -1 with ERR.  */
int weir__keyed_put_bytes (weir__keyed *self, const char *key, size_t len, uint64_t hash, const void *value,
                           size_t vlen, weir__err *err);

/*  The same for the key KEY reads in REC.  */
const void *weir__keyed_record_get_bytes (weir__keyed *self, const weir__key *key, const msgpack_object *rec,
                                          size_t *vlen, weir__err *err);
int weir__keyed_record_put_bytes (weir__keyed *self, const weir__key *key, const msgpack_object *rec,
                                  const void *value, size_t vlen, weir__err *err);

/*  The LEN bytes at BYTES (one msgpack value, checked when it was kept)
    decoded into *OUT, in the thread's zone: valid until the next call.
    0, or -1 when they do not decode (or out of memory).  */
int weir__keyed_unpack (weir__keyed *self, const void *bytes, size_t len, msgpack_object *out);

/*  FN for every key of the thread's groups and the bytes kept for it, as
    weir__keyed_each, for a stage whose state is msgpack values (-1 with
    ERR for another; and weir__keyed_each refuses those).  */
typedef int (weir__keyed_bytes_fn) (void *arg, const char *key, size_t len, const void *value, size_t vlen);
int weir__keyed_each_bytes (weir__keyed *self, weir__keyed_bytes_fn *fn, void *arg, weir__err *err);

/*  Forget that key and its value: 1, 0 when it had none, or -1 with ERR.  */
int weir__keyed_delete (weir__keyed *self, const char *key, size_t len, uint64_t hash, weir__err *err);

/*  FN for every key of the thread's groups (CHANGED: of the groups that
    changed in this epoch only), with its canonical bytes and value,
    until FN returns non-zero, which this returns.  -1 with ERR when a
    group cannot be loaded.  */
typedef int (weir__keyed_fn) (void *arg, const char *key, size_t len, void *value);
int weir__keyed_each (weir__keyed *self, int changed, weir__keyed_fn *fn, void *arg, weir__err *err);

/*  FN for every key of the thread's groups, as weir__keyed_each; a key
    for which FN returns 1 is forgotten (the windows of an aggregation,
    once emitted).  0, FN's negative return, or -1 with ERR.  */
int weir__keyed_sweep (weir__keyed *self, weir__keyed_fn *fn, void *arg, weir__err *err);

/*  The name of the workspace blob WHAT of the keyed state of stage STAGE
    ("keys/STAGE/WHAT"): a key group's number, or the state a stage
    shares across its threads (an aggregation's "watermark").  */
void weir__keyed_blob_name (size_t stage, const char *what, char *out, size_t size);

/*  Whether the workspace blob NAME holds a key group's state (not a
    stage's shared state, nor a model's blob): 1 with the stage's index
    in *STAGE and the group in *GROUP, else 0.  */
int weir__keyed_blob_group (const char *name, size_t *stage, unsigned *group);

/*  The size of the values the key groups of the stage of index STAGE
    hold in WS (a checkpoint gave them back), or 0 when it has none.  */
size_t weir__keyed_saved_size (weir__workspace *ws, size_t stage);

/*  Store the groups that changed in this epoch as their blobs, when KEEP
    (a job that checkpoints: weir__shared.keeps_keys),
    and start the next epoch with none changed.  0, or -1 with ERR.  */
int weir__keyed_store (weir__keyed *self, int keep, weir__err *err);

/*  The keys the thread holds now (of the groups loaded).  */
uint64_t weir__keyed_count (const weir__keyed *self);

#endif

/*  pipeline/processor.c - what a processor's callbacks can do with their
    weir_stage (<weir/plugin.h>): read properties, emit records, keep state
    in the workspace, stop the job, fail.  */
#include "config.h"

#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cluster.h"
#include "lib/clock.h"
#include "lib/key.h"
#include "lib/pack.h"
#include "lib/scan.h"
#include "pipeline/controller.h"
#include "pipeline/keyed.h"
#include "pipeline/origin.h"
#include "pipeline/path.h"
#include "pipeline/stage.h"

const char *weir_prop (weir_stage *st, const char *key, const char *fallback)
{
    assert (st && key);
    //  Properties never change once the threads start, so threads read
    //  them without a lock; the 'used' mark (for the warning about
    //  properties nobody reads) is atomic.
    weir__props *props = &st->stage->props;
    for (size_t i = props->count; i-- > 0;)
        if (strcmp (props->items[i].key, key) == 0) {
            atomic_store_explicit (&props->items[i].used, 1, memory_order_relaxed);
            return props->items[i].value;
        }
    return fallback;
}

//  The record just packed into B, the batch of port PORT, is added: count
//  it, and send the batch on when it is full.
static int s_added_to (weir__worker *w, weir__batch *b, unsigned port)
{
    if (b->oom) {
        weir__err err;
        weir__err_set (&err, WEIR_ENOMEM, "%s: out of memory", w->stage->name);
        weir__job_fail (w->stage->run->job, &err);
        return WEIR_ENOMEM;
    }
    //  linger= counts from the first record held in any batch
    if (++b->count == 1 && !w->sink.first_ns)
        w->sink.first_ns = weir__now_ns ();
    //  A batch that cannot be sent: the job is being torn down, or failed
    if (b->count >= w->sink.limit && weir__path_send_port (w, port))
        return WEIR_EABORTED;
    w->packed_from = b->len;
    return 0;
}

static int s_added (weir__worker *w)
{
    return s_added_to (w, &w->sink.batch, 0);
}

int weir_emit (weir_stage *st, const msgpack_object *rec)
{
    assert (st && rec);
    weir__pack_object (&st->sink.batch, rec);
    return s_added (st);
}

int weir_emit_to (weir_stage *st, unsigned port, const msgpack_object *rec)
{
    assert (st && rec);
    size_t ports = st->stage->nports;
    if (port == 0 || port < ports) {
        weir__batch *b = port ? &st->port_batches[port - 1] : &st->sink.batch;
        weir__pack_object (b, rec);
        return s_added_to (st, b, port);
    }
    weir_fail (st,
               "weir_emit_to: port %u, and the processor has %zu (ports are numbered from 0 in the "
               "order its table's 'ports' gives them)",
               port, ports ? ports : 1);
    return WEIR_EINVAL;
}

msgpack_packer *weir_packer (weir_stage *st)
{
    assert (st);
    st->packed_from = st->sink.batch.len;
    return &st->sink.batch.pk;
}

int weir_emit_packed (weir_stage *st)
{
    assert (st);
    weir__batch *b = &st->sink.batch;
    //  What the plugin packed must be one whole object, or the batch would
    //  be corrupt for every stage downstream
    size_t size = 0, where = 0, have = b->len - st->packed_from;
    //  A short str, the most packed record (a word), is whole when its
    //  length says so: no scan
    const unsigned char *first = (const unsigned char *) b->data + st->packed_from;
    if (have && (*first & 0xe0) == 0xa0 && have == 1 + (size_t) (*first & 0x1f)) {
        int folded = weir__path_fold (st, (const char *) first + 1, have - 1);
        if (folded == 0)
            return s_added (st);
        b->len = st->packed_from;
        return folded > 0 ? 0 : WEIR_EABORTED;
    }
    weir__scan_result r =
        have ? weir__scan (b->data + st->packed_from, have, &size, &where) : WEIR__SCAN_INCOMPLETE;
    if (r != WEIR__SCAN_OK || size != have) {
        b->len = st->packed_from;
        return weir_fail (st, "weir_emit_packed: the packer holds %s",
                          r == WEIR__SCAN_OK ? "more than one object"
                          : have == 0        ? "no object"
                                             : weir__scan_strerror (r));
    }
    return s_added (st);
}

//  weir_emit_str but for a word folded at once: apart, so that a word
//  count's every word saves no registers for packing
static __attribute__ ((noinline)) int s_emit_str (weir_stage *st, const char *p, size_t n)
{
    if (n > UINT32_MAX)
        return weir_fail (st, "weir_emit_str: %zu bytes, more than a msgpack str holds", n);
    //  A short str (a word) is folded from the caller's bytes, as they
    //  are, when it may be: it is packed only when the combiner does not
    //  take it (it rests).  Once the stage is known to fold, weir_emit_str
    //  has tried already
    int folded = 0;
    if (n <= WEIR__KEY_STR_SHORT && st->fold_port0 == 0 && (folded = weir__path_fold (st, p, n)) != 0)
        return folded > 0 ? 0 : WEIR_EABORTED;
    weir__batch *b = &st->sink.batch;
    st->packed_from = b->len;
    if (weir__pack_str (b, p, n))
        return s_added (st);  //  out of memory: the batch says so
    //  Packed by the engine: a str with the shortest header, which a
    //  keyed link's combiner can fold as it is; a key too long goes the
    //  usual way, to be refused there
    size_t len = b->len - st->packed_from;
    if (n <= WEIR__KEY_STR_SHORT || st->fold_port0 < 0 || len > WEIR__KEY_MAX_BYTES)
        return s_added (st);
    const char *key = b->data + st->packed_from;
    folded = weir__path_fold (st, key + len - n, n);
    if (folded == 0)
        return s_added (st);
    b->len = st->packed_from;
    return folded > 0 ? 0 : WEIR_EABORTED;
}

int weir_emit_str (weir_stage *st, const char *p, size_t n)
{
    assert (st && (p || !n));
    //  A word into a stage ready to fold it: folded at once
    int folded;
    if (n <= WEIR__KEY_STR_SHORT && st->fold_port0 > 0 && (folded = weir__path_fold (st, p, n)) != 0)
        return folded > 0 ? 0 : WEIR_EABORTED;
    return s_emit_str (st, p, n);
}

//  The first of the N EDITS that names the str key K, or -1.
static long s_edit_of (const msgpack_object *k, const weir_field_edit *edits, size_t n)
{
    if (k->type != MSGPACK_OBJECT_STR)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (edits[i].key && strlen (edits[i].key) == k->via.str.size
            && memcmp (edits[i].key, k->via.str.ptr, k->via.str.size) == 0)
            return (long) i;
    return -1;
}

//  Whether edit I is the first of EDITS to name its key.
static int s_first_edit (const weir_field_edit *edits, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (edits[j].key && !strcmp (edits[j].key, edits[i].key))
            return 0;
    return 1;
}

//  One walk over REC's pairs and EDITS: with B NULL, how many pairs the
//  edited map has; else it packs them into B (an out-of-memory packing
//  sets the batch's oom, which s_added reports).  DONE marks the edits
//  whose key REC has (N of them, zeroed by the caller before each walk).
static uint32_t s_edit_walk (const msgpack_object *rec, const weir_field_edit *edits, size_t n,
                             unsigned char *done, weir__batch *b)
{
    uint32_t pairs = 0;
    for (uint32_t i = 0; i < rec->via.map.size; i++) {
        const msgpack_object_kv *kv = &rec->via.map.ptr[i];
        long e = s_edit_of (&kv->key, edits, n);
        if (e < 0) {
            pairs++;
            if (b) {
                weir__pack_object (b, &kv->key);
                weir__pack_object (b, &kv->val);
            }
            continue;
        }
        //  A key edited: set once (its first pair), removed, or a
        //  second pair of it dropped
        if (!edits[e].value || done[e]) {
            done[e] = 1;
            continue;
        }
        done[e] = 1;
        pairs++;
        if (b) {
            weir__pack_object (b, &kv->key);
            weir__pack_object (b, edits[e].value);
        }
    }
    for (size_t e = 0; e < n; e++)
        if (edits[e].key && edits[e].value && !done[e] && s_first_edit (edits, e)) {
            pairs++;
            if (b) {
                weir__pack_str (b, edits[e].key, strlen (edits[e].key));
                weir__pack_object (b, edits[e].value);
            }
        }
    return pairs;
}

int weir_emit_edited (weir_stage *st, const msgpack_object *rec, const weir_field_edit *edits, size_t n)
{
    assert (st && rec && (edits || !n));
    if (rec->type != MSGPACK_OBJECT_MAP)
        return weir_fail (st, "weir_emit_edited: the record is a msgpack %s, not a map",
                          weir_type_name (rec));
    unsigned char few[32], *done = n <= sizeof few ? few : calloc (n, 1);
    if (!done)
        return weir_fail (st, "out of memory");
    memset (done, 0, n);
    uint32_t pairs = s_edit_walk (rec, edits, n, done, NULL);
    memset (done, 0, n);
    weir__batch *b = &st->sink.batch;
    weir__pack_map (b, pairs);
    s_edit_walk (rec, edits, n, done, b);
    if (done != few)
        free (done);
    return s_added (st);
}

void weir_stop (weir_stage *st)
{
    assert (st);
    weir__job_stop (st->stage->run->job);
}

void weir_checkpoint_best (weir_stage *st)
{
    assert (st);
    atomic_store (&st->stage->run->job->best, 1);
}

int weir_fail (weir_stage *st, const char *fmt, ...)
{
    assert (st && fmt);
    weir__err err;
    char text[900];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (text, sizeof text, fmt, ap);
    va_end (ap);
    //  open and init run before the first epoch, close after the last.
    //  In process, the record's place in the input, when it is known and
    //  the job has no error yet (only the first is kept)
    char where[WEIR__ORIGIN_WHERE] = "";
    if (st->processing && !weir__job_failed (st->stage->run->job))
        weir__origin_where (st, where, sizeof where);
    if (atomic_load (&st->stage->run->job->running))
        weir__err_set (&err, WEIR_EPROCESSOR, "%s: %s (epoch %" PRIu64 "%s)", st->stage->name, text,
                       weir__controller_epoch (st->stage->run->controller), where);
    else
        weir__err_set (&err, WEIR_EPROCESSOR, "%s: %s", st->stage->name, text);
    weir__job_fail (st->stage->run->job, &err);
    return WEIR_EPROCESSOR;
}

int weir_reject (weir_stage *st, const char *fmt, ...)
{
    assert (st && fmt);
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (st->reject_reason, sizeof st->reject_reason, fmt, ap);
    va_end (ap);
    st->rejecting = 1;
    return WEIR_REJECTED;
}

void *weir_blob (weir_stage *st, const char *name, size_t size)
{
    assert (st && name);
    weir__err err;
    weir__err_init (&err);
    void *data = weir__workspace_blob (st->stage->run->workspace, name, size, &err);
    if (!data)
        weir_fail (st, "%s", err.msg);
    return data;
}

const void *weir_blob_find (weir_stage *st, const char *name, size_t *size)
{
    assert (st && name && size);
    return weir__workspace_find (st->stage->run->workspace, name, size);
}

int weir_blob_store (weir_stage *st, const char *name, const void *data, size_t size)
{
    assert (st && name && (data || !size));
    if (weir__workspace_restore (st->stage->run->workspace, name, data, size)) {
        weir_fail (st, "out of memory storing blob '%s' of %zu bytes", name, size);
        return WEIR_ENOMEM;
    }
    return 0;
}

int weir_blob_reduce (weir_stage *st, const char *name, size_t offset, size_t count, weir_reduce_type type,
                      weir_reduce_op op)
{
    assert (st && name);
    //  The public values are the cluster's, in the same order
    _Static_assert((int) WEIR_REDUCE_FLOAT64 == (int) WEIR__REDUCE_F64
                       && (int) WEIR_REDUCE_INT64 == (int) WEIR__REDUCE_I64
                       && (int) WEIR_REDUCE_MEAN == (int) WEIR__REDUCE_MEAN
                       && (int) WEIR_REDUCE_MAX == (int) WEIR__REDUCE_MAX,
                   "reduce codes");
    if ((unsigned) type > WEIR_REDUCE_INT64 || (unsigned) op > WEIR_REDUCE_MAX) {
        weir_fail (st, "weir_blob_reduce: blob '%s': unknown type %d or operation %d", name, (int) type,
                   (int) op);
        return WEIR_EINVAL;
    }
    size_t width = type == WEIR_REDUCE_FLOAT32 ? 4 : 8;
    int rc = weir__workspace_add_reduce (st->stage->run->workspace, name, offset, count, width, (int) type,
                                         (int) op);
    if (rc == WEIR__WORKSPACE_NO_BLOB)
        weir_fail (st, "weir_blob_reduce: there is no blob '%s' (create it with weir_blob first)", name);
    else if (rc == WEIR__WORKSPACE_OUTSIDE)
        weir_fail (st,
                   "weir_blob_reduce: blob '%s': %zu elements of %zu bytes from byte %zu are not inside "
                   "it, or %zu is not a multiple of %zu",
                   name, count, width, offset, offset, width);
    else if (rc)
        weir_fail (st, "out of memory");
    //  The job's error is the processor's failure; the caller learns which
    return rc == 0 ? 0 : rc == WEIR_ENOMEM ? WEIR_ENOMEM : WEIR_EINVAL;
}

int weir_metric_set (weir_stage *st, const char *name, double value)
{
    assert (st && name);
    return weir__metrics_set (&st->stage->metrics, name, value);
}

int weir_metric_add (weir_stage *st, const char *name, double delta)
{
    assert (st && name);
    return weir__metrics_add (&st->stage->metrics, name, delta);
}

int weir_last_epoch (const weir_stage *st)
{
    return st->last_epoch;
}

uint64_t weir_epoch (const weir_stage *st)
{
    return weir__controller_epoch (st->stage->run->controller);
}

unsigned weir_thread_index (const weir_stage *st)
{
    return st->index;
}

unsigned weir_thread_count (const weir_stage *st)
{
    return st->stage->threads;
}

const char *weir_stage_name (const weir_stage *st)
{
    return st->stage->name;
}

void *weir_user (weir_stage *st)
{
    return weir__callbacks_user (st->stage->callbacks);
}

void *weir_key_state (weir_stage *st, size_t size, int *fresh)
{
    assert (st);
    int ignored;
    if (!fresh)
        fresh = &ignored;
    *fresh = 0;
    if (!st->keyed) {
        weir_fail (st,
                   "weir_key_state: '%s' keeps state per key only with key=PATH (the key each record is "
                   "sent to its thread by)",
                   st->stage->name);
        return NULL;
    }
    if (!st->record) {
        weir_fail (st, "weir_key_state: the key is the record's, so only 'process' may ask for its state");
        return NULL;
    }
    if (size == 0 || size > 4096) {
        weir_fail (st, "weir_key_state: a state of %zu bytes (1 to 4096)", size);
        return NULL;
    }
    weir__err err;
    weir__err_init (&err);
    void *state = weir__keyed_record_value (st->keyed, st->stage->key, st->record, size, fresh, &err);
    if (!state)
        weir_fail (st, "weir_key_state: %s", err.msg);
    return state;
}

int weir_key_delete (weir_stage *st)
{
    assert (st);
    if (!st->keyed || !st->record)
        return weir_fail (st, "weir_key_delete: only in 'process' of a stage with key=PATH");
    weir__err err;
    weir__err_init (&err);
    int rc = weir__keyed_record_delete (st->keyed, st->stage->key, st->record, &err);
    return rc < 0 ? weir_fail (st, "weir_key_delete: %s", err.msg) : rc;
}

//  Whether ST may ask for the state of the record's key (WHAT names the
//  function for the message): 0, or the job failed
static int s_key_of_record (weir_stage *st, const char *what)
{
    if (!st->keyed)
        return weir_fail (st,
                          "%s: '%s' keeps state per key only with key=PATH (the key each record is sent to "
                          "its thread by)",
                          what, st->stage->name);
    if (!st->record)
        return weir_fail (st, "%s: the key is the record's, so only 'process' may ask for its state", what);
    return 0;
}

int weir_key_value (weir_stage *st, msgpack_object *value, int *fresh)
{
    assert (st && value);
    int ignored;
    if (!fresh)
        fresh = &ignored;
    *fresh = 0;
    value->type = MSGPACK_OBJECT_NIL;
    int rc = s_key_of_record (st, "weir_key_value");
    if (rc)
        return rc;
    weir__err err;
    weir__err_init (&err);
    size_t len;
    const void *bytes = weir__keyed_record_get_bytes (st->keyed, st->stage->key, st->record, &len, &err);
    if (!bytes && err.code)
        return weir_fail (st, "weir_key_value: %s", err.msg);
    if (!bytes) {
        *fresh = 1;
        return 0;
    }
    if (weir__keyed_unpack (st->keyed, bytes, len, value))
        return weir_fail (st, "weir_key_value: the value of the key (%zu bytes) does not decode", len);
    return 0;
}

int weir_key_set_value (weir_stage *st, const void *packed, size_t len)
{
    assert (st);
    int rc = s_key_of_record (st, "weir_key_set_value");
    if (rc)
        return rc;
    size_t size = 0, where = 0;
    weir__scan_result r = packed && len ? weir__scan (packed, len, &size, &where) : WEIR__SCAN_INCOMPLETE;
    if (r != WEIR__SCAN_OK || size != len) {
        weir_fail (st, "weir_key_set_value: the %zu bytes are not one msgpack value (%s at byte %zu)", len,
                   r != WEIR__SCAN_OK ? weir__scan_strerror (r) : "more bytes after it",
                   r != WEIR__SCAN_OK ? where : size);
        return WEIR_EINVAL;
    }
    weir__err err;
    weir__err_init (&err);
    if (weir__keyed_record_put_bytes (st->keyed, st->stage->key, st->record, packed, len, &err))
        return weir_fail (st, "weir_key_set_value: %s", err.msg);
    return 0;
}

//  What s_each_value needs
typedef struct {
    weir_stage *st;
    weir_key_value_fn fn;
    void *arg;
    msgpack_zone zone;
} s_each_value;

static int s_each_value_of (void *arg, const char *key, size_t len, const void *value, size_t vlen)
{
    s_each_value *e = arg;
    msgpack_object k, v;
    size_t off = 0;
    msgpack_zone_clear (&e->zone);
    if (msgpack_unpack (key, len, &off, &e->zone, &k) != MSGPACK_UNPACK_SUCCESS)
        return weir_fail (e->st, "weir_key_each_value: a key of the state does not decode");
    off = 0;
    if (msgpack_unpack (value, vlen, &off, &e->zone, &v) != MSGPACK_UNPACK_SUCCESS)
        return weir_fail (e->st, "weir_key_each_value: a value of the state does not decode");
    return e->fn (e->st, &k, &v, e->arg);
}

int weir_key_each_value (weir_stage *st, weir_key_value_fn fn, void *arg)
{
    assert (st && fn);
    if (!st->keyed)
        return weir_fail (st, "weir_key_each_value: '%s' keeps state per key only with key=PATH",
                          st->stage->name);
    s_each_value e = {.st = st, .fn = fn, .arg = arg};
    if (!msgpack_zone_init (&e.zone, 1024))
        return weir_fail (st, "out of memory");
    weir__err err;
    weir__err_init (&err);
    int rc = weir__keyed_each_bytes (st->keyed, s_each_value_of, &e, &err);
    msgpack_zone_destroy (&e.zone);
    if (rc < 0 && err.code)
        return weir_fail (st, "weir_key_each_value: %s", err.msg);
    return rc;
}

//  What s_each_key needs
typedef struct {
    weir_stage *st;
    weir_key_fn fn;
    void *arg;
    msgpack_zone zone;
} s_each;

static int s_each_key (void *arg, const char *key, size_t len, void *value)
{
    s_each *e = arg;
    msgpack_object obj;
    size_t off = 0;
    msgpack_zone_clear (&e->zone);
    if (msgpack_unpack (key, len, &off, &e->zone, &obj) != MSGPACK_UNPACK_SUCCESS)
        return weir_fail (e->st, "weir_key_each: a key of the state does not decode");
    return e->fn (e->st, &obj, value, e->arg);
}

int weir_key_each (weir_stage *st, weir_key_fn fn, void *arg)
{
    assert (st && fn);
    if (!st->keyed)
        return weir_fail (st, "weir_key_each: '%s' keeps state per key only with key=PATH", st->stage->name);
    s_each e = {.st = st, .fn = fn, .arg = arg};
    if (!msgpack_zone_init (&e.zone, 1024))
        return weir_fail (st, "out of memory");
    weir__err err;
    weir__err_init (&err);
    int rc = weir__keyed_each (st->keyed, 0, s_each_key, &e, &err);
    msgpack_zone_destroy (&e.zone);
    if (rc < 0 && err.code)
        return weir_fail (st, "weir_key_each: %s", err.msg);
    return rc;
}

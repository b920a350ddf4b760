/*  pipeline/aggregate.c - count, sum, min, max and mean per key.  */
#include "config.h"
#include "pipeline/aggregate.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/key.h"
#include "pipeline/keyed.h"
#include "pipeline/stage.h"

typedef enum { S_COUNT, S_SUM, S_MIN, S_MAX, S_MEAN, S_DISTINCT } s_op;

//  The first byte of a distinct value's entry (msgpack never uses it, so
//  no key starts with it): then the key's bytes and the value's
#define S_MEMBER 0xc1

//  A key's state.  Sums of integers stay integers until one overflows
//  or a float comes; min and max keep the kind of the value they hold.
typedef struct {
    union {
        int64_t i;
        double f;
    } a;
    uint64_t n;        //  values taken
    uint8_t is_float;  //  a holds f
    uint8_t changed;   //  in this epoch (emit=epoch)
    uint8_t pad[6];
} s_value;

typedef struct {
    weir__combine combine;  //  first: the combiner the producers call back is the s_agg
    s_op op;
    weir__key *value;  //  value=, NULL for count
    int changelog;     //  emit=epoch
} s_agg;

typedef struct {
    s_agg *agg;
    weir__buf key;       //  the record's key, when not its own bytes
    weir__buf value;     //  distinct: its value= when not its own bytes
    weir__buf member;    //  distinct: the entry of a key's value
    uint64_t keys_said;  //  keys added to the stage's metric
    //  What the combiner saved, not yet added to the stage's metrics:
    //  the records that came folded, the partial aggregates they came as
    uint64_t combined, partials;
} s_thread;

static const weir_property_info s_count_props[] = {
    {"key", NULL, "the path of the key it counts by ('.user', '[0]', '.' for the whole record)"},
    {"emit", "end",
     "end: one [key, count] per key when the input ends; epoch: at each epoch's end, those "
     "that changed in it (a changelog)"},
    {NULL, NULL, NULL},
};

static const weir_property_info s_value_props[] = {
    {"key", NULL, "the path of the key it aggregates by ('.user', '[0]', '.' for the whole record)"},
    {"value", NULL, "the path of the number to aggregate ('.bytes', '[1]'); a record without one is bad"},
    {"emit", "end",
     "end: one [key, value] per key when the input ends; epoch: at each epoch's end, those "
     "that changed in it (a changelog)"},
    {NULL, NULL, NULL},
};

static const weir_property_info s_distinct_props[] = {
    {"key", NULL, "the path of the key it counts the distinct values of ('.user', '[0]')"},
    {"value", ".", "the path of the values counted once each ('.ip'; '.', the whole record)"},
    {"emit", "end",
     "end: one [key, distinct values] per key when the input ends; epoch: at each epoch's end, those "
     "that changed in it (a changelog)"},
    {NULL, NULL, NULL},
};

int weir__aggregate_check (weir__props *props, const char *element, const weir_property_info *common,
                           weir__err *err)
{
    (void) common;
    if (!weir__props_find (props, "key")) {
        weir__err_set (err, WEIR_EPROPERTY,
                       "%s needs key=PATH, the key it aggregates by ('.user', '[0]', '.' for the whole "
                       "record)",
                       element);
        return err->code;
    }
    weir__prop *emit = weir__props_find (props, "emit");
    if (emit && strcmp (emit->value, "end") && strcmp (emit->value, "epoch")) {
        weir__err_set (err, WEIR_EPROPERTY, "%s: emit=%s: expected end or epoch", element, emit->value);
        err->offset = emit->value_offset;
        return err->code;
    }
    weir__prop *value = weir__props_find (props, "value");
    if (strcmp (element, "count") && strcmp (element, "distinct") && !value) {
        weir__err_set (err, WEIR_EPROPERTY, "%s needs value=PATH, the number it aggregates ('.bytes')",
                       element);
        return err->code;
    }
    if (value) {
        weir__key *k = weir__key_new (value->value, err);
        if (!k) {
            char was[sizeof err->msg];
            snprintf (was, sizeof was, "%s", err->msg);
            long at = err->offset;
            weir__err_set (err, WEIR_EPROPERTY, "%s: value=%s: %s", element, value->value, was);
            err->offset = value->value_offset < 0 ? -1 : value->value_offset + value->quoted + at;
            return err->code;
        }
        weir__key_destroy (&k);
    }
    return 0;
}

static int s_combine_fold (const weir__combiner *c, const msgpack_object *rec, void *value);
static int s_combine_pack (const weir__combiner *c, const char *key, size_t len, uint64_t hash,
                           const void *value, weir__batch *b);
static int s_merge (weir__worker *w, void *tstate, const char *payload, size_t len, uint32_t count,
                    uint64_t *records);

//  The tables' names, in s_op's order: one open for them all
static const char *const s_op_names[] = {"count", "sum", "min", "max", "mean", "distinct"};

static int s_open (weir_stage *st, void **state)
{
    const char *name = weir__callbacks_table (st->stage->callbacks)->name;
    s_op op = S_COUNT;
    while (op < S_DISTINCT && strcmp (s_op_names[op], name))
        op++;
    s_agg *agg = calloc (1, sizeof *agg);
    if (!agg)
        return weir_fail (st, "out of memory");
    agg->op = op;
    agg->changelog = strcmp (weir_prop (st, "emit", "end"), "epoch") == 0;
    agg->combine.combiner.value_size = sizeof (s_value);
    agg->combine.combiner.fold = s_combine_fold;
    agg->combine.combiner.pack = s_combine_pack;
    agg->combine.merge = s_merge;
    weir_prop (st, "key", NULL);
    const char *value = weir_prop (st, "value", op == S_DISTINCT ? "." : NULL);
    weir__err err;
    weir__err_init (&err);
    if (value && !(agg->value = weir__key_new (value, &err))) {
        free (agg);
        return weir_fail (st, "value=%s: %s", value, err.msg);
    }
    *state = agg;
    //  Its producers fold their records by key before they send them;
    //  they start after every stage opened.  Distinct values cannot be
    //  counted in part: a value in two batches is one
    if (op != S_DISTINCT)
        st->stage->combine = &agg->combine;
    return 0;
}

static void s_close (weir_stage *st, void *state)
{
    s_agg *agg = state;
    //  Closed once every thread is joined: no producer folds any more
    st->stage->combine = NULL;
    weir__key_destroy (&agg->value);
    free (agg);
}

static void s_thread_close (weir_stage *st, void *tstate)
{
    (void) st;
    s_thread *t = tstate;
    weir__buf_release (&t->key);
    weir__buf_release (&t->value);
    weir__buf_release (&t->member);
    free (t);
}

//  What the thread counted since it last said, to the stage's metrics
//  ('keys': those it holds, of the key groups it loaded; 'combined' and
//  'partials': what its producers folded), once an epoch: a metric is
//  found by name, too dear for every batch
static void s_say (weir_stage *st, s_thread *t)
{
    uint64_t keys = weir__keyed_count (st->keyed);
    if (keys != t->keys_said) {
        weir_metric_add (st, "keys", (double) keys - (double) t->keys_said);
        t->keys_said = keys;
    }
    if (t->partials) {
        weir_metric_add (st, "combined", (double) t->combined);
        weir_metric_add (st, "partials", (double) t->partials);
        t->combined = t->partials = 0;
    }
}

//  The thread's state is the engine's (st->keyed, pipeline/keyed.h):
//  each key group's table, loaded when first needed, stored at each
//  epoch's end
static int s_thread_open (weir_stage *st, void *state, void **tstate)
{
    s_thread *t = calloc (1, sizeof *t);
    if (!t)
        return weir_fail (st, "out of memory");
    t->agg = state;
    weir__buf_init (&t->key);
    weir__buf_init (&t->value);
    weir__buf_init (&t->member);
    *tstate = t;
    return 0;
}

//  A number of REC's value=, into *I (an integer that fits in 64 bits
//  signed) or *F; 0, or -1 when it is no number (REASON says why)
static int s_number (const s_agg *agg, const msgpack_object *rec, int64_t *i, double *f, int *is_float,
                     char *reason, size_t size)
{
    const msgpack_object *v = weir__key_find (agg->value, rec);
    *is_float = 0;
    if (v && v->type == MSGPACK_OBJECT_POSITIVE_INTEGER && v->via.u64 <= INT64_MAX)
        *i = (int64_t) v->via.u64;
    else if (v && v->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
        *i = v->via.i64;
    else if (v && v->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
        *f = (double) v->via.u64, *is_float = 1;
    else if (v && (v->type == MSGPACK_OBJECT_FLOAT64 || v->type == MSGPACK_OBJECT_FLOAT32)
             && !isnan (v->via.f64))
        *f = v->via.f64, *is_float = 1;
    else {
        snprintf (reason, size, "value=%s is %s, not a number", weir__key_path (agg->value),
                  !v ? "absent"
                  : v->type == MSGPACK_OBJECT_FLOAT64 || v->type == MSGPACK_OBJECT_FLOAT32
                      ? "NaN"
                      : weir_type_name (v));
        return -1;
    }
    return 0;
}

static double s_as_float (const s_value *v)
{
    return v->is_float ? v->a.f : (double) v->a.i;
}

//  Fold N values into V: their sum (for mean and sum), or their least or
//  greatest (min, max), as *I when an integer, else as F
static void s_fold (s_op op, s_value *v, int64_t i, double f, int is_float, uint64_t n)
{
    switch (op) {
    case S_COUNT:
    case S_DISTINCT:  //  counted in s_distinct, never folded
        break;
    case S_SUM: {
        int64_t sum;
        if (!is_float && !v->is_float && !__builtin_add_overflow (v->a.i, i, &sum)) {
            v->a.i = sum;
            break;
        }
        //  A float, or a sum past 64 bits: floats from here on
        if (!v->is_float)
            v->a.f = (double) v->a.i, v->is_float = 1;
        v->a.f += is_float ? f : (double) i;
        break;
    }
    case S_MIN:
    case S_MAX: {
        int less;
        if (v->n == 0)
            less = 1;
        else if (!is_float && !v->is_float)
            less = op == S_MIN ? i < v->a.i : i > v->a.i;
        else {
            double x = is_float ? f : (double) i;
            less = op == S_MIN ? x < s_as_float (v) : x > s_as_float (v);
        }
        if (less) {
            v->is_float = (uint8_t) is_float;
            if (is_float)
                v->a.f = f;
            else
                v->a.i = i;
        }
        break;
    }
    case S_MEAN:
        //  The sum as a float from the first value: a mean is one
        v->is_float = 1;
        v->a.f += is_float ? f : (double) i;
        break;
    }
    v->n += n;
}

//  The state of the key of LEN canonical bytes at KEY, of hash HASH, in
//  the thread of ST, marked changed; NULL when the job failed
static s_value *s_state (weir_stage *st, const char *key, size_t len, uint64_t hash)
{
    weir__err err;
    weir__err_init (&err);
    int fresh;
    s_value *v = weir__keyed_value (st->keyed, key, len, hash, sizeof *v, &fresh, &err);
    if (!v) {
        weir_fail (st, "%s", err.msg);
        return NULL;
    }
    v->changed = 1;
    return v;
}

//  distinct: REC's value= kept once per key, in the key's group (an entry
//  of its own: S_MEMBER, the key's bytes, the value's), and the key's
//  count of them
static int s_distinct (weir_stage *st, s_thread *t, const msgpack_object *rec)
{
    uint64_t hash, vhash;
    const char *key, *value;
    size_t len, vlen;
    if (weir__key_of (st->stage->key, rec, &t->key, &key, &len, &hash)
        || weir__key_of (t->agg->value, rec, &t->value, &value, &vlen, &vhash))
        return weir_fail (st, "out of memory");
    t->member.len = 0;
    if (weir__buf_putc (&t->member, (char) S_MEMBER) || weir__buf_append (&t->member, key, len)
        || weir__buf_append (&t->member, value, vlen))
        return weir_fail (st, "out of memory");
    weir__err err;
    weir__err_init (&err);
    int fresh;
    if (!weir__keyed_value_in (st->keyed, hash, t->member.data, t->member.len,
                               weir__key_hash (t->member.data, t->member.len), sizeof (s_value), &fresh,
                               &err))
        return weir_fail (st, "%s", err.msg);
    if (!fresh)
        return 0;
    //  The key's bytes are in the record or in t->key: both still hold
    s_value *v = s_state (st, key, len, hash);
    if (!v)
        return -1;
    v->n++;
    return 0;
}

static int s_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    s_thread *t = tstate;
    const s_agg *agg = t->agg;
    if (agg->op == S_DISTINCT)
        return s_distinct (st, t, rec);
    int64_t i = 0;
    double f = 0;
    int is_float = 0;
    char reason[160];
    if (agg->value && s_number (agg, rec, &i, &f, &is_float, reason, sizeof reason))
        return weir_reject (st, "%s", reason);
    uint64_t hash;
    const char *key;
    size_t len;
    if (weir__key_of (st->stage->key, rec, &t->key, &key, &len, &hash))
        return weir_fail (st, "out of memory");
    s_value *v = s_state (st, key, len, hash);
    if (!v)
        return -1;
    s_fold (agg->op, v, i, f, is_float, 1);
    return 0;
}

//  The combiner, in the producers' threads: REC folded into the batch's
//  partial aggregate of its key, unless its value is bad, which its
//  stage judges
static int s_combine_fold (const weir__combiner *c, const msgpack_object *rec, void *value)
{
    const s_agg *agg = (const s_agg *) c;
    int64_t i = 0;
    double f = 0;
    int is_float = 0;
    char reason[160];
    if (agg->value && s_number (agg, rec, &i, &f, &is_float, reason, sizeof reason))
        return 1;
    s_fold (agg->op, value, i, f, is_float, 1);
    return 0;
}

//  A partial aggregate as one record of the combined batch, a format of
//  this file's alone, as this process lays out memory: the key's length
//  (4 bytes) and hash (8), its canonical bytes, its state.  0, -1 out of
//  memory, 1 for a key whose records all went on as they were
static int s_combine_pack (const weir__combiner *c, const char *key, size_t len, uint64_t hash,
                           const void *value, weir__batch *b)
{
    (void) c;
    const s_value *v = value;
    uint32_t n = (uint32_t) len;
    if (v->n == 0)
        return 1;
    if (weir__batch_append (b, &n, 4) || weir__batch_append (b, &hash, 8) || weir__batch_append (b, key, len)
        || weir__batch_append (b, v, sizeof *v))
        return -1;
    return 0;
}

//  The COUNT partial aggregates its producers folded, into the thread's
//  state
static int s_merge (weir__worker *w, void *tstate, const char *payload, size_t len, uint32_t count,
                    uint64_t *records)
{
    s_thread *t = tstate;
    const s_agg *agg = t->agg;
    const char *p = payload, *end = p + len;
    for (uint32_t k = 0; k < count; k++) {
        uint32_t n;
        uint64_t hash;
        s_value partial;
        if (end - p < 12 || (memcpy (&n, p, 4), (size_t) (end - p - 12) < n + sizeof partial))
            return weir_fail (w, "a malformed batch of partial aggregates came from its producers");
        memcpy (&hash, p + 4, 8);
        const char *key = p + 12;
        memcpy (&partial, key + n, sizeof partial);
        p += 12 + n + sizeof partial;
        s_value *v = s_state (w, key, n, hash);
        if (!v)
            return -1;
        s_fold (agg->op, v, partial.is_float ? 0 : partial.a.i, partial.is_float ? partial.a.f : 0,
                partial.is_float, partial.n);
        *records += partial.n;
    }
    t->combined += *records;
    t->partials += count;
    return 0;
}

//  [key, value] for the key of LEN canonical bytes at KEY
static int s_emit (weir_stage *st, const s_agg *agg, const char *key, size_t len, const s_value *v)
{
    msgpack_packer *pk = weir_packer (st);
    msgpack_pack_array (pk, 2);
    //  The key's bytes are one msgpack object already
    pk->callback (pk->data, key, len);
    switch (agg->op) {
    case S_COUNT:
    case S_DISTINCT: msgpack_pack_uint64 (pk, v->n); break;
    case S_MEAN: msgpack_pack_double (pk, v->a.f / (double) v->n); break;
    default:
        if (v->is_float)
            msgpack_pack_double (pk, v->a.f);
        else
            msgpack_pack_int64 (pk, v->a.i);
    }
    return weir_emit_packed (st);
}

//  What s_emit_key needs
typedef struct {
    weir_stage *st;
    const s_agg *agg;
    int all;  //  every key, else those that changed in the epoch
} s_emitting;

static int s_emit_key (void *arg, const char *key, size_t len, void *value)
{
    const s_emitting *e = arg;
    s_value *v = value;
    if (len && (unsigned char) key[0] == S_MEMBER)
        return 0;
    int rc = (e->all || v->changed) ? s_emit (e->st, e->agg, key, len, v) : 0;
    v->changed = 0;
    return rc;
}

static int s_epoch_end (weir_stage *st, void *tstate, uint64_t epoch)
{
    (void) epoch;
    s_thread *t = tstate;
    const s_agg *agg = t->agg;
    //  The engine stores the groups that changed once this returns
    s_emitting e = {st, agg, !agg->changelog};
    if (agg->changelog || weir_last_epoch (st)) {
        weir__err err;
        weir__err_init (&err);
        int rc = weir__keyed_each (st->keyed, agg->changelog, s_emit_key, &e, &err);
        if (rc < 0 && err.code)
            return weir_fail (st, "%s", err.msg);
        if (rc)
            return -1;
    }
    s_say (st, t);
    return 0;
}

#define S_TABLE(NAME, DESCRIPTION, PROPS)                                                                    \
    const weir_processor weir__processor_##NAME = {                                                          \
        WEIR_PROCESSOR_INIT,                                                                                 \
        .name = #NAME,                                                                                       \
        .description = DESCRIPTION,                                                                          \
        .open = s_open,                                                                                      \
        .thread_open = s_thread_open,                                                                        \
        .process = s_process,                                                                                \
        .epoch_end = s_epoch_end,                                                                            \
        .thread_close = s_thread_close,                                                                      \
        .close = s_close,                                                                                    \
        .props = PROPS,                                                                                      \
    }

S_TABLE (count, "counts the records of each key (key=): [key, count] per key", s_count_props);
S_TABLE (sum, "sums value= per key (key=): [key, sum] per key", s_value_props);
S_TABLE (min, "the least value= per key (key=): [key, min] per key", s_value_props);
S_TABLE (max, "the greatest value= per key (key=): [key, max] per key", s_value_props);
S_TABLE (mean, "the mean of value= per key (key=): [key, mean] per key", s_value_props);
S_TABLE (distinct, "counts the distinct value= of each key (key=): [key, distinct values] per key",
         s_distinct_props);

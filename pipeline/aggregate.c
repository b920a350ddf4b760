/*  pipeline/aggregate.c - count, sum, min, max, mean and distinct per
    key, over the whole input or per tumbling window.  */
#include "config.h"
#include "pipeline/aggregate.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cluster/cluster.h"
#include "lib/key.h"
#include "lib/timestamp.h"
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

//  A key's state as its group keeps it (weir__keyed_value): count and
//  distinct keep their count alone, 8 bytes, with the changed flag in
//  the top bit (a count never reaches 2^63), which is most of the
//  memory of a word count's keys; the others a whole s_value.  A
//  checkpoint of a weir before that holds an s_value for every
//  aggregation: a job resumed from one keeps that size (s_agg.stored).
#define S_CHANGED (1ull << 63)

typedef struct {
    weir__combine combine;  //  first: the combiner the producers call back is the s_agg
    s_op op;
    size_t stored;     //  the size of a key's state as kept: 8, or sizeof (s_value)
    weir__key *value;  //  value=, NULL for count
    int changelog;     //  emit=epoch
    //  Tumbling windows (window=): a key's state is one entry per window,
    //  its key's bytes and then the window's start (8 bytes, this
    //  machine's order, milliseconds since 1970)
    int64_t window, lateness;  //  milliseconds; window 0: none
    weir__key *time;           //  time=, NULL: processing time
    char lateness_text[32];    //  lateness= as given, for messages
    //  The latest event time any thread of the stage saw, biased so that
    //  0 is none (s_biased): in the blob keys/STAGE/watermark, so that
    //  the checkpoint keeps it with the state of the windows
    uint64_t *latest;
} s_agg;

//  An instant as an unsigned number of the same order, 0 for none
static uint64_t s_biased (int64_t ms)
{
    return (uint64_t) ms ^ (1ull << 63);
}

typedef struct {
    s_agg *agg;
    weir__buf key;       //  the record's key, when not its own bytes
    weir__buf value;     //  distinct: its value= when not its own bytes
    weir__buf member;    //  distinct: the entry of a key's value
    uint64_t keys_said;  //  keys added to the stage's metric
    //  What the combiner saved, not yet added to the stage's metrics:
    //  the records that came folded, the partial aggregates they came as
    uint64_t combined, partials;
    weir__buf entry;         //  windows: the entry of the record's key and window
    int64_t next_close;      //  the end of its first open window (INT64_MIN: to find out)
    uint64_t late, windows;  //  not yet said: late records, windows emitted
} s_thread;

// clang-format off
#define S_WINDOW_PROPS                                                                                       \
    {"window", "", "tumbling windows of this length (60s, 5m, 1h, 250ms): one [key, value, start, end] "     \
                   "per key and window, once the window closes"},                                            \
    {"time", "", "the path of the event time that puts a record in its window (RFC 3339 or epoch "           \
                 "seconds); none: the time it is processed"},                                                \
    {"lateness", "0s", "how far behind the latest event time seen a record may be and still count; a "       \
                       "window closes once the latest time less this passes its end, and later records "     \
                       "are bad ('late')"}
// clang-format on

static const weir_property_info s_count_props[] = {
    {"key", NULL, "the path of the key it counts by ('.user', '[0]', '.' for the whole record)"},
    {"emit", "end",
     "end: one [key, count] per key when the input ends; epoch: at each epoch's end, those "
     "that changed in it (a changelog)"},
    S_WINDOW_PROPS,
    {NULL, NULL, NULL},
};

static const weir_property_info s_value_props[] = {
    {"key", NULL, "the path of the key it aggregates by ('.user', '[0]', '.' for the whole record)"},
    {"value", NULL, "the path of the number to aggregate ('.bytes', '[1]'); a record without one is bad"},
    {"emit", "end",
     "end: one [key, value] per key when the input ends; epoch: at each epoch's end, those "
     "that changed in it (a changelog)"},
    S_WINDOW_PROPS,
    {NULL, NULL, NULL},
};

static const weir_property_info s_distinct_props[] = {
    {"key", NULL, "the path of the key it counts the distinct values of ('.user', '[0]')"},
    {"value", ".", "the path of the values counted once each ('.ip'; '.', the whole record)"},
    {"emit", "end",
     "end: one [key, distinct values] per key when the input ends; epoch: at each epoch's end, those "
     "that changed in it (a changelog)"},
    S_WINDOW_PROPS,
    {NULL, NULL, NULL},
};

//  PROP (given, of ELEMENT) as a path; 0 or WEIR_EPROPERTY
static int s_check_path (const weir__prop *prop, const char *element, weir__err *err)
{
    weir__key *k = weir__key_new (prop->value, err);
    if (k) {
        weir__key_destroy (&k);
        return 0;
    }
    char was[sizeof err->msg];
    snprintf (was, sizeof was, "%s", err->msg);
    long at = err->offset;
    weir__err_set (err, WEIR_EPROPERTY, "%s: %s=%s: %s", element, prop->key, prop->value, was);
    err->offset = prop->value_offset < 0 ? -1 : prop->value_offset + prop->quoted + at;
    return err->code;
}

//  lateness=0 and 0s are no lateness, which a duration cannot be
static int s_lateness (const char *text, int64_t *ms)
{
    if (!strcmp (text, "0") || !strcmp (text, "0s") || !strcmp (text, "0ms")) {
        *ms = 0;
        return 0;
    }
    return weir__duration_parse (text, ms);
}

//  window=, time= and lateness= make sense together, or not at all
static int s_check_window (weir__props *props, const char *element, weir__err *err)
{
    weir__prop *window = weir__props_find (props, "window"), *time = weir__props_find (props, "time"),
               *lateness = weir__props_find (props, "lateness"), *emit = weir__props_find (props, "emit");
    int64_t ms;
    weir__prop *culprit = NULL;
    if (window && weir__duration_parse (window->value, &ms)) {
        weir__err_set (err, WEIR_EPROPERTY,
                       "%s: window=%s: expected a length of time, a number and a unit (250ms, 60s, 5m, 1h, "
                       "1d)",
                       element, window->value);
        culprit = window;
    }
    else if (lateness && s_lateness (lateness->value, &ms)) {
        weir__err_set (err, WEIR_EPROPERTY,
                       "%s: lateness=%s: expected a length of time, a number and a unit (0s, 250ms, 60s, 5m)",
                       element, lateness->value);
        culprit = lateness;
    }
    else if (!window && (time || lateness)) {
        culprit = time ? time : lateness;
        weir__err_set (err, WEIR_EPROPERTY, "%s: %s= is for windows, and there is no window= (window=60s)",
                       element, culprit->key);
    }
    else if (window && emit) {
        weir__err_set (err, WEIR_EPROPERTY,
                       "%s: emit=%s and window=%s: a window is emitted when it closes; give one of them",
                       element, emit->value, window->value);
        culprit = emit;
    }
    else if (window && lateness && !time) {
        weir__err_set (err, WEIR_EPROPERTY,
                       "%s: lateness= needs time=, the event time: by processing time no record is late",
                       element);
        culprit = lateness;
    }
    else if (time)
        return s_check_path (time, element, err);
    if (!culprit)
        return 0;
    err->offset = culprit->value_offset < 0 ? -1 : culprit->value_offset + culprit->quoted;
    return err->code;
}

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
    if (value && s_check_path (value, element, err))
        return err->code;
    return s_check_window (props, element, err);
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
    //  The checkpoint's size, when it holds the stage's state
    size_t saved = weir__keyed_saved_size (st->stage->run->workspace, st->stage->index);
    agg->stored = (op == S_COUNT || op == S_DISTINCT) && saved != sizeof (s_value) ? sizeof (uint64_t)
                                                                                   : sizeof (s_value);
    agg->changelog = strcmp (weir_prop (st, "emit", "end"), "epoch") == 0;
    agg->combine.combiner.fold = s_combine_fold;
    agg->combine.combiner.pack = s_combine_pack;
    agg->combine.merge = s_merge;
    weir_prop (st, "key", NULL);
    const char *value = weir_prop (st, "value", op == S_DISTINCT ? "." : NULL);
    const char *window = weir_prop (st, "window", ""), *time = weir_prop (st, "time", "");
    weir__err err;
    weir__err_init (&err);
    if (value && !(agg->value = weir__key_new (value, &err))) {
        free (agg);
        return weir_fail (st, "value=%s: %s", value, err.msg);
    }
    //  The properties were checked when the job was built
    agg->combine.combiner.counts = op == S_COUNT && !agg->value;
    //  A count's partial aggregate is its count alone, in half the
    //  producer's cache that a whole state would take (lib/partials.h)
    agg->combine.combiner.value_size = agg->combine.combiner.counts ? sizeof (uint64_t) : sizeof (s_value);
    if (*window) {
        char blob[64];
        weir__keyed_blob_name (st->stage->index, "watermark", blob, sizeof blob);
        weir__duration_parse (window, &agg->window);
        const char *lateness = weir_prop (st, "lateness", "0s");
        s_lateness (lateness, &agg->lateness);
        snprintf (agg->lateness_text, sizeof agg->lateness_text, "%s", lateness);
        int rc = 0;
        if (*time && !(agg->time = weir__key_new (time, &err)))
            rc = weir_fail (st, "time=%s: %s", time, err.msg);
        else if (!(agg->latest = weir_blob (st, blob, sizeof (uint64_t))))
            rc = WEIR_EPROCESSOR;  //  weir_blob said why
        //  In a job of several ranks the latest time is the latest any
        //  rank saw, agreed at each epoch's end (a rank's threads see the
        //  keys it owns only)
        else if (weir__workspace_add_reduce (st->stage->run->workspace, blob, 0, 1, sizeof (uint64_t),
                                             WEIR__REDUCE_U64, WEIR__REDUCE_MAX))
            rc = weir_fail (st, "out of memory");
        if (rc) {
            weir__key_destroy (&agg->value);
            weir__key_destroy (&agg->time);
            free (agg);
            return rc;
        }
    }
    *state = agg;
    //  Its producers fold their records by key before they send them;
    //  they start after every stage opened.  Distinct values cannot be
    //  counted in part: a value in two batches is one.  Nor windows yet:
    //  a producer would fold by key and window
    if (op != S_DISTINCT && !agg->window)
        st->stage->combine = &agg->combine;
    return 0;
}

static void s_close (weir_stage *st, void *state)
{
    s_agg *agg = state;
    //  Closed once every thread is joined: no producer folds any more
    st->stage->combine = NULL;
    weir__key_destroy (&agg->value);
    weir__key_destroy (&agg->time);
    free (agg);
}

static void s_thread_close (weir_stage *st, void *tstate)
{
    (void) st;
    s_thread *t = tstate;
    weir__buf_release (&t->key);
    weir__buf_release (&t->value);
    weir__buf_release (&t->member);
    weir__buf_release (&t->entry);
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
    if (t->windows) {
        weir_metric_add (st, "windows", (double) t->windows);
        t->windows = 0;
    }
    if (t->late) {
        weir_metric_add (st, "late", (double) t->late);
        t->late = 0;
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
    weir__buf_init (&t->entry);
    t->next_close = INT64_MIN;
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

//  A key's state as kept, STORED, into V, and back
static void s_get (const s_agg *agg, const void *stored, s_value *v)
{
    if (agg->stored == sizeof *v) {
        memcpy (v, stored, sizeof *v);
        return;
    }
    uint64_t n;
    memcpy (&n, stored, sizeof n);
    memset (v, 0, sizeof *v);
    v->n = n & ~S_CHANGED;
    v->changed = (n & S_CHANGED) != 0;
}

static void s_put (const s_agg *agg, const s_value *v, void *stored)
{
    if (agg->stored == sizeof *v) {
        memcpy (stored, v, sizeof *v);
        return;
    }
    uint64_t n = v->n | (v->changed ? S_CHANGED : 0);
    memcpy (stored, &n, sizeof n);
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
//  the thread of ST, as kept (s_get reads it): with START, of its window
//  that starts then.  NULL when the job failed
static void *s_state (weir_stage *st, s_thread *t, const char *key, size_t len, uint64_t hash,
                      const int64_t *start)
{
    weir__err err;
    weir__err_init (&err);
    int fresh;
    void *v;
    size_t size = t->agg->stored;
    if (!start)
        v = weir__keyed_value (st->keyed, key, len, hash, size, &fresh, &err);
    else {
        //  An entry of its own in the key's group: the key, the start
        t->entry.len = 0;
        if (weir__buf_append (&t->entry, key, len) || weir__buf_append (&t->entry, start, sizeof *start)) {
            weir_fail (st, "out of memory");
            return NULL;
        }
        v = weir__keyed_value_in (st->keyed, hash, t->entry.data, t->entry.len,
                                  weir__key_hash (t->entry.data, t->entry.len), size, &fresh, &err);
        if (v && *start + t->agg->window < t->next_close)
            t->next_close = *start + t->agg->window;
    }
    if (!v) {
        weir_fail (st, "%s", err.msg);
        return NULL;
    }
    return v;
}

//  N values folded into the state of a key (s_state's arguments), which
//  is marked changed: 0, or -1 when the job failed
static int s_update (weir_stage *st, s_thread *t, const char *key, size_t len, uint64_t hash,
                     const int64_t *start, int64_t i, double f, int is_float, uint64_t n)
{
    void *stored = s_state (st, t, key, len, hash, start);
    if (!stored)
        return -1;
    s_value v;
    s_get (t->agg, stored, &v);
    s_fold (t->agg->op, &v, i, f, is_float, n);
    v.changed = 1;
    s_put (t->agg, &v, stored);
    return 0;
}

//  Now, in milliseconds since 1970: processing time
static int64_t s_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

//  The event time time= reads in REC, into *MS: 0, or -1 when it has
//  none (REASON says why)
static int s_event_time (const s_agg *agg, const msgpack_object *rec, int64_t *ms, char *reason, size_t size)
{
    const msgpack_object *v = weir__key_find (agg->time, rec);
    const char *path = weir__key_path (agg->time);
    int bad = 0;
    if (!v)
        bad = snprintf (reason, size, "time=%s is absent", path);
    else if (v->type == MSGPACK_OBJECT_POSITIVE_INTEGER || v->type == MSGPACK_OBJECT_NEGATIVE_INTEGER
             || v->type == MSGPACK_OBJECT_FLOAT64 || v->type == MSGPACK_OBJECT_FLOAT32) {
        double seconds = v->type == MSGPACK_OBJECT_POSITIVE_INTEGER   ? (double) v->via.u64
                         : v->type == MSGPACK_OBJECT_NEGATIVE_INTEGER ? (double) v->via.i64
                                                                      : v->via.f64;
        if (weir__timestamp_of_seconds (seconds, ms))
            bad = snprintf (reason, size, "time=%s is %g, not a time in epoch seconds of years 0 to 9999",
                            path, seconds);
    }
    else if (v->type == MSGPACK_OBJECT_STR) {
        if (weir__timestamp_parse (v->via.str.ptr, v->via.str.size, ms))
            bad = snprintf (reason, size, "time=%s is '%.*s', not an RFC 3339 time (2026-11-27T17:55:00Z)",
                            path, v->via.str.size > 64 ? 64 : (int) v->via.str.size, v->via.str.ptr);
    }
    else
        bad = snprintf (reason, size, "time=%s is %s %s, not a time (RFC 3339 or epoch seconds)", path,
                        v->type == MSGPACK_OBJECT_ARRAY ? "an" : "a", weir_type_name (v));
    return bad ? -1 : 0;
}

//  The time from which the stage's windows that end by it are closed:
//  the latest event time seen less lateness=, or now
static int64_t s_watermark (const s_agg *agg)
{
    if (!agg->time)
        return s_now_ms ();
    uint64_t latest = __atomic_load_n (agg->latest, __ATOMIC_RELAXED);
    return latest ? (int64_t) (latest ^ (1ull << 63)) - agg->lateness : INT64_MIN;
}

//  The start of REC's window into *START, and the stage's watermark once
//  REC's time is seen into *WATERMARK: 0, 1 when the window closed
//  already (the record is late), -1 when REC has no time; REASON says why
static int s_window (s_thread *t, const msgpack_object *rec, int64_t *start, int64_t *watermark, char *reason,
                     size_t size)
{
    const s_agg *agg = t->agg;
    int64_t at;
    if (!agg->time)
        at = s_now_ms ();
    else if (s_event_time (agg, rec, &at, reason, size))
        return -1;
    int64_t into = at % agg->window;
    *start = at - (into < 0 ? into + agg->window : into);
    *watermark = at;
    if (!agg->time)
        return 0;
    *watermark = s_watermark (agg);
    if (*start + agg->window <= *watermark) {
        char when[32], from[32], to[32], mark[32];
        weir__timestamp_format (at, when, sizeof when);
        weir__timestamp_format (*start, from, sizeof from);
        weir__timestamp_format (*start + agg->window, to, sizeof to);
        weir__timestamp_format (*watermark, mark, sizeof mark);
        snprintf (reason, size,
                  "late: its time %s is in the window from %s to %s, closed at %s (the latest time seen less "
                  "lateness=%s)",
                  when, from, to, mark, agg->lateness_text);
        t->late++;
        return 1;
    }
    //  The latest time only moves forward, whichever thread sees it
    uint64_t latest = __atomic_load_n (agg->latest, __ATOMIC_RELAXED), mine = s_biased (at);
    while (
        mine > latest
        && !__atomic_compare_exchange_n (agg->latest, &latest, mine, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
    //  What the loop left in LATEST is another thread's when it was later
    *watermark = (int64_t) ((mine > latest ? mine : latest) ^ (1ull << 63)) - agg->lateness;
    return 0;
}

//  The windows of the thread that end by WATERMARK, emitted and
//  forgotten
static int s_close_windows (weir_stage *st, s_thread *t, int64_t watermark);

//  distinct: REC's value= kept once per key (and window), in the key's
//  group (an entry of its own: S_MEMBER, the key's bytes, the value's,
//  the window's start), and the key's count of them
static int s_distinct (weir_stage *st, s_thread *t, const msgpack_object *rec, const int64_t *start)
{
    uint64_t hash, vhash;
    const char *key, *value;
    size_t len, vlen;
    if (weir__key_of (st->stage->key, rec, &t->key, &key, &len, &hash)
        || weir__key_of (t->agg->value, rec, &t->value, &value, &vlen, &vhash))
        return weir_fail (st, "out of memory");
    t->member.len = 0;
    if (weir__buf_putc (&t->member, (char) S_MEMBER) || weir__buf_append (&t->member, key, len)
        || weir__buf_append (&t->member, value, vlen)
        || (start && weir__buf_append (&t->member, start, sizeof *start)))
        return weir_fail (st, "out of memory");
    weir__err err;
    weir__err_init (&err);
    int fresh;
    if (!weir__keyed_value_in (st->keyed, hash, t->member.data, t->member.len,
                               weir__key_hash (t->member.data, t->member.len), t->agg->stored, &fresh, &err))
        return weir_fail (st, "%s", err.msg);
    if (!fresh)
        return 0;
    //  The key's bytes are in the record or in t->key: both still hold
    return s_update (st, t, key, len, hash, start, 0, 0, 0, 1);
}

static int s_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    s_thread *t = tstate;
    const s_agg *agg = t->agg;
    char reason[320];
    int64_t start, watermark = INT64_MIN;
    const int64_t *window = NULL;
    if (agg->window) {
        if (s_window (t, rec, &start, &watermark, reason, sizeof reason))
            return weir_reject (st, "%s", reason);
        window = &start;
    }
    int rc = 0;
    if (agg->op == S_DISTINCT)
        rc = s_distinct (st, t, rec, window);
    else {
        int64_t i = 0;
        double f = 0;
        int is_float = 0;
        if (agg->value && s_number (agg, rec, &i, &f, &is_float, reason, sizeof reason))
            return weir_reject (st, "%s", reason);
        uint64_t hash;
        const char *key;
        size_t len;
        if (weir__key_of (st->stage->key, rec, &t->key, &key, &len, &hash))
            return weir_fail (st, "out of memory");
        if (s_update (st, t, key, len, hash, window, i, f, is_float, 1))
            return -1;
    }
    if (!rc && window && watermark >= t->next_close)
        rc = s_close_windows (st, t, watermark);
    return rc;
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
    //  A count's is its count alone, sent as a whole state
    s_value whole = {.n = 0}, *v = &whole;
    if (c->counts)
        memcpy (&whole.n, value, sizeof whole.n);
    else
        memcpy (&whole, value, sizeof whole);
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
        if (s_update (w, t, key, n, hash, NULL, partial.is_float ? 0 : partial.a.i,
                      partial.is_float ? partial.a.f : 0, partial.is_float, partial.n))
            return -1;
        *records += partial.n;
    }
    t->combined += *records;
    t->partials += count;
    return 0;
}

//  [key, value] for the key of LEN canonical bytes at KEY; with START,
//  [key, value, start, end] for its window that starts then
static int s_emit (weir_stage *st, const s_agg *agg, const char *key, size_t len, const s_value *v,
                   const int64_t *start)
{
    msgpack_packer *pk = weir_packer (st);
    msgpack_pack_array (pk, start ? 4 : 2);
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
    for (int end = 0; start && end < 2; end++) {
        char text[32];
        size_t n = weir__timestamp_format (*start + (end ? agg->window : 0), text, sizeof text);
        msgpack_pack_str (pk, n);
        msgpack_pack_str_body (pk, text, n);
    }
    return weir_emit_packed (st);
}

//  What s_close_window needs
typedef struct {
    weir_stage *st;
    s_thread *t;
    int64_t watermark;
    int64_t next_close;  //  of the windows left open
} s_closing;

//  An entry of a window that ends by the watermark: emitted (unless a
//  distinct value) and forgotten (1)
static int s_close_window (void *arg, const char *entry, size_t len, void *value)
{
    s_closing *c = arg;
    const s_agg *agg = c->t->agg;
    int64_t start;
    if (len < sizeof start)
        return weir_fail (c->st, "a malformed entry of a window in the keyed state");
    memcpy (&start, entry + len - sizeof start, sizeof start);
    if (start + agg->window > c->watermark) {
        if (start + agg->window < c->next_close)
            c->next_close = start + agg->window;
        return 0;
    }
    if ((unsigned char) entry[0] == S_MEMBER)
        return 1;
    c->t->windows++;
    s_value v;
    s_get (agg, value, &v);
    return s_emit (c->st, agg, entry, len - sizeof start, &v, &start) ? -1 : 1;
}

static int s_close_windows (weir_stage *st, s_thread *t, int64_t watermark)
{
    s_closing c = {st, t, watermark, INT64_MAX};
    weir__err err;
    weir__err_init (&err);
    int rc = weir__keyed_sweep (st->keyed, s_close_window, &c, &err);
    if (rc < 0 && err.code)
        return weir_fail (st, "%s", err.msg);
    if (rc)
        return -1;
    t->next_close = c.next_close;
    return 0;
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
    if (len && (unsigned char) key[0] == S_MEMBER)
        return 0;
    s_value v;
    s_get (e->agg, value, &v);
    int rc = (e->all || v.changed) ? s_emit (e->st, e->agg, key, len, &v, NULL) : 0;
    v.changed = 0;
    s_put (e->agg, &v, value);
    return rc;
}

static int s_epoch_end (weir_stage *st, void *tstate, uint64_t epoch)
{
    (void) epoch;
    s_thread *t = tstate;
    const s_agg *agg = t->agg;
    //  The engine stores the groups that changed once this returns
    s_emitting e = {st, agg, !agg->changelog};
    if (agg->window) {
        //  Windows another thread's times closed, or the clock; at the
        //  end of the input, every one
        int64_t watermark = weir_last_epoch (st) ? INT64_MAX : s_watermark (agg);
        if (watermark >= t->next_close && s_close_windows (st, t, watermark))
            return -1;
    }
    else if (agg->changelog || weir_last_epoch (st)) {
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

S_TABLE (
    count,
    "counts the records of each key (key=): [key, count] per key, or per key and tumbling window (window=)",
    s_count_props);
S_TABLE (sum, "sums value= per key (key=): [key, sum] per key, or per key and tumbling window (window=)",
         s_value_props);
S_TABLE (min, "the least value= per key (key=): [key, min] per key, or per key and tumbling window (window=)",
         s_value_props);
S_TABLE (max,
         "the greatest value= per key (key=): [key, max] per key, or per key and tumbling window (window=)",
         s_value_props);
S_TABLE (mean,
         "the mean of value= per key (key=): [key, mean] per key, or per key and tumbling window (window=)",
         s_value_props);
S_TABLE (distinct,
         "counts the distinct value= of each key (key=): [key, distinct values] per key, or per key and "
         "tumbling window (window=)",
         s_distinct_props);

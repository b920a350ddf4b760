/*  pipeline/route.c - the builtin processor route.  */
#include "config.h"
#include "pipeline/route.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/filter.h"
#include "pipeline/parse.h"
#include "pipeline/stage.h"

static const weir_property_info s_props[] = {
    {"BRANCH", NULL,
     "a branch and its condition, as in errors='.level == \"error\"' (one or more, tried in the order "
     "written; the first true sends the record down NAME.BRANCH); filter's expressions"},
    {"default", "", "the branch for records no condition is true of (NAME.DEFAULT)"},
    {"unmatched", "fail",
     "without default=, what a record no condition is true of is: fail (a bad record: on-error= decides) "
     "or drop (dropped, and counted in the metric 'unmatched')"},
    {NULL, NULL, NULL},
};

static int s_known (const weir_property_info *list, const char *key)
{
    for (size_t i = 0; list && list[i].name; i++)
        if (strcmp (list[i].name, key) == 0)
            return 1;
    return 0;
}

//  The last property KEY of PROPS, or NULL
static const weir__prop *s_find (const weir__props *props, const char *key)
{
    for (size_t i = props->count; i-- > 0;)
        if (strcmp (props->items[i].key, key) == 0)
            return &props->items[i];
    return NULL;
}

//  Whether property KEY of a route is a branch
static int s_branch (const char *key, const weir_property_info *common)
{
    return strcmp (key, "default") && strcmp (key, "unmatched") && !s_known (common, key);
}

static int s_check_branch (weir__props *props, size_t i, const char *element, weir__err *err)
{
    weir__prop *p = &props->items[i];
    if (strcmp (p->key, "expr") == 0 && p->key_offset == p->value_offset)
        return weir__err_at (err, WEIR_ESYNTAX, p->key_offset,
                             "%s: a condition goes with the branch it sends to, as in %s errors='.level == "
                             "\"error\"' default=rest",
                             element, element);
    if (!weir__parse_is_name (p->key))
        return weir__err_at (err, WEIR_EPROPERTY, p->key_offset,
                             "%s: '%s' cannot name a branch: a branch is a letter or '_' then letters, "
                             "digits, '_' or '-'",
                             element, p->key);
    for (size_t k = 0; k < i; k++)
        if (strcmp (props->items[k].key, p->key) == 0)
            return weir__err_at (err, WEIR_EPROPERTY, p->key_offset,
                                 "%s: branch '%s' is given twice; one condition per branch (use 'or' to "
                                 "join two)",
                                 element, p->key);
    weir__expr *e;
    int rc = weir__filter_parse (p, element, &e, err);
    weir__expr_destroy (&e);
    return rc;
}

int weir__route_check (weir__props *props, const char *element, const weir_property_info *common, weir__err *err)
{
    size_t branches = 0;
    const weir__prop *def = weir__props_find (props, "default");
    const weir__prop *unmatched = weir__props_find (props, "unmatched");
    for (size_t i = 0; i < props->count; i++) {
        if (!s_branch (props->items[i].key, common))
            continue;
        int rc = s_check_branch (props, i, element, err);
        if (rc)
            return rc;
        if (def && strcmp (def->value, props->items[i].key) == 0)
            return weir__err_at (err, WEIR_EPROPERTY, def->value_offset,
                                 "%s: default=%s names a branch that has a condition; the default branch "
                                 "takes what no condition is true of: give it a name of its own",
                                 element, def->value);
        branches++;
    }
    if (branches == 0)
        return weir__err_at (err, WEIR_EPROPERTY, -1,
                             "%s: no branch: give each as BRANCH='CONDITION', as in %s errors='.level == "
                             "\"error\"' default=rest, and start it with NAME.BRANCH",
                             element, element);
    if (branches + (def != NULL) > WEIR__MAX_PORTS)
        return weir__err_at (err, WEIR_EPROPERTY, -1, "%s: more than %d branches", element, WEIR__MAX_PORTS);
    if (def && !weir__parse_is_name (def->value))
        return weir__err_at (err, WEIR_EPROPERTY, def->value_offset,
                             "%s: default='%s' cannot name a branch: a branch is a letter or '_' then "
                             "letters, digits, '_' or '-'",
                             element, def->value);
    if (unmatched && strcmp (unmatched->value, "fail") && strcmp (unmatched->value, "drop"))
        return weir__err_at (err, WEIR_EPROPERTY, unmatched->value_offset,
                             "%s: unmatched='%s' is neither fail nor drop", element, unmatched->value);
    if (unmatched && def)
        return weir__err_at (err, WEIR_EPROPERTY, unmatched->key_offset,
                             "%s: unmatched= and default= both say where unmatched records go: give one",
                             element);
    return 0;
}

int weir__route_ports (const weir__props *props, const weir_property_info *common, const char **names,
                       size_t *count)
{
    *count = 0;
    for (size_t i = 0; i < props->count && *count < WEIR__MAX_PORTS; i++)
        if (s_branch (props->items[i].key, common))
            names[(*count)++] = props->items[i].key;
    const weir__prop *def = s_find (props, "default");
    if (def && *count < WEIR__MAX_PORTS)
        names[(*count)++] = def->value;
    return 0;
}

//  The stage's conditions, one per port but the default's
typedef struct {
    weir__expr **exprs;
    size_t count;
    //  Every condition PATH == "text" on one PATH: looked up once
    weir__expr_switch *fast;
    long fallback;  //  the default's port, or -1
    int drop;       //  unmatched=drop
} s_route;

typedef struct {
    const s_route *route;
    weir__expr_scratch *scratch;  //  [count]
    uint64_t mismatch, said_mismatch, unmatched, said_unmatched;
} s_thread;

static void s_route_free (s_route *r)
{
    if (r)
        weir__expr_switch_destroy (&r->fast);
    for (size_t i = 0; r && i < r->count; i++)
        weir__expr_destroy (&r->exprs[i]);
    if (r)
        free (r->exprs);
    free (r);
}

//  The conditions, by the stage's ports: a port with a property of its
//  name is a branch, the one without is the default's
static int s_open (weir_stage *st, void **state)
{
    const weir__stage *stage = st->stage;
    s_route *r = calloc (1, sizeof *r);
    if (!r || !(r->exprs = calloc (stage->nports ? stage->nports : 1, sizeof *r->exprs))) {
        free (r);
        return weir_fail (st, "out of memory");
    }
    r->fallback = -1;
    r->drop = strcmp (weir_prop (st, "unmatched", "fail"), "drop") == 0;
    weir_prop (st, "default", NULL);
    for (size_t i = 0; i < stage->nports; i++) {
        const weir__prop *p = s_find (&stage->props, stage->ports[i]);
        if (!p) {
            r->fallback = (long) i;
            continue;
        }
        weir_prop (st, p->key, NULL);
        weir__err err;
        weir__err_init (&err);
        if (weir__expr_new (p->value, &r->exprs[r->count], &err)) {
            s_route_free (r);
            return weir_fail (st, "%s", err.msg);
        }
        r->count++;
    }
    r->fast = weir__expr_switch_new ((const weir__expr *const *) r->exprs, r->count);
    *state = r;
    return 0;
}

static int s_thread_open (weir_stage *st, void *state, void **tstate)
{
    s_route *r = state;
    s_thread *t = calloc (1, sizeof *t);
    if (t && !(t->scratch = calloc (r->count, sizeof *t->scratch))) {
        free (t);
        t = NULL;
    }
    for (size_t i = 0; t && i < r->count; i++)
        if (weir__expr_scratch_init (r->exprs[i], &t->scratch[i])) {
            while (i-- > 0)
                weir__expr_scratch_release (&t->scratch[i]);
            free (t->scratch);
            free (t);
            t = NULL;
        }
    if (!t)
        return weir_fail (st, "out of memory");
    t->route = r;
    *tstate = t;
    return 0;
}

//  The counts not yet added to the metrics, added: a metric is shared by
//  the stage's threads and found by name, too dear for every record
static void s_say (weir_stage *st, s_thread *t)
{
    uint64_t mismatch = 0;
    for (size_t i = 0; i < t->route->count; i++)
        mismatch += t->scratch[i].mismatch;
    if (mismatch != t->said_mismatch) {
        weir_metric_add (st, "mismatched", (double) (mismatch - t->said_mismatch));
        t->said_mismatch = mismatch;
    }
    if (t->unmatched != t->said_unmatched) {
        weir_metric_add (st, "unmatched", (double) (t->unmatched - t->said_unmatched));
        t->said_unmatched = t->unmatched;
    }
}

static int s_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    s_thread *t = tstate;
    const s_route *r = t->route;
    if (r->fast) {
        //  Its mismatches count with the first condition's
        size_t i = weir__expr_switch_eval (r->fast, rec, &t->scratch[0].mismatch);
        if (i < r->count)
            return weir_emit_to (st, (unsigned) i, rec);
    }
    else
        for (size_t i = 0; i < r->count; i++)
            if (weir__expr_eval (r->exprs[i], rec, &t->scratch[i]))
                return weir_emit_to (st, (unsigned) i, rec);
    if (r->fallback >= 0)
        return weir_emit_to (st, (unsigned) r->fallback, rec);
    if (!r->drop)
        return weir_reject (st, "no branch's condition is true of it (default=BRANCH would take it, "
                                "unmatched=drop drop it)");
    //  Every thousand, so that the progress line sees them grow
    if (++t->unmatched - t->said_unmatched >= 1000)
        s_say (st, t);
    return 0;
}

static int s_epoch_end (weir_stage *st, void *tstate, uint64_t epoch)
{
    (void) epoch;
    s_say (st, tstate);
    return 0;
}

static void s_thread_close (weir_stage *st, void *tstate)
{
    (void) st;
    s_thread *t = tstate;
    for (size_t i = 0; i < t->route->count; i++)
        weir__expr_scratch_release (&t->scratch[i]);
    free (t->scratch);
    free (t);
}

static void s_close (weir_stage *st, void *state)
{
    (void) st;
    s_route_free (state);
}

const weir_processor weir__processor_route = {
    WEIR_PROCESSOR_INIT,
    .name = "route",
    .description = "sends each record down the branch of the first condition true of it, as in route "
                   "name=r errors='.level == \"error\"' default=rest  r.errors ! ...  r.rest ! ...",
    .open = s_open,
    .thread_open = s_thread_open,
    .process = s_process,
    .epoch_end = s_epoch_end,
    .thread_close = s_thread_close,
    .close = s_close,
    .props = s_props,
};

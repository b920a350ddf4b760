/*  pipeline/filter.c - the builtin processor filter.  */
#include "config.h"
#include "pipeline/filter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/expr.h"

static const weir_property_info s_props[] = {
    {"expr", NULL,
     "the condition a record must meet to be kept (required; or quoted right after 'filter'): paths (.a.b, "
     "[0], . for the record), numbers, quoted texts, true, false, null, == != < <= > >=, =~ (a PCRE2 regular "
     "expression), exists, and, or, not, ( ); a missing field is false"},
    {NULL, NULL, NULL},
};

int weir__filter_check (weir__props *props, const char *element, const weir_property_info *common, weir__err *err)
{
    (void) common;
    const weir__prop *p = weir__props_find (props, "expr");
    if (!p)
        return weir__err_set (err, WEIR_EPROPERTY,
                              "%s: a condition is required, as in %s '.level == \"error\"' (or expr=...)", element,
                              element);
    weir__expr *e;
    int rc = weir__filter_parse (p, element, &e, err);
    weir__expr_destroy (&e);
    return rc;
}

int weir__filter_parse (const weir__prop *p, const char *element, weir__expr **out, weir__err *err)
{
    int rc = weir__expr_new (p->value, out, err);
    if (rc == WEIR_ESYNTAX) {
        long at = err->offset;
        weir__err_prefix (err, "%s: ", element);
        err->offset = p->value_offset < 0 ? -1 : p->value_offset + (p->quoted ? 1 : 0) + at;
    }
    return rc;
}

typedef struct {
    const weir__expr *expr;  //  the stage's, shared
    weir__expr_scratch scratch;
    uint64_t said;  //  mismatches added to the metric
} s_thread;

static int s_open (weir_stage *st, void **state)
{
    weir__err err;
    weir__err_init (&err);
    weir__expr *e;
    if (weir__expr_new (weir_prop (st, "expr", ""), &e, &err))
        return weir_fail (st, "%s", err.msg);
    *state = e;
    return 0;
}

static int s_thread_open (weir_stage *st, void *state, void **tstate)
{
    s_thread *t = calloc (1, sizeof *t);
    if (!t || weir__expr_scratch_init (state, &t->scratch)) {
        free (t);
        return weir_fail (st, "out of memory");
    }
    t->expr = state;
    *tstate = t;
    return 0;
}

//  The mismatches not yet added to the metric, added: a metric is shared
//  by the stage's threads and found by name, too dear for every record
static void s_say (weir_stage *st, s_thread *t)
{
    if (t->scratch.mismatch != t->said) {
        weir_metric_add (st, "mismatched", (double) (t->scratch.mismatch - t->said));
        t->said = t->scratch.mismatch;
    }
}

static int s_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    s_thread *t = tstate;
    int keep = weir__expr_eval (t->expr, rec, &t->scratch);
    //  Every thousand, so that the progress line sees them grow
    if (t->scratch.mismatch - t->said >= 1000)
        s_say (st, t);
    return keep ? weir_emit (st, rec) : 0;
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
    weir__expr_scratch_release (&t->scratch);
    free (t);
}

static void s_close (weir_stage *st, void *state)
{
    (void) st;
    weir__expr *e = state;
    weir__expr_destroy (&e);
}

const weir_processor weir__processor_filter = {
    WEIR_PROCESSOR_INIT,
    .name = "filter",
    .description = "keeps the records its expression is true of, as in filter '.level == \"error\"'",
    .open = s_open,
    .thread_open = s_thread_open,
    .process = s_process,
    .epoch_end = s_epoch_end,
    .thread_close = s_thread_close,
    .close = s_close,
    .props = s_props,
};

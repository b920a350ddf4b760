/*  pipeline/change.c - the first difference between two pipelines, shown
    with carets.  */
#include "config.h"
#include "pipeline/change.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/parse.h"

//  One side of the comparison: an element as written
typedef struct {
    const char *name;
    long offset;
    const weir__props *props;
} s_element;

//  What differs first, and where on each side (-1: nowhere to point)
typedef struct {
    char what[400];
    long was_at, now_at;
} s_diff;

int weir__change_free (const char *key)
{
    return !strcmp (key, "threads") || !strcmp (key, "capacity") || !strcmp (key, "batch")
           || !strcmp (key, "linger") || !strcmp (key, "fuse");
}

//  Where elements connect: the one list
static const char *const s_places[] = {"brokers", "conninfo"};
#define S_NPLACES (sizeof s_places / sizeof s_places[0])

//  A property whose values messages never show: a connection string may
//  hold a password
static int s_secret (const char *key)
{
    return !strcmp (key, "conninfo");
}

int weir__change_place (const char *key)
{
    for (size_t k = 0; k < S_NPLACES; k++)
        if (!strcmp (key, s_places[k]))
            return 1;
    return 0;
}

int weir__change_older_shape (const char *shape, size_t len)
{
    //  A property of the shape is " KEY=": the shape of now has no place
    for (size_t i = 0; i < len; i++)
        for (size_t k = 0; k < S_NPLACES && shape[i] == ' '; k++) {
            size_t m = strlen (s_places[k]);
            if (len - i > m + 1 && memcmp (shape + i + 1, s_places[k], m) == 0 && shape[i + 1 + m] == '=')
                return 1;
        }
    return 0;
}

//  Which properties a comparison looks at
enum {
    S_COMPUTES,  //  what the stage computes: the shape's
    S_OLDER,     //  and where it connects, as older shapes had it
    S_PLACES,    //  where it connects alone
};

static int s_looked_at (const char *key, int which)
{
    if (which == S_PLACES)
        return weir__change_place (key);
    return !weir__change_free (key) && (which == S_OLDER || !weir__change_place (key));
}

//  P's properties that WHICH looks at, in key order (stable, as
//  weir__build_shape sorts them), into OUT; how many.
static size_t s_sorted (const weir__props *p, const weir__prop **out, int which)
{
    size_t n = 0;
    for (size_t k = 0; k < p->count; k++) {
        if (!s_looked_at (p->items[k].key, which))
            continue;
        size_t at = n++;
        while (at > 0 && strcmp (out[at - 1]->key, p->items[k].key) > 0) {
            out[at] = out[at - 1];
            at--;
        }
        out[at] = &p->items[k];
    }
    return n;
}

//  The first property that differs between A (was) and B (now), stage
//  I, into D: 1 if one does, 0 if not, -1 when out of memory.
static int s_props (const s_element *a, const s_element *b, size_t i, int which, s_diff *d)
{
    const weir__prop **x = malloc ((a->props->count + 1) * sizeof *x);
    const weir__prop **y = malloc ((b->props->count + 1) * sizeof *y);
    if (!x || !y) {
        free (x);
        free (y);
        return -1;
    }
    size_t nx = s_sorted (a->props, x, which), ny = s_sorted (b->props, y, which), k = 0;
    while (k < nx && k < ny && !strcmp (x[k]->key, y[k]->key) && !strcmp (x[k]->value, y[k]->value))
        k++;
    int found = 1;
    int order = k < nx && k < ny ? strcmp (x[k]->key, y[k]->key) : k < nx ? -1 : k < ny ? 1 : 0;
    if (k < nx && k < ny && order == 0) {
        if (s_secret (y[k]->key))
            snprintf (d->what, sizeof d->what, "%s (stage %zu): conninfo= changed (its values are not shown)",
                      b->name, i + 1);
        else
            snprintf (d->what, sizeof d->what, "%s (stage %zu): %s= was '%.100s', is now '%.100s'", b->name,
                      i + 1, y[k]->key, x[k]->value, y[k]->value);
        d->was_at = x[k]->value_offset;
        d->now_at = y[k]->value_offset;
    } else if (order < 0) {
        //  X's key comes first: B lacks it
        snprintf (d->what, sizeof d->what, "%s (stage %zu): %s=%.100s was removed", b->name, i + 1, x[k]->key,
                  x[k]->value);
        d->was_at = x[k]->key_offset;
        d->now_at = b->offset;
    } else if (order > 0) {
        snprintf (d->what, sizeof d->what, "%s (stage %zu): %s=%.100s was added", b->name, i + 1, y[k]->key,
                  y[k]->value);
        d->was_at = a->offset;
        d->now_at = y[k]->key_offset;
    } else
        found = 0;
    free (x);
    free (y);
    return found;
}

//  The first difference between the elements of WAS and NOW into D: 1,
//  0 when they are the same, -1 when out of memory.
static int s_first (const s_element *was, size_t nwas, long was_end, const s_element *now, size_t nnow,
                    long now_end, int which, s_diff *d)
{
    for (size_t i = 0; i < nwas || i < nnow; i++) {
        if (i >= nnow) {
            snprintf (d->what, sizeof d->what, "stage %zu, %s, was removed", i + 1, was[i].name);
            d->was_at = was[i].offset;
            d->now_at = now_end;
            return 1;
        }
        if (i >= nwas) {
            snprintf (d->what, sizeof d->what, "stage %zu, %s, was added", i + 1, now[i].name);
            d->was_at = was_end;
            d->now_at = now[i].offset;
            return 1;
        }
        if (strcmp (was[i].name, now[i].name)) {
            snprintf (d->what, sizeof d->what, "stage %zu was %s, is now %s", i + 1, was[i].name, now[i].name);
            d->was_at = was[i].offset;
            d->now_at = now[i].offset;
            return 1;
        }
        int rc = s_props (&was[i], &now[i], i, which, d);
        if (rc)
            return rc;
    }
    return 0;
}

//  "  LABEL TEXT\n" and a caret under byte AT of it, into OUT (of SIZE,
//  USED so far): a window of the text around AT when it is long.
static size_t s_show (char *out, size_t size, size_t used, const char *label, const char *text, size_t len,
                      long at)
{
    enum { WIDTH = 100 };
    size_t from = 0, to = len;
    if (at >= 0 && (size_t) at > len)
        at = (long) len;
    if (len > WIDTH) {
        size_t middle = at >= 0 ? (size_t) at : 0;
        from = middle > WIDTH / 2 ? middle - WIDTH / 2 : 0;
        to = from + WIDTH < len ? from + WIDTH : len;
    }
    const char *before = from ? "..." : "", *after = to < len ? "..." : "";
    if (used >= size)
        return used;
    used += (size_t) snprintf (out + used, size - used, "\n  %s %s", label, before);
    for (size_t i = from; i < to && used + 1 < size; i++) {
        char c = text[i];
        out[used++] = c == '\n' || c == '\t' || c == '\r' ? ' ' : c;
        out[used] = '\0';
    }
    if (used < size)
        used += (size_t) snprintf (out + used, size - used, "%s", after);
    if (at >= 0 && used < size)
        used += (size_t) snprintf (out + used, size - used, "\n  %*s^", (int) (strlen (label) + 1 + strlen (before)
                                                                              + (size_t) at - from), "");
    return used;
}

//  The value of every conninfo= of PROPS in TEXT (of LEN bytes) as stars:
//  a connection string may hold a password, and messages show
//  descriptions
static void s_hide (char *text, size_t len, const weir__props *props)
{
    for (size_t k = 0; text && k < props->count; k++) {
        const weir__prop *p = &props->items[k];
        if (!s_secret (p->key) || p->value_offset < 0)
            continue;
        size_t from = (size_t) p->value_offset + (p->quoted ? 1 : 0), n = strlen (p->value);
        for (size_t i = from; i < len && i < from + n; i++)
            text[i] = '*';
    }
}

//  Both sides of a comparison, element by element: the old text's
//  (SPEC, parsed from it) and the resolved STAGES'.  0, or -1 when out of
//  memory
typedef struct {
    s_element *was, *now;
} s_sides;

static int s_sides_of (const weir__spec *spec, const weir__stages *stages, s_sides *sides)
{
    sides->was = calloc (spec->count + 1, sizeof *sides->was);
    sides->now = calloc (stages->count + 1, sizeof *sides->now);
    if (!sides->was || !sides->now)
        return -1;
    for (size_t i = 0; i < spec->count; i++)
        sides->was[i] = (s_element){spec->items[i].name, spec->items[i].name_offset, &spec->items[i].props};
    for (size_t i = 0; i < stages->count; i++)
        sides->now[i] =
            (s_element){stages->items[i]->name, stages->items[i]->name_offset, &stages->items[i]->props};
    return 0;
}

static void s_sides_release (s_sides *sides)
{
    free (sides->was);
    free (sides->now);
}

int weir__change_explain (const char *was, size_t len, const char *now, const weir__stages *stages,
                          uint64_t epoch, const char *dir, int older, weir__err *err)
{
    char *text = malloc (len + 1);
    if (!text)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    memcpy (text, was, len);
    text[len] = '\0';
    char *shown = now ? strdup (now) : NULL;  //  NOW, conninfo= hidden
    if (now && !shown) {
        free (text);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    //  An old text that no longer parses (a job of an older weir, a pipe
    //  built in code) is shown as it is, without a caret
    weir__spec spec;
    weir__spec_init (&spec);
    weir__err ignored;
    weir__err_init (&ignored);
    s_diff d = {"", -1, -1};
    int found = 0, parsed = 0, moved = 0;
    if (weir__parse (text, &spec, &ignored) == 0) {
        parsed = 1;
        s_sides sides;
        if (s_sides_of (&spec, stages, &sides) == 0) {
            const s_element *a = sides.was, *b = sides.now;
            long now_end = now ? (long) strlen (now) : -1;
            found = s_first (a, spec.count, (long) len, b, stages->count, now_end, S_COMPUTES, &d);
            for (size_t i = 0; i < spec.count; i++)
                s_hide (text, len, &spec.items[i].props);
            for (size_t i = 0; shown && i < stages->count; i++)
                s_hide (shown, strlen (shown), &stages->items[i]->props);
            //  A checkpoint of an older weir, whose shape has where the
            //  elements connect: a place changed, which it cannot allow
            if (!found && older)
                moved = found = s_first (a, spec.count, (long) len, b, stages->count, now_end, S_OLDER, &d);
        }
        else
            found = -1;
        s_sides_release (&sides);
    }
    weir__spec_release (&spec);
    if (found < 0) {
        free (text);
        free (shown);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    char msg[sizeof err->msg];
    size_t used = (size_t) snprintf (msg, sizeof msg, "checkpoint %" PRIu64 " of '%.200s' was written by another pipeline",
                                     epoch, dir);
    if (found)
        used += (size_t) snprintf (msg + used, sizeof msg - used, ": %s", d.what);
    else if (parsed)
        //  The old text parsed, and every element is the same: the links
        //  differ (pipeline/graph.h)
        used += (size_t) snprintf (msg + used, sizeof msg - used,
                                   ": the same elements, linked otherwise (a branch starts or ends elsewhere)");
    //  Carets only into a text the offsets point into
    used = s_show (msg, sizeof msg, used, "was:", text, len, found ? d.was_at : -1);
    if (shown)
        used = s_show (msg, sizeof msg, used, "now:", shown, strlen (shown), found ? d.now_at : -1);
    if (used < sizeof msg && moved > 0)
        snprintf (msg + used, sizeof msg - used,
                  "\nan older weir wrote this checkpoint with where its elements connect in what must not "
                  "change: resume once with the old value, and the checkpoints after it let it change");
    else if (used < sizeof msg)
        snprintf (msg + used, sizeof msg - used,
                  "\nonly threads=, capacity=, batch=, linger=, fuse= and where elements connect (brokers=, "
                  "conninfo=) "
                  "may change on resume; to run the new pipeline, give it another --checkpoint directory");
    free (text);
    free (shown);
    return weir__err_set (err, WEIR_ESTRUCTURE, "%s", msg);
}

int weir__change_moved (const char *was, size_t len, const weir__stages *stages, char *what, size_t size)
{
    char *text = malloc (len + 1);
    if (!text)
        return 0;
    memcpy (text, was, len);
    text[len] = '\0';
    weir__spec spec;
    weir__spec_init (&spec);
    weir__err ignored;
    weir__err_init (&ignored);
    s_diff d = {"", -1, -1};
    int found = 0;
    if (weir__parse (text, &spec, &ignored) == 0 && spec.count == stages->count) {
        s_sides sides;
        if (s_sides_of (&spec, stages, &sides) == 0)
            found =
                s_first (sides.was, spec.count, (long) len, sides.now, stages->count, -1, S_PLACES, &d) > 0;
        s_sides_release (&sides);
    }
    weir__spec_release (&spec);
    free (text);
    if (found)
        snprintf (what, size, "%s", d.what);
    return found;
}

/*  pipeline/build.c - parsing descriptions, resolving elements and plugins.  */
#include "config.h"
#include "pipeline/build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/change.h"
#include "pipeline/elements.h"
#include "pipeline/graph.h"
#include "pipeline/parse.h"
#include "pipeline/loader.h"

int weir__build_parse (weir__stages *stages, const char *text, weir__err *err)
{
    //  Offsets of earlier stages pointed into another text
    for (size_t i = 0; i < stages->count; i++) {
        weir__stage *stage = stages->items[i];
        stage->name_offset = -1;
        stage->glued = -1;
        stage->follows = NULL;
        for (size_t k = 0; k < stage->props.count; k++)
            stage->props.items[k].key_offset = stage->props.items[k].value_offset = -1;
    }
    weir__spec spec;
    weir__spec_init (&spec);
    size_t first = stages->count;
    int rc = weir__parse (text, &spec, err);
    for (size_t i = 0; !rc && i < spec.count; i++) {
        weir__stage *stage = weir__stages_append (stages, spec.items[i].name, spec.items[i].name_offset);
        if (!stage) {
            rc = weir__err_set (err, WEIR_ENOMEM, "out of memory");
            break;
        }
        stage->glued = spec.items[i].glued;
        stage->follows = spec.items[i].follows == SIZE_MAX ? NULL : stages->items[first + spec.items[i].follows];
        //  Move the properties over
        stage->props = spec.items[i].props;
        weir__props_init (&spec.items[i].props);
    }
    if (!rc)
        rc = weir__graph_add_spec (stages, first, &spec, err);
    weir__spec_release (&spec);
    return rc;
}

static int s_add_props (weir__stage *stage, const char *const *props, weir__err *err)
{
    for (size_t i = 0; props && props[i]; i++) {
        int rc = weir__props_add_text (&stage->props, props[i], err);
        if (rc) {
            weir__err_prefix (err, "%s: ", stage->name);
            return rc;
        }
    }
    return 0;
}

int weir__build_add (weir__stages *stages, const char *element, const char *const *props, weir__err *err)
{
    weir__stage *stage = weir__stages_append (stages, element, -1);
    if (!stage)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    int rc = weir__graph_add_next (stages, err);
    return rc ? rc : s_add_props (stage, props, err);
}

int weir__build_add_processor (weir__stages *stages, const weir_processor *proc, void *user,
                               const char *const *props, weir__err *err)
{
    //  The name is read before the ABI is checked: it is all a message has
    const char *name = proc->abi == WEIR_PLUGIN_ABI && proc->name ? proc->name : "processor";
    weir_processor table;
    //  A table in code is the program's own processor, not a plugin
    if (weir__processor_check (proc, name, &table, err))
        return err->code = WEIR_EPROCESSOR;
    weir__stage *stage = weir__stages_append (stages, name, -1);
    if (!stage || !(stage->callbacks = weir__callbacks_new (&table, NULL, user, 0)))
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    stage->kind = WEIR_ELEMENT_PROCESSOR;
    int rc = weir__graph_add_next (stages, err);
    return rc ? rc : s_add_props (stage, props, err);
}

//  The place of STAGE in the graph, a straight LINE or not: what it must
//  be, and how to say where.  Nothing feeds a reader; a writer feeds
//  nothing.
static weir_element_kind s_wanted (const weir__stage *stage, int line, const char **place)
{
    if (stage->nins == 0) {
        *place = line ? "the first element" : "an element that starts a branch";
        return WEIR_ELEMENT_READER;
    }
    if (stage->nouts == 0) {
        *place = line ? "the last element" : "an element that ends a branch";
        return WEIR_ELEMENT_WRITER;
    }
    *place = line ? "the middle element" : "an element inside a branch";
    return WEIR_ELEMENT_PROCESSOR;
}

//  A builtin: its role.
static int s_builtin (weir__stage *stage, const weir__element *e, weir__err *err)
{
    if (e->reader)
        stage->input = weir__input_new (e->reader);
    else if (e->writer)
        stage->output = weir__output_new (e->writer);
    else
        stage->callbacks = weir__callbacks_new (e->processor, NULL, NULL, e->passthrough);
    stage->fans_out = e->fans_out;
    return stage->input || stage->output || stage->callbacks
               ? 0
               : weir__err_set (err, WEIR_ENOMEM, "out of memory");
}

//  No builtin of the kind its place wants: a plugin, by path or by name,
//  or a mistake.  An unknown name is said with the builtin it most likely
//  mistypes, last.
static int s_not_builtin (weir__stage *stage, weir_element_kind want, const char *place, weir__err *err)
{
    const weir__element *other = weir__element_find (stage->name, -1);
    char builtins[900] = "";
    if (want == WEIR_ELEMENT_PROCESSOR && !other) {
        weir_plugin *plugin = NULL;
        int rc = weir__plugin_load (stage->name, &plugin, err);
        if (!rc && !(stage->callbacks = weir__callbacks_new (weir_plugin_table (plugin), &plugin, NULL, 0)))
            rc = weir__err_set (err, WEIR_ENOMEM, "out of memory");
        weir_plugin_destroy (&plugin);
        if (rc != WEIR_EUNKNOWN)
            return rc;
    }
    else if (weir__plugin_is_path (stage->name))
        return weir__stage_error (
            stage, err, WEIR_ESTRUCTURE, -1,
            "'%s' is a plugin, and plugins are processors, but %s must be a %s", stage->name,
            place, weir__stage_kind_name (want));
    else if (other)
        return weir__stage_error (stage, err, WEIR_ESTRUCTURE, -1,
                                  "'%s' is a %s, but %s must be a %s (%ss: %s)", stage->name,
                                  weir__stage_kind_name (other->kind), place, weir__stage_kind_name (want),
                                  weir__stage_kind_name (want), weir__element_names (want));
    else {
        //  A plugin by name where a reader or writer goes: most often a
        //  pipeline whose last processor was meant to end it ('... !
        //  softmax'), which needs a writer after it
        char *found = weir__plugin_find (stage->name);
        if (found) {
            int rc = weir__stage_error (
                stage, err, WEIR_ESTRUCTURE, -1,
                "'%s' is a plugin (%s), and plugins are processors, but %s must be a %s%s (%ss: %s)",
                stage->name, found, place, weir__stage_kind_name (want),
                want == WEIR_ELEMENT_WRITER ? ": end the pipeline with one, '! null' to keep no output" : "",
                weir__stage_kind_name (want), weir__element_names (want));
            free (found);
            return rc;
        }
        snprintf (builtins, sizeof builtins, "readers: %s; processors: %s; writers: %s",
                  weir__element_names (WEIR_ELEMENT_READER), weir__element_names (WEIR_ELEMENT_PROCESSOR),
                  weir__element_names (WEIR_ELEMENT_WRITER));
    }
    const char *best = weir__element_suggest (stage->name, (int) want);
    size_t head = strlen ("unknown element '") + strlen (stage->name) + strlen ("': ");
    if (*builtins) {
        char hint[96] = "";
        if (best)
            snprintf (hint, sizeof hint, ": did you mean '%s'?", best);
        weir__err_set (err, WEIR_EUNKNOWN, "unknown element '%s'%s (%s)", stage->name, hint, builtins);
    }
    else if (best && strlen (err->msg) > head) {
        //  "unknown element 'X': did you mean 'Y'? (no builtin ...)"
        char rest[sizeof err->msg];
        snprintf (rest, sizeof rest, "%s", err->msg + head);
        weir__err_set (err, WEIR_EUNKNOWN, "unknown element '%s': did you mean '%s'? (%s)", stage->name, best,
                       rest);
    }
    err->offset = stage->name_offset;
    return WEIR_EUNKNOWN;
}

//  The named outputs of STAGE, a processor: those its properties name
//  (PORTS, a builtin's), or those its callback table declares
static int s_ports (weir__stage *stage, int (*ports) (const weir__props *, const weir_property_info *,
                                                      const char **, size_t *),
                    weir__err *err)
{
    const char *names[WEIR__MAX_PORTS];
    size_t count = 0;
    if (ports)
        ports (&stage->props, weir_kind_properties (WEIR_ELEMENT_PROCESSOR), names, &count);
    else if (stage->callbacks) {
        const weir_processor *table = weir__callbacks_table (stage->callbacks);
        while (table->ports && table->ports[count] && count < WEIR__MAX_PORTS) {
            names[count] = table->ports[count];
            count++;
        }
    }
    return weir__stage_set_ports (stage, names, count) ? weir__err_set (err, WEIR_ENOMEM, "out of memory") : 0;
}

//  fuse= of STAGE, an element of kind WANT: auto (-1: pipeline/graph.c
//  decides, once every stage is known), 0 or 1.  Read with the other
//  properties every stage has, before the element's own check: route
//  would take a fuse='.x > 1' meant as a branch for no branch at all
static int s_fuse (weir__stage *stage, int want, weir__err *err)
{
    stage->fuse = -1;
    weir__prop *fuse = want == WEIR_ELEMENT_PROCESSOR ? weir__props_find (&stage->props, "fuse") : NULL;
    if (!fuse || strcmp (fuse->value, "auto") == 0)
        return 0;
    if (strcmp (fuse->value, "0") != 0 && strcmp (fuse->value, "1") != 0)
        return weir__stage_error (
            stage, err, WEIR_EPROPERTY, fuse->value_offset < 0 ? -1 : fuse->value_offset + fuse->quoted,
            "%s: fuse=%s: expected auto, 0 or 1 (a property every stage has)", stage->name, fuse->value);
    stage->fuse = fuse->value[0] == '1';
    return 0;
}

//  The element of STAGE, in a straight LINE or not: a builtin of the kind
//  its place wants, a plugin, or callbacks added in code; then the
//  properties every stage of its kind takes.  The engine's own calls come
//  first, reading the properties last.
static int s_resolve (weir__stage *stage, int line, weir__err *err)
{
    const char *place;
    weir_element_kind want = s_wanted (stage, line, &place);
    static const weir_property_info none[] = {{NULL, NULL, NULL}};
    const weir_property_info *known = NULL;
    int (*check) (weir__props *, const char *, const weir_property_info *, weir__err *) = NULL;
    int (*ports) (const weir__props *, const weir_property_info *, const char **, size_t *) = NULL;
    int rc = 0;
    if (stage->callbacks) {
        //  Added in code as callbacks
        if (want != WEIR_ELEMENT_PROCESSOR)
            return weir__stage_error (stage, err, WEIR_ESTRUCTURE, -1,
                                      "'%s' is a processor, but %s must be a %s", stage->name,
                                      place, weir__stage_kind_name (want));
    }
    else {
        const weir__element *e =
            weir__plugin_is_path (stage->name) ? NULL : weir__element_find (stage->name, (int) want);
        known = !e                ? NULL
                : e->reader       ? e->reader->props
                : e->writer       ? e->writer->props
                : e->processor && e->processor->props ? e->processor->props
                                                      : none;
        //  A plugin of a builtin's name would never load, and the
        //  builtin would do something else than its author meant
        char *shadowed = e && want == WEIR_ELEMENT_PROCESSOR ? weir__plugin_find (stage->name) : NULL;
        if (shadowed) {
            rc = weir__stage_error (stage, err, WEIR_EPLUGIN, -1,
                                    "'%s' names both the builtin processor %s and the plugin %s: a plugin may "
                                    "not take a builtin's name; rename the plugin, or give its path to load "
                                    "it (%s)",
                                    stage->name, stage->name, shadowed, shadowed);
            free (shadowed);
            return rc;
        }
        rc = e ? s_builtin (stage, e, err) : s_not_builtin (stage, want, place, err);
        if (!rc && e && e->check)
            check = e->check;
        //  An element whose outputs its properties name takes properties
        //  of any name, and its check says which are wrong
        if (!rc && e && e->ports) {
            ports = e->ports;
            known = NULL;
        }
    }
    if (rc && stage->glued >= 0 && (rc == WEIR_EUNKNOWN || rc == WEIR_ESTRUCTURE)) {
        //  The element came from a '!' inside a value
        char was[sizeof err->msg];
        snprintf (was, sizeof was, "%s", err->msg);
        weir__err_set (err, rc,
                       "%s; '!' separates elements: if it is part of a value, quote the value, as in "
                       "path='/tmp/a!b.txt'",
                       was);
        err->offset = stage->glued;
    }
    //  A builtin writer whose table has no on-error= and dead-letter=
    //  refuses them as unknown, below
    if (rc || (rc = weir__rejects_new (stage->name, &stage->props, &stage->rejects, err)))
        return rc;
    stage->kind = want;
    //  What a builtin does not know is refused; threads, capacity, batch,
    //  and linger for readers and processors
    int64_t threads, capacity, batch, linger = 0;
    //  A quoted word after the name is an expression (pipeline/parse.h),
    //  which only some builtins take
    weir__prop *arg = weir__props_find (&stage->props, "expr");
    int takes = 0;
    for (size_t k = 0; known && known[k].name && !takes; k++)
        takes = strcmp (known[k].name, "expr") == 0;
    if (arg && arg->key_offset == arg->value_offset && known && !takes)
        return weir__stage_error (stage, err, WEIR_ESYNTAX, arg->key_offset,
                                  "expected key=value or '!' after element '%s', not the quoted '%s' (only "
                                  "filter takes a condition there)",
                                  stage->name, arg->value);
    weir__prop *key = weir__props_find (&stage->props, "key");
    if (key && want == WEIR_ELEMENT_READER)
        return weir__stage_error (stage, err, WEIR_EPROPERTY, key->key_offset,
                                  "%s: key= partitions the records coming into a stage by key, and a reader "
                                  "has no input: give key= to the stage the records go to",
                                  stage->name);
    if ((known
         && (rc = weir__props_check (&stage->props, stage->name, known, weir_kind_properties (want), err)))
        || (rc = weir__props_int (&stage->props, stage->name, "threads", 1, 1, WEIR__MAX_THREADS, &threads,
                                  err))
        || (rc = weir__props_int (&stage->props, stage->name, "capacity", WEIR__DEFAULT_CAPACITY, 1, 1 << 20,
                                  &capacity, err))
        || (rc = weir__props_int (&stage->props, stage->name, "batch", WEIR__DEFAULT_BATCH, 1, 1 << 20,
                                  &batch, err))
        || (want != WEIR_ELEMENT_WRITER
            && (rc = weir__props_int (&stage->props, stage->name, "linger", 5, 0, 60000, &linger, err)))
        || (rc = s_fuse (stage, want, err))
        || (check && (rc = check (&stage->props, stage->name, weir_kind_properties (want), err)))
        || (rc = s_ports (stage, ports, err))) {
        //  What the element's check cannot place is about the element
        if (err->offset < 0)
            err->offset = stage->name_offset;
        return rc;
    }
    if (key && !(stage->key = weir__key_new (key->value, err))) {
        if (err->code == WEIR_EPROPERTY) {
            char was[sizeof err->msg];
            long at = err->offset;
            snprintf (was, sizeof was, "%s", err->msg);
            //  A bare name is most often a field meant, or for a writer
            //  that upserts (postgres) the columns of its unique key
            char hint[160] = "";
            int conflict = 0;
            for (size_t k = 0; known && known[k].name; k++)
                conflict |= strcmp (known[k].name, "conflict") == 0;
            if (conflict)
                snprintf (hint, sizeof hint,
                          " (key= partitions a stage's input by a path; %s takes the columns of an upsert's "
                          "unique key as conflict=COLUMNS)",
                          stage->name);
            else if (key->value[0]
                     && strspn (key->value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                            "0123456789_-")
                            == strlen (key->value))
                snprintf (hint, sizeof hint, " (a field is a path: key=.%.100s)", key->value);
            weir__err_set (err, WEIR_EPROPERTY, "%s: key=%s: %s%s", stage->name, key->value, was, hint);
            err->offset = key->value_offset < 0 ? -1 : key->value_offset + key->quoted + at;
        }
        return err->code;
    }
    stage->threads = (unsigned) threads;
    stage->capacity = (unsigned) capacity;
    stage->batch = (unsigned) batch;
    stage->linger_ms = (unsigned) linger;
    return 0;
}

//  Whether some element named NAME, of any kind, takes the property WORD
static int s_takes (const char *name, const char *word)
{
    const weir_element_kind kinds[] = {WEIR_ELEMENT_READER, WEIR_ELEMENT_PROCESSOR, WEIR_ELEMENT_WRITER};
    for (size_t k = 0; k < 3; k++) {
        const weir__element *e = weir__element_find (name, (int) kinds[k]);
        if (!e)
            continue;
        const weir_property_info *lists[] = {
            e->reader ? e->reader->props : e->writer ? e->writer->props : e->processor->props,
            weir_kind_properties (kinds[k])};
        for (size_t l = 0; l < 2; l++)
            for (const weir_property_info *p = lists[l]; p && p->name; p++)
                if (!strcmp (p->name, word))
                    return 1;
    }
    return 0;
}

//  A bare word after an element's properties starts a new chain when it
//  names a reader ('a ! b  c ! d').  One that names no element, or one
//  that cannot start a chain but is a property of the element before it
//  ('range count ! null', count being a processor too), is a key that
//  lost its value far more often, and is said so, before the graph it
//  would make is judged.
static int s_chain_starts (const weir__stages *stages, weir__err *err)
{
    for (size_t i = 0; i < stages->count; i++) {
        const weir__stage *stage = stages->items[i];
        if (!stage->follows || weir__element_find (stage->name, WEIR_ELEMENT_READER))
            continue;
        const weir__element *e = weir__element_find (stage->name, -1);
        if (e && !s_takes (stage->follows->name, stage->name))
            continue;
        if (e)
            weir__err_set (err, WEIR_ESYNTAX,
                           "expected key=value or '!' after element '%s', not '%s' (%s takes %s=, and a word "
                           "there starts a new chain when it names a reader, which %s is not)",
                           stage->follows->name, stage->name, stage->follows->name, stage->name, stage->name);
        else {
            const char *best = weir__element_suggest (stage->name, -1);
            char hint[96] = "";
            if (best)
                snprintf (hint, sizeof hint, "; did you mean '%s'?", best);
            weir__err_set (err, WEIR_ESYNTAX,
                           "expected key=value or '!' after element '%s', not '%s' (a word there starts a new "
                           "chain when it names an element, and no element is named '%s'%s)",
                           stage->follows->name, stage->name, stage->name, hint);
        }
        err->offset = stage->name_offset;
        return err->code;
    }
    return 0;
}

int weir__build_resolve (weir__stages *stages, weir__err *err)
{
    if (stages->count < 2) {
        weir__err_set (
            err, WEIR_ESTRUCTURE,
            "a pipe needs at least a reader and a writer, as in 'range count=10 ! lines path=out.txt'");
        err->offset = stages->count ? stages->items[0]->name_offset : 0;
        return err->code;
    }
    int rc = s_chain_starts (stages, err);
    if (!rc)
        rc = weir__graph_resolve (stages, err);
    int line = !rc && weir__graph_is_line (stages);
    for (size_t i = 0; i < stages->count && !rc; i++)
        rc = s_resolve (stages->items[i], line, err);
    return rc ? rc : weir__graph_check (stages, err);
}

static int s_prop_cmp (const void *a, const void *b)
{
    const weir__prop *x = *(const weir__prop *const *) a, *y = *(const weir__prop *const *) b;
    return strcmp (x->key, y->key);
}

//  The shape; OLDER: as a weir that kept where elements connect in it
//  wrote it
static char *s_shape (const weir__stages *stages, int older)
{
    size_t size = 64 + weir__graph_shape (stages, NULL, 0);
    for (size_t i = 0; i < stages->count; i++) {
        const weir__stage *stage = stages->items[i];
        size += strlen (stage->name) + 8;
        for (size_t k = 0; k < stage->props.count; k++)
            size += strlen (stage->props.items[k].key) + strlen (stage->props.items[k].value) + 4;
    }
    char *out = malloc (size);
    if (!out)
        return NULL;
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < stages->count; i++) {
        const weir__stage *stage = stages->items[i];
        used += (size_t) snprintf (out + used, size - used, "%s%s", i ? " ! " : "", stage->name);
        //  Properties in key order, so that their order does not matter
        size_t n = stage->props.count;
        const weir__prop **sorted = calloc (n ? n : 1, sizeof *sorted);
        if (!sorted) {
            free (out);
            return NULL;
        }
        for (size_t k = 0; k < n; k++)
            sorted[k] = &stage->props.items[k];
        //  Insertion sort: stable, so a repeated key keeps its order
        for (size_t a = 1; a < n; a++)
            for (size_t b = a; b > 0 && s_prop_cmp (&sorted[b - 1], &sorted[b]) > 0; b--) {
                const weir__prop *t = sorted[b];
                sorted[b] = sorted[b - 1];
                sorted[b - 1] = t;
            }
        for (size_t k = 0; k < n; k++) {
            const char *key = sorted[k]->key;
            //  How the stage runs, or where it connects, not what it
            //  computes: free to change on resume
            if (weir__change_free (key) || (!older && weir__change_place (key)))
                continue;
            used += (size_t) snprintf (out + used, size - used, " %s=%s", key, sorted[k]->value);
        }
        free (sorted);
    }
    weir__graph_shape (stages, out + used, size - used);
    return out;
}

char *weir__build_shape (const weir__stages *stages)
{
    return s_shape (stages, 0);
}

char *weir__build_shape_older (const weir__stages *stages)
{
    return s_shape (stages, 1);
}

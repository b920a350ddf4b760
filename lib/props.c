/*  lib/props.c - property lists: parsing values, refusing unknown keys.  */
#include "config.h"
#include "lib/props.h"

#include "lib/suggest.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void weir__props_init (weir__props *self)
{
    self->items = NULL;
    self->count = 0;
}

void weir__props_release (weir__props *self)
{
    for (size_t i = 0; i < self->count; i++) {
        free (self->items[i].key);
        free (self->items[i].value);
    }
    free (self->items);
    weir__props_init (self);
}

int weir__props_add (weir__props *self, const char *key, const char *value, long key_offset,
                     long value_offset)
{
    weir__prop *items = realloc (self->items, (self->count + 1) * sizeof *items);
    if (!items)
        return WEIR_ENOMEM;
    self->items = items;
    weir__prop *p = &items[self->count];
    p->key = strdup (key);
    p->value = strdup (value);
    if (!p->key || !p->value) {
        free (p->key);
        free (p->value);
        return WEIR_ENOMEM;
    }
    p->key_offset = key_offset;
    p->value_offset = value_offset;
    p->quoted = 0;
    atomic_init (&p->used, 0);
    self->count++;
    return 0;
}

int weir__props_add_text (weir__props *self, const char *text, weir__err *err)
{
    const char *eq = strchr (text, '=');
    if (!eq || eq == text)
        return weir__err_set (err, WEIR_EPROPERTY, "property '%s' is not of the form key=value", text);
    char *key = strndup (text, (size_t) (eq - text));
    if (!key)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    int rc = weir__props_add (self, key, eq + 1, -1, -1);
    free (key);
    if (rc)
        return weir__err_set (err, rc, "out of memory");
    return 0;
}

weir__prop *weir__props_find (weir__props *self, const char *key)
{
    //  The last one wins, as on a command line
    for (size_t i = self->count; i-- > 0;)
        if (strcmp (self->items[i].key, key) == 0) {
            self->items[i].used = 1;
            return &self->items[i];
        }
    return NULL;
}

const char *weir__props_get (weir__props *self, const char *key, const char *fallback)
{
    weir__prop *p = weir__props_find (self, key);
    return p ? p->value : fallback;
}

int weir__props_int (weir__props *self, const char *element, const char *key, int64_t fallback, int64_t min,
                     int64_t max, int64_t *out, weir__err *err)
{
    weir__prop *p = weir__props_find (self, key);
    if (!p) {
        *out = fallback;
        return 0;
    }
    int64_t v;
    if (weir__parse_int (p->value, &v))
        return weir__err_at (err, WEIR_EPROPERTY, p->value_offset,
                             "%s: property '%s': '%s' is not an integer", element, key, p->value);
    if (v < min || v > max)
        return weir__err_at (err, WEIR_EPROPERTY, p->value_offset,
                             "%s: property '%s': %lld is out of range [%lld, %lld]", element, key,
                             (long long) v, (long long) min, (long long) max);
    *out = v;
    return 0;
}

//  A name ending in ".*" (kafka.*) stands for every key that begins as it
//  does: settings passed through to a client library
static int s_known (const weir_property_info *table, const char *key)
{
    for (; table && table->name; table++) {
        size_t n = strlen (table->name);
        if (strcmp (table->name, key) == 0
            || (n > 2 && !strcmp (table->name + n - 2, ".*") && !strncmp (table->name, key, n - 1)
                && key[n - 1]))
            return 1;
    }
    return 0;
}

static void s_append_names (char *buf, size_t size, const weir_property_info *table)
{
    for (; table && table->name; table++) {
        size_t used = strlen (buf);
        snprintf (buf + used, size - used, "%s%s", used ? ", " : "", table->name);
    }
}

int weir__props_check (const weir__props *self, const char *element, const weir_property_info *known,
                       const weir_property_info *common, weir__err *err)
{
    for (size_t i = 0; i < self->count; i++) {
        const weir__prop *p = &self->items[i];
        if (s_known (known, p->key) || s_known (common, p->key))
            continue;
        char names[512] = "";
        s_append_names (names, sizeof names, known);
        s_append_names (names, sizeof names, common);
        const char *best = NULL;
        size_t distance = 0;
        for (const weir_property_info *t = known; t && t->name; t++)
            weir__suggest_consider (p->key, t->name, &best, &distance);
        for (const weir_property_info *t = common; t && t->name; t++)
            weir__suggest_consider (p->key, t->name, &best, &distance);
        char hint[96] = "";
        if (best)
            snprintf (hint, sizeof hint, ": did you mean '%s'?", best);
        return weir__err_at (err, WEIR_EPROPERTY, p->key_offset, "%s: unknown property '%s'%s (known: %s)",
                             element, p->key, hint, names);
    }
    return 0;
}

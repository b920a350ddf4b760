/*  pipeline/ranks.c - shards and outputs of one rank of a job.  */
#include "config.h"
#include "pipeline/ranks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_RANK "{rank}"

//  TEMPLATE with every "{rank}" replaced by SLOT; NULL when out of memory.
static char *s_expand (const char *template, unsigned slot)
{
    char number[16];
    int n = snprintf (number, sizeof number, "%u", slot);
    size_t len = strlen (template), marks = 0;
    for (const char *p = strstr (template, S_RANK); p; p = strstr (p + 1, S_RANK))
        marks++;
    char *out = malloc (len + marks * (size_t) n + 1), *o = out;
    if (!out)
        return NULL;
    for (const char *p = template; *p;) {
        if (strncmp (p, S_RANK, strlen (S_RANK)) == 0) {
            memcpy (o, number, (size_t) n), o += n;
            p += strlen (S_RANK);
        }
        else
            *o++ = *p++;
    }
    *o = '\0';
    return out;
}

//  The writer's path= property, without marking it read.
static weir__prop *s_path (const weir__props *props)
{
    for (size_t i = 0; i < props->count; i++)
        if (strcmp (props->items[i].key, "path") == 0)
            return &props->items[i];
    return NULL;
}

int weir__ranks_apply (weir__stages *stages, int rank, int size, weir__err *err)
{
    for (size_t i = 0; i < stages->count; i++) {
        weir__stage *stage = stages->items[i];
        stage->rank = (unsigned) rank;
        stage->ranks = (unsigned) size;
        if (size > 1 && stage->dead_path)
            return weir__err_at (err, WEIR_ESTRUCTURE, stage->name_offset,
                                 "%s (stage %zu): dead-letter= is not supported yet in a job of several "
                                 "ranks (%d)",
                                 stage->name, i + 1, size);
        if (stage->kind != WEIR_ELEMENT_WRITER)
            continue;
        weir__prop *path = s_path (&stage->props);
        if (path && strstr (path->value, S_RANK)) {
            char *mine = s_expand (path->value, (unsigned) rank);
            if (!mine)
                return weir__err_set (err, WEIR_ENOMEM, "out of memory");
            stage->path_template = path->value;
            path->value = mine;
        }
        else if (path && size > 1 && strcmp (path->value, "-") != 0)
            return weir__err_at (err, WEIR_ESTRUCTURE, path->value_offset,
                                 "%s (stage %zu): path=%s in a job of %d ranks: every rank would write "
                                 "that one file; put {rank} in the path (each rank's number), as in "
                                 "path=out-{rank}.txt",
                                 stage->name, i + 1, path->value, size);
    }
    return 0;
}

int weir__ranks_props (const weir__stage *stage, unsigned slot, weir__props *out)
{
    weir__props_init (out);
    for (size_t i = 0; i < stage->props.count; i++) {
        const weir__prop *p = &stage->props.items[i];
        char *value = NULL;
        if (stage->path_template && strcmp (p->key, "path") == 0
            && !(value = s_expand (stage->path_template, slot)))
            goto oom;
        int rc = weir__props_add (out, p->key, value ? value : p->value, p->key_offset, p->value_offset);
        free (value);
        if (rc)
            goto oom;
    }
    return 0;
oom:
    weir__props_release (out);
    return WEIR_ENOMEM;
}

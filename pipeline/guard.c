/*  pipeline/guard.c - a pipe must not write over its own input.  */
#include "config.h"
#include "pipeline/guard.h"

#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "writers/outfile.h"

//  PATH resolved, for a file that may not exist yet: its folder resolved,
//  and its name.  NULL when the folder does not resolve either.
static char *s_resolve (const char *path)
{
    char *whole = realpath (path, NULL);
    if (whole)
        return whole;
    char *dcopy = strdup (path), *bcopy = strdup (path);
    char *dir = dcopy ? realpath (dirname (dcopy), NULL) : NULL;
    char *out = NULL;
    if (dir && bcopy) {
        const char *base = basename (bcopy);
        size_t size = strlen (dir) + strlen (base) + 2;
        if ((out = malloc (size)))
            snprintf (out, size, "%s/%s", dir, base);
    }
    free (dir);
    free (dcopy);
    free (bcopy);
    return out;
}

//  Do OUT (the writer's path) and IN (an input) name the same file?
static int s_same (const char *out, const struct stat *out_st, int out_exists, const char *in)
{
    struct stat in_st;
    if (out_exists)
        return stat (in, &in_st) == 0 && in_st.st_dev == out_st->st_dev && in_st.st_ino == out_st->st_ino;
    char *a = s_resolve (out), *b = s_resolve (in);
    int same = a && b && strcmp (a, b) == 0;
    free (a);
    free (b);
    return same;
}

//  Two outputs in one file would write over each other.
static int s_check_twice (const weir__stage **stages, const weir__prop **outputs, size_t n, weir__err *err)
{
    for (size_t a = 0; a < n; a++)
        for (size_t b = a + 1; b < n; b++) {
            const char *x = outputs[a]->value, *y = outputs[b]->value;
            struct stat st;
            int exists = stat (x, &st) == 0;
            if (strcmp (x, "-") && strcmp (y, "-") && s_same (x, &st, exists, y))
                return weir__stage_error (
                    stages[b], err, WEIR_ESTRUCTURE, outputs[b]->value_offset,
                    "'%s' is written twice, as '%s' and as '%s': give each output a file "
                    "of its own",
                    y, outputs[a]->key, outputs[b]->key);
        }
    return 0;
}

//  The output PROP of STAGE (a writer's path, a dead letter) against the
//  inputs of READER, SHARDS, and the options.
static int s_check_output (const weir__stage *stage, const weir__prop *prop, const weir__stage *reader,
                           const weir__shards *shards, const weir__options *options, weir__err *err)
{
    const char *out = prop->value, *clash = NULL;
    struct stat st;
    int exists = stat (out, &st) == 0;
    for (size_t i = 0; i < shards->count && !clash && strcmp (out, "-"); i++) {
        const char *in = shards->items[i].path;
        //  Shards of one file come in a row: look at each file once
        if (in && !(i > 0 && shards->items[i - 1].path && !strcmp (in, shards->items[i - 1].path))
            && s_same (out, &st, exists, in))
            clash = in;
    }
    if (options->checkpoint_dir && weir__outfile_is_stream (out))
        return weir__err_at (
            err, WEIR_ESTRUCTURE, prop->value_offset,
            "%s: '%s' is standard output, a pipe, a terminal or a device: it cannot be cut back "
            "to what a checkpoint committed, so a job that writes to it cannot be resumed "
            "exactly; write to a file, or drop --checkpoint",
            stage->name, out);
    if (clash)
        return weir__err_at (err, WEIR_ESTRUCTURE, prop->value_offset,
                             "%s: '%s' is also an input of the reader '%s' ('%s'): writing it would destroy "
                             "what is being read; write to another file",
                             stage->name, out, reader->name, clash);
    return 0;
}

int weir__guard_check (const weir__stages *stages, const weir__options *options, weir__err *err)
{
    //  The outputs: the writer's file, and the dead letters
    const weir__prop **outputs = calloc (stages->count, sizeof *outputs);
    const weir__stage **of = calloc (stages->count, sizeof *of);
    size_t n = 0;
    for (size_t i = 0; outputs && of && i < stages->count; i++) {
        const weir__stage *stage = stages->items[i];
        const weir__prop *prop = weir__stage_prop (stage, stage->output ? "path" : "dead-letter");
        if (prop) {
            of[n] = stage;
            outputs[n++] = prop;
        }
    }
    int rc = !outputs || !of ? weir__err_set (err, WEIR_ENOMEM, "out of memory")
                             : s_check_twice (of, outputs, n, err);
    //  Against every reader's input
    for (size_t r = 0; r < stages->count && !rc; r++) {
        const weir__stage *reader = stages->items[r];
        if (reader->kind != WEIR_ELEMENT_READER)
            continue;
        const weir__shards *shards = weir__input_shards_const (reader->input);
        for (size_t i = 0; i < n && !rc; i++)
            rc = s_check_output (of[i], outputs[i], reader, shards, options, err);
    }
    free (outputs);
    free (of);
    return rc;
}

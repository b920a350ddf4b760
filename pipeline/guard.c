/*  pipeline/guard.c - a pipe must not write over its own input.  */
#include "config.h"
#include "pipeline/guard.h"

#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

int weir__guard_check (const weir__stages *stages, const weir__options *options, weir__err *err)
{
    const weir__stage *reader = stages->items[0], *writer = stages->items[stages->count - 1];
    const weir__prop *prop = NULL;
    for (size_t k = writer->props.count; k-- > 0 && !prop;)
        if (strcmp (writer->props.items[k].key, "path") == 0)
            prop = &writer->props.items[k];
    if (!writer->writer || !prop)
        return 0;
    const char *out = prop->value;
    if (options->checkpoint_dir && weir__outfile_is_stream (out))
        return weir__err_at (
            err, WEIR_ESTRUCTURE, prop->value_offset,
            "%s: '%s' is standard output, a pipe, a terminal or a device: it cannot be cut back "
            "to what a checkpoint committed, so a job that writes to it cannot be resumed "
            "exactly; write to a file, or drop --checkpoint",
            writer->name, out);
    if (strcmp (out, "-") == 0)
        return 0;
    struct stat st;
    int exists = stat (out, &st) == 0;
    for (size_t i = 0; i < reader->shards.count; i++) {
        const char *in = reader->shards.items[i].path;
        //  Shards of one file come in a row: look at each file once
        if (!in
            || (i > 0 && reader->shards.items[i - 1].path && !strcmp (in, reader->shards.items[i - 1].path)))
            continue;
        if (s_same (out, &st, exists, in))
            return weir__err_at (
                err, WEIR_ESTRUCTURE, prop->value_offset,
                "%s: '%s' is also an input of the reader '%s' ('%s'): writing it would destroy "
                "what is being read; write to another file",
                writer->name, out, reader->name, in);
    }
    return 0;
}

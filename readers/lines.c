/*  readers/lines.c - each line of text files as a msgpack str.

    Every file of the glob is a shard; a file larger than split= bytes is
    cut into several, each cut moved forward to just after a newline so
    that no line is split.  A shard holds the lines that start inside it.
    The newline is dropped; a final line without one is still a line.  */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/pack.h"
#include "readers/reader.h"

typedef struct {
    size_t max_line;
} s_lines;

static const weir_property_info s_props[] = {
    {"path", NULL, "file or glob of files to read (required); each file is a shard"},
    {"split", "64M", "cut files larger than this many bytes into shards at line boundaries"},
    {"max-line", "64M", "refuse lines longer than this many bytes"},
    {NULL, NULL, NULL},
};

static int s_open (weir__props *props, void **state, weir__shards *shards, weir__err *err)
{
    const char *pattern = weir__props_get (props, "path", NULL);
    if (!pattern)
        return weir__err_set (err, WEIR_EPROPERTY, "lines: property 'path' is required");
    int64_t split, max_line;
    int rc = weir__props_int (props, "lines", "split", 64000000, 1, INT64_MAX, &split, err);
    if (!rc)
        rc = weir__props_int (props, "lines", "max-line", 64000000, 1, SIZE_MAX / 4, &max_line, err);
    if (rc)
        return rc;
    char **paths;
    size_t count;
    if ((rc = weir__files_glob ("lines", pattern, &paths, &count, err)))
        return rc;
    for (size_t i = 0; i < count && !rc; i++)
        rc = weir__files_plan_lines ("lines", paths[i], (uint64_t) split, shards, err);
    weir__files_free (paths, count);
    if (rc)
        return rc;
    s_lines *self = malloc (sizeof *self);
    if (!self)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    //  One more byte for the newline that ends the longest line
    self->max_line = (size_t) max_line + 1;
    *state = self;
    return 0;
}

static int s_read (void *state, weir__shard *shard, uint64_t *offset, weir__sink *sink, weir__err *err)
{
    const s_lines *self = state;
    weir__window w;
    int rc = weir__window_open (&w, "lines", shard, *offset, self->max_line, sink, err);
    if (rc)
        return rc;
    for (;;) {
        const char *line;
        size_t n;
        rc = weir__window_line (&w, "lines", &line, &n, err);
        if (rc == WEIR__WINDOW_FULL && sink->skip) {
            char reason[64];
            snprintf (reason, sizeof reason, "line longer than max-line=%zu bytes", self->max_line - 1);
            if ((rc = weir__window_reject_line (&w, "lines", reason, offset, err)))
                break;
            continue;
        }
        if (rc == WEIR__WINDOW_FULL)
            rc = weir__err_set (err, WEIR_ECORRUPT,
                                "lines: '%s' at byte %llu: line longer than max-line=%zu bytes", shard->path,
                                (unsigned long long) weir__window_offset (&w, w.lo), self->max_line - 1);
        if (rc || !line)
            break;
        //  The record is in the batch, and the offset past it, before the
        //  sink may pause the epoch
        if (weir__pack_str (&sink->batch, line, n)) {
            rc = WEIR_ENOMEM;
            break;
        }
        *offset = weir__window_offset (&w, w.lo);
        if ((rc = weir__sink_add (sink)))
            break;
    }
    if (rc == WEIR_ENOMEM)
        weir__err_set (err, rc, "lines: out of memory");
    if (rc == WEIR__WINDOW_IDLE)
        rc = w.idle;
    weir__window_leave (&w, shard);
    return rc;
}

static void s_close (void *state)
{
    free (state);
}

const weir__reader_class weir__reader_lines = {
    "lines", "each line of text files as a msgpack string, without its newline", s_props, s_open, s_read,
    s_close,
};

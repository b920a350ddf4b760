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
#include "readers/files.h"
#include "readers/follow.h"
#include "readers/reader.h"
#include "readers/window.h"

typedef struct {
    size_t max_line;
    weir__follow *follow;  //  follow=1, else NULL
} s_lines;

static const weir_property_info s_props[] = {
    {"path", NULL, "file or glob of files to read (required); each file is a shard"},
    {"split", "64M", "cut files larger than this many bytes into shards at line boundaries"},
    {"max-line", "64M", "refuse lines longer than this many bytes"},
    {"follow", "0",
     "1: like tail -F, wait for the files to grow, pick up new files, follow rotations and truncations "
     "(one thread; split is ignored)"},
    {"rotate-wait", "1000",
     "with follow=1: ms a rotated file must be quiet before it is left for the new one"},
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
    weir__follow *follow = NULL;
    if (rc || (rc = weir__follow_open ("lines", props, pattern, shards, &follow, err)))
        return rc;
    if (!follow && (rc = weir__files_plan ("lines", pattern, (uint64_t) split, shards, err)))
        return rc;
    s_lines *self = malloc (sizeof *self);
    if (!self) {
        weir__follow_destroy (&follow);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    //  One more byte for the newline that ends the longest line
    self->max_line = (size_t) max_line + 1;
    self->follow = follow;
    *state = self;
    return 0;
}

static int s_read (void *state, weir__shard *shard, uint64_t *offset, weir__sink *sink, weir__err *err)
{
    const s_lines *self = state;
    weir__window w;
    int rc = weir__window_open (&w, "lines", shard, offset, self->max_line,
                                weir__follow_rotate_wait (self->follow), sink, err);
    if (rc == WEIR__WINDOW_DRY)
        return WEIR__READ_DRY;
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
    //  A followed file's end is only its end for now
    if (self->follow && (rc == 0 || rc == WEIR__WINDOW_DRY))
        rc = WEIR__READ_DRY;
    weir__window_leave (&w, shard);
    return rc;
}

static void s_close (void *state)
{
    s_lines *self = state;
    weir__follow_destroy (&self->follow);
    free (self);
}

static int s_discover (void *state, weir__shards *shards, weir__err *err)
{
    s_lines *self = state;
    return self->follow ? weir__follow_discover (self->follow, shards, err) : 0;
}

static int s_wait (void *state, weir__sink *sink)
{
    s_lines *self = state;
    return weir__follow_wait (self->follow, sink);
}

const weir__reader_class weir__reader_lines = {
    "lines",    "each line of text files as a msgpack string, without its newline",
    s_props,    s_open,
    s_read,     s_close,
    s_discover, s_wait,
};

/*  readers/lines.c - each line of text files as a msgpack str.

    Every file of the glob is a shard; a file larger than split= bytes is
    cut into several, each cut moved forward to just after a newline so
    that no line is split.  A shard holds the lines that start inside it.
    The newline is dropped; a final line without one is still a line.
    Files, shards, windows and following are the skeleton's
    (readers/filereader.h).  */
#include "config.h"

#include <stdio.h>

#include "lib/pack.h"
#include "readers/filereader.h"

static const weir_property_info s_props[] = {
    WEIR__FILEREADER_PATH ("files to read"),
    WEIR__FILEREADER_SPLIT,
    WEIR__FILEREADER_MAX_LINE (""),
    WEIR__FILEREADER_FOLLOW ("", "; split is ignored"),
    WEIR__FILEREADER_ROTATE_WAIT,
    WEIR__FILEREADER_SNIFF,
    {NULL, NULL, NULL},
};

static int s_read (void *own, size_t max_line, weir__shard *shard, weir__window *w, uint64_t *offset,
                   weir__sink *sink, weir__err *err)
{
    int rc;
    for (;;) {
        const char *line;
        size_t n;
        rc = weir__window_line (w, "lines", &line, &n, err);
        if (rc == WEIR__WINDOW_FULL && sink->skip) {
            char reason[64];
            snprintf (reason, sizeof reason, "line longer than max-line=%zu bytes", max_line);
            if ((rc = weir__window_reject_line (w, "lines", reason, offset, err)))
                break;
            continue;
        }
        if (rc == WEIR__WINDOW_FULL)
            rc = weir__err_set (err, WEIR_ECORRUPT,
                                "lines: '%s' at byte %llu: line longer than max-line=%zu bytes" WEIR__SKIP_HINT,
                                shard->path,
                                (unsigned long long) weir__window_offset (w, w->lo), max_line);
        if (rc || !line)
            break;
        //  The record is in the batch, and the offset past it, before the
        //  sink may pause the epoch
        if (weir__pack_str (&sink->batch, line, n)) {
            rc = WEIR_ENOMEM;
            break;
        }
        *offset = weir__window_offset (w, w->lo);
        if ((rc = weir__sink_add (sink)))
            break;
    }
    if (rc == WEIR_ENOMEM)
        weir__err_set (err, rc, "lines: out of memory");
    return rc;
}

static const weir__filereader_class s_files = {
    .reader = &weir__reader_lines,
    .lines = 1,
    .follows = 1,
    .read = s_read,
};

static int s_open (weir__props *props, void **state, weir__shards *shards, weir__err *err)
{
    return weir__filereader_open (&s_files, props, state, shards, err);
}

const weir__reader_class weir__reader_lines =
    WEIR__FILEREADER_READER ("lines", "each line of text files as a msgpack string, without its newline",
                             s_props, s_open, WEIR__RECORDS_LINES);

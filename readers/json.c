/*  readers/json.c - JSON Lines: each line of text files as one JSON value,
    one msgpack record (the mapping is lib/jsonparse.h's).

    Shards and offsets are those of the lines reader: every file is a
    shard, a file larger than split= is cut at line boundaries, and a
    shard holds the lines that start inside it.  Also:

    - a line of blanks only (spaces, tabs, a CR), the empty line included,
      is skipped: it holds no value, and files often end with one;
    - a UTF-8 byte order mark at the very start of a file is skipped;
      anywhere else it is an error;
    - a line that is not JSON is an error naming the file, the line, the
      column (in bytes, from 1) and what is wrong; with on-error=skip or
      dead-letter= it is a bad record like any other.  A shard that starts
      inside a file knows its byte offset, not its line number: the
      newlines before it are counted only when an error is reported.

    Each read takes a parser from a pool (one per thread at most) and
    gives it back: simdjson's parser keeps buffers as large as the longest
    line, worth keeping across the reads of a thread.  */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/jsonparse.h"
#include "readers/files.h"
#include "readers/follow.h"
#include "readers/reader.h"
#include "readers/window.h"

typedef struct {
    size_t max_line;
    weir__follow *follow;  //  follow=1, else NULL
    pthread_mutex_t lock;
    weir__jsonparse **idle;  //  parsers no read is using
    size_t count, cap;
} s_json;

static const weir_property_info s_props[] = {
    {"path", NULL, "file or glob of JSON Lines files to read (required); each file is a shard"},
    {"split", "64M", "cut files larger than this many bytes into shards at line boundaries"},
    {"max-line", "64M", "refuse lines longer than this many bytes (at most 4000M)"},
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
        return weir__err_set (err, WEIR_EPROPERTY, "json: property 'path' is required");
    int64_t split, max_line;
    int rc = weir__props_int (props, "json", "split", 64000000, 1, INT64_MAX, &split, err);
    //  simdjson parses documents of up to 4 GiB
    if (!rc)
        rc = weir__props_int (props, "json", "max-line", 64000000, 1, 4000000000, &max_line, err);
    weir__follow *follow = NULL;
    if (rc || (rc = weir__follow_open ("json", props, pattern, shards, &follow, err)))
        return rc;
    if (!follow && (rc = weir__files_plan ("json", pattern, (uint64_t) split, shards, err)))
        return rc;
    s_json *self = calloc (1, sizeof *self);
    if (!self) {
        weir__follow_destroy (&follow);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    self->follow = follow;
    pthread_mutex_init (&self->lock, NULL);
    //  One more byte for the newline that ends the longest line
    self->max_line = (size_t) max_line + 1;
    *state = self;
    return 0;
}

static weir__jsonparse *s_take (s_json *self)
{
    weir__jsonparse *parser = NULL;
    pthread_mutex_lock (&self->lock);
    if (self->count)
        parser = self->idle[--self->count];
    pthread_mutex_unlock (&self->lock);
    return parser ? parser : weir__jsonparse_new ();
}

static void s_give (s_json *self, weir__jsonparse *parser)
{
    pthread_mutex_lock (&self->lock);
    if (self->count == self->cap) {
        size_t cap = self->cap ? self->cap * 2 : 4;
        weir__jsonparse **idle = realloc (self->idle, cap * sizeof *idle);
        if (idle) {
            self->idle = idle;
            self->cap = cap;
        }
    }
    if (self->count < self->cap) {
        self->idle[self->count++] = parser;
        parser = NULL;
    }
    pthread_mutex_unlock (&self->lock);
    weir__jsonparse_destroy (parser);
}

static int s_blank (const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
            return 0;
    return 1;
}

//  An error about the line that starts at byte AT of the shard's file,
//  LINES lines after the one that starts at FIRST, where this read began;
//  COLUMN counts from 1, or is 0 when not known.
static int s_fail (const weir__shard *shard, uint64_t first, uint64_t lines, uint64_t at, size_t column,
                   weir__err *err, const char *problem)
{
    uint64_t before;
    weir__err e;
    weir__err_init (&e);
    char where[64] = "";
    if (column)
        snprintf (where, sizeof where, " column %zu", column);
    if (weir__files_count_lines ("json", shard->path, first, &before, &e))
        //  Without the line number, the byte offset still says where
        return weir__err_set (err, WEIR_ECORRUPT, "json: '%s' at byte %llu: %s", shard->path,
                              (unsigned long long) (at + (column ? column - 1 : 0)), problem);
    return weir__err_set (err, WEIR_ECORRUPT, "json: '%s' line %llu%s (byte %llu): %s", shard->path,
                          (unsigned long long) (before + lines + 1), where,
                          (unsigned long long) (at + (column ? column - 1 : 0)), problem);
}

static int s_read (void *state, weir__shard *shard, uint64_t *offset, weir__sink *sink, weir__err *err)
{
    s_json *self = state;
    weir__jsonparse *parser = s_take (self);
    if (!parser)
        return weir__err_set (err, WEIR_ENOMEM, "json: out of memory");
    weir__window w;
    int rc = weir__window_open (&w, "json", shard, offset, self->max_line,
                                weir__follow_rotate_wait (self->follow), sink, err);
    if (rc) {
        s_give (self, parser);
        return rc == WEIR__WINDOW_DRY ? WEIR__READ_DRY : rc;
    }
    const uint64_t first = *offset;
    uint64_t lines = 0;  //  lines read by this call
    for (;;) {
        const char *line;
        size_t n;
        rc = weir__window_line (&w, "json", &line, &n, err);
        if (rc == WEIR__WINDOW_FULL) {
            char problem[64];
            snprintf (problem, sizeof problem, "line longer than max-line=%zu bytes", self->max_line - 1);
            if (sink->skip) {
                if ((rc = weir__window_reject_line (&w, "json", problem, offset, err)))
                    break;
                lines++;
                continue;
            }
            rc = s_fail (shard, first, lines, weir__window_offset (&w, w.lo), 0, err, problem);
        }
        if (rc || !line)
            break;
        uint64_t at = weir__window_offset (&w, (size_t) (line - w.buf));
        size_t skip = at == 0 && n >= 3 && memcmp (line, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
        if (s_blank (line + skip, n - skip)) {
            lines++;
            *offset = weir__window_offset (&w, w.lo);
            continue;
        }
        size_t where;
        const char *problem;
        rc = weir__jsonparse_pack (parser, line + skip, n - skip, &sink->batch, &where, &problem);
        if (rc == WEIR__JSONPARSE_MALFORMED) {
            size_t column = where == WEIR__JSONPARSE_NOWHERE ? 0 : skip + where + 1;
            if (sink->skip) {
                //  The whole line goes, newline included
                char reason[256];
                if (column)
                    snprintf (reason, sizeof reason, "%s (column %zu)", problem, column);
                else
                    snprintf (reason, sizeof reason, "%s", problem);
                weir__bad bad = {shard->path, at, line, n, weir__window_offset (&w, w.lo) - at, reason};
                *offset = weir__window_offset (&w, w.lo);
                lines++;
                if ((rc = sink->reject (sink, &bad)))
                    break;
                continue;
            }
            rc = s_fail (shard, first, lines, at, column, err, problem);
            break;
        }
        if (rc) {
            rc = WEIR_ENOMEM;
            break;
        }
        //  The record is in the batch, and the offset past it, before the
        //  sink may pause the epoch
        lines++;
        *offset = weir__window_offset (&w, w.lo);
        if ((rc = weir__sink_add (sink)))
            break;
    }
    if (rc == WEIR_ENOMEM)
        weir__err_set (err, rc, "json: out of memory");
    if (rc == WEIR__WINDOW_IDLE)
        rc = w.idle;
    //  A followed file's end is only its end for now
    if (self->follow && (rc == 0 || rc == WEIR__WINDOW_DRY))
        rc = WEIR__READ_DRY;
    weir__window_leave (&w, shard);
    s_give (self, parser);
    return rc;
}

static void s_close (void *state)
{
    s_json *self = state;
    for (size_t i = 0; i < self->count; i++)
        weir__jsonparse_destroy (self->idle[i]);
    free (self->idle);
    pthread_mutex_destroy (&self->lock);
    weir__follow_destroy (&self->follow);
    free (self);
}

static int s_discover (void *state, weir__shards *shards, weir__err *err)
{
    s_json *self = state;
    return self->follow ? weir__follow_discover (self->follow, shards, err) : 0;
}

static int s_wait (void *state, weir__sink *sink)
{
    s_json *self = state;
    return weir__follow_wait (self->follow, sink);
}

const weir__reader_class weir__reader_json = {
    "json",     "JSON Lines: each line of text files as one JSON value, one msgpack record",
    s_props,    s_open,
    s_read,     s_close,
    s_discover, s_wait,
};

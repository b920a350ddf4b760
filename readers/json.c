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
    line, worth keeping across the reads of a thread.  Files, shards,
    windows and following are the skeleton's (readers/filereader.h).  */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/jsonparse.h"
#include "readers/filereader.h"
#include "readers/files.h"
#include "readers/lineno.h"

typedef struct {
    pthread_mutex_t lock;
    weir__jsonparse **idle;  //  parsers no read is using
    size_t count, cap;
} s_json;

static const weir_property_info s_props[] = {
    WEIR__FILEREADER_PATH ("JSON Lines files to read"),
    WEIR__FILEREADER_SPLIT,
    WEIR__FILEREADER_MAX_LINE (" (at most 4000M)"),
    WEIR__FILEREADER_FOLLOW ("", "; split is ignored"),
    WEIR__FILEREADER_ROTATE_WAIT,
    WEIR__FILEREADER_SNIFF,
    {NULL, NULL, NULL},
};

//  The own state of the json reader: its pool of parsers
static int s_pool_open (weir__props *props, void **own, weir__err *err)
{
    s_json *self = calloc (1, sizeof *self);
    if (!self)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    pthread_mutex_init (&self->lock, NULL);
    *own = self;
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
    if (weir__lineno_count ("json", shard->path, first, &before, &e))
        //  Without the line number, the byte offset still says where
        return weir__err_set (err, WEIR_ECORRUPT, "json: '%s' at byte %llu: %s" WEIR__SKIP_HINT, shard->path,
                              (unsigned long long) (at + (column ? column - 1 : 0)), problem);
    return weir__err_set (err, WEIR_ECORRUPT, "json: '%s' line %llu%s (byte %llu): %s" WEIR__SKIP_HINT, shard->path,
                          (unsigned long long) (before + lines + 1), where,
                          (unsigned long long) (at + (column ? column - 1 : 0)), problem);
}

//  The line at AT, N bytes from LINE, is no JSON: PROBLEM at byte WHERE
//  of it.  With sink->skip it goes whole, newline included, to reject()
//  (0 or what reject said), else the read fails naming it.
static int s_malformed (weir__shard *shard, weir__window *w, uint64_t *offset, weir__sink *sink,
                        uint64_t first, uint64_t lines, const char *line, size_t n, size_t where,
                        const char *problem, weir__err *err)
{
    uint64_t at = weir__window_offset (w, (size_t) (line - w->buf));
    if (!sink->skip)
        return s_fail (shard, first, lines, at, where, err, problem);
    char reason[256];
    if (where)
        snprintf (reason, sizeof reason, "%s (column %zu)", problem, where);
    else
        snprintf (reason, sizeof reason, "%s", problem);
    return weir__window_reject_read (w, line, n, first, lines, reason, offset);
}

static int s_read (void *own, size_t max_line, weir__shard *shard, weir__window *w, uint64_t *offset,
                   weir__sink *sink, weir__err *err)
{
    s_json *self = own;
    weir__jsonparse *parser = s_take (self);
    if (!parser)
        return weir__err_set (err, WEIR_ENOMEM, "json: out of memory");
    const uint64_t first = *offset;
    uint64_t lines = 0;  //  lines read by this call
    int rc;
    for (;;) {
        const char *line;
        size_t n;
        rc = weir__window_line (w, "json", &line, &n, err);
        if (rc == WEIR__WINDOW_FULL) {
            char problem[64];
            snprintf (problem, sizeof problem, "line longer than max-line=%zu bytes", max_line);
            if (sink->skip) {
                if ((rc = weir__window_reject_line (w, "json", problem, offset, err)))
                    break;
                lines++;
                continue;
            }
            rc = s_fail (shard, first, lines, weir__window_offset (w, w->lo), 0, err, problem);
        }
        if (rc || !line)
            break;
        uint64_t at = weir__window_offset (w, (size_t) (line - w->buf));
        size_t skip = at == 0 && n >= 3 && memcmp (line, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
        if (s_blank (line + skip, n - skip)) {
            lines++;
            *offset = weir__window_offset (w, w->lo);
            continue;
        }
        size_t where;
        const char *problem;
        rc = weir__jsonparse_pack (parser, line + skip, n - skip, &sink->batch, &where, &problem);
        if (rc == WEIR__JSONPARSE_MALFORMED) {
            size_t column = where == WEIR__JSONPARSE_NOWHERE ? 0 : skip + where + 1;
            if ((rc = s_malformed (shard, w, offset, sink, first, lines, line, n, column, problem, err)))
                break;
            lines++;
            continue;
        }
        if (rc) {
            rc = WEIR_ENOMEM;
            break;
        }
        //  The record is in the batch, and the offset past it, before the
        //  sink may pause the epoch
        lines++;
        *offset = weir__window_offset (w, w->lo);
        if ((rc = weir__sink_add (sink)))
            break;
    }
    if (rc == WEIR_ENOMEM)
        weir__err_set (err, rc, "json: out of memory");
    s_give (self, parser);
    return rc;
}

static void s_pool_close (void *own)
{
    s_json *self = own;
    for (size_t i = 0; i < self->count; i++)
        weir__jsonparse_destroy (self->idle[i]);
    free (self->idle);
    pthread_mutex_destroy (&self->lock);
    free (self);
}

static const weir__filereader_class s_files = {
    .reader = &weir__reader_json,
    .lines = 1,
    .follows = 1,
    //  simdjson parses documents of up to 4 GiB
    .largest = 4000000000,
    .open = s_pool_open,
    .read = s_read,
    .close = s_pool_close,
};

static int s_open (weir__props *props, void **state, weir__shards *shards, weir__err *err)
{
    return weir__filereader_open (&s_files, props, state, shards, err);
}

const weir__reader_class weir__reader_json = WEIR__FILEREADER_READER (
    "json", "JSON Lines: each line of text files as one JSON value, one msgpack record", s_props, s_open,
    WEIR__RECORDS_VALUES);

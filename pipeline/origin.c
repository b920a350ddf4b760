/*  pipeline/origin.c - where a reader's records were read.  */
#include "config.h"
#include "pipeline/origin.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/scan.h"
#include "readers/lineno.h"
#include "readers/source.h"

void weir__origin_mark (weir__worker *r)
{
    weir__batch *b = &r->sink.batch;
    weir__input *input = r->stage->input;
    if (b->count == 0) {
        b->origins = 0;
        b->origin_open = 0;
    }
    //  The run being added to goes on while the shard in hand is its own
    weir__batch_origin *last = b->origins ? &b->origin[b->origins - 1] : NULL;
    if (b->origin_open && r->shard != SIZE_MAX && last->shard == (uint32_t) r->shard)
        return;
    weir__origin_cut (r);
    if (r->shard == SIZE_MAX || b->origins == WEIR__BATCH_ORIGINS || weir__input_follows (input))
        return;
    b->origin_stage = (uint32_t) r->stage->index + 1;
    b->origin[b->origins++] = (weir__batch_origin){
        .offset = weir__input_offset (input, r->shard),
        .shard = (uint32_t) r->shard,
        .first = b->count,
    };
    b->origin_open = 1;
}

void weir__origin_cut (weir__worker *r)
{
    weir__batch *b = &r->sink.batch;
    if (!b->origin_open)
        return;
    weir__batch_origin *last = &b->origin[b->origins - 1];
    last->count = b->count - last->first;
    //  A run of none says nothing
    if (last->count == 0)
        b->origins--;
    b->origin_open = 0;
}

//  The byte where the line of record SKIP from byte AT of FD starts, one
//  record per line, or per line not blank (VALUES), and the newlines
//  from AT to it: 0 with *FOUND and *PASSED, or -1
static int s_find_line (int fd, uint64_t at, uint64_t skip, int values, uint64_t *found, uint64_t *passed)
{
    const size_t size = 1u << 16;
    char *buf = malloc (size);
    if (!buf)
        return -1;
    //  The line being read: where it starts, and whether a byte of it is
    //  not blank (only json counts blank lines out)
    uint64_t start = at, pos = at, lines = 0;
    int seen = 0;
    int rc = -1;
    //  The json reader skips a byte order mark at the file's start: it
    //  makes no line a value
    unsigned char bom[3];
    if (values && at == 0 && pread (fd, bom, 3, 0) == 3 && bom[0] == 0xef && bom[1] == 0xbb && bom[2] == 0xbf)
        pos = 3;
    for (;;) {
        ssize_t n = pread (fd, buf, size, (off_t) pos);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            //  A last line without its newline
            if (n == 0 && pos > start && skip == 0 && (seen || !values)) {
                *found = start;
                *passed = lines;
                rc = 0;
            }
            break;
        }
        int done = 0;
        for (ssize_t i = 0; i < n && !done; i++) {
            char c = buf[i];
            if (c != '\n') {
                seen |= c != ' ' && c != '\t' && c != '\r';
                continue;
            }
            int counts = !values || seen;
            if (counts && skip == 0) {
                *found = start;
                *passed = lines;
                done = 1;
                rc = 0;
            }
            else if (counts)
                skip--;
            start = pos + (uint64_t) i + 1;
            lines++;
            seen = 0;
        }
        if (done)
            break;
        pos += (uint64_t) n;
    }
    free (buf);
    return rc;
}

//  The record of the batch at DATA that ends at byte END (the decoder's
//  offset while process has it): its index and the byte it starts at,
//  and where record FIRST starts.  Found only for a message: the apply
//  loop notes nothing record by record.  -1 when the bytes do not scan
static int s_record (const char *data, size_t end, uint64_t first, uint64_t *index, size_t *start,
                     size_t *first_at)
{
    size_t at = 0, size, where;
    *first_at = 0;
    for (uint64_t i = 0; at < end; i++) {
        if (i == first)
            *first_at = at;
        if (weir__scan (data + at, end - at, &size, &where) != WEIR__SCAN_OK)
            return -1;
        *index = i;
        *start = at;
        at += size;
    }
    return at == end && end ? 0 : -1;
}

void weir__origin_where (const weir__worker *w, char *buf, size_t size)
{
    const weir__batch_header *h = w->origin;
    *buf = 0;
    const weir__shared *run = w->stage->run;
    if (!h || !h->origin_stage || h->origin_stage > run->nstages)
        return;
    //  The record: its index in the batch, where it starts
    uint64_t index;
    size_t start, ignored;
    if (s_record (w->decoder.data, w->decoder.off, 0, &index, &start, &ignored))
        return;
    //  The run it is in, if any
    const weir__batch_origin *o = NULL;
    for (uint32_t i = 0; i < h->origins && i < WEIR__BATCH_ORIGINS && !o; i++)
        if (index >= h->origin[i].first && index - h->origin[i].first < h->origin[i].count)
            o = &h->origin[i];
    const weir__stage *reader = run->stages[h->origin_stage - 1];
    const weir__input *input = reader->input;
    const weir__shards *shards = input ? weir__input_shards_const (input) : NULL;
    if (!o || !shards || o->shard >= shards->count)
        return;
    const weir__shard *shard = &shards->items[o->shard];
    const char *path = shard->path;
    uint64_t skip = index - o->first, at = o->offset;
    weir__records_kind kind = weir__input_records (input);
    if (kind == WEIR__RECORDS_SELF)
        return;
    if (path && kind == WEIR__RECORDS_VERBATIM) {
        //  The run's records are the shard's bytes from AT on, and the
        //  batch's bytes from its first record's
        size_t from;
        s_record (w->decoder.data, w->decoder.off, o->first, &index, &start, &from);
        snprintf (buf, size, "; the record at byte %" PRIu64 " of '%s'%s", at + (uint64_t) (start - from),
                  path, shard->codec != WEIR__CODEC_NONE ? " (decompressed)" : "");
        return;
    }
    //  Read again: a regular file only (a FIFO is opened without waiting
    //  for a writer, and left; standard input cannot be read twice)
    if (path && shard->codec == WEIR__CODEC_NONE
        && (kind == WEIR__RECORDS_LINES || kind == WEIR__RECORDS_VALUES) && !weir__source_is_stdin (path)) {
        int fd = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        struct stat st;
        if (fd >= 0 && (fstat (fd, &st) || !S_ISREG (st.st_mode))) {
            close (fd);
            fd = -1;
        }
        uint64_t line_at, passed, before;
        weir__err err;
        weir__err_init (&err);
        int found =
            fd >= 0 && s_find_line (fd, at, skip, kind == WEIR__RECORDS_VALUES, &line_at, &passed) == 0;
        if (fd >= 0)
            close (fd);
        //  The newlines before the run, then those the search passed
        if (found && weir__lineno_count (reader->name, path, at, &before, &err) == 0) {
            snprintf (buf, size, "; the record at line %" PRIu64 " of '%s' (byte %" PRIu64 ")",
                      before + passed + 1, path, line_at);
            return;
        }
    }
    //  Named by its count among those read from where its run began (not
    //  an offset: a Kafka partition's have gaps)
    if (path)
        snprintf (buf, size, "; record %" PRIu64 " of those read from offset %" PRIu64 " of '%s'%s", skip + 1,
                  at, path, shard->codec != WEIR__CODEC_NONE ? " (decompressed)" : "");
    else
        snprintf (buf, size,
                  "; record %" PRIu64 " of those read from offset %" PRIu64 " of shard %" PRIu32 " of '%s'",
                  skip + 1, at, o->shard, reader->name);
}

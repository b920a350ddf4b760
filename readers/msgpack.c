/*  readers/msgpack.c - each msgpack object of stream files.

    A stream file is msgpack objects back to back.  Every object is scanned
    before it goes anywhere (lib/scan.h): structure, depth and size are
    checked without decoding, so a hostile file costs one pass and gets a
    message naming the file and the byte offset, never a crash or an
    allocation of what it declares.  Valid objects are copied into batches
    as raw bytes.  Object boundaries cannot be found from the middle of a
    file, so a file larger than split= is read through once when the job
    starts, object by object with the same scan, and cut into shards at
    boundaries (readers/files.h): threads and ranks share one big file.
    Files, shards, windows and following are the skeleton's
    (readers/filereader.h).  */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "lib/scan.h"
#include "readers/filereader.h"

static const weir_property_info s_props[] = {
    WEIR__FILEREADER_PATH ("msgpack stream files"),
    WEIR__FILEREADER_SPLIT_RECORDS,
    WEIR__FILEREADER_MAX_RECORD,
    {"max-elements", "8M", "refuse records of more objects than this (decoded, each costs about 24 bytes)"},
    WEIR__FILEREADER_FOLLOW (" (a record cut at the end is waited for)", ""),
    WEIR__FILEREADER_ROTATE_WAIT,
    WEIR__FILEREADER_SNIFF,
    {NULL, NULL, NULL},
};

//  The own state of the msgpack reader: max-elements=
static int s_limit_open (weir__props *props, void **own, weir__err *err)
{
    int64_t max_elements;
    int rc =
        weir__filereader_int (&weir__reader_msgpack, props, "max-elements", 1, INT64_MAX, &max_elements, err);
    if (rc)
        return rc;
    uint64_t *limit = malloc (sizeof *limit);
    if (!limit)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    *limit = (uint64_t) max_elements;
    *own = limit;
    return 0;
}

//  The bytes from buf[lo] on are no record: PROBLEM at byte AT of the
//  file.  With sink->skip all of them go to reject() for REASON, to the
//  end of the range (0 or what reject said), else the read fails.
static int s_refuse (weir__window *w, const char *reason, const char *problem, uint64_t at, uint64_t *offset,
                     weir__sink *sink, weir__err *err)
{
    if (sink->skip)
        return weir__window_reject_rest (w, "msgpack", reason, offset, err);
    return weir__err_set (err, WEIR_ECORRUPT, "msgpack: '%s' at byte %llu: %s" WEIR__SKIP_HINT, w->shard->path,
                          (unsigned long long) at, problem);
}

//  The scanner refused the record at buf[lo] (R, at byte WHERE of it).
static int s_malformed (weir__window *w, weir__scan_result r, size_t where, uint64_t max_elements,
                        uint64_t *offset, weir__sink *sink, weir__err *err)
{
    char reason[128];
    if (r == WEIR__SCAN_TOO_LARGE) {
        snprintf (reason, sizeof reason, "record too large: more than max-elements=%llu objects",
                  (unsigned long long) max_elements);
        return s_refuse (w, reason, reason, weir__window_offset (w, w->lo), offset, sink, err);
    }
    snprintf (reason, sizeof reason, "%s at byte %llu of the record", weir__scan_strerror (r),
              (unsigned long long) where);
    return s_refuse (w, reason, weir__scan_strerror (r), weir__window_offset (w, w->lo + where), offset, sink,
                     err);
}

static int s_read (void *own, size_t max_record, weir__shard *shard, weir__window *w, uint64_t *offset,
                   weir__sink *sink, weir__err *err)
{
    const uint64_t max_elements = *(const uint64_t *) own;
    int rc = 0;
    for (;;) {
        size_t size = 0, where = 0;
        weir__scan_result r = WEIR__SCAN_INCOMPLETE;
        if (w->hi > w->lo)
            r = weir__scan_limited (w->buf + w->lo, w->hi - w->lo, max_elements, &size, &where);
        if (r == WEIR__SCAN_OK) {
            if (weir__batch_append (&sink->batch, w->buf + w->lo, size)) {
                rc = weir__err_set (err, WEIR_ENOMEM, "msgpack: out of memory");
                break;
            }
            w->lo += size;
            *offset = weir__window_offset (w, w->lo);
            if ((rc = weir__sink_add (sink)))
                break;
            continue;
        }
        if (r != WEIR__SCAN_INCOMPLETE) {
            if ((rc = s_malformed (w, r, where, max_elements, offset, sink, err)))
                break;
            continue;
        }
        if (w->eof && w->hi > w->lo) {
            const char *cut = "truncated record (the file ends inside it)";
            if ((rc = s_refuse (w, cut, cut, weir__window_offset (w, w->lo), offset, sink, err)))
                break;
            continue;
        }
        if (w->eof && weir__window_next_file (w))
            continue;
        if (w->eof)
            break;
        rc = weir__window_fill (w, "msgpack", err);
        if (rc == WEIR__WINDOW_FULL) {
            char large[96];
            snprintf (large, sizeof large, "record larger than max-record=%zu bytes", max_record);
            if ((rc = s_refuse (w, large, large, weir__window_offset (w, w->lo), offset, sink, err)))
                break;
            continue;
        }
        if (rc)
            break;
    }
    return rc;
}

//  The plan's scan for record boundaries: as the read scans, with the same
//  max-elements= (OWN)
static int s_scan (void *own, const char *buf, size_t len, size_t *size)
{
    size_t where;
    weir__scan_result r = weir__scan_limited (buf, len, *(const uint64_t *) own, size, &where);
    return r == WEIR__SCAN_OK ? 1 : r == WEIR__SCAN_INCOMPLETE ? 0 : -1;
}

static const weir__filereader_class s_files = {
    .reader = &weir__reader_msgpack,
    .follows = 1,
    .scan = s_scan,
    .open = s_limit_open,
    .read = s_read,
    .close = free,
};

static int s_open (weir__props *props, void **state, weir__shards *shards, weir__err *err)
{
    return weir__filereader_open (&s_files, props, state, shards, err);
}

const weir__reader_class weir__reader_msgpack = WEIR__FILEREADER_READER (
    "msgpack", "each msgpack object of stream files", s_props, s_open, WEIR__RECORDS_VERBATIM);

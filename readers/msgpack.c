/*  readers/msgpack.c - each msgpack object of stream files.

    A stream file is msgpack objects back to back.  Every object is scanned
    before it goes anywhere (lib/scan.h): structure, depth and size are
    checked without decoding, so a hostile file costs one pass and gets a
    message naming the file and the byte offset, never a crash or an
    allocation of what it declares.  Valid objects are copied into batches
    as raw bytes.  Each file is one shard: object boundaries cannot be found
    from the middle of a file.  */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "lib/scan.h"
#include "readers/files.h"
#include "readers/follow.h"
#include "readers/reader.h"
#include "readers/window.h"

typedef struct {
    size_t max_record;
    uint64_t max_elements;
    weir__follow *follow;  //  follow=1, else NULL
} s_msgpack;

static const weir_property_info s_props[] = {
    {"path", NULL, "file or glob of msgpack stream files (required); each file is a shard"},
    {"max-record", "64M", "refuse records larger than this many bytes"},
    {"max-elements", "8M", "refuse records of more objects than this (decoded, each costs about 24 bytes)"},
    {"follow", "0",
     "1: like tail -F, wait for the files to grow (a record cut at the end is waited for), pick up new "
     "files, follow rotations and truncations (one thread)"},
    {"rotate-wait", "1000",
     "with follow=1: ms a rotated file must be quiet before it is left for the new one"},
    {NULL, NULL, NULL},
};

static int s_open (weir__props *props, void **state, weir__shards *shards, weir__err *err)
{
    const char *pattern = weir__props_get (props, "path", NULL);
    if (!pattern)
        return weir__err_set (err, WEIR_EPROPERTY, "msgpack: property 'path' is required");
    int64_t max_record;
    int64_t max_elements;
    int rc = weir__props_int (props, "msgpack", "max-record", 64000000, 1, SIZE_MAX / 4, &max_record, err);
    if (!rc)
        rc = weir__props_int (props, "msgpack", "max-elements", 8000000, 1, INT64_MAX, &max_elements, err);
    weir__follow *follow = NULL;
    if (rc || (rc = weir__follow_open ("msgpack", props, pattern, shards, &follow, err)))
        return rc;
    if (!follow && (rc = weir__files_plan ("msgpack", pattern, WEIR__FILES_WHOLE, shards, err)))
        return rc;
    s_msgpack *self = malloc (sizeof *self);
    if (!self) {
        weir__follow_destroy (&follow);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    self->max_record = (size_t) max_record;
    self->max_elements = (uint64_t) max_elements;
    self->follow = follow;
    *state = self;
    return 0;
}

static int s_read (void *state, weir__shard *shard, uint64_t *offset, weir__sink *sink, weir__err *err)
{
    const s_msgpack *self = state;
    weir__window w;
    int rc = weir__window_open (&w, "msgpack", shard, offset, self->max_record,
                                weir__follow_rotate_wait (self->follow), sink, err);
    if (rc == WEIR__WINDOW_DRY)
        return WEIR__READ_DRY;
    if (rc)
        return rc;
    for (;;) {
        size_t size = 0, where = 0;
        weir__scan_result r = WEIR__SCAN_INCOMPLETE;
        if (w.hi > w.lo)
            r = weir__scan_limited (w.buf + w.lo, w.hi - w.lo, self->max_elements, &size, &where);
        if (r == WEIR__SCAN_OK) {
            if (weir__batch_append (&sink->batch, w.buf + w.lo, size)) {
                rc = weir__err_set (err, WEIR_ENOMEM, "msgpack: out of memory");
                break;
            }
            w.lo += size;
            *offset = weir__window_offset (&w, w.lo);
            if ((rc = weir__sink_add (sink)))
                break;
            continue;
        }
        if (r != WEIR__SCAN_INCOMPLETE && sink->skip) {
            char reason[128];
            if (r == WEIR__SCAN_TOO_LARGE)
                snprintf (reason, sizeof reason, "record too large: more than max-elements=%llu objects",
                          (unsigned long long) self->max_elements);
            else
                snprintf (reason, sizeof reason, "%s at byte %llu of the record", weir__scan_strerror (r),
                          (unsigned long long) where);
            if ((rc = weir__window_reject_rest (&w, "msgpack", reason, offset, err)))
                break;
            continue;
        }
        if (r == WEIR__SCAN_TOO_LARGE) {
            rc = weir__err_set (
                err, WEIR_ECORRUPT,
                "msgpack: '%s' at byte %llu: record too large: more than max-elements=%llu objects",
                shard->path, (unsigned long long) weir__window_offset (&w, w.lo),
                (unsigned long long) self->max_elements);
            break;
        }
        if (r != WEIR__SCAN_INCOMPLETE) {
            rc = weir__err_set (err, WEIR_ECORRUPT, "msgpack: '%s' at byte %llu: %s", shard->path,
                                (unsigned long long) weir__window_offset (&w, w.lo + where),
                                weir__scan_strerror (r));
            break;
        }
        if (w.eof && w.hi > w.lo && sink->skip) {
            if ((rc = weir__window_reject_rest (&w, "msgpack", "truncated record (the file ends inside it)",
                                                offset, err)))
                break;
            continue;
        }
        if (w.eof && w.hi == w.lo && weir__window_next_file (&w))
            continue;
        if (w.eof) {
            if (w.hi > w.lo)
                rc = weir__err_set (err, WEIR_ECORRUPT,
                                    "msgpack: '%s' at byte %llu: truncated record (the file ends "
                                    "inside it)",
                                    shard->path, (unsigned long long) weir__window_offset (&w, w.lo));
            break;
        }
        rc = weir__window_fill (&w, "msgpack", err);
        if (rc == WEIR__WINDOW_FULL && sink->skip) {
            char reason[96];
            snprintf (reason, sizeof reason, "record larger than max-record=%zu bytes", self->max_record);
            if ((rc = weir__window_reject_rest (&w, "msgpack", reason, offset, err)))
                break;
            continue;
        }
        if (rc == WEIR__WINDOW_FULL) {
            rc = weir__err_set (
                err, WEIR_ECORRUPT, "msgpack: '%s' at byte %llu: record larger than max-record=%zu bytes",
                shard->path, (unsigned long long) weir__window_offset (&w, w.lo), self->max_record);
            break;
        }
        if (rc)
            break;
    }
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
    s_msgpack *self = state;
    weir__follow_destroy (&self->follow);
    free (self);
}

static int s_discover (void *state, weir__shards *shards, weir__err *err)
{
    s_msgpack *self = state;
    return self->follow ? weir__follow_discover (self->follow, shards, err) : 0;
}

static int s_wait (void *state, weir__sink *sink)
{
    s_msgpack *self = state;
    return weir__follow_wait (self->follow, sink);
}

const weir__reader_class weir__reader_msgpack = {
    "msgpack", "each msgpack object of stream files", s_props, s_open, s_read, s_close, s_discover, s_wait,
};

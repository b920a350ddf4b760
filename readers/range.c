/*  readers/range.c - the integers start .. start+count-1.

    The range is cut into shards by its count alone (never by the thread
    count), so its shards are the same whatever the threads: 64k integers
    each, or 1/1024 of the range for large ones, so that a checkpoint
    holds at most about a thousand offsets.  */
#include "config.h"

#include <stdlib.h>

#include "lib/pack.h"
#include "readers/reader.h"

#define S_SHARD 65536
#define S_MAX_SHARDS 1024

typedef struct {
    int64_t start, count;
} s_range;

static const weir_property_info s_props[] = {
    {"count", NULL, "how many integers (required; k, M, G suffixes allowed)"},
    {"start", "0", "the first integer"},
    {NULL, NULL, NULL},
};

static int s_open (weir__props *props, void **state, weir__shards *shards, weir__err *err)
{
    if (!weir__props_find (props, "count"))
        return weir__err_set (err, WEIR_EPROPERTY, "range: property 'count' is required");
    int64_t count, start;
    int rc = weir__props_int (props, "range", "count", 0, 0, INT64_MAX, &count, err);
    if (!rc)
        rc = weir__props_int (props, "range", "start", 0, INT64_MIN, INT64_MAX, &start, err);
    if (rc)
        return rc;
    if (count > 0 && start > INT64_MAX - (count - 1)) {
        weir__prop *p = weir__props_find (props, "count");
        return weir__err_at (err, WEIR_EPROPERTY, p->value_offset,
                             "range: start + count - 1 overflows a 64-bit integer");
    }
    s_range *self = malloc (sizeof *self);
    if (!self)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    self->start = start;
    self->count = count;
    //  Shards hold indexes into the range, so that they stay unsigned
    uint64_t size = (uint64_t) count / S_MAX_SHARDS + 1;
    if (size < S_SHARD)
        size = S_SHARD;
    for (uint64_t i = 0; i < (uint64_t) count; i += size) {
        uint64_t end = (uint64_t) count - i < size ? (uint64_t) count : i + size;
        if (weir__shards_add (shards, NULL, i, end)) {
            free (self);
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        }
    }
    *state = self;
    return 0;
}

static int s_read (void *state, weir__shard *shard, uint64_t *offset, weir__sink *sink, weir__err *err)
{
    const s_range *self = state;
    for (uint64_t i = *offset; i < shard->end; i++) {
        if (weir__pack_int64 (&sink->batch, self->start + (int64_t) i))
            return weir__err_set (err, WEIR_ENOMEM, "range: out of memory");
        *offset = i + 1;
        int rc = weir__sink_add (sink);
        if (rc)
            return rc;
    }
    return 0;
}

static void s_close (void *state)
{
    free (state);
}

const weir__reader_class weir__reader_range = {
    "range",
    "the integers start .. start+count-1",
    s_props,
    s_open,
    s_read,
    s_close,
    NULL,
    NULL,
    NULL,
    NULL,
    WEIR__RECORDS_SELF,
};

/*  pipeline/cache.c - a reader's records kept in memory for the passes
    after the first.  */
#include "config.h"
#include "pipeline/cache.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/batch.h"

enum { S_EMPTY, S_KEEPING, S_WHOLE, S_DROPPED };

//  One shard's records: their bytes back to back, and for record i the
//  end of its bytes (at[i]) and the shard offset just past it (ends[i])
typedef struct {
    int state;
    char *bytes;
    size_t len, cap;
    uint64_t *ends;
    size_t *at;
    size_t count, slots;
    uint64_t charged;  //  of the cache's room: the capacities above
    uint64_t last;     //  the offset the next record starts at
    uint64_t final;    //  S_WHOLE: where the read left the offset at the shard's end
    weir__cache *cache;  //  it belongs to
    //  While a read keeps it: the offset being moved, the end of the
    //  batch's last record, and the sink's reject() it wraps
    const uint64_t *offset;
    const char *path;  //  the shard's file, or NULL
    size_t mark;
    int (*reject) (weir__sink *, const weir__bad *);
} s_tape;

struct weir__cache {
    uint64_t limit;
    _Atomic uint64_t used;
    _Atomic uint64_t replayed;
    atomic_int warned;
    s_tape *tapes;
    size_t count;
};

weir__cache *weir__cache_new (uint64_t limit, size_t shards)
{
    weir__cache *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->tapes = calloc (shards ? shards : 1, sizeof *self->tapes);
    if (!self->tapes) {
        free (self);
        return NULL;
    }
    self->limit = limit;
    self->count = shards;
    for (size_t i = 0; i < shards; i++)
        self->tapes[i].cache = self;
    atomic_init (&self->used, 0);
    atomic_init (&self->replayed, 0);
    atomic_init (&self->warned, 0);
    return self;
}

static void s_tape_free (weir__cache *self, s_tape *t)
{
    free (t->bytes);
    free (t->ends);
    free (t->at);
    atomic_fetch_sub (&self->used, t->charged);
    t->bytes = NULL;
    t->ends = NULL;
    t->at = NULL;
    t->len = t->cap = t->count = t->slots = 0;
    t->charged = 0;
}

void weir__cache_destroy (weir__cache **self_p)
{
    weir__cache *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < self->count; i++)
        s_tape_free (self, &self->tapes[i]);
    free (self->tapes);
    free (self);
    *self_p = NULL;
}

uint64_t weir__cache_bytes (const weir__cache *self)
{
    return atomic_load (&((weir__cache *) self)->used);
}

uint64_t weir__cache_replayed (const weir__cache *self)
{
    return atomic_load_explicit (&((weir__cache *) self)->replayed, memory_order_relaxed);
}

//  Charge N more bytes to the cache: 0, or -1 when it has no room
static int s_charge (weir__cache *self, s_tape *t, uint64_t n)
{
    //  Added only when it fits: a request refused never counts, not even
    //  for the moment another thread's may look
    uint64_t used = atomic_load (&self->used);
    do
        if (n > self->limit || used > self->limit - n)
            return -1;
    while (!atomic_compare_exchange_weak (&self->used, &used, used + n));
    t->charged += n;
    return 0;
}

//  A new capacity for an array of CAP units (UNIT bytes each) that must
//  hold WANT: twice CAP while that takes at most half the cache's room
//  left, else WANT and an eighth of CAP, so that near the limit one array
//  does not take the room another will need
static size_t s_grown (const weir__cache *self, size_t cap, size_t want, size_t first, size_t unit)
{
    size_t next = cap ? cap : first;
    while (next < want)
        next *= 2;
    uint64_t used = weir__cache_bytes (self), left = used < self->limit ? self->limit - used : 0;
    size_t small = want + cap / 8;
    if ((next - cap) * unit > left / 2 && small < next)
        next = small;
    return next;
}

//  Grow T for a record of N bytes: 0, or -1 (no room in the cache, or no
//  memory)
static int s_room (weir__cache *self, s_tape *t, size_t n)
{
    if (t->len + n > t->cap) {
        size_t cap = s_grown (self, t->cap, t->len + n, 65536, 1);
        char *bytes;
        if (s_charge (self, t, cap - t->cap) || !(bytes = realloc (t->bytes, cap)))
            return -1;
        t->bytes = bytes;
        t->cap = cap;
    }
    if (t->count == t->slots) {
        size_t slots = s_grown (self, t->slots, t->count + 1, 1024, sizeof *t->ends + sizeof *t->at);
        uint64_t *ends;
        size_t *at;
        if (s_charge (self, t, (slots - t->slots) * (sizeof *ends + sizeof *at))
            || !(ends = realloc (t->ends, slots * sizeof *ends)))
            return -1;
        t->ends = ends;
        if (!(at = realloc (t->at, slots * sizeof *at)))
            return -1;
        t->at = at;
        t->slots = slots;
    }
    return 0;
}

//  T whole: the room its arrays grew into and do not use given back to
//  the cache, for the shards still to come
static void s_fit (weir__cache *self, s_tape *t)
{
    if (t->count == 0) {
        //  A shard of no records (blank lines only): nothing to hold
        s_tape_free (self, t);
        return;
    }
    size_t bytes = t->len ? t->len : 1, slots = t->count ? t->count : 1;
    char *b = realloc (t->bytes, bytes);
    uint64_t *ends = realloc (t->ends, slots * sizeof *ends);
    size_t *at = realloc (t->at, slots * sizeof *at);
    //  A failed shrink leaves the larger block, which is still good
    if (b)
        t->bytes = b;
    if (ends)
        t->ends = ends;
    if (at)
        t->at = at;
    if (b && ends && at) {
        uint64_t fitted = bytes + slots * (sizeof *ends + sizeof *at);
        atomic_fetch_sub (&self->used, t->charged - fitted);
        t->charged = fitted;
        t->cap = bytes;
        t->slots = slots;
    }
}

//  Stop keeping T: the shard is read from its reader every pass
static void s_drop (weir__cache *self, s_tape *t)
{
    s_tape_free (self, t);
    t->state = S_DROPPED;
}

//  The sink's keep(): the record just added, from the end of the one
//  before it in the batch (or the batch's start) to the batch's end
static void s_keep (weir__sink *sink)
{
    s_tape *t = sink->keep_arg;
    size_t from = sink->batch.count == 1 ? WEIR__BATCH_HEADER : t->mark;
    size_t n = sink->batch.len - from;
    t->mark = sink->batch.len;
    if (s_room (t->cache, t, n)) {
        s_drop (t->cache, t);
        sink->keep = NULL;
        if (sink->warn && !atomic_exchange (&t->cache->warned, 1)) {
            //  Said once: the shards that do not fit are read as without
            //  a cache, which is slower, never wrong
            char message[512];
            snprintf (
                message, sizeof message,
                "cache=%" PRIu64 " is full: %s%s%s does not fit and is read again every pass, as may be "
                "others (%" PRIu64
                " bytes kept now; each record takes its bytes and 16 more): a larger cache= would keep them",
                t->cache->limit, t->path ? "'" : "a shard", t->path ? t->path : "", t->path ? "'" : "",
                weir__cache_bytes (t->cache));
            sink->warn (sink, message);
        }
        return;
    }
    memcpy (t->bytes + t->len, sink->batch.data + from, n);
    t->len += n;
    t->at[t->count] = t->len;
    t->ends[t->count] = *t->offset;
    t->last = *t->offset;
    t->count++;
}

//  The sink's reject() while a shard is kept: a shard with a bad record
//  is not kept, so that each pass gives it to the dead letter again
static int s_reject (weir__sink *sink, const weir__bad *bad)
{
    s_tape *t = sink->keep_arg;
    int (*reject) (weir__sink *, const weir__bad *) = t->reject;
    s_drop (t->cache, t);
    sink->keep = NULL;
    sink->reject = reject;
    return reject (sink, bad);
}

//  Give the sink T's records from the one that starts at *OFFSET
static int s_replay (weir__cache *self, s_tape *t, size_t from, uint64_t *offset, weir__sink *sink,
                     weir__err *err)
{
    uint64_t given = 0;
    int rc = 0;
    for (size_t i = from; i < t->count && !rc;) {
        //  As many records as the batch and the quota take, in one copy;
        //  the last of them goes through weir__sink_add, which sends the
        //  batch or pauses exactly where adding them one by one would
        size_t k = t->count - i;
        size_t fit = sink->limit > sink->batch.count ? sink->limit - sink->batch.count : 1;
        if (k > fit)
            k = fit;
        if (k > sink->quota)
            k = (size_t) sink->quota;
        size_t start = i ? t->at[i - 1] : 0;
        if (weir__batch_append (&sink->batch, t->bytes + start, t->at[i + k - 1] - start)) {
            rc = weir__err_set (err, WEIR_ENOMEM, "out of memory for a batch");
            break;
        }
        sink->batch.count += (uint32_t) (k - 1);
        sink->quota -= k - 1;
        i += k;
        *offset = t->ends[i - 1];
        given += k;
        rc = weir__sink_add (sink);
    }
    atomic_fetch_add_explicit (&self->replayed, given, memory_order_relaxed);
    if (!rc)
        *offset = t->final;
    return rc;
}

//  The record of T that starts at OFFSET, or T->count when none does
static size_t s_find (const s_tape *t, uint64_t start, uint64_t offset)
{
    if (offset == start)
        return 0;
    //  The first record whose end is past OFFSET; it starts at OFFSET if
    //  the one before it ends there
    size_t lo = 0, hi = t->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->ends[mid] <= offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && lo < t->count && t->ends[lo - 1] == offset ? lo : t->count;
}

int weir__cache_read (weir__cache *self, size_t i, weir__shard *shard, uint64_t *offset, weir__sink *sink,
                      int (*read) (void *, weir__shard *, uint64_t *, weir__sink *, weir__err *), void *state,
                      weir__err *err)
{
    if (i >= self->count)
        return read (state, shard, offset, sink, err);
    s_tape *t = &self->tapes[i];
    if (t->state == S_WHOLE) {
        //  At the end of its records (a pause after the last one): at its
        //  end, without the reader, which might decompress a whole file
        //  to find nothing more
        if (t->count ? *offset == t->ends[t->count - 1] : *offset == shard->start) {
            *offset = t->final;
            return 0;
        }
        size_t from = s_find (t, shard->start, *offset);
        if (from < t->count)
            return s_replay (self, t, from, offset, sink, err);
        if (*offset == t->final)
            return 0;
        return read (state, shard, offset, sink, err);
    }
    if (t->state == S_EMPTY && *offset == shard->start) {
        t->state = S_KEEPING;
        t->last = *offset;
    }
    if (t->state != S_KEEPING)
        return read (state, shard, offset, sink, err);
    if (*offset != t->last) {
        //  Not where the kept records end: not one read of the whole shard
        s_drop (self, t);
        return read (state, shard, offset, sink, err);
    }
    t->offset = offset;
    t->path = shard->path;
    t->reject = sink->reject;
    sink->keep = s_keep;
    sink->keep_arg = t;
    sink->reject = s_reject;
    //  A batch with records of another shard in it: the next record starts
    //  at its end
    t->mark = sink->batch.len;
    int rc = read (state, shard, offset, sink, err);
    sink->keep = NULL;
    sink->keep_arg = NULL;
    if (sink->reject == s_reject)
        sink->reject = t->reject;
    if (t->state == S_KEEPING && rc == 0) {
        t->state = S_WHOLE;
        t->final = *offset;
        s_fit (self, t);
    }
    else if (t->state == S_KEEPING && rc == WEIR__SINK_PAUSE)
        t->last = *offset;  //  past what the reader skipped, if anything
    else if (t->state == S_KEEPING)
        s_drop (self, t);
    return rc;
}

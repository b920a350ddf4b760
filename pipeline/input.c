/*  pipeline/input.c - a reader stage's shards and offsets.  */
#include "config.h"
#include "pipeline/input.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pipeline/cache.h"
#include "readers/source.h"

//  The offsets of a checkpoint being written, for readers that settle
//  (readers/reader.h).  At most two, as for outputs (pipeline/output.c)
typedef struct {
    int used;
    uint64_t epoch;
    uint64_t *offsets;
    size_t count;
} s_saved;

struct weir__input {
    const weir__reader_class *cls;
    void *state;  //  the reader's, while open
    unsigned passes;
    weir__shards shards;
    uint64_t *offsets;   //  per shard: where reading goes on (the thread holding it writes it)
    atomic_size_t next;  //  the next shard to take
    unsigned rank, ranks;
    uint64_t total;                //  the shards' sizes times the passes, 0 if unknown
    _Atomic uint64_t done;         //  of it, read so far
    _Atomic uint64_t truncations;  //  followed files found truncated in place
    //  Followed files: each shard's file size when last seen, and its
    //  bytes past the offset then (the reading thread's alone), and
    //  their sum for any thread
    uint64_t *sizes, *behind;
    size_t nbehind;
    _Atomic uint64_t behind_total;
    s_saved saved[2];  //  oldest first
    uint64_t cache_limit;  //  cache=, 0 for none
    weir__cache *cache;
};

weir__input *weir__input_new (const weir__reader_class *cls)
{
    weir__input *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->cls = cls;
    self->passes = 1;
    self->ranks = 1;
    weir__shards_init (&self->shards);
    atomic_init (&self->next, 0);
    atomic_init (&self->done, 0);
    atomic_init (&self->truncations, 0);
    return self;
}

void weir__input_destroy (weir__input **self_p)
{
    weir__input *self = *self_p;
    if (!self)
        return;
    weir__input_close (self);
    weir__shards_release (&self->shards);
    free (self->offsets);
    free (self->sizes);
    free (self->behind);
    free (self->saved[0].offsets);
    free (self->saved[1].offsets);
    weir__cache_destroy (&self->cache);
    free (self);
    *self_p = NULL;
}

unsigned weir__input_passes (const weir__input *self)
{
    return self->passes;
}

int weir__input_open (weir__input *self, const char *element, long where, weir__props *props,
                      unsigned threads, weir__err *err)
{
    int64_t passes, cache;
    int rc = weir__props_int (props, element, "passes", 1, 1, 1000000, &passes, err);
    if (!rc)
        self->passes = (unsigned) passes;
    if (!rc && !(rc = weir__props_int (props, element, "cache", 0, 0, INT64_MAX, &cache, err)) && cache > 0
        && passes == 1) {
        weir__prop *p = weir__props_find (props, "cache");
        return weir__err_at (err, WEIR_EPROPERTY, p->value_offset,
                             "%s: cache= keeps the records of a pass for the passes after it, and with "
                             "passes=1 there are none: give passes=N, or leave cache= out",
                             element);
    }
    if (!rc)
        self->cache_limit = (uint64_t) cache;
    if (rc || (rc = self->cls->open (props, &self->state, &self->shards, err)) || !self->shards.follow)
        return rc;
    //  Following is waiting, not work: one thread serves every file
    const char *culprit = NULL;
    if (threads > 1) {
        weir__err_set (err, WEIR_EPROPERTY, "%s: follow=1 reads its files with one thread, not threads=%u",
                       element, threads);
        culprit = "threads";
    }
    else if (passes > 1) {
        weir__err_set (err, WEIR_EPROPERTY,
                       "%s: follow=1 never reaches the end of its input, so passes=%u cannot be", element,
                       (unsigned) passes);
        culprit = "passes";
    }
    else if (self->ranks > 1)
        weir__err_set (err, WEIR_ESTRUCTURE,
                       "%s: follow=1 is not supported yet in a job of several ranks (%u)", element,
                       self->ranks);
    else
        return 0;
    weir__prop *p = culprit ? weir__props_find (props, culprit) : NULL;
    err->offset = p ? p->value_offset : where;
    return err->code;
}

weir__records_kind weir__input_records (const weir__input *self)
{
    return self->cls->records;
}

int weir__input_follows (const weir__input *self)
{
    return self->shards.follow;
}

const char *weir__input_stream (const weir__input *self)
{
    for (size_t i = 0; i < self->shards.count; i++) {
        struct stat st;
        const char *path = self->shards.items[i].path;
        if (path && !weir__source_stat (path, &st)
            && (S_ISFIFO (st.st_mode) || S_ISCHR (st.st_mode) || S_ISSOCK (st.st_mode)))
            return path;
    }
    return NULL;
}

int weir__input_live (const weir__input *self)
{
    return self->shards.follow || weir__input_stream (self);
}

void weir__input_share (weir__input *self, unsigned rank, unsigned ranks)
{
    self->rank = rank;
    self->ranks = ranks ? ranks : 1;
}

weir__shards *weir__input_shards (weir__input *self)
{
    return &self->shards;
}

const weir__shards *weir__input_shards_const (const weir__input *self)
{
    return &self->shards;
}

int weir__input_start (weir__input *self, weir__err *err)
{
    size_t n = self->shards.count;
    free (self->offsets);
    self->offsets = calloc (n ? n : 1, sizeof *self->offsets);
    if (!self->offsets)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        self->offsets[i] = self->shards.items[i].start;
    weir__cache_destroy (&self->cache);
    if (self->cache_limit && !(self->cache = weir__cache_new (self->cache_limit, n)))
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    return 0;
}

uint64_t *weir__input_offsets (weir__input *self)
{
    return self->offsets;
}

void weir__input_plan (weir__input *self, unsigned pass)
{
    uint64_t size = 0, done = 0;
    for (size_t i = 0; i < self->shards.count; i++) {
        const weir__shard *s = &self->shards.items[i];
        if (s->end == UINT64_MAX) {
            //  A pipe or standard input: its end is not known
            self->total = 0;
            return;
        }
        size += s->end - s->start;
        done += self->offsets[i] - s->start;
    }
    self->total = size * self->passes;
    atomic_store (&self->done, size * pass + done);
}

uint64_t weir__input_uncached_pass (const weir__input *self, uint64_t min)
{
    if (self->passes < 2 || self->cache_limit || !self->total || self->shards.follow)
        return 0;
    //  Files only: a range's size counts integers, not bytes
    for (size_t i = 0; i < self->shards.count; i++)
        if (!self->shards.items[i].path)
            return 0;
    uint64_t pass = self->total / self->passes;
    return pass >= min ? pass : 0;
}

void weir__input_rewind (weir__input *self)
{
    for (size_t i = 0; i < self->shards.count; i++)
        self->offsets[i] = self->shards.items[i].start;
    atomic_store (&self->next, 0);
}

size_t weir__input_take (weir__input *self)
{
    for (;;) {
        size_t i = atomic_fetch_add (&self->next, 1);
        if (i >= self->shards.count)
            return SIZE_MAX;
        //  Another rank's shard
        if (self->ranks > 1 && i % self->ranks != self->rank)
            continue;
        if (self->offsets[i] < self->shards.items[i].end)
            return i;
    }
}

int weir__input_read (weir__input *self, size_t shard, weir__sink *sink, weir__err *err)
{
    if (self->cache)
        return weir__cache_read (self->cache, shard, &self->shards.items[shard], &self->offsets[shard], sink,
                                 self->cls->read, self->state, err);
    return self->cls->read (self->state, &self->shards.items[shard], &self->offsets[shard], sink, err);
}

uint64_t weir__input_offset (const weir__input *self, size_t shard)
{
    return self->offsets[shard];
}

//  SHARD's bytes past its offset, from the size last seen, into the sum
static void s_behind (weir__input *self, size_t shard)
{
    uint64_t at = self->offsets[shard], size = self->sizes[shard];
    uint64_t bytes = size > at ? size - at : 0;
    uint64_t total = atomic_load_explicit (&self->behind_total, memory_order_relaxed);
    atomic_store_explicit (&self->behind_total, total - self->behind[shard] + bytes, memory_order_relaxed);
    self->behind[shard] = bytes;
}

void weir__input_seen (weir__input *self, size_t shard, uint64_t size)
{
    if (shard >= self->nbehind) {
        size_t n = shard + 16;
        uint64_t *sizes = realloc (self->sizes, n * sizeof *sizes);
        if (sizes)
            self->sizes = sizes;
        uint64_t *behind = sizes ? realloc (self->behind, n * sizeof *behind) : NULL;
        if (!behind)
            return;  //  a figure for people, not worth failing the job
        self->behind = behind;
        memset (self->sizes + self->nbehind, 0, (n - self->nbehind) * sizeof *sizes);
        memset (self->behind + self->nbehind, 0, (n - self->nbehind) * sizeof *behind);
        self->nbehind = n;
    }
    self->sizes[shard] = size;
    s_behind (self, shard);
}

void weir__input_count (weir__input *self, size_t shard, uint64_t *seen)
{
    uint64_t now = self->offsets[shard];
    if (now > *seen)
        atomic_fetch_add_explicit (&self->done, now - *seen, memory_order_relaxed);
    *seen = now;
    //  A followed file: what is behind falls as the records go
    if (shard < self->nbehind && self->sizes[shard])
        s_behind (self, shard);
}

size_t weir__input_count_shards (const weir__input *self)
{
    return self->shards.count;
}

size_t weir__input_grown (weir__input *self)
{
    size_t n = 0;
    for (size_t i = 0; self->cls->more && i < self->shards.count; i++)
        n += self->cls->more (self->state, &self->shards.items[i], self->offsets[i]) != 0;
    return n;
}

int weir__input_discover (weir__input *self, weir__err *err)
{
    size_t had = self->shards.count;
    int rc = self->cls->discover (self->state, &self->shards, err);
    if (rc || self->shards.count == had)
        return rc;
    uint64_t *offsets = realloc (self->offsets, self->shards.count * sizeof *offsets);
    if (!offsets)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    for (size_t i = had; i < self->shards.count; i++)
        offsets[i] = self->shards.items[i].start;
    self->offsets = offsets;
    return 0;
}

int weir__input_wait (weir__input *self, weir__sink *sink)
{
    return self->cls->wait (self->state, sink);
}

void weir__input_truncated (weir__input *self)
{
    atomic_fetch_add_explicit (&self->truncations, 1, memory_order_relaxed);
}

void weir__input_stats (const weir__input *self, weir_stage_stats *stats)
{
    weir__input *in = (weir__input *) self;
    stats->input_total = self->total;
    stats->input_done = atomic_load (&in->done);
    stats->files_truncated = atomic_load_explicit (&in->truncations, memory_order_relaxed);
    stats->input_behind = atomic_load_explicit (&in->behind_total, memory_order_relaxed);
    stats->cache_bytes = self->cache ? weir__cache_bytes (self->cache) : 0;
    stats->records_replayed = self->cache ? weir__cache_replayed (self->cache) : 0;
}

int weir__input_saving (weir__input *self, uint64_t epoch, weir__err *err)
{
    if (!self->cls->settle || !self->offsets)
        return 0;
    //  A checkpoint that failed is never written: the newer one counts
    if (self->saved[1].used) {
        free (self->saved[0].offsets);
        self->saved[0] = self->saved[1];
        self->saved[1] = (s_saved){0};
    }
    s_saved *to = self->saved[0].used ? &self->saved[1] : &self->saved[0];
    size_t n = self->shards.count;
    uint64_t *copy = realloc (to->offsets, (n ? n : 1) * sizeof *copy);
    if (!copy)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    memcpy (copy, self->offsets, n * sizeof *copy);
    *to = (s_saved){1, epoch, copy, n};
    return 0;
}

int weir__input_settle (weir__input *self, uint64_t durable, weir__err *err)
{
    if (!self->cls->settle || !self->state)
        return 0;
    //  The newest of those written; an older one is passed over
    s_saved *newest = NULL;
    for (int i = 0; i < 2; i++)
        if (self->saved[i].used && self->saved[i].epoch <= durable)
            newest = &self->saved[i];
    if (!newest)
        return 0;
    //  Shards found since (follow=1) are not in it, and have nothing to tell
    weir__shards view = self->shards;
    view.count = newest->count < view.count ? newest->count : view.count;
    int rc = self->cls->settle (self->state, &view, newest->offsets, self->rank, self->ranks, err);
    for (s_saved *s = &self->saved[0]; s <= newest; s++)
        s->used = 0;
    if (!self->saved[0].used && self->saved[1].used) {
        s_saved t = self->saved[0];
        self->saved[0] = self->saved[1];
        self->saved[1] = t;
    }
    return rc;
}

void weir__input_close (weir__input *self)
{
    if (!self->state)
        return;
    self->cls->close (self->state);
    self->state = NULL;
}

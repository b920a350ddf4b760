/*  pipeline/shufflebuffer.c - the builtin processor shuffle.  */
#include "config.h"
#include "pipeline/shufflebuffer.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/number.h"
#include "pipeline/stage.h"

static const weir_property_info s_props[] = {
    {"buffer", "10k",
     "records each thread holds to draw from (k, M suffixes): larger mixes more, and costs memory"},
    {"seed", "0", "the seed of the draws: the same seed, input and thread counts give the same order"},
    {NULL, NULL, NULL},
};

//  The saved state of a thread, in the blob shuffle/STAGE/THREAD: the
//  draws' state, then each held record as its length (4 bytes) and bytes
#define S_STATE 32

typedef struct {
    char *data;
    size_t len;
} s_record;

typedef struct {
    uint64_t rng[4];  //  xoshiro256**
    s_record *held;
    size_t count, room;
    size_t buffer;  //  buffer=; more are held after a resume from more threads
    msgpack_sbuffer pack;
    msgpack_zone zone;
} s_thread;

//  What open found in the checkpoint, dealt to the threads to come
typedef struct {
    size_t buffer;
    uint64_t seed;
    unsigned threads;
    s_thread *dealt;  //  [threads]: records and draws for each thread
} s_stage;

static int s_read_props (weir__props *props, const char *element, size_t *buffer, uint64_t *seed,
                         weir__err *err)
{
    int64_t b, s;
    int rc = weir__props_int (props, element, "buffer", 10000, 1, 100000000, &b, err);
    if (!rc)
        rc = weir__props_int (props, element, "seed", 0, 0, INT64_MAX, &s, err);
    *buffer = (size_t) b;
    *seed = (uint64_t) s;
    return rc;
}

int weir__shufflebuffer_check (weir__props *props, const char *element, const weir_property_info *common,
                         weir__err *err)
{
    (void) common;
    size_t buffer;
    uint64_t seed;
    return s_read_props (props, element, &buffer, &seed, err);
}

static uint64_t s_rotl (uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t s_next (uint64_t *s)
{
    uint64_t result = s_rotl (s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = s_rotl (s[3], 45);
    return result;
}

//  A draw in [0, N), unbiased: Lemire's multiply and reject
static size_t s_below (uint64_t *s, size_t n)
{
    uint64_t threshold = (uint64_t) -n % n;
    for (;;) {
        unsigned __int128 m = (unsigned __int128) s_next (s) * n;
        if ((uint64_t) m >= threshold)
            return (size_t) (m >> 64);
    }
}

//  Seed the draws of thread T from SEED (splitmix64)
static void s_seed (uint64_t *s, uint64_t seed, unsigned t)
{
    uint64_t x = seed ^ ((uint64_t) t * 0x9e3779b97f4a7c15ull);
    for (int i = 0; i < 4; i++) {
        uint64_t z = (x += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        s[i] = z ^ (z >> 31);
    }
}

static void s_blob_name (weir_stage *st, const char *what, char *out, size_t size)
{
    snprintf (out, size, "shuffle/%zu/%s", st->stage->index, what);
}

static int s_hold (s_thread *t, const char *data, size_t len)
{
    if (t->count == t->room) {
        size_t room = t->room ? t->room * 2 : 64;
        s_record *held = realloc (t->held, room * sizeof *held);
        if (!held)
            return -1;
        t->held = held;
        t->room = room;
    }
    char *copy = malloc (len ? len : 1);
    if (!copy)
        return -1;
    memcpy (copy, data, len);
    t->held[t->count++] = (s_record){copy, len};
    return 0;
}

//  The records of a saved thread state (DATA, SIZE bytes) into T, and
//  its draws' state when DRAWS.  0, or -1 when it is malformed or memory
//  runs out.
static int s_load (s_thread *t, const unsigned char *data, size_t size, int draws)
{
    if (size < S_STATE)
        return size ? -1 : 0;
    if (draws)
        memcpy (t->rng, data, S_STATE);
    size_t at = S_STATE;
    while (at < size) {
        uint32_t len;
        if (size - at < 4)
            return -1;
        memcpy (&len, data + at, 4);
        at += 4;
        if (size - at < len || s_hold (t, (const char *) data + at, len))
            return -1;
        at += len;
    }
    return 0;
}

static void s_release (s_thread *t)
{
    for (size_t i = 0; i < t->count; i++)
        free (t->held[i].data);
    free (t->held);
    t->held = NULL;
    t->count = t->room = 0;
}

//  Open: what the checkpoint holds, dealt to this run's threads (thread
//  j of the last run to thread j mod T).  The blob 'threads' says how
//  many blobs hold records, so a later resume reads only this run's; the
//  blobs of threads this run does not have are emptied, so that the
//  checkpoints do not carry them on
static int s_open (weir_stage *st, void **state)
{
    if (st->stage->run->ranks > 1)
        return weir_fail (st,
                          "shuffle runs on one rank only, for now: a checkpoint keeps rank 0's blobs, and "
                          "the records another rank holds would be lost (shuffle before the job, or on one "
                          "rank)");
    s_stage *self = calloc (1, sizeof *self);
    weir__err err;
    weir__err_init (&err);
    if (!self)
        return weir_fail (st, "out of memory");
    if (s_read_props (&st->stage->props, st->stage->name, &self->buffer, &self->seed, &err)) {
        free (self);
        return weir_fail (st, "%s", err.msg);
    }
    unsigned threads = weir_thread_count (st);
    self->threads = threads;
    if (!(self->dealt = calloc (threads, sizeof *self->dealt))) {
        free (self);
        return weir_fail (st, "out of memory");
    }
    for (unsigned t = 0; t < threads; t++)
        s_seed (self->dealt[t].rng, self->seed, t);
    char name[64];
    size_t size;
    s_blob_name (st, "threads", name, sizeof name);
    const uint32_t *had = weir_blob_find (st, name, &size);
    unsigned before = had && size == 4 ? *had : 0;
    int rc = 0;
    for (unsigned j = 0; j < before && !rc; j++) {
        char which[16];
        snprintf (which, sizeof which, "%u", j);
        s_blob_name (st, which, name, sizeof name);
        const unsigned char *blob = weir_blob_find (st, name, &size);
        if (blob && s_load (&self->dealt[j % threads], blob, size, j < threads))
            rc =
                weir_fail (st, "the checkpoint's blob '%s' is malformed, or memory ran out reading it", name);
        if (!rc && j >= threads)
            rc = weir_blob_store (st, name, NULL, 0);
    }
    uint32_t now = threads;
    s_blob_name (st, "threads", name, sizeof name);
    if (!rc)
        rc = weir_blob_store (st, name, &now, sizeof now);
    if (rc) {
        for (unsigned t = 0; t < threads; t++)
            s_release (&self->dealt[t]);
        free (self->dealt);
        free (self);
        return rc;
    }
    *state = self;
    return 0;
}

static int s_thread_open (weir_stage *st, void *state, void **tstate)
{
    s_stage *self = state;
    s_thread *t = malloc (sizeof *t);
    if (!t)
        return weir_fail (st, "out of memory");
    //  What open dealt to this thread is its own now
    *t = self->dealt[weir_thread_index (st)];
    memset (&self->dealt[weir_thread_index (st)], 0, sizeof *t);
    t->buffer = self->buffer;
    msgpack_sbuffer_init (&t->pack);
    msgpack_zone_init (&t->zone, 4096);
    *tstate = t;
    return 0;
}

//  Pass on held record I, as it was
static int s_emit_held (weir_stage *st, s_thread *t, size_t i)
{
    msgpack_zone_clear (&t->zone);
    msgpack_object o;
    size_t off = 0;
    if (msgpack_unpack (t->held[i].data, t->held[i].len, &off, &t->zone, &o) != MSGPACK_UNPACK_SUCCESS)
        return weir_fail (st, "a held record cannot be read back");
    return weir_emit (st, &o);
}

static int s_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    s_thread *t = tstate;
    msgpack_sbuffer_clear (&t->pack);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &t->pack, msgpack_sbuffer_write);
    if (msgpack_pack_object (&pk, *rec))
        return weir_fail (st, "out of memory");
    if (t->count < t->buffer)
        return s_hold (t, t->pack.data, t->pack.size) ? weir_fail (st, "out of memory") : 0;
    //  Full: one drawn at random goes on, and the new one takes its
    //  place; more than buffer= held (after a resume from more threads)
    //  go on, drawn at random, until they are buffer= again
    for (;;) {
        size_t i = s_below (t->rng, t->count);
        int rc = s_emit_held (st, t, i);
        if (rc)
            return rc;
        free (t->held[i].data);
        if (t->count <= t->buffer) {
            char *copy = malloc (t->pack.size ? t->pack.size : 1);
            if (!copy)
                return weir_fail (st, "out of memory");
            memcpy (copy, t->pack.data, t->pack.size);
            t->held[i] = (s_record){copy, t->pack.size};
            return 0;
        }
        t->held[i] = t->held[--t->count];
    }
}

static int s_epoch_end (weir_stage *st, void *tstate, uint64_t epoch)
{
    (void) epoch;
    s_thread *t = tstate;
    //  The end of the job: what is held goes on, drawn at random
    while (weir_last_epoch (st) && t->count) {
        size_t i = s_below (t->rng, t->count);
        int rc = s_emit_held (st, t, i);
        if (rc)
            return rc;
        free (t->held[i].data);
        t->held[i] = t->held[--t->count];
    }
    //  The draws' state and what is held, for the checkpoint
    size_t size = S_STATE;
    for (size_t i = 0; i < t->count; i++)
        size += 4 + t->held[i].len;
    unsigned char *blob = malloc (size);
    if (!blob)
        return weir_fail (st, "out of memory");
    memcpy (blob, t->rng, S_STATE);
    size_t at = S_STATE;
    for (size_t i = 0; i < t->count; i++) {
        uint32_t len = (uint32_t) t->held[i].len;
        memcpy (blob + at, &len, 4);
        memcpy (blob + at + 4, t->held[i].data, len);
        at += 4 + len;
    }
    char which[16], name[64];
    snprintf (which, sizeof which, "%u", weir_thread_index (st));
    s_blob_name (st, which, name, sizeof name);
    int rc = weir_blob_store (st, name, blob, size);
    free (blob);
    weir_metric_set (st, "held", (double) t->count);
    return rc;
}

static void s_thread_close (weir_stage *st, void *tstate)
{
    (void) st;
    s_thread *t = tstate;
    s_release (t);
    msgpack_sbuffer_destroy (&t->pack);
    msgpack_zone_destroy (&t->zone);
    free (t);
}

static void s_close (weir_stage *st, void *state)
{
    (void) st;
    s_stage *self = state;
    for (unsigned t = 0; t < self->threads; t++)
        s_release (&self->dealt[t]);
    free (self->dealt);
    free (self);
}

const weir_processor weir__processor_shuffle = {
    WEIR_PROCESSOR_INIT,
    .name = "shuffle",
    .description = "passes records on in a random order, through a buffer of buffer= records per thread "
                   "(seed=); its buffer is checkpointed",
    .open = s_open,
    .thread_open = s_thread_open,
    .process = s_process,
    .epoch_end = s_epoch_end,
    .thread_close = s_thread_close,
    .close = s_close,
    .props = s_props,
};

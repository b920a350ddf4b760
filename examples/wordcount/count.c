/*  examples/wordcount/count.c - counts str records; emits [word, count].

        ... ! count ! ...

    Each runtime thread counts into its own hash table, with no lock on
    the hot path.  At the end of the stream every thread merges its table
    into the stage's under a mutex; the last thread to finish emits one
    [word, count] array per distinct word.  A record that is not a str is
    refused with an error rather than dropped.

    NEEDSWORK: the counts live in memory only.  Once the engine offers
    variable-sized checkpointed state (issue 3 with issue 4), the stage
    table goes into every checkpoint so that counts survive a resume.

    Build: cc -shared -fPIC $(pkg-config --cflags weir) count.c -o count.so  */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <weir/plugin.h>

typedef struct entry {
    struct entry *next;
    uint64_t hash;
    uint64_t count;
    size_t len;
    char word[];
} entry;

typedef struct {
    entry **slots;
    size_t nslots, used;
} table;

typedef struct {
    pthread_mutex_t lock;
    table merged;
    unsigned finished;          //  threads that merged their table
} count_state;

typedef struct {
    count_state *stage;
    table local;
} count_thread;

static uint64_t s_hash (const char *p, size_t n)
{
    //  FNV-1a: short words, no need for more
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char) p[i]) * 1099511628211ull;
    return h;
}

static int s_grow (table *t)
{
    size_t n = t->nslots ? t->nslots * 2 : 1024;
    entry **slots = calloc (n, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < t->nslots; i++)
        for (entry *e = t->slots[i], *next; e; e = next) {
            next = e->next;
            e->next = slots[e->hash & (n - 1)];
            slots[e->hash & (n - 1)] = e;
        }
    free (t->slots);
    t->slots = slots;
    t->nslots = n;
    return 0;
}

//  Add COUNT to WORD's entry; -1 when out of memory.
static int s_add (table *t, const char *word, size_t len, uint64_t hash, uint64_t count)
{
    if (t->used >= t->nslots && s_grow (t))
        return -1;
    entry **slot = &t->slots[hash & (t->nslots - 1)];
    for (entry *e = *slot; e; e = e->next)
        if (e->hash == hash && e->len == len && memcmp (e->word, word, len) == 0) {
            e->count += count;
            return 0;
        }
    entry *e = malloc (sizeof *e + len);
    if (!e)
        return -1;
    e->hash = hash;
    e->count = count;
    e->len = len;
    memcpy (e->word, word, len);
    e->next = *slot;
    *slot = e;
    t->used++;
    return 0;
}

static void s_free (table *t)
{
    for (size_t i = 0; i < t->nslots; i++)
        for (entry *e = t->slots[i], *next; e; e = next) {
            next = e->next;
            free (e);
        }
    free (t->slots);
    memset (t, 0, sizeof *t);
}

static int count_open (weir_stage *st, void **state)
{
    count_state *self = calloc (1, sizeof *self);
    if (!self)
        return weir_fail (st, "out of memory");
    pthread_mutex_init (&self->lock, NULL);
    *state = self;
    return 0;
}

static int count_thread_open (weir_stage *st, void *state, void **tstate)
{
    count_thread *t = calloc (1, sizeof *t);
    if (!t)
        return weir_fail (st, "out of memory");
    t->stage = state;
    *tstate = t;
    return 0;
}

static int count_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    count_thread *t = tstate;
    if (rec->type != MSGPACK_OBJECT_STR)
        return weir_fail (st, "expected str records (words), got msgpack type %d", (int) rec->type);
    const char *w = rec->via.str.ptr;
    size_t n = rec->via.str.size;
    if (s_add (&t->local, w, n, s_hash (w, n), 1))
        return weir_fail (st, "out of memory");
    return 0;
}

static int count_epoch_end (weir_stage *st, void *tstate, uint64_t epoch)
{
    (void) epoch;
    count_thread *t = tstate;
    count_state *self = t->stage;
    int rc = 0, last;
    pthread_mutex_lock (&self->lock);
    for (size_t i = 0; i < t->local.nslots && !rc; i++)
        for (entry *e = t->local.slots[i]; e && !rc; e = e->next)
            rc = s_add (&self->merged, e->word, e->len, e->hash, e->count);
    last = ++self->finished == weir_thread_count (st);
    pthread_mutex_unlock (&self->lock);
    s_free (&t->local);
    if (rc)
        return weir_fail (st, "out of memory");
    if (!last)
        return 0;
    //  Every other thread has merged: this one owns the table now
    for (size_t i = 0; i < self->merged.nslots; i++)
        for (entry *e = self->merged.slots[i]; e; e = e->next) {
            msgpack_packer *pk = weir_packer (st);
            msgpack_pack_array (pk, 2);
            msgpack_pack_str (pk, e->len);
            msgpack_pack_str_body (pk, e->word, e->len);
            msgpack_pack_uint64 (pk, e->count);
            if (weir_emit_packed (st))
                return -1;
        }
    return 0;
}

static void count_thread_close (weir_stage *st, void *tstate)
{
    (void) st;
    count_thread *t = tstate;
    s_free (&t->local);
    free (t);
}

static void count_close (weir_stage *st, void *state)
{
    (void) st;
    count_state *self = state;
    s_free (&self->merged);
    pthread_mutex_destroy (&self->lock);
    free (self);
}

static const weir_processor count = {
    .abi = WEIR_PLUGIN_ABI,
    .name = "count",
    .description = "counts str records and emits [word, count] at the end of the stream",
    .open = count_open,
    .thread_open = count_thread_open,
    .process = count_process,
    .epoch_end = count_epoch_end,
    .thread_close = count_thread_close,
    .close = count_close,
};

const weir_processor *weir_plugin_processor (void)
{
    return &count;
}

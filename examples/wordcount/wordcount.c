/*  examples/wordcount/wordcount.c - counts str records; emits [word, count].

        ... ! wordcount ! ...

    Each runtime thread counts into its own hash table, with no lock on
    the hot path.  At the end of every epoch each thread merges its table
    into the stage's under a mutex, and the last thread to do so stores
    the stage's table in the workspace blob "count" (weir_blob_store), so
    that every checkpoint holds the counts of the same instant as the
    offsets: a resumed job goes on counting from there.  In the last
    epoch (weir_last_epoch) that thread also emits one [word, count]
    array per distinct word.  A record that is not a str is refused with
    an error rather than dropped.

    The builtin 'count key=.' counts words too, and faster: each thread
    gets the words of its own key groups, so no table is merged (see the
    README's Keys).  This plugin shows how a plugin keeps state of its
    own in the workspace.

    Build: cc -shared -fPIC $(pkg-config --cflags weir) wordcount.c -o wordcount.so  */
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
    unsigned finished;  //  threads that merged their table this epoch
} count_state;

//  The blob format: for each word, u32 length, the word, u64 count.
static int s_save (weir_stage *st, const table *t)
{
    size_t size = 0;
    for (size_t i = 0; i < t->nslots; i++)
        for (entry *e = t->slots[i]; e; e = e->next)
            size += 12 + e->len;
    char *bytes = malloc (size ? size : 1), *p = bytes;
    if (!bytes)
        return weir_fail (st, "out of memory");
    for (size_t i = 0; i < t->nslots; i++)
        for (entry *e = t->slots[i]; e; e = e->next) {
            uint32_t len = (uint32_t) e->len;
            memcpy (p, &len, 4);
            memcpy (p + 4, e->word, e->len);
            memcpy (p + 4 + e->len, &e->count, 8);
            p += 12 + e->len;
        }
    int rc = weir_blob_store (st, "count", bytes, size);
    free (bytes);
    return rc;
}

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

static int s_load (weir_stage *st, table *t, const char *p, size_t size)
{
    while (size) {
        uint32_t len;
        uint64_t count;
        if (size < 12 || (memcpy (&len, p, 4), size - 12 < len))
            return weir_fail (st, "the checkpointed counts are malformed");
        memcpy (&count, p + 4 + len, 8);
        if (s_add (t, p + 4, len, s_hash (p + 4, len), count))
            return weir_fail (st, "out of memory");
        p += 12 + len;
        size -= 12 + (size_t) len;
    }
    return 0;
}

static void count_close (weir_stage *st, void *state);

static int count_open (weir_stage *st, void **state)
{
    count_state *self = calloc (1, sizeof *self);
    if (!self)
        return weir_fail (st, "out of memory");
    pthread_mutex_init (&self->lock, NULL);
    //  On resume the checkpoint brought the counts back
    size_t size;
    const char *saved = weir_blob_find (st, "count", &size);
    if (saved && s_load (st, &self->merged, saved, size)) {
        count_close (st, self);
        return -1;
    }
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
        return weir_fail (st, "expected str records (words), got a msgpack %s", weir_type_name (rec));
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
    if (last)
        self->finished = 0;
    pthread_mutex_unlock (&self->lock);
    s_free (&t->local);
    if (rc)
        return weir_fail (st, "out of memory");
    if (!last)
        return 0;
    //  Every other thread has merged and waits at the barrier: this one
    //  owns the table until the next epoch
    if (s_save (st, &self->merged))
        return -1;
    if (!weir_last_epoch (st))
        return 0;
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

//  It reads no property: an empty list says so, where NULL would say
//  nothing
static const weir_property_info count_props[] = {{NULL, NULL, NULL}};

static const weir_processor count = {
    WEIR_PROCESSOR_INIT,
    .name = "wordcount",
    .description = "counts str records (checkpointed) and emits [word, count] in the last epoch",
    .open = count_open,
    .thread_open = count_thread_open,
    .process = count_process,
    .epoch_end = count_epoch_end,
    .thread_close = count_thread_close,
    .close = count_close,
    .props = count_props,
};

const weir_processor *weir_plugin_processor (void)
{
    return &count;
}

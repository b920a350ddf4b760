/*  pipeline/keyed.c - a keyed stage's thread's state, per key group.  */
#include "config.h"
#include "pipeline/keyed.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/key.h"
#include "lib/keytable.h"

typedef struct {
    weir__keytable *table;  //  NULL until loaded
    int dirty;              //  changed in this epoch
} s_group;

struct weir__keyed {
    weir__workspace *workspace;
    size_t stage;         //  its index, in the blobs' names
    unsigned job_groups;  //  of the job
    unsigned first, end;  //  the groups it owns: [first, end)
    s_group *groups;      //  [end - first]
    size_t value_size;    //  0 until known
    weir__buf saved;      //  a group's blob being made
    weir__buf scratch;    //  a record's key, when not its own bytes
    uint64_t keys;
    msgpack_zone *zone;  //  where a key's msgpack value is decoded, when asked
};

weir__keyed *weir__keyed_new (const weir__worker *w)
{
    const weir__stage *stage = w->stage;
    //  The stage's threads of every rank share the groups, rank by rank
    //  (lib/shuffle.h)
    unsigned groups = stage->run->key_groups, threads = stage->threads * stage->run->ranks;
    unsigned thread = stage->run->rank * stage->threads + w->index;
    weir__keyed *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->workspace = stage->run->workspace;
    self->stage = stage->index;
    self->job_groups = groups;
    self->first = weir__key_first_group (thread, groups, threads);
    self->end = weir__key_first_group (thread + 1, groups, threads);
    weir__buf_init (&self->saved);
    weir__buf_init (&self->scratch);
    if (!(self->groups = calloc (self->end - self->first + 1, sizeof *self->groups))) {
        free (self);
        return NULL;
    }
    return self;
}

void weir__keyed_destroy (weir__keyed **self_p)
{
    weir__keyed *self = *self_p;
    if (!self)
        return;
    for (unsigned g = 0; g < self->end - self->first; g++)
        weir__keytable_destroy (&self->groups[g].table);
    free (self->groups);
    weir__buf_release (&self->saved);
    weir__buf_release (&self->scratch);
    if (self->zone)
        msgpack_zone_free (self->zone);
    free (self);
    *self_p = NULL;
}

void weir__keyed_blob_name (size_t stage, const char *what, char *out, size_t size)
{
    snprintf (out, size, "keys/%zu/%s", stage, what);
}

int weir__keyed_blob_group (const char *name, size_t *stage, unsigned *group)
{
    //  keys/STAGE/GROUP, both numbers
    if (strncmp (name, "keys/", 5) != 0)
        return 0;
    const char *p = name + 5;
    size_t digits = strspn (p, "0123456789");
    if (!digits || digits > 9 || p[digits] != '/')
        return 0;
    *stage = (size_t) strtoul (p, NULL, 10);
    p += digits + 1;
    digits = strspn (p, "0123456789");
    if (!digits || digits > 9 || p[digits])
        return 0;
    *group = (unsigned) strtoul (p, NULL, 10);
    return 1;
}

size_t weir__keyed_saved_size (weir__workspace *ws, size_t stage)
{
    size_t n = weir__workspace_count (ws);
    for (size_t i = 0; i < n; i++) {
        void *data;
        size_t bytes, of, have;
        unsigned group;
        const char *name = weir__workspace_item (ws, i, &data, &bytes);
        if (weir__keyed_blob_group (name, &of, &group) && of == stage
            && weir__keytable_saved_size (data, bytes, &have) == 0 && have)
            return have;
    }
    return 0;
}

static void s_name (const weir__keyed *self, unsigned group, char *out, size_t size)
{
    char number[16];
    snprintf (number, sizeof number, "%u", group);
    weir__keyed_blob_name (self->stage, number, out, size);
}

//  What a state of SIZE bytes is, in words, into OUT
static const char *s_what (size_t size, char *out, size_t n)
{
    if (size == WEIR__KEYTABLE_BYTES)
        snprintf (out, n, "msgpack values (weir_key_value)");
    else
        snprintf (out, n, "values of %zu bytes", size);
    return out;
}

//  Group G (of the thread's, from 0) loaded, from its blob when it has
//  one; SIZE the value size wanted (0: the blob's, or none yet;
//  WEIR__KEYTABLE_BYTES for msgpack values).  0 or -1 with ERR.
static int s_load (weir__keyed *self, unsigned g, size_t size, weir__err *err)
{
    s_group *group = &self->groups[g];
    if (group->table)
        return 0;
    char name[64];
    size_t bytes = 0;
    s_name (self, self->first + g, name, sizeof name);
    const void *blob = weir__workspace_find (self->workspace, name, &bytes);
    size_t have = 0;
    if (blob && weir__keytable_saved_size (blob, bytes, &have))
        return weir__err_set (err, WEIR_ECORRUPT, "the keyed state of key group %u (blob '%s') is malformed",
                              self->first + g, name);
    size_t want = self->value_size ? self->value_size : size ? size : have;
    char held[48], asked[48];
    if ((have && want != have) || (size && want != size))
        return weir__err_set (err, WEIR_EINVAL,
                              "the keyed state holds %s (key group %u, blob '%s'), and %s were asked for",
                              s_what (have ? have : want, held, sizeof held), self->first + g, name,
                              s_what (size ? size : want, asked, sizeof asked));
    if (!want)
        return 0;  //  nothing stored and nothing asked: nothing to load yet
    self->value_size = want;
    if (!(group->table = weir__keytable_new (want)))
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    int rc = blob ? weir__keytable_load (group->table, blob, bytes, weir__key_hash) : 0;
    if (rc == -1)
        return weir__err_set (err, WEIR_ECORRUPT,
                              "the keyed state of key group %u (blob '%s', %zu bytes) is malformed",
                              self->first + g, name, bytes);
    if (rc)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory loading key group %u", self->first + g);
    self->keys += weir__keytable_count (group->table);
    return 0;
}

//  The thread's group of HASH, from 0, loaded, or -1 with ERR
static long s_group_of (weir__keyed *self, uint64_t hash, size_t size, weir__err *err)
{
    unsigned group = weir__key_group (hash, self->job_groups);
    if (group < self->first || group >= self->end) {
        weir__err_set (err, WEIR_ESYSTEM,
                       "a record of key group %u came to the thread that owns groups %u to %u", group,
                       self->first, self->end - 1);
        return -1;
    }
    return s_load (self, group - self->first, size, err) ? -1 : (long) (group - self->first);
}

void *weir__keyed_value (weir__keyed *self, const char *key, size_t len, uint64_t hash, size_t size,
                         int *fresh, weir__err *err)
{
    return weir__keyed_value_in (self, hash, key, len, hash, size, fresh, err);
}

void *weir__keyed_value_in (weir__keyed *self, uint64_t group_hash, const char *key, size_t len,
                            uint64_t hash, size_t size, int *fresh, weir__err *err)
{
    *fresh = 0;
    if (self->value_size && size != self->value_size) {
        char held[48], asked[48];
        weir__err_set (err, WEIR_EINVAL, "the keyed state holds %s, and %s were asked for",
                       s_what (self->value_size, held, sizeof held), s_what (size, asked, sizeof asked));
        return NULL;
    }
    long g = s_group_of (self, group_hash, size, err);
    if (g < 0)
        return NULL;
    s_group *group = &self->groups[g];
    void *value = weir__keytable_upsert (group->table, key, len, hash, fresh);
    if (!value) {
        weir__err_set (err, WEIR_ENOMEM, "out of memory (%llu keys held)", (unsigned long long) self->keys);
        return NULL;
    }
    self->keys += (uint64_t) *fresh;
    group->dirty = 1;
    return value;
}

//  The thread's group of HASH, from 0, loaded as a table of bytes, or -1
//  with ERR
static long s_bytes_group (weir__keyed *self, uint64_t hash, weir__err *err)
{
    if (self->value_size && self->value_size != WEIR__KEYTABLE_BYTES) {
        char held[48];
        weir__err_set (err, WEIR_EINVAL,
                       "the keyed state holds %s, not msgpack values (weir_key_state and "
                       "weir_key_value cannot share a stage)",
                       s_what (self->value_size, held, sizeof held));
        return -1;
    }
    return s_group_of (self, hash, WEIR__KEYTABLE_BYTES, err);
}

const void *weir__keyed_get_bytes (weir__keyed *self, const char *key, size_t len, uint64_t hash,
                                   size_t *vlen, weir__err *err)
{
    long g = s_bytes_group (self, hash, err);
    if (g < 0)
        return NULL;
    return weir__keytable_get_bytes (self->groups[g].table, key, len, hash, vlen);
}

int weir__keyed_put_bytes (weir__keyed *self, const char *key, size_t len, uint64_t hash, const void *value,
                           size_t vlen, weir__err *err)
{
    long g = s_bytes_group (self, hash, err);
    if (g < 0)
        return -1;
    s_group *group = &self->groups[g];
    int fresh;
    if (weir__keytable_put_bytes (group->table, key, len, hash, value, vlen, &fresh))
        return weir__err_set (err, WEIR_ENOMEM, "out of memory (%llu keys held)",
                              (unsigned long long) self->keys);
    self->keys += (uint64_t) fresh;
    group->dirty = 1;
    return 0;
}

//  The key KEY reads in REC, canonical, into *K and *LEN, and its hash:
//  0, or -1 with ERR
static int s_record_key (weir__keyed *self, const weir__key *key, const msgpack_object *rec, const char **k,
                         size_t *len, uint64_t *hash, weir__err *err)
{
    return weir__key_of (key, rec, &self->scratch, k, len, hash)
               ? weir__err_set (err, WEIR_ENOMEM, "out of memory")
               : 0;
}

const void *weir__keyed_record_get_bytes (weir__keyed *self, const weir__key *key, const msgpack_object *rec,
                                          size_t *vlen, weir__err *err)
{
    const char *k;
    size_t len;
    uint64_t hash;
    return s_record_key (self, key, rec, &k, &len, &hash, err)
               ? NULL
               : weir__keyed_get_bytes (self, k, len, hash, vlen, err);
}

int weir__keyed_record_put_bytes (weir__keyed *self, const weir__key *key, const msgpack_object *rec,
                                  const void *value, size_t vlen, weir__err *err)
{
    const char *k;
    size_t len;
    uint64_t hash;
    return s_record_key (self, key, rec, &k, &len, &hash, err)
               ? -1
               : weir__keyed_put_bytes (self, k, len, hash, value, vlen, err);
}

int weir__keyed_unpack (weir__keyed *self, const void *bytes, size_t len, msgpack_object *out)
{
    if (!self->zone && !(self->zone = msgpack_zone_new (1024)))
        return -1;
    msgpack_zone_clear (self->zone);
    size_t off = 0;
    return msgpack_unpack (bytes, len, &off, self->zone, out) == MSGPACK_UNPACK_SUCCESS && off == len ? 0
                                                                                                      : -1;
}

int weir__keyed_delete (weir__keyed *self, const char *key, size_t len, uint64_t hash, weir__err *err)
{
    long g = s_group_of (self, hash, 0, err);
    if (g < 0)
        return -1;
    s_group *group = &self->groups[g];
    if (!group->table)
        return 0;
    int rc = weir__keytable_delete (group->table, key, len, hash);
    if (rc < 0)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    if (rc) {
        self->keys--;
        group->dirty = 1;
    }
    return rc;
}

void *weir__keyed_record_value (weir__keyed *self, const weir__key *key, const msgpack_object *rec,
                                size_t size, int *fresh, weir__err *err)
{
    const char *k;
    size_t len;
    uint64_t hash;
    return s_record_key (self, key, rec, &k, &len, &hash, err)
               ? NULL
               : weir__keyed_value (self, k, len, hash, size, fresh, err);
}

int weir__keyed_record_delete (weir__keyed *self, const weir__key *key, const msgpack_object *rec,
                               weir__err *err)
{
    const char *k;
    size_t len;
    uint64_t hash;
    return s_record_key (self, key, rec, &k, &len, &hash, err) ? -1
                                                               : weir__keyed_delete (self, k, len, hash, err);
}

//  FN (fixed states) or BYTES_FN (msgpack values), the one given, for
//  every key of the thread's groups (CHANGED: of those that changed),
//  until one returns non-zero, which this returns; -1 with ERR when a
//  group cannot be loaded or holds the other kind
static int s_walk (weir__keyed *self, int changed, weir__keyed_fn *fn, weir__keyed_bytes_fn *bytes_fn,
                   void *arg, weir__err *err)
{
    for (unsigned g = 0; g < self->end - self->first; g++) {
        s_group *group = &self->groups[g];
        if (changed && !group->dirty)
            continue;
        if (s_load (self, g, 0, err))
            return -1;
        int bytes = self->value_size == WEIR__KEYTABLE_BYTES;
        if (self->value_size && bytes != (bytes_fn != NULL)) {
            char held[48];
            return weir__err_set (err, WEIR_EINVAL, "the keyed state holds %s: %s walks them",
                                  s_what (self->value_size, held, sizeof held),
                                  bytes ? "weir_key_each_value" : "weir_key_each");
        }
        size_t n = group->table ? weir__keytable_count (group->table) : 0;
        for (size_t k = 0; k < n; k++) {
            const char *key;
            size_t len, vlen = 0;
            void *value = weir__keytable_entry (group->table, k, &key, &len);
            const void *kept = bytes ? weir__keytable_entry_bytes (group->table, k, &vlen) : NULL;
            int rc = bytes ? bytes_fn (arg, key, len, kept, vlen) : fn (arg, key, len, value);
            if (rc)
                return rc;
        }
    }
    return 0;
}

int weir__keyed_each (weir__keyed *self, int changed, weir__keyed_fn *fn, void *arg, weir__err *err)
{
    return s_walk (self, changed, fn, NULL, arg, err);
}

int weir__keyed_each_bytes (weir__keyed *self, weir__keyed_bytes_fn *fn, void *arg, weir__err *err)
{
    return s_walk (self, 0, NULL, fn, arg, err);
}

int weir__keyed_sweep (weir__keyed *self, weir__keyed_fn *fn, void *arg, weir__err *err)
{
    for (unsigned g = 0; g < self->end - self->first; g++) {
        s_group *group = &self->groups[g];
        if (s_load (self, g, 0, err))
            return -1;
        //  From the last key down: a key forgotten takes the last one's
        //  place (lib/keytable.h), which was seen already
        for (size_t k = group->table ? weir__keytable_count (group->table) : 0; k-- > 0;) {
            const char *key;
            size_t len;
            void *value = weir__keytable_entry (group->table, k, &key, &len);
            int rc = fn (arg, key, len, value);
            if (rc < 0)
                return rc;
            if (rc == 0)
                continue;
            if (weir__keytable_delete (group->table, key, len, weir__keytable_hash (group->table, k)) < 0)
                return weir__err_set (err, WEIR_ENOMEM, "out of memory");
            self->keys--;
            group->dirty = 1;
        }
    }
    return 0;
}

int weir__keyed_store (weir__keyed *self, int keep, weir__err *err)
{
    for (unsigned g = 0; g < self->end - self->first; g++) {
        s_group *group = &self->groups[g];
        if (!group->dirty)
            continue;
        if (!keep) {
            group->dirty = 0;
            continue;
        }
        char name[64];
        s_name (self, self->first + g, name, sizeof name);
        self->saved.len = 0;
        if (weir__keytable_save (group->table, &self->saved)
            || weir__workspace_restore (self->workspace, name, self->saved.data, self->saved.len))
            return weir__err_set (err, WEIR_ENOMEM, "out of memory storing key group %u", self->first + g);
        group->dirty = 0;
    }
    return 0;
}

uint64_t weir__keyed_count (const weir__keyed *self)
{
    return self->keys;
}

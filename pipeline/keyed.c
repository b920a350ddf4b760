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

//  Group G (of the thread's, from 0) loaded, from its blob when it has
//  one; SIZE the value size wanted (0: the blob's, or none yet).  0 or -1
//  with ERR.
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
    if ((have && want != have) || (size && want != size))
        return weir__err_set (err, WEIR_EINVAL,
                              "the keyed state holds values of %zu bytes (key group %u, blob '%s'), and %zu "
                              "were asked for",
                              have ? have : want, self->first + g, name, size ? size : want);
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
        weir__err_set (err, WEIR_EINVAL, "the keyed state holds values of %zu bytes, and %zu were asked for",
                       self->value_size, size);
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
    if (weir__key_of (key, rec, &self->scratch, &k, &len, &hash)) {
        weir__err_set (err, WEIR_ENOMEM, "out of memory");
        return NULL;
    }
    return weir__keyed_value (self, k, len, hash, size, fresh, err);
}

int weir__keyed_record_delete (weir__keyed *self, const weir__key *key, const msgpack_object *rec,
                               weir__err *err)
{
    const char *k;
    size_t len;
    uint64_t hash;
    if (weir__key_of (key, rec, &self->scratch, &k, &len, &hash))
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    return weir__keyed_delete (self, k, len, hash, err);
}

int weir__keyed_each (weir__keyed *self, int changed, weir__keyed_fn *fn, void *arg, weir__err *err)
{
    for (unsigned g = 0; g < self->end - self->first; g++) {
        s_group *group = &self->groups[g];
        if (changed && !group->dirty)
            continue;
        if (s_load (self, g, 0, err))
            return -1;
        size_t n = group->table ? weir__keytable_count (group->table) : 0;
        for (size_t k = 0; k < n; k++) {
            const char *key;
            size_t len;
            void *value = weir__keytable_entry (group->table, k, &key, &len);
            int rc = fn (arg, key, len, value);
            if (rc)
                return rc;
        }
    }
    return 0;
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

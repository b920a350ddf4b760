/*  checkpoint/resume.c - the resume policy, and a checkpoint's state taken
    back stage by stage.  */
#include "config.h"
#include "checkpoint/resume.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weir/weir.h>

#include "checkpoint/keys.h"
#include "checkpoint/regions.h"
#include "readers/known.h"
#include "readers/shards.h"

struct weir__resume {
    weir__ckpt *ckpt;
};

//  Whether CK was written by the pipeline of SHAPE; if not, the
//  description it was written by into *WAS and *LEN.
static int s_same (const weir__ckpt *ck, const weir__shapes *shapes, const char **was, size_t *len)
{
    size_t n;
    const char *had = weir__ckpt_get (ck, WEIR__SECTION_META, WEIR_META_SHAPE, &n);
    for (int i = 0; had && i < 2; i++) {
        const char *shape = i ? shapes->older : shapes->shape;
        if (shape && n == strlen (shape) && memcmp (had, shape, n) == 0)
            return 1;
    }
    *was = weir__ckpt_get (ck, WEIR__SECTION_META, WEIR_META_DESCRIPTION, len);
    if (!*was) {
        *was = "";
        *len = 0;
    }
    return 0;
}

//  Take checkpoint CK, checked against SHAPES when there are.
static int s_take (weir__ckpt *ck, uint64_t epoch, const char *dir, const weir__shapes *shapes,
                   weir__resume **out, weir__err *err)
{
    const char *was;
    size_t len;
    if (shapes && !s_same (ck, shapes, &was, &len)) {
        weir__err_set (
            err, WEIR_ESTRUCTURE,
            "checkpoint %" PRIu64 " of '%s' was written by another pipeline: '%.*s'; only threads=, "
            "capacity=, batch=, linger=, fuse= and where elements connect (brokers=, conninfo=) may "
            "change on resume",
            epoch, dir, (int) len, was);
        weir__ckpt_destroy (&ck);
        return WEIR_ESTRUCTURE;
    }
    weir__resume *self = calloc (1, sizeof *self);
    if (!self) {
        weir__ckpt_destroy (&ck);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    self->ckpt = ck;
    *out = self;
    return 0;
}

//  Load checkpoint EPOCH.
static int s_load (weir__store *store, uint64_t epoch, weir__resume **out, weir__err *err)
{
    weir__ckpt *ck;
    int rc = weir__store_read (store, epoch, &ck, err);
    return rc ? rc : s_take (ck, epoch, weir__store_dir (store), NULL, out, err);
}

int weir__resume_same (const weir__resume *self, const weir__shapes *shapes, const char **was, size_t *len)
{
    return s_same (self->ckpt, shapes, was, len);
}

const char *weir__resume_description (const weir__resume *self, size_t *len)
{
    const char *was = weir__ckpt_get (self->ckpt, WEIR__SECTION_META, WEIR_META_DESCRIPTION, len);
    if (!was) {
        *len = 0;
        return "";
    }
    return was;
}

const char *weir__resume_shape (const weir__resume *self, size_t *len)
{
    const char *had = weir__ckpt_get (self->ckpt, WEIR__SECTION_META, WEIR_META_SHAPE, len);
    if (!had) {
        *len = 0;
        return "";
    }
    return had;
}

int weir__resume_pack (const weir__resume *self, char **buf, size_t *len, weir__err *err)
{
    return weir__ckpt_pack (self->ckpt, buf, len) ? weir__err_set (err, WEIR_ENOMEM, "out of memory") : 0;
}

int weir__resume_unpack (const char *buf, size_t len, const weir__shapes *shapes, const char *who,
                         weir__resume **out, weir__err *err)
{
    weir__ckpt *ck;
    int rc = weir__ckpt_unpack (buf, len, &ck);
    if (rc)
        return rc == WEIR_ENOMEM ? weir__err_set (err, rc, "out of memory")
                                 : weir__err_set (err, rc, "the checkpoint %s sent is damaged", who);
    char dir[64];
    snprintf (dir, sizeof dir, "%s's checkpoint directory", who);
    return s_take (ck, weir__ckpt_epoch (ck), dir, shapes, out, err);
}

int weir__resume_open (weir__store *store, int mode, uint64_t epoch, weir__resume **out, weir__err *err)
{
    *out = NULL;
    uint64_t latest = 0;
    int rc = weir__store_latest (store, &latest, err);
    if (rc < 0)
        return rc;
    int has = rc == 0;
    switch (mode) {
    case WEIR_RESUME_NONE:
        if (has)
            return weir__err_set (err, WEIR_ESTATE,
                                  "'%s' already holds checkpoints (the latest is epoch %" PRIu64
                                  "): add --resume to go on from it, or choose another directory",
                                  weir__store_dir (store), latest);
        return 0;
    case WEIR_RESUME_LATEST: return has ? s_load (store, latest, out, err) : 0;
    default: return s_load (store, epoch, out, err);
    }
}

void weir__resume_destroy (weir__resume **self_p)
{
    weir__resume *self = *self_p;
    if (!self)
        return;
    weir__ckpt_destroy (&self->ckpt);
    free (self);
    *self_p = NULL;
}

uint64_t weir__resume_epoch (const weir__resume *self)
{
    return weir__ckpt_epoch (self->ckpt);
}

static uint64_t s_meta_u64 (const weir__resume *self, const char *name)
{
    uint64_t v = 0;
    weir__ckpt_get_u64 (self->ckpt, WEIR__SECTION_META, name, &v);
    return v;
}

int weir__resume_finished (const weir__resume *self)
{
    return s_meta_u64 (self, WEIR_META_FINISHED) != 0;
}

unsigned weir__resume_pass (const weir__resume *self)
{
    return (unsigned) s_meta_u64 (self, WEIR_META_PASS);
}

double weir__resume_wall_seconds (const weir__resume *self)
{
    size_t len;
    const char *wall = weir__ckpt_get (self->ckpt, WEIR__SECTION_META, WEIR_META_WALL_SECONDS, &len);
    char text[32];
    if (!wall || len >= sizeof text)
        return 0;
    memcpy (text, wall, len);
    text[len] = '\0';
    return strtod (text, NULL);
}

void weir__resume_records (const weir__resume *self, size_t stage, uint64_t *in, uint64_t *out,
                           uint64_t *rejected)
{
    char key[64];
    *in = *out = *rejected = 0;
    weir__key_records (WEIR_META_REJECTED, stage, key, sizeof key);
    weir__ckpt_get_u64 (self->ckpt, WEIR__SECTION_META, key, rejected);
    weir__key_records (WEIR_META_RECORDS_IN, stage, key, sizeof key);
    weir__ckpt_get_u64 (self->ckpt, WEIR__SECTION_META, key, in);
    weir__key_records (WEIR_META_RECORDS_OUT, stage, key, sizeof key);
    weir__ckpt_get_u64 (self->ckpt, WEIR__SECTION_META, key, out);
}

int weir__resume_blobs (const weir__resume *self, weir__workspace *ws, weir__err *err)
{
    char what[64];
    snprintf (what, sizeof what, "checkpoint %" PRIu64, weir__ckpt_epoch (self->ckpt));
    return weir__regions_take (self->ckpt, ws, what, err);
}

int weir__resume_offsets (const weir__resume *self, const char *element, const char *prefix,
                          const weir__shards *shards, uint64_t *offsets, weir__err *err)
{
    uint64_t epoch = weir__ckpt_epoch (self->ckpt);
    char key[WEIR__KEY_MAX];
    for (size_t i = 0; i < shards->count; i++) {
        const weir__shard *shard = &shards->items[i];
        weir__key_shard (prefix, shard, key, sizeof key);
        uint64_t offset;
        if (weir__ckpt_get_u64 (self->ckpt, WEIR__SECTION_OFFSETS, key, &offset) || offset < shard->start
            || offset > shard->end)
            return weir__err_set (err, WEIR_ECORRUPT,
                                  "%s: the input changed since checkpoint %" PRIu64
                                  ": it has no offset for shard '%s'; resuming would lose or repeat records",
                                  element, epoch, key);
        offsets[i] = offset;
    }
    //  This reader's keys only: the others of a graph have their prefixes
    size_t had = 0, n = weir__ckpt_count (self->ckpt, WEIR__SECTION_OFFSETS), len = strlen (prefix);
    for (size_t i = 0; i < n; i++) {
        const void *data;
        size_t size;
        had += strncmp (weir__ckpt_item (self->ckpt, WEIR__SECTION_OFFSETS, i, &data, &size), prefix, len) == 0;
    }
    if (had != shards->count)
        return weir__err_set (err, WEIR_ECORRUPT,
                              "%s: the input changed since checkpoint %" PRIu64
                              ": it had %zu shards, now %zu",
                              element, epoch, had, shards->count);
    return 0;
}

int weir__resume_files (const weir__resume *self, weir__replan *how, weir__shards *shards, weir__err *err)
{
    return weir__replan_files (self->ckpt, how, shards, err);
}

static int s_output (const weir__resume *self, const char *key, const char *what, char *state, size_t size,
                     weir__err *err)
{
    size_t len;
    const char *value = weir__ckpt_get (self->ckpt, WEIR__SECTION_WRITERS, key, &len);
    if (!value || len >= size)
        return weir__err_set (err, WEIR_ECORRUPT, "checkpoint %" PRIu64 " has no committed state for %s '%s'",
                              weir__ckpt_epoch (self->ckpt), what, key);
    memcpy (state, value, len);
    state[len] = '\0';
    return 0;
}

int weir__resume_writer (const weir__resume *self, size_t stage, const char *element, char *state,
                         size_t size, weir__err *err)
{
    char key[WEIR__KEY_MAX];
    weir__key_writer (stage, element, key, sizeof key);
    return s_output (self, key, "writer", state, size, err);
}

int weir__resume_dead_letter (const weir__resume *self, size_t stage, const char *element, char *state,
                              size_t size, weir__err *err)
{
    char key[WEIR__KEY_MAX];
    weir__key_dead_letter (stage, element, key, sizeof key);
    return s_output (self, key, "dead letter", state, size, err);
}

//  The files the checkpoint's shards read to their end and left.
//  Whether item NAME is another reader's than that of keys PREFIX: "" is
//  the prefix of a graph's one reader, which has every item
static int s_others (const char *name, const char *prefix)
{
    return *prefix && strncmp (name, prefix, strlen (prefix)) != 0;
}

static int s_read_files (const weir__resume *self, const char *element, const char *prefix,
                         weir__shards *shards, weir__err *err)
{
    size_t n = weir__ckpt_count (self->ckpt, WEIR__SECTION_META);
    size_t len = strlen (WEIR_META_READ);
    for (size_t k = 0; k < n; k++) {
        const void *value;
        size_t size;
        const char *name = weir__ckpt_item (self->ckpt, WEIR__SECTION_META, k, &value, &size);
        if (strncmp (name, WEIR_META_READ, len) || s_others (name + len, prefix))
            continue;
        weir__identity id;
        int gone;
        if (weir__identity_parse (value, size, &id, &gone))
            return weir__err_set (err, WEIR_ECORRUPT, "%s: checkpoint %" PRIu64 " holds a malformed identity in '%s'",
                                  element, weir__ckpt_epoch (self->ckpt), name);
        if (weir__known_add (shards, &id))
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    return 0;
}

int weir__resume_follow (const weir__resume *self, const char *element, const char *prefix,
                         weir__shards *shards, weir__err *err)
{
    uint64_t epoch = weir__ckpt_epoch (self->ckpt);
    size_t n = weir__ckpt_count (self->ckpt, WEIR__SECTION_FILES), skip = strlen (prefix);
    //  A file the checkpoint followed that is not in the glob now (renamed
    //  by a rotation, deleted) is still a shard: where its records went is
    //  looked for, or said
    for (size_t k = 0; k < n; k++) {
        const char *item = weir__ckpt_item (self->ckpt, WEIR__SECTION_FILES, k, NULL, NULL);
        if (s_others (item, prefix))
            continue;
        const char *path = item + skip;
        int known = 0;
        for (size_t i = 0; i < shards->count && !known; i++)
            known = shards->items[i].path && strcmp (shards->items[i].path, path) == 0;
        if (!known && weir__shards_add (shards, path, 0, UINT64_MAX))
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    unsigned char *checkpointed = calloc (shards->count + 1, 1);
    if (!checkpointed)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    int rc = 0;
    char key[WEIR__KEY_MAX];
    for (size_t i = 0; i < shards->count && !rc; i++) {
        weir__shard *shard = &shards->items[i];
        size_t len;
        weir__key_file (prefix, shard->path, key, sizeof key);
        const char *text = weir__ckpt_get (self->ckpt, WEIR__SECTION_FILES, key, &len);
        if (!text)
            continue;  //  a new file: from its start
        if (weir__identity_parse (text, len, &shard->id, &shard->gone))
            rc = weir__err_set (err, WEIR_ECORRUPT, "%s: checkpoint %" PRIu64 " holds a malformed identity for '%s'",
                                element, epoch, shard->path);
        shard->check = 1;
        checkpointed[i] = 1;
    }
    if (!rc)
        rc = s_read_files (self, element, prefix, shards, err);
    //  A file the glob found since the checkpoint that its shards read,
    //  or read and left, under another name (a rotation while weir was not
    //  running) is no new file
    if (!rc && weir__shards_drop_copies (shards, checkpointed))
        rc = weir__err_set (err, WEIR_ENOMEM, "out of memory");
    free (checkpointed);
    return rc;
}

size_t weir__resume_follow_offsets (const weir__resume *self, const char *prefix, const weir__shards *shards,
                                    uint64_t *offsets)
{
    char key[WEIR__KEY_MAX];
    size_t unknown = 0;
    for (size_t i = 0; i < shards->count; i++) {
        weir__key_shard (prefix, &shards->items[i], key, sizeof key);
        uint64_t offset;
        if (weir__ckpt_get_u64 (self->ckpt, WEIR__SECTION_OFFSETS, key, &offset) == 0)
            offsets[i] = offset;
        else
            unknown++;
    }
    return unknown;
}

int weir__resume_writer_slot (const weir__resume *self, size_t stage, const char *element, unsigned slot,
                              char *state, size_t size, weir__err *err)
{
    char key[WEIR__KEY_MAX];
    weir__key_writer_slot (stage, element, slot, key, sizeof key);
    size_t len;
    if (slot > 0 && !weir__ckpt_get (self->ckpt, WEIR__SECTION_WRITERS, key, &len))
        return 1;
    return s_output (self, key, "writer", state, size, err);
}

unsigned weir__resume_slots (const weir__resume *self, size_t stage, const char *element)
{
    char key[WEIR__KEY_MAX];
    size_t len;
    unsigned slots = 1;
    for (;; slots++) {
        weir__key_writer_slot (stage, element, slots, key, sizeof key);
        if (!weir__ckpt_get (self->ckpt, WEIR__SECTION_WRITERS, key, &len))
            return slots;
    }
}

uint64_t weir__resume_generation (const weir__resume *self)
{
    return s_meta_u64 (self, WEIR_META_GENERATION);
}

uint64_t weir__resume_key_groups (const weir__resume *self)
{
    return s_meta_u64 (self, WEIR_META_KEY_GROUPS);
}

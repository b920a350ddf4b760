/*  checkpoint/snapshot.c - a quiescent job's state as checkpoint items.  */
#include "config.h"
#include "checkpoint/snapshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <weir/weir.h>

#include "checkpoint/keys.h"
#include "checkpoint/regions.h"

typedef struct {
    void *data;
    size_t size;
} s_copy;

struct weir__staging {
    s_copy *copies;  //  one per blob, by workspace index
    size_t count;
};

weir__staging *weir__staging_new (void)
{
    return calloc (1, sizeof (weir__staging));
}

void weir__staging_destroy (weir__staging **self_p)
{
    weir__staging *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < self->count; i++)
        free (self->copies[i].data);
    free (self->copies);
    free (self);
    *self_p = NULL;
}

//  Room for N copies.
static int s_reserve (weir__staging *self, size_t n)
{
    if (n <= self->count)
        return 0;
    s_copy *more = realloc (self->copies, n * sizeof *more);
    if (!more)
        return WEIR_ENOMEM;
    memset (more + self->count, 0, (n - self->count) * sizeof *more);
    self->copies = more;
    self->count = n;
    return 0;
}

//  The copy of blob INDEX, sized SIZE.
static void *s_copy_of (weir__staging *self, size_t index, size_t size)
{
    s_copy *copy = &self->copies[index];
    if (copy->data && copy->size == size)
        return copy->data;
    free (copy->data);
    copy->size = 0;
    if (!(copy->data = malloc (size ? size : 1)))
        return NULL;
    copy->size = size;
    return copy->data;
}

int weir__staging_prefault (weir__staging *self, weir__workspace *ws)
{
    size_t n = weir__workspace_count (ws);
    if (s_reserve (self, n))
        return WEIR_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        void *data;
        size_t size;
        weir__workspace_item (ws, i, &data, &size);
        void *copy = s_copy_of (self, i, size);
        if (!copy)
            return WEIR_ENOMEM;
        memset (copy, 0, size);
    }
    return 0;
}

//  The items of the meta section that describe the whole job.
static int s_put_meta (weir__ckpt *ck, const weir__snapshot *s)
{
    int rc = 0;
    rc |= weir__ckpt_put_u64 (ck, WEIR__SECTION_META, WEIR_META_EPOCH, s->epoch);
    rc |= weir__ckpt_put_u64 (ck, WEIR__SECTION_META, WEIR_META_FINISHED, (uint64_t) (s->finished != 0));
    if (s->best)
        rc |= weir__ckpt_put_u64 (ck, WEIR__SECTION_META, WEIR_META_BEST, 1);
    rc |= weir__ckpt_put_u64 (ck, WEIR__SECTION_META, WEIR_META_PASS, s->pass);
    rc |= weir__ckpt_put_u64 (ck, WEIR__SECTION_META, WEIR_META_TIME, (uint64_t) time (NULL));
    char wall[32];
    snprintf (wall, sizeof wall, "%.6f", s->wall_seconds);
    rc |= weir__ckpt_put_text (ck, WEIR__SECTION_META, WEIR_META_WALL_SECONDS, wall);
    rc |= weir__ckpt_put_text (ck, WEIR__SECTION_META, WEIR_META_DESCRIPTION,
                               s->description ? s->description : "");
    rc |= weir__ckpt_put_text (ck, WEIR__SECTION_META, WEIR_META_SHAPE, s->shape);
    rc |= weir__ckpt_put_text (ck, WEIR__SECTION_META, WEIR_META_VERSION, weir_version ());
    rc |= weir__ckpt_put_u64 (ck, WEIR__SECTION_META, WEIR_META_RANKS, s->ranks ? s->ranks : 1);
    rc |= weir__ckpt_put_u64 (ck, WEIR__SECTION_META, WEIR_META_GENERATION, s->generation);
    if (s->key_groups)
        rc |= weir__ckpt_put_u64 (ck, WEIR__SECTION_META, WEIR_META_KEY_GROUPS, s->key_groups);
    if (s->workspace)
        rc |= weir__regions_put (ck, s->workspace);
    return rc;
}

//  Stage I's items: its record counts, and the committed state of each
//  output it holds (a writer's, each rank's slot, its dead letter).
static int s_put_stage (weir__ckpt *ck, size_t i, const weir__snapshot_stage *stage)
{
    int rc = 0;
    char key[WEIR__KEY_MAX];
    weir__key_records (WEIR_META_RECORDS_IN, i, key, sizeof key);
    rc |= weir__ckpt_put_u64 (ck, WEIR__SECTION_META, key, stage->records_in);
    weir__key_records (WEIR_META_RECORDS_OUT, i, key, sizeof key);
    rc |= weir__ckpt_put_u64 (ck, WEIR__SECTION_META, key, stage->records_out);
    if (stage->writer_state) {
        weir__key_writer (i, stage->element, key, sizeof key);
        rc |= weir__ckpt_put_text (ck, WEIR__SECTION_WRITERS, key, stage->writer_state);
    }
    for (size_t slot = 1; slot < stage->nslots; slot++) {
        if (!stage->slot_states[slot])
            continue;
        weir__key_writer_slot (i, stage->element, (unsigned) slot, key, sizeof key);
        rc |= weir__ckpt_put_text (ck, WEIR__SECTION_WRITERS, key, stage->slot_states[slot]);
    }
    if (stage->rejected) {
        weir__key_records (WEIR_META_REJECTED, i, key, sizeof key);
        rc |= weir__ckpt_put_u64 (ck, WEIR__SECTION_META, key, stage->rejected);
    }
    if (stage->dead_state) {
        weir__key_dead_letter (i, stage->element, key, sizeof key);
        rc |= weir__ckpt_put_text (ck, WEIR__SECTION_WRITERS, key, stage->dead_state);
    }
    return rc;
}

//  Each shard's offset; which file it is in (a regular file's shards
//  share one item); and for a followed input the files it read to their
//  end and left.
static int s_put_input (weir__ckpt *ck, const weir__snapshot_input *in)
{
    int rc = 0;
    char key[WEIR__KEY_MAX];
    const weir__shards *shards = in->shards;
    for (size_t i = 0; i < shards->count; i++) {
        const weir__shard *shard = &shards->items[i];
        weir__key_shard (in->prefix, shard, key, sizeof key);
        rc |= weir__ckpt_put_u64 (ck, WEIR__SECTION_OFFSETS, key, in->offsets[i]);
        //  Once per file: a batch reader's shards of one file are
        //  consecutive (readers/files.h)
        const char *before = i ? shards->items[i - 1].path : NULL;
        if (shard->id.known && shard->path
            && (shards->follow || !before || strcmp (before, shard->path) != 0)) {
            char id[160];
            weir__identity_format (&shard->id, shard->gone, id, sizeof id);
            weir__key_file (in->prefix, shard->path, key, sizeof key);
            rc |= weir__ckpt_put_text (ck, WEIR__SECTION_FILES, key, id);
        }
    }
    for (size_t k = 0; shards->follow && k < shards->nread; k++) {
        char id[128];
        weir__key_read (in->prefix, k, key, sizeof key);
        weir__identity_format (&shards->read[k], 1, id, sizeof id);
        rc |= weir__ckpt_put_text (ck, WEIR__SECTION_META, key, id);
    }
    return rc;
}

static int s_put_offsets (weir__ckpt *ck, const weir__snapshot *s)
{
    int rc = 0;
    for (size_t i = 0; i < s->ninputs; i++)
        rc |= s_put_input (ck, &s->inputs[i]);
    return rc;
}

//  The workspace's blobs: borrowed, or with STAGING, copied into it.
static int s_put_blobs (weir__ckpt *ck, const weir__snapshot *s, weir__staging *staging)
{
    size_t n = s->workspace ? weir__workspace_count (s->workspace) : 0;
    if (staging && s_reserve (staging, n))
        return -1;
    for (size_t i = 0; i < n; i++) {
        void *data;
        size_t size;
        const char *name = weir__workspace_item (s->workspace, i, &data, &size);
        if (staging) {
            void *copy = s_copy_of (staging, i, size);
            if (!copy)
                return -1;
            if (size)
                memcpy (copy, data, size);
            data = copy;
        }
        if (weir__ckpt_put (ck, WEIR__SECTION_BLOBS, name, data, size, 0))
            return -1;
    }
    return 0;
}

weir__ckpt *weir__snapshot_take (const weir__snapshot *s, weir__staging *staging)
{
    weir__ckpt *ck = weir__ckpt_new (s->epoch);
    if (!ck)
        return NULL;
    int rc = s_put_meta (ck, s);
    for (size_t i = 0; i < s->nstages; i++)
        rc |= s_put_stage (ck, i, &s->stages[i]);
    rc |= s_put_offsets (ck, s);
    if (!rc)
        rc = s_put_blobs (ck, s, staging);
    if (rc)
        weir__ckpt_destroy (&ck);
    return ck;
}

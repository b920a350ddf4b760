/*  checkpoint/inspect.c - the public face of the checkpoint store: list,
    load verified, read items.  */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <weir/weir.h>

#include "checkpoint/ckpt.h"
#include "checkpoint/store.h"

//  A loaded checkpoint is the store's in-memory checkpoint
struct weir_checkpoint;

static char *s_message (const weir__err *err)
{
    return strdup (err->msg);
}

//  A directory's checkpoints, opened once: a store opens a private copy
//  of the directory and replays its log, which costs what listing a
//  thousand checkpoints one open each would repeat a thousand times
struct weir_checkpoints {
    char *dir;
    weir__store *store;
};

int weir_checkpoints_new (const char *dir, weir_checkpoints **out, char **error)
{
    weir__err err;
    weir__err_init (&err);
    *out = NULL;
    weir_checkpoints *self = calloc (1, sizeof *self);
    int rc = 0;
    if (!self || !(self->dir = strdup (dir)))
        rc = weir__err_set (&err, WEIR_ENOMEM, "out of memory");
    else
        rc = weir__store_open (dir, 0, &self->store, &err);
    if (rc) {
        weir_checkpoints_destroy (&self);
        if (error)
            *error = s_message (&err);
    }
    *out = self;
    return rc;
}

void weir_checkpoints_destroy (weir_checkpoints **self_p)
{
    weir_checkpoints *self = *self_p;
    if (!self)
        return;
    weir__store_destroy (&self->store);
    free (self->dir);
    free (self);
    *self_p = NULL;
}

int weir_checkpoints_epochs (weir_checkpoints *self, uint64_t **epochs, size_t *count, char **error)
{
    weir__err err;
    weir__err_init (&err);
    int rc = weir__store_epochs (self->store, epochs, count, &err);
    if (rc && error)
        *error = s_message (&err);
    return rc;
}

int weir_checkpoints_load (weir_checkpoints *self, int64_t epoch, weir_checkpoint **out, char **error)
{
    weir__err err;
    weir__err_init (&err);
    weir__ckpt *ck = NULL;
    uint64_t e = (uint64_t) epoch;
    int rc = 0;
    if (epoch == WEIR_LOAD_BEST && (rc = weir__store_best (self->store, &e, &err)) == 1)
        rc = weir__err_set (&err, WEIR_ECORRUPT, "'%s' holds no checkpoint marked the best", self->dir);
    else if (epoch < 0 && epoch != WEIR_LOAD_BEST && (rc = weir__store_latest (self->store, &e, &err)) == 1)
        rc = weir__err_set (&err, WEIR_ECORRUPT, "'%s' holds no checkpoint", self->dir);
    if (!rc)
        rc = weir__store_read (self->store, e, &ck, &err);
    if (rc && error)
        *error = s_message (&err);
    *out = (weir_checkpoint *) ck;
    return rc;
}

int weir_checkpoint_list (const char *dir, uint64_t **epochs, size_t *count, char **error)
{
    weir_checkpoints *all;
    int rc = weir_checkpoints_new (dir, &all, error);
    if (!rc)
        rc = weir_checkpoints_epochs (all, epochs, count, error);
    weir_checkpoints_destroy (&all);
    return rc;
}

int weir_checkpoint_new (const char *dir, int64_t epoch, weir_checkpoint **out, char **error)
{
    weir_checkpoints *all;
    *out = NULL;
    int rc = weir_checkpoints_new (dir, &all, error);
    if (!rc)
        rc = weir_checkpoints_load (all, epoch, out, error);
    weir_checkpoints_destroy (&all);
    return rc;
}

void weir_checkpoint_destroy (weir_checkpoint **self_p)
{
    weir__ckpt_destroy ((weir__ckpt **) self_p);
}

uint64_t weir_checkpoint_epoch (const weir_checkpoint *self)
{
    return weir__ckpt_epoch ((const weir__ckpt *) self);
}

size_t weir_checkpoint_count (const weir_checkpoint *self, weir_checkpoint_section section)
{
    return weir__ckpt_count ((const weir__ckpt *) self, (char) section);
}

const char *weir_checkpoint_item (const weir_checkpoint *self, weir_checkpoint_section section, size_t index,
                                  const void **data, size_t *size)
{
    return weir__ckpt_item ((const weir__ckpt *) self, (char) section, index, data, size);
}

const void *weir_checkpoint_get (const weir_checkpoint *self, weir_checkpoint_section section,
                                 const char *name, size_t *size)
{
    return weir__ckpt_get ((const weir__ckpt *) self, (char) section, name, size);
}

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

int weir_checkpoint_list (const char *dir, uint64_t **epochs, size_t *count, char **error)
{
    weir__err err;
    weir__err_init (&err);
    weir__store *store;
    int rc = weir__store_open (dir, 0, &store, &err);
    if (!rc) {
        rc = weir__store_epochs (store, epochs, count, &err);
        weir__store_destroy (&store);
    }
    if (rc && error)
        *error = s_message (&err);
    return rc;
}

int weir_checkpoint_new (const char *dir, int64_t epoch, weir_checkpoint **out, char **error)
{
    weir__err err;
    weir__err_init (&err);
    weir__store *store;
    weir__ckpt *ck = NULL;
    int rc = weir__store_open (dir, 0, &store, &err);
    if (!rc) {
        uint64_t e = (uint64_t) epoch;
        if (epoch < 0 && (rc = weir__store_latest (store, &e, &err)) == 1)
            rc = weir__err_set (&err, WEIR_ECORRUPT, "'%s' holds no checkpoint", dir);
        if (!rc)
            rc = weir__store_read (store, e, &ck, &err);
        weir__store_destroy (&store);
    }
    if (rc && error)
        *error = s_message (&err);
    *out = (weir_checkpoint *) ck;
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

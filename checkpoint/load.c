/*  checkpoint/load.c - blobs from another job's checkpoint.  */
#include "config.h"
#include "checkpoint/load.h"

#include "checkpoint/keys.h"
#include "checkpoint/store.h"

int weir__load_blobs (const char *dir, int64_t epoch, weir__workspace *ws, size_t *count, uint64_t *loaded,
                      weir__err *err)
{
    weir__store *store;
    int rc = weir__store_open (dir, 0, &store, err);
    if (rc)
        return rc;
    uint64_t which = (uint64_t) epoch;
    if (epoch == WEIR_LOAD_BEST && (rc = weir__store_best (store, &which, err)) != 0) {
        if (rc == 1)
            rc = weir__err_set (err, WEIR_EIO,
                                "--load-blobs: '%s' holds no checkpoint marked the best (a processor marks "
                                "one, as softmax validate= does)",
                                dir);
        weir__store_destroy (&store);
        return rc;
    }
    if (epoch < 0 && epoch != WEIR_LOAD_BEST && (rc = weir__store_latest (store, &which, err)) != 0) {
        if (rc == 1)
            rc = weir__err_set (err, WEIR_EIO, "--load-blobs: '%s' holds no checkpoint", dir);
        weir__store_destroy (&store);
        return rc;
    }
    weir__ckpt *ck;
    if ((rc = weir__store_read (store, which, &ck, err))) {
        weir__store_destroy (&store);
        return rc;
    }
    size_t n = weir__ckpt_count (ck, WEIR__SECTION_BLOBS);
    for (size_t i = 0; i < n && !rc; i++) {
        const void *data;
        size_t size;
        const char *name = weir__ckpt_item (ck, WEIR__SECTION_BLOBS, i, &data, &size);
        if (weir__workspace_restore (ws, name, data, size))
            rc = weir__err_set (err, WEIR_ENOMEM, "out of memory loading blob '%s'", name);
    }
    *count = n;
    *loaded = which;
    weir__ckpt_destroy (&ck);
    weir__store_destroy (&store);
    return rc;
}

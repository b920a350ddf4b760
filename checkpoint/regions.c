/*  checkpoint/regions.c - reduced blob regions in a checkpoint.  */
#include "config.h"
#include "checkpoint/regions.h"

#include <stdlib.h>
#include <string.h>

#include "checkpoint/keys.h"

int weir__regions_put (weir__ckpt *ck, weir__workspace *ws)
{
    size_t regions = weir__workspace_reduce_count (ws);
    int rc = 0;
    for (size_t i = 0; i < regions && !rc; i++) {
        weir__workspace_region r;
        const char *blob = weir__workspace_reduce (ws, i, &r);
        char key[64];
        size_t size = strlen (blob) + 96;
        char *value = malloc (size);
        if (!value)
            return -1;
        weir__key_reduce (i, key, sizeof key);
        weir__region_format (blob, r.offset, r.count, r.width, r.type, r.op, value, size);
        rc = weir__ckpt_put_text (ck, WEIR__SECTION_META, key, value) ? -1 : 0;
        free (value);
    }
    return rc;
}

int weir__regions_take (const weir__ckpt *ck, weir__workspace *ws, const char *what, weir__err *err)
{
    size_t n = weir__ckpt_count (ck, WEIR__SECTION_BLOBS);
    for (size_t i = 0; i < n; i++) {
        const void *data;
        size_t size;
        const char *name = weir__ckpt_item (ck, WEIR__SECTION_BLOBS, i, &data, &size);
        if (weir__workspace_restore (ws, name, data, size))
            return weir__err_set (err, WEIR_ENOMEM, "%s: out of memory restoring blob '%s'", what, name);
    }
    for (size_t i = 0;; i++) {
        char key[64];
        weir__key_reduce (i, key, sizeof key);
        size_t len;
        const char *text = weir__ckpt_get (ck, WEIR__SECTION_META, key, &len);
        if (!text)
            return 0;
        size_t offset, count, width, blob_len;
        int type, op;
        const char *blob;
        if (weir__region_parse (text, len, &offset, &count, &width, &type, &op, &blob, &blob_len))
            return weir__err_set (err, WEIR_ECORRUPT, "%s: item '%s' is no region: '%.*s'", what, key,
                                  (int) (len < 200 ? len : 200), text);
        char *name = strndup (blob, blob_len);
        if (!name)
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        int rc = weir__workspace_add_reduce (ws, name, offset, count, width, type, op);
        if (rc == WEIR_ENOMEM)
            rc = weir__err_set (err, WEIR_ENOMEM, "out of memory");
        else if (rc)
            rc = weir__err_set (err, WEIR_ECORRUPT,
                                "%s: region %s of blob '%s' (%zu elements from byte %zu) is not inside a "
                                "blob that came with it",
                                what, key, name, count, offset);
        free (name);
        if (rc)
            return rc;
    }
}

/*  pipeline/reduce.c - blob regions combined across ranks.  */
#include "config.h"
#include "pipeline/reduce.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t s_width (int type)
{
    return type == WEIR__REDUCE_F32 ? 4 : 8;
}

//  OUT = A - B, or OUT = A + B (SIGN -1 or 1), element by element.
static void s_combine (void *out, const void *a, const void *b, size_t n, int type, int sign)
{
    for (size_t i = 0; i < n; i++) {
        if (type == WEIR__REDUCE_F32) {
            float x, y;
            memcpy (&x, (const char *) a + i * 4, 4);
            memcpy (&y, (const char *) b + i * 4, 4);
            float z = sign > 0 ? x + y : x - y;
            memcpy ((char *) out + i * 4, &z, 4);
        }
        else if (type == WEIR__REDUCE_F64) {
            double x, y;
            memcpy (&x, (const char *) a + i * 8, 8);
            memcpy (&y, (const char *) b + i * 8, 8);
            double z = sign > 0 ? x + y : x - y;
            memcpy ((char *) out + i * 8, &z, 8);
        }
        else {
            //  Wrapping, as counters do: unsigned arithmetic is defined
            uint64_t x, y;
            memcpy (&x, (const char *) a + i * 8, 8);
            memcpy (&y, (const char *) b + i * 8, 8);
            uint64_t z = sign > 0 ? x + y : x - y;
            memcpy ((char *) out + i * 8, &z, 8);
        }
    }
}

//  Every rank declared the same regions: their count and their elements
//  agree (a minimum equal to the maximum).
static int s_agree (weir__workspace *ws, weir__cluster *cluster, double timeout, const char *what,
                    weir__err *err)
{
    int64_t n = (int64_t) weir__workspace_reduce_count (ws), elements = 0;
    for (size_t i = 0; i < (size_t) n; i++) {
        weir__workspace_region r;
        weir__workspace_reduce (ws, i, &r);
        elements += (int64_t) r.count;
    }
    int64_t v[4] = {n, elements, -n, -elements};
    int rc = weir__cluster_allreduce (cluster, v, 4, WEIR__REDUCE_I64, WEIR__REDUCE_MIN, timeout, what, err);
    if (rc)
        return rc;
    if (v[0] != -v[2] || v[1] != -v[3])
        return weir__err_set (err, WEIR_EPROCESSOR,
                              "%s: the ranks declared different blobs to reduce (weir_blob_reduce): rank %d "
                              "has %" PRId64 " regions of %" PRId64 " elements, others between %" PRId64
                              " and %" PRId64
                              " regions; declare them in open or init, alike on every rank (a model made "
                              "from the first record is made at different times: give its size as a "
                              "property)",
                              what, weir__cluster_rank (cluster), n, elements, v[0], -v[2]);
    return 0;
}

int weir__reduce_run (weir__workspace *ws, weir__cluster *cluster, uint64_t epoch, double timeout,
                      weir__err *err)
{
    if (weir__cluster_size (cluster) <= 1)
        return 0;
    char what[192];
    snprintf (what, sizeof what, "reducing blobs at the end of epoch %" PRIu64, epoch);
    int rc = s_agree (ws, cluster, timeout, what, err);
    size_t n = weir__workspace_reduce_count (ws);
    for (size_t i = 0; i < n && !rc; i++) {
        weir__workspace_region r;
        const char *name = weir__workspace_reduce (ws, i, &r);
        snprintf (what, sizeof what, "reducing blob '%s' at the end of epoch %" PRIu64, name, epoch);
        if (!r.data)
            return weir__err_set (err, WEIR_EPROCESSOR,
                                  "%s: the blob no longer holds the %zu elements from byte %zu that were "
                                  "declared (weir_blob_store made it smaller?)",
                                  what, r.count, r.offset);
        size_t bytes = r.count * s_width (r.type);
        if (r.op == WEIR__REDUCE_SUM) {
            //  What this rank added since the last boundary, summed
            void *delta = malloc (bytes ? bytes : 1);
            if (!delta)
                return weir__err_set (err, WEIR_ENOMEM, "out of memory");
            s_combine (delta, r.data, r.last, r.count, r.type, -1);
            rc = weir__cluster_allreduce (cluster, delta, r.count, r.type, WEIR__REDUCE_SUM, timeout, what,
                                          err);
            if (!rc)
                s_combine (r.data, r.last, delta, r.count, r.type, 1);
            free (delta);
        }
        else
            rc = weir__cluster_allreduce (cluster, r.data, r.count, r.type, r.op, timeout, what, err);
        if (!rc)
            memcpy (r.last, r.data, bytes);
    }
    return rc;
}

/*  pipeline/reduce.c - blob regions combined across ranks.  */
#include "config.h"
#include "pipeline/reduce.h"

#include "checkpoint/ckpt.h"
#include "checkpoint/keys.h"
#include "checkpoint/regions.h"

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

//  What the ranks declared.  Every rank that declared regions declared the
//  same ones (their count and their elements agree), or the job fails.  A
//  rank may have declared none yet (a model made from the first record,
//  on a rank that has had no record): it adopts the lowest declaring
//  rank's, the donor's.
typedef struct {
    int adopt;         //  some rank declared nothing, another did
    int here;          //  this rank is one of those that adopt
    int donor;         //  the lowest rank that declared
    int64_t adopters;  //  how many adopt
} s_plan;

static int s_agree (weir__workspace *ws, weir__cluster *cluster, double timeout, const char *what,
                    s_plan *plan, weir__err *err)
{
    memset (plan, 0, sizeof *plan);
    int64_t n = (int64_t) weir__workspace_reduce_count (ws), elements = 0;
    for (size_t i = 0; i < (size_t) n; i++) {
        weir__workspace_region r;
        weir__workspace_reduce (ws, i, &r);
        elements += (int64_t) r.count;
    }
    //  Minimums all: over the declaring ranks for the first two (a rank
    //  that declared nothing gives the largest number), over all ranks
    //  for the rest
    int rank = weir__cluster_rank (cluster);
    int64_t v[6] = {n ? n : INT64_MAX, n ? elements : INT64_MAX, -n,
                    -elements,         n ? rank : INT64_MAX,     -(n == 0)};
    int rc = weir__cluster_allreduce (cluster, v, 6, WEIR__REDUCE_I64, WEIR__REDUCE_MIN, timeout, what, err);
    if (rc || v[0] == INT64_MAX)
        return rc;
    if (v[0] != -v[2] || v[1] != -v[3])
        return weir__err_set (err, WEIR_EPROCESSOR,
                              "%s: the ranks declared different blobs to reduce (weir_blob_reduce): rank %d "
                              "has %" PRId64 " regions of %" PRId64 " elements, others between %" PRId64
                              " and %" PRId64
                              " regions; declare them in open or init, alike on every rank (a model made "
                              "from the first record must have the same size on every rank: give its size "
                              "as a property)",
                              what, rank, n, elements, v[0], -v[2]);
    if (v[5] == 0)
        return 0;
    plan->adopt = 1;
    plan->here = n == 0;
    plan->donor = (int) v[4];
    plan->adopters = n == 0;
    return weir__cluster_allreduce (cluster, &plan->adopters, 1, WEIR__REDUCE_I64, WEIR__REDUCE_SUM, timeout,
                                    what, err);
}

//  The donor's regions and the blobs that hold them, as a checkpoint of
//  them alone (the items a checkpoint keeps them as), packed to bytes
static int s_pack (weir__workspace *ws, char **buf, size_t *len)
{
    weir__ckpt *ck = weir__ckpt_new (0);
    int rc = ck ? weir__regions_put (ck, ws) : -1;
    size_t n = weir__workspace_reduce_count (ws);
    for (size_t i = 0; i < n && !rc; i++) {
        weir__workspace_region r;
        const char *name = weir__workspace_reduce (ws, i, &r);
        size_t size, held;
        const void *data = weir__workspace_find (ws, name, &size);
        //  Borrowed: the workspace outlives the packing
        if (data && !weir__ckpt_get (ck, WEIR__SECTION_BLOBS, name, &held))
            rc = weir__ckpt_put (ck, WEIR__SECTION_BLOBS, name, data, size, 0);
    }
    if (!rc)
        rc = weir__ckpt_pack (ck, buf, len);
    weir__ckpt_destroy (&ck);
    return rc ? WEIR_ENOMEM : 0;
}

//  This rank, which declared nothing, takes the donor's blobs and regions
//  (whose last combined value is then the donor's too)
static int s_unpack (weir__workspace *ws, const char *buf, size_t len, const char *what, weir__err *err)
{
    weir__ckpt *ck;
    int rc = weir__ckpt_unpack (buf, len, &ck);
    if (rc)
        return weir__err_set (err, rc, "%s: the regions another rank declared %s", what,
                              rc == WEIR_ENOMEM ? "are more than memory holds" : "came garbled");
    rc = weir__regions_take (ck, ws, what, err);
    weir__ckpt_destroy (&ck);
    return rc;
}

//  The donor's regions and blobs to the ranks that declared none: to rank
//  0 first when the donor is another, then from rank 0 to all
static int s_adopt (weir__workspace *ws, weir__cluster *cluster, const s_plan *plan, double timeout,
                    const char *what, weir__err *err)
{
    int rank = weir__cluster_rank (cluster), ranks = weir__cluster_size (cluster);
    char *mine = NULL, *buf = NULL;
    size_t mlen = 0, len = 0;
    if (rank == plan->donor && s_pack (ws, &mine, &mlen))
        return weir__err_set (err, WEIR_ENOMEM, "%s: out of memory", what);
    int rc = 0;
    if (plan->donor != 0) {
        size_t *lens = calloc ((size_t) ranks, sizeof *lens);
        char *all = NULL;
        rc = lens ? weir__cluster_gather (cluster, mine, mlen, &all, lens, timeout, what, err)
                  : weir__err_set (err, WEIR_ENOMEM, "%s: out of memory", what);
        if (!rc && rank == 0) {
            //  Only the donor sent bytes
            buf = all;
            len = lens[plan->donor];
            all = NULL;
        }
        free (all);
        free (lens);
        free (mine);
    }
    else if (rank == 0) {
        buf = mine;
        len = mlen;
    }
    if (!rc)
        rc = weir__cluster_bcast (cluster, &buf, &len, timeout, what, err);
    if (!rc && plan->here)
        rc = s_unpack (ws, buf, len, what, err);
    free (buf);
    return rc;
}

int weir__reduce_run (weir__workspace *ws, weir__cluster *cluster, uint64_t epoch, double timeout,
                      weir__err *err)
{
    if (weir__cluster_size (cluster) <= 1)
        return 0;
    char what[192];
    snprintf (what, sizeof what, "reducing blobs at the end of epoch %" PRIu64, epoch);
    s_plan plan;
    int rc = s_agree (ws, cluster, timeout, what, &plan, err);
    if (!rc && plan.adopt)
        rc = s_adopt (ws, cluster, &plan, timeout, what, err);
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
        else if (r.op == WEIR__REDUCE_MEAN && plan.adopt) {
            //  The mean of the ranks that declared: one that adopted the
            //  donor's values now would count them twice
            if (plan.here)
                memset (r.data, 0, bytes);
            rc = weir__cluster_allreduce (cluster, r.data, r.count, r.type, WEIR__REDUCE_SUM, timeout, what,
                                          err);
            int64_t k = weir__cluster_size (cluster) - plan.adopters;
            for (size_t e = 0; e < r.count && !rc; e++)
                if (r.type == WEIR__REDUCE_F32)
                    ((float *) r.data)[e] /= (float) k;
                else if (r.type == WEIR__REDUCE_F64)
                    ((double *) r.data)[e] /= (double) k;
                else
                    ((int64_t *) r.data)[e] /= k;
        }
        else
            rc = weir__cluster_allreduce (cluster, r.data, r.count, r.type, r.op, timeout, what, err);
        if (!rc)
            memcpy (r.last, r.data, bytes);
    }
    return rc;
}

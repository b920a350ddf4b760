/*  bench/reduce_bench.c - what model averaging costs at an epoch end.

        mpirun -n N bench/reduce_bench [--iterations K] [--floats F]

    A workspace holds the softmax plugin's Fashion-MNIST model (10 classes,
    784 features: 7,850 weights and biases, laid out as 785 rows of 16
    floats, 50,240 bytes) with the regions the plugin declares: the floats
    averaged over the ranks, the step counter summed.  Each iteration runs
    what an epoch end runs for them (pipeline/reduce.c: the check that the
    ranks declared the same regions, then one all-reduce per region),
    after a barrier, K times (default 1000).  Rank 0 prints one JSON line:
    the median, 90th percentile and mean in milliseconds.  Target (issue
    10): under 1 ms per epoch.  */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cluster.h"
#include "lib/clock.h"
#include "lib/workspace.h"
#include "pipeline/reduce.h"

static int s_cmp (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

int main (int argc, char **argv)
{
    int iterations = 1000;
    size_t floats = 785 * 16;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp (argv[i], "--iterations") == 0)
            iterations = atoi (argv[i + 1]);
        else if (strcmp (argv[i], "--floats") == 0)
            floats = strtoull (argv[i + 1], NULL, 10);
    }
    if (iterations < 1 || floats < 1) {
        fprintf (stderr, "usage: mpirun -n N reduce_bench [--iterations K] [--floats F]\n");
        return 2;
    }
    weir__err err;
    weir__err_init (&err);
    weir__cluster *c;
    if (weir__cluster_get (&c, &err)) {
        fprintf (stderr, "reduce_bench: %s\n", err.msg);
        return 1;
    }
    weir__workspace *ws = weir__workspace_new ();
    size_t header = 128, bytes = header + floats * sizeof (float);
    char *blob = ws ? weir__workspace_blob (ws, "softmax", bytes, &err) : NULL;
    double *took = calloc ((size_t) iterations, sizeof *took);
    if (!blob || !took) {
        fprintf (stderr, "reduce_bench: out of memory\n");
        return 1;
    }
    float *w = (float *) (blob + header);
    for (size_t i = 0; i < floats; i++)
        w[i] = (float) (i % 97) * 0.01f + (float) weir__cluster_rank (c);
    if (weir__workspace_add_reduce (ws, "softmax", header, floats, 4, WEIR__REDUCE_F32, WEIR__REDUCE_MEAN)
        || weir__workspace_add_reduce (ws, "softmax", 64, 1, 8, WEIR__REDUCE_I64, WEIR__REDUCE_SUM)) {
        fprintf (stderr, "reduce_bench: cannot declare the regions\n");
        return 1;
    }
    for (int i = -10; i < iterations; i++) {
        if (weir__cluster_barrier (c, 0, "the benchmark", &err))
            break;
        uint64_t t0 = weir__now_ns ();
        if (weir__reduce_run (ws, c, (uint64_t) (i + 11), 0, &err))
            break;
        if (i >= 0)
            took[i] = (double) (weir__now_ns () - t0) / 1e9;
        //  What training would have changed before the next epoch end
        w[(size_t) (i + 10) % floats] += 1.0f;
    }
    if (err.code) {
        fprintf (stderr, "reduce_bench: %s\n", err.msg);
        return 1;
    }
    double sum = 0;
    for (int i = 0; i < iterations; i++)
        sum += took[i];
    qsort (took, (size_t) iterations, sizeof *took, s_cmp);
    if (weir__cluster_rank (c) == 0)
        printf ("{\"ranks\": %d, \"floats\": %zu, \"bytes\": %zu, \"iterations\": %d, \"median_ms\": %.4f, "
                "\"p90_ms\": %.4f, \"mean_ms\": %.4f}\n",
                weir__cluster_size (c), floats, floats * sizeof (float), iterations,
                took[iterations / 2] * 1e3, took[iterations * 9 / 10] * 1e3, sum / iterations * 1e3);
    free (took);
    weir__workspace_destroy (&ws);
    //  Every rank ran every round: leave the job without aborting it
    weir__cluster_ended (c, 1);
    return 0;
}

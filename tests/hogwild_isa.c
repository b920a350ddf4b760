/*  tests/hogwild_isa.c - what the hogwild model learns, as one checksum
    per configuration, for comparing builds of the model for different
    instruction sets (tests/hogwild_isa.sh).

        hogwild_isa

    Trains deterministic pseudo-random examples, dense, sparse (dense
    enough to be learned as dense) and scattered (sparse ones spread
    over sixteen times the rows, learned as sparse), with
    and without L2, on rows of 4, 8, 16 and 32 lanes and with mini-batches
    that are and are not one tile, and prints for each a line
    "CLASSES DIM MINIBATCH L2 KIND CHECKSUM", the checksum being FNV-1a of
    the model's bytes, after a first line "clones 1" when it was built
    with the clones of kernels.h, "clones 0" when not.  kernels.h promises that the AVX-512 and the
    AVX2+FMA builds compute the same bits: their outputs must be equal.  */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../examples/hogwild/kernels.h"
#include "../examples/hogwild/model.h"

static uint64_t s_seed = 12345;

static uint32_t s_next (void)
{
    s_seed = s_seed * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t) (s_seed >> 33);
}

static uint64_t s_fnv (const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static const char *s_kinds[] = {"dense", "sparse", "scattered"};

static int s_run (unsigned classes, size_t dim, unsigned minibatch, float l2, int sparse)
{
    //  Scattered: feature j in row 16 j
    size_t spread = sparse == 2 ? 16 : 1, rows = dim * spread;
    model_config cfg;
    model_config_defaults (&cfg, classes, rows);
    cfg.minibatch = minibatch;
    cfg.l2 = l2;
    cfg.indexing = MODEL_INDEX_DIRECT;
    size_t size = model_bytes (classes, rows);
    void *mem = aligned_alloc (64, (size + 63) / 64 * 64);
    model_worker *w = model_worker_new (&cfg);
    float *x = malloc (dim * sizeof *x), *value = malloc (dim * sizeof *value);
    uint64_t *index = malloc (dim * sizeof *index);
    if (!mem || !w || !x || !value || !index || model_init (mem, size, &cfg)) {
        fprintf (stderr, "hogwild_isa: cannot set up %u classes, dim %zu\n", classes, dim);
        return 1;
    }
    s_seed = 12345;
    for (unsigned i = 0; i < 500; i++) {
        //  Lengths from dim / 2 to dim, values in [-1, 1), a third zero
        size_t n = dim / 2 + s_next () % (dim - dim / 2 + 1), got = 0;
        for (size_t j = 0; j < n; j++) {
            uint32_t r = s_next ();
            x[j] = r % 3 == 0 ? 0 : (float) ((double) (r >> 8) / (double) (1u << 23) - 1);
            if (x[j] != 0) {
                index[got] = j * spread;
                value[got++] = x[j];
            }
        }
        unsigned label = s_next () % classes;
        int rc = sparse ? model_worker_add_sparse (w, mem, label, index, value, got, 0.5f)
                        : model_worker_add_dense_f32 (w, mem, label, x, n, 0.5f);
        if (rc) {
            fprintf (stderr, "hogwild_isa: %s\n", model_strerror (rc));
            return 1;
        }
        if (i % 97 == 96)
            model_worker_flush (w);
    }
    model_worker_flush (w);
    printf ("%u %zu %u %g %s %016llx\n", classes, dim, minibatch, (double) l2, s_kinds[sparse],
            (unsigned long long) s_fnv (mem, size));
    model_worker_destroy (&w);
    free (mem);
    free (x);
    free (value);
    free (index);
    return 0;
}

int main (void)
{
    static const struct {
        unsigned classes;
        size_t dim;
    } shapes[] = {{3, 37}, {6, 50}, {10, 100}, {20, 33}};
    static const unsigned minibatches[] = {16, 7, 40};
    //  Whether this build dispatches to clones: the others are one version
    printf ("clones %d\n", MODEL__HAS_CLONES);
    int rc = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (size_t b = 0; b < sizeof minibatches / sizeof *minibatches; b++)
            for (int l2 = 0; l2 <= 1; l2++)
                for (int sparse = 0; sparse <= 2; sparse++)
                    rc |= s_run (shapes[s].classes, shapes[s].dim, minibatches[b], l2 ? 0.01f : 0, sparse);
    return rc;
}

/*  examples/hogwild/model.c - the model's configuration and its memory:
    the settings and their check, the learning-rate schedule, the layout
    of the model memory, the mapping of sparse indices to rows and the
    reading of sparse records' little-endian numbers.
    Training is worker.c, prediction predict.c.  */
#include "model.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

_Static_assert(sizeof (_Atomic float) == sizeof (float), "_Atomic float must be a plain float");
_Static_assert(sizeof (model_blob) == MODEL_HEADER_BYTES, "the header is two cache lines");
_Static_assert(offsetof (model_blob, step) == 64, "the step counter has a cache line of its own");

//  Largest dim: rows are numbered with uint32_t
#define S_MAX_DIM ((size_t) 1 << 31)
#define S_MAX_MINIBATCH 65536
#define S_MAX_PUSH 1024

const char *model_strerror (int code)
{
    switch (code) {
    case 0: return "success";
    case MODEL_ENOMEM: return "out of memory";
    case MODEL_ELABEL: return "label out of range";
    case MODEL_EDIM: return "more features than the model's dim";
    case MODEL_EVALUE: return "a feature value is not finite";
    case MODEL_EBLOB: return "the memory does not hold a model of this shape";
    case MODEL_ECONFIG: return "a model setting is out of range";
    case MODEL_EINDEX: return "a sparse index is beyond the model's rows (indexing=direct)";
    default: return "unknown error";
    }
}

void model_config_defaults (model_config *cfg, unsigned classes, size_t dim)
{
    assert (cfg);
    //  Tuned on Fashion-MNIST: see DEFAULTS in model.h
    *cfg = (model_config){
        .classes = classes,
        .dim = dim,
        .indexing = MODEL_INDEX_HASH,
        .minibatch = 16,
        .lr = 0.2f,
        .schedule = MODEL_LR_INV,
        .decay = 5e-5f,
        .l2 = 0,
        .push = 8,
    };
}

static bool s_finite_nonneg (float v)
{
    return v >= 0 && v <= FLT_MAX;
}

int model_config_check (const model_config *cfg)
{
    assert (cfg);
    if (model_bytes (cfg->classes, cfg->dim) == 0)
        return MODEL_ECONFIG;
    if (cfg->minibatch == 0 || cfg->minibatch > S_MAX_MINIBATCH)
        return MODEL_ECONFIG;
    if (cfg->push == 0 || cfg->push > S_MAX_PUSH)
        return MODEL_ECONFIG;
    if (!s_finite_nonneg (cfg->lr) || !s_finite_nonneg (cfg->decay) || !s_finite_nonneg (cfg->l2))
        return MODEL_ECONFIG;
    if (cfg->schedule != MODEL_LR_CONSTANT && cfg->schedule != MODEL_LR_INV
        && cfg->schedule != MODEL_LR_INVSQRT)
        return MODEL_ECONFIG;
    if (cfg->indexing != MODEL_INDEX_HASH && cfg->indexing != MODEL_INDEX_DIRECT)
        return MODEL_ECONFIG;
    return 0;
}

float model_lr (const model_config *cfg, uint64_t step)
{
    //  In double: the step counter goes past float's 2^24 within a few
    //  hundred passes of a small data set
    double t = 1 + (double) cfg->decay * (double) step;
    switch (cfg->schedule) {
    case MODEL_LR_INV: return (float) (cfg->lr / t);
    case MODEL_LR_INVSQRT: return (float) (cfg->lr / sqrt (t));
    default: return cfg->lr;
    }
}

//  ---------------------------------------------------------------------
//  The memory

unsigned model_row_floats (unsigned classes)
{
    //  4, 8, or a multiple of 16: a row never straddles a cache line
    if (classes <= 4)
        return 4;
    if (classes <= 8)
        return 8;
    return classes > UINT32_MAX - 15 ? 0 : (classes + 15) / 16 * 16;
}

size_t model_bytes (unsigned classes, size_t dim)
{
    unsigned lanes = model_row_floats (classes);
    if (classes < 2 || dim == 0 || dim > S_MAX_DIM || lanes == 0)
        return 0;
    //  dim rows of weights and one of biases
    if (dim + 1 > (SIZE_MAX - MODEL_HEADER_BYTES) / sizeof (float) / lanes)
        return 0;
    return MODEL_HEADER_BYTES + (dim + 1) * lanes * sizeof (float);
}

int model_init (void *mem, size_t size, const model_config *cfg)
{
    assert (mem && cfg);
    if (model_config_check (cfg))
        return MODEL_ECONFIG;
    if (size != model_bytes (cfg->classes, cfg->dim) || (uintptr_t) mem % 8)
        return MODEL_EBLOB;
    //  Single-threaded by contract (no worker runs yet), so plain writes
    //  race with nothing; the thread start that follows publishes them
    memset (mem, 0, size);
    model_blob *m = mem;
    m->magic = MODEL_MAGIC;
    m->version = MODEL_VERSION;
    m->classes = cfg->classes;
    m->indexing = cfg->indexing;
    m->dim = cfg->dim;
    m->row = model_row_floats (cfg->classes);
    return 0;
}

int model_check (const void *mem, size_t size, const model_config *cfg)
{
    assert (mem && cfg);
    const model_blob *m = mem;
    if (size < sizeof *m || (uintptr_t) mem % 8)
        return MODEL_EBLOB;
    if (m->magic != MODEL_MAGIC || m->version != MODEL_VERSION || m->classes != cfg->classes
        || m->dim != cfg->dim || m->indexing != (uint32_t) cfg->indexing
        || m->row != model_row_floats (cfg->classes) || size != model_bytes (cfg->classes, cfg->dim))
        return MODEL_EBLOB;
    return 0;
}

void model_sparse_le32 (const void *index, const void *value, size_t n, uint64_t *indexes, float *values)
{
    const uint8_t *index_bytes = index, *value_bytes = value;
    //  A record without features may come before any room was made: the
    //  arrays may be NULL, which memcpy may not be given even for 0 bytes
    if (n == 0)
        return;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    //  The host's own order: the values are copied as they are, and each
    //  index is one load (a loop of bytes assembled by shifts took a
    //  fifth of a job's time at -O2, where GCC 12 neither merges nor
    //  vectorises it)
    memcpy (values, value_bytes, n * sizeof *values);
    for (size_t i = 0; i < n; i++) {
        uint32_t x;
        memcpy (&x, index_bytes + 4 * i, sizeof x);
        indexes[i] = x;
    }
#else
    for (size_t i = 0; i < n; i++) {
        const uint8_t *x = index_bytes + 4 * i, *v = value_bytes + 4 * i;
        indexes[i] = (uint32_t) x[0] | (uint32_t) x[1] << 8 | (uint32_t) x[2] << 16 | (uint32_t) x[3] << 24;
        uint32_t u = (uint32_t) v[0] | (uint32_t) v[1] << 8 | (uint32_t) v[2] << 16 | (uint32_t) v[3] << 24;
        memcpy (&values[i], &u, sizeof u);
    }
#endif
}

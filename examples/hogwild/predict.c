/*  examples/hogwild/predict.c - the most likely label of an example, read
    straight from the shared model with scalar atomic loads.  */
#include "model.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "kernels.h"

//  The biases into SCORE, then each nonzero feature's row added in the
//  example's order
static void s_score_begin (model_blob *m, float *score)
{
    const _Atomic float *b = model_biases (m);
    for (unsigned c = 0; c < m->classes; c++)
        score[c] = atomic_load_explicit (&b[c], memory_order_relaxed);
}

static void s_score_add (model_blob *m, float *score, size_t row, float v)
{
    const _Atomic float *w = model_weights (m) + row * m->row;
    for (unsigned c = 0; c < m->classes; c++)
        score[c] += v * atomic_load_explicit (&w[c], memory_order_relaxed);
}

//  Room for the scores: PROB, else LOCAL (64 floats), else the heap
static float *s_score_buffer (unsigned classes, float *prob, float *local)
{
    return prob ? prob : classes <= 64 ? local : malloc (classes * sizeof (float));
}

//  The label of SCORE, its probabilities into PROB (when RC is 0); frees
//  SCORE when s_score_buffer took it from the heap
static int s_decide (float *score, unsigned classes, float *prob, int rc, float *local)
{
    if (rc == 0) {
        unsigned argmax;
        (void) model__kernel_softmax (score, classes, 0, &argmax);
        rc = (int) argmax;
    }
    if (score != prob && score != local)
        free (score);
    return rc;
}

#define S_PREDICT_DENSE(name, type)                                                                          \
    int name (model_blob *m, const type *x, size_t n, float scale, float *prob)                              \
    {                                                                                                        \
        assert (m && m->magic == MODEL_MAGIC && (x || n == 0));                                              \
        if (n > m->dim)                                                                                      \
            return MODEL_EDIM;                                                                               \
        float local[64], *score = s_score_buffer (m->classes, prob, local);                                  \
        if (!score)                                                                                          \
            return MODEL_ENOMEM;                                                                             \
        int rc = fabsf (scale) <= FLT_MAX ? 0 : MODEL_EVALUE;                                                \
        s_score_begin (m, score);                                                                            \
        for (size_t j = 0; j < n && rc == 0; j++) {                                                          \
            float v = (float) x[j] * scale;                                                                  \
            if (!(fabsf (v) <= FLT_MAX))                                                                     \
                rc = MODEL_EVALUE;                                                                           \
            else if (v != 0)                                                                                 \
                s_score_add (m, score, j, v);                                                                \
        }                                                                                                    \
        return s_decide (score, m->classes, prob, rc, local);                                                \
    }
S_PREDICT_DENSE (model_predict_dense_u8, uint8_t)
S_PREDICT_DENSE (model_predict_dense_f32, float)
S_PREDICT_DENSE (model_predict_dense_f64, double)

int model_predict_sparse (model_blob *m, const uint64_t *index, const float *value, size_t n, float scale,
                          float *prob)
{
    assert (m && m->magic == MODEL_MAGIC && ((index && value) || n == 0));
    float local[64], *score = s_score_buffer (m->classes, prob, local);
    if (!score)
        return MODEL_ENOMEM;
    int rc = fabsf (scale) <= FLT_MAX ? 0 : MODEL_EVALUE;
    s_score_begin (m, score);
    for (size_t k = 0; k < n && rc == 0; k++) {
        float v = value[k] * scale;
        if (!(fabsf (v) <= FLT_MAX))
            rc = MODEL_EVALUE;
        //  A feature the model has no row for weighs nothing, as
        //  liblinear's predict ignores those past its model's
        else if (m->indexing == MODEL_INDEX_DIRECT && index[k] >= m->dim)
            continue;
        else if (v != 0)
            s_score_add (m, score, model_column (m, index[k]), v);
    }
    return s_decide (score, m->classes, prob, rc, local);
}

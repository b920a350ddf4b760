/*  examples/hogwild/kernels.h - the float loops of the model: dot
    products, axpys and the softmax, shared by training (worker.c) and
    prediction (predict.c).

    They are static inline so that each stays in its caller's loop, as it
    did when the model was one file: these are the innermost loops of
    training.  Sums run in a fixed order (16 partial sums combined in a
    fixed tree for dense rows, the example's order of features for sparse
    ones), which vectorizes without reassociation and so without
    -ffast-math: one thread's results are exactly reproducible.

    Conventions: dense lengths are multiples of MODEL__BLOCK; shared-layout
    rows are LANES floats (4, 8 or a multiple of 16, model_row_floats).  */
#ifndef HOGWILD_KERNELS_H_INCLUDED
#define HOGWILD_KERNELS_H_INCLUDED

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MODEL__BLOCK 16  //  floats per block of a dense loop: 64 bytes

//  The dot product of N floats (a multiple of 16): 16 partial sums, kept
//  in registers by the unrolled block, combined in a fixed order
static inline float model__kernel_dot (const float *restrict a, const float *restrict b, size_t n)
{
    float acc[MODEL__BLOCK] = {0};
    for (size_t i = 0; i < n; i += MODEL__BLOCK)
#pragma GCC unroll 16
        for (size_t k = 0; k < MODEL__BLOCK; k++)
            acc[k] += a[i + k] * b[i + k];
    for (size_t half = MODEL__BLOCK / 2; half; half /= 2)
        for (size_t k = 0; k < half; k++)
            acc[k] += acc[k + half];
    return acc[0];
}

//  Y += A * X over N floats (a multiple of 16)
static inline void model__kernel_axpy (float *restrict y, float a, const float *restrict x, size_t n)
{
    for (size_t i = 0; i < n; i += MODEL__BLOCK)
#pragma GCC unroll 16
        for (size_t k = 0; k < MODEL__BLOCK; k++)
            y[i + k] += a * x[i + k];
}

//  Y += A * X over one shared-layout row of LANES floats (4, 8 or a
//  multiple of 16)
static inline void model__kernel_axpy_row (float *restrict y, float a, const float *restrict x,
                                           unsigned lanes)
{
    if (lanes == 16) {
#pragma GCC unroll 16
        for (unsigned k = 0; k < 16; k++)
            y[k] += a * x[k];
        return;
    }
    for (unsigned i = 0; i < lanes; i += 4)
#pragma GCC unroll 4
        for (unsigned k = 0; k < 4; k++)
            y[i + k] += a * x[i + k];
}

//  SCORE += the sum over N features of value * row, in the features' order
static inline void model__kernel_sparse_scores (float *restrict score, const float *restrict snap,
                                                const uint32_t *eslot, const float *evalue, size_t n,
                                                unsigned lanes)
{
    if (lanes == 16) {
        //  The sums stay in registers across the whole example
        float acc[16];
        memcpy (acc, score, sizeof acc);
        for (size_t k = 0; k < n; k++) {
            const float *row = snap + (size_t) eslot[k] * 16;
            float v = evalue[k];
#pragma GCC unroll 16
            for (unsigned c = 0; c < 16; c++)
                acc[c] += v * row[c];
        }
        memcpy (score, acc, sizeof acc);
        return;
    }
    for (size_t k = 0; k < n; k++)
        model__kernel_axpy_row (score, evalue[k], snap + (size_t) eslot[k] * lanes, lanes);
}

//  SCORE (CLASSES values) to probabilities in place; returns the
//  cross-entropy loss for LABEL and sets *ARGMAX (ties: lowest label)
static inline double model__kernel_softmax (float *score, unsigned classes, unsigned label, unsigned *argmax)
{
    unsigned best = 0;
    for (unsigned c = 1; c < classes; c++)
        if (score[c] > score[best])
            best = c;
    float top = score[best], sum = 0, yscore = score[label];
    for (unsigned c = 0; c < classes; c++) {
        score[c] = expf (score[c] - top);
        sum += score[c];
    }
    for (unsigned c = 0; c < classes; c++)
        score[c] /= sum;
    *argmax = best;
    return log ((double) sum) - ((double) yscore - top);
}

#endif

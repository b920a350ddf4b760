/*  examples/hogwild/kernels.h - the float loops of the model: dot
    products, axpys and the softmax, shared by training (worker.c) and
    prediction (predict.c).

    They are static inline so that each stays in its caller's loop, as it
    did when the model was one file: these are the innermost loops of
    training.  Sums run in a fixed order (16 partial sums combined in a
    fixed tree for dot products, 4 for a sparse example's rows of 16,
    the features' order for other rows of weights), which vectorizes without reassociation and so without
    -ffast-math: one thread's results are exactly reproducible.

    The dense training loops are written on GCC's vector types (model__v4,
    v8, v16: a row of a shared-layout model is one of them), which the
    compiler maps to whatever the target has: one AVX-512 register, two
    AVX ones, four SSE ones.  worker.c compiles its caller once per
    instruction set (MODEL__CLONES) and the loader picks the one the CPU
    runs.  Each lane is multiplied and added on its own, in the same
    order on every instruction set.  The library is built with
    -ffp-contract=fast: the AVX-512 and AVX2 clones (x86-64-v4 and v3)
    fuse each multiply and the add that follows it into one instruction
    (one rounding instead of two), which halves the work of the dense
    loops, so these two compute the very same bits (tests/hogwild_isa.sh
    checks it); the default clone, for CPUs without AVX2 and FMA, multiplies and
    adds apart, and its results differ from theirs in the last bits.  The functions not cloned are built for
    baseline x86-64, which has no FMA: they compute the same bits on
    every CPU.

    Conventions: shared-layout rows are LANES floats (4, 8 or a multiple
    of 16, model_row_floats); dense examples in a tile start every
    MODEL__BLOCK floats or a multiple, so each starts a cache line.  */
#ifndef HOGWILD_KERNELS_H_INCLUDED
#define HOGWILD_KERNELS_H_INCLUDED

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MODEL__BLOCK 16  //  floats per cache line: 64 bytes

typedef float model__v4 __attribute__ ((vector_size (16)));
typedef float model__v8 __attribute__ ((vector_size (32)));
typedef float model__v16 __attribute__ ((vector_size (64)));

//  A vector V of type VT loaded from P, through memcpy: the compiler
//  makes it one load, and it says nothing about aliasing between float
//  and vector types
#define MODEL__LOAD(VT, v, p)                                                                                \
    VT v;                                                                                                    \
    memcpy (&v, (p), sizeof v)

//  Y += A * X over one shared-layout row of LANES floats (4, 8 or a
//  multiple of 16)
static inline void model__kernel_axpy_row (float *restrict y, float a, const float *restrict x,
                                           unsigned lanes)
{
    if (lanes == 16) {
        MODEL__LOAD (model__v16, yv, y);
        MODEL__LOAD (model__v16, xv, x);
        yv += a * xv;
        memcpy (y, &yv, sizeof yv);
        return;
    }
    for (unsigned i = 0; i < lanes; i += 4) {
        MODEL__LOAD (model__v4, yv, y + i);
        MODEL__LOAD (model__v4, xv, x + i);
        yv += a * xv;
        memcpy (y + i, &yv, sizeof yv);
    }
}

//  SCORE += the sum over N features of value * row.  With rows of 16,
//  feature k goes into partial sum k mod 4 (the features past the last
//  multiple of four into the first) and the four are added in a fixed
//  tree at the end: a chain of one sum would make every add wait for
//  the one before it (four cycles each), and four sums keep the adder
//  busy.  Any other width sums in the features' order.  Always inline:
//  out of line it would run the default instruction set in every clone.
static inline __attribute__ ((always_inline)) void
model__kernel_sparse_scores (float *restrict score, const float *restrict snap, const uint32_t *eslot,
                             const float *evalue, size_t n, unsigned lanes)
{
    if (lanes == 16) {
        //  The sums stay in registers across the whole example, written
        //  as vectors: as arrays of floats, GCC 12 made one of the four
        //  sums sixteen scalar multiply-adds
        model__v16 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
        size_t k = 0;
        for (; k + 4 <= n; k += 4) {
            MODEL__LOAD (model__v16, r0, snap + (size_t) eslot[k] * 16);
            MODEL__LOAD (model__v16, r1, snap + (size_t) eslot[k + 1] * 16);
            MODEL__LOAD (model__v16, r2, snap + (size_t) eslot[k + 2] * 16);
            MODEL__LOAD (model__v16, r3, snap + (size_t) eslot[k + 3] * 16);
            a0 += evalue[k] * r0;
            a1 += evalue[k + 1] * r1;
            a2 += evalue[k + 2] * r2;
            a3 += evalue[k + 3] * r3;
        }
        for (; k < n; k++) {
            MODEL__LOAD (model__v16, r, snap + (size_t) eslot[k] * 16);
            a0 += evalue[k] * r;
        }
        MODEL__LOAD (model__v16, sum, score);
        sum += (a0 + a1) + (a2 + a3);
        memcpy (score, &sum, sizeof sum);
        return;
    }
    for (size_t k = 0; k < n; k++)
        model__kernel_axpy_row (score, evalue[k], snap + (size_t) eslot[k] * lanes, lanes);
}

//  One clone of a function per instruction set, chosen when the library
//  is loaded (GCC's target_clones, through the dynamic loader's ifunc):
//  no build that runs only on the build machine.  The x86-64 levels
//  rather than "avx512f" and "avx2": neither of those enables FMA (nor
//  AVX-512 the fused forms of vectors narrower than 512 bits), and a
//  clone that fuses the multiply-adds of some vector widths and not of
//  others computes other bits than its neighbour.  x86-64-v4 is AVX-512
//  (F, BW, CD, DQ, VL), v3 AVX2 with FMA (Haswell and Zen on).
//  -DMODEL_LEVEL='"arch=x86-64-v3"' builds the one version a clone
//  would be, the rest as in a build with clones: tests/hogwild_isa.sh
//  compares two levels so.  Not under
//  ThreadSanitizer: a program that links the clones itself runs their
//  resolver before the sanitizer's runtime is up, and crashes
#if defined(MODEL_LEVEL)
#define MODEL__CLONES __attribute__ ((target (MODEL_LEVEL)))
#define MODEL__HAS_CLONES 0
#elif defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__ELF__)                    \
    && !defined(__SANITIZE_THREAD__)
#define MODEL__CLONES __attribute__ ((target_clones ("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define MODEL__HAS_CLONES 1
#else
#define MODEL__CLONES
#define MODEL__HAS_CLONES 0
#endif

//  Scalar arithmetic a clone calls that must give the same bits whichever
//  clone calls it (a learning rate, a bias's step): never inlined into
//  one, whose multiply-adds are fused and its own would be too
#define MODEL__UNCLONED __attribute__ ((noinline))

//  Where a loop the compiler vectorizes poorly has a version written with
//  one instruction set's intrinsics, chosen by __builtin_cpu_supports
#if defined(__x86_64__) && defined(__GNUC__)
#define MODEL__X86_DISPATCH 1
#else
#define MODEL__X86_DISPATCH 0
#endif

//  The kernels go into each clone of their caller, compiled for its
//  instruction set: a kernel left out of line would run the default one
#define MODEL__INLINE __attribute__ ((always_inline))

//  A mini-batch's step on one vector of a private copy: *P = KEEP * *P -
//  COEF * G (KEEP shrinks the weights, L2; COEF scales the summed
//  gradient G)
#define MODEL__STEP(VT, p, g, keep, coef)                                                                    \
    do {                                                                                                     \
        MODEL__LOAD (VT, s_, p);                                                                             \
        s_ = keep * s_ - coef * g;                                                                           \
        memcpy ((p), &s_, sizeof s_);                                                                        \
    } while (0)

/*  The dense kernels, model__kernel_scores_NAME and _grad_NAME, for a
    vector type VT of V floats (a row of LANES floats is LANES / V of
    them).  X holds N examples, one every XSTRIDE floats, each NEED
    features long (zero past its own length); SNAP and GRAD hold NEED rows
    of LANES floats, one per feature.

    Scores: SCORE[e] (LANES floats) = BIAS + the sum over features j, in
    order, of x[e][j] * row j.  Eight examples at a time share each load
    of a row.

    Gradient: row j of GRAD += the sum over examples e, in order, of
    x[e][j] * D[e] (D: LANES floats per example).  Eight rows at a time
    share each load of D[e]; each row sums in the examples' order, as an
    example-by-example update would.  With SNAP, the examples are a whole
    mini-batch: the sum starts from zero, as it would in a cleared GRAD,
    and goes straight into SNAP's step (MODEL__STEP, as model__kernel_step;
    where multiply-adds are fused, the compiler may fuse another of its
    two products) instead of into GRAD, which is left as it was.

    Why eight: every sum is a chain in which each add waits for the one
    before it (4 cycles), and the CPU can start two adds a cycle, so it
    takes eight chains side by side to keep the adders busy; with four,
    the loops ran at half the speed the hardware allows.  The order of
    every sum is the same for any number of chains.

    Vectors go through memcpy (MODEL__LOAD).  */
#define MODEL__DENSE_KERNELS(NAME, VT, V)                                                                    \
    static inline MODEL__INLINE void model__kernel_scores_##NAME (                                           \
        float *restrict score, const float *restrict snap, const float *restrict bias,                       \
        const float *restrict x, size_t xstride, unsigned n, size_t need, unsigned lanes)                    \
    {                                                                                                        \
        for (unsigned q = 0; q < lanes; q += V) {                                                            \
            MODEL__LOAD (VT, b, bias + q);                                                                   \
            unsigned e = 0;                                                                                  \
            for (; e + 8 <= n; e += 8) {                                                                     \
                const float *x0 = x + e * xstride;                                                           \
                VT a0 = b, a1 = b, a2 = b, a3 = b, a4 = b, a5 = b, a6 = b, a7 = b;                           \
                for (size_t j = 0; j < need; j++) {                                                          \
                    MODEL__LOAD (VT, w, snap + j * lanes + q);                                               \
                    a0 += x0[j] * w;                                                                         \
                    a1 += x0[xstride + j] * w;                                                               \
                    a2 += x0[2 * xstride + j] * w;                                                           \
                    a3 += x0[3 * xstride + j] * w;                                                           \
                    a4 += x0[4 * xstride + j] * w;                                                           \
                    a5 += x0[5 * xstride + j] * w;                                                           \
                    a6 += x0[6 * xstride + j] * w;                                                           \
                    a7 += x0[7 * xstride + j] * w;                                                           \
                }                                                                                            \
                float *s0 = score + e * lanes + q;                                                           \
                memcpy (s0, &a0, sizeof a0);                                                                 \
                memcpy (s0 + lanes, &a1, sizeof a1);                                                         \
                memcpy (s0 + 2 * lanes, &a2, sizeof a2);                                                     \
                memcpy (s0 + 3 * lanes, &a3, sizeof a3);                                                     \
                memcpy (s0 + 4 * lanes, &a4, sizeof a4);                                                     \
                memcpy (s0 + 5 * lanes, &a5, sizeof a5);                                                     \
                memcpy (s0 + 6 * lanes, &a6, sizeof a6);                                                     \
                memcpy (s0 + 7 * lanes, &a7, sizeof a7);                                                     \
            }                                                                                                \
            for (; e < n; e++) {                                                                             \
                const float *x0 = x + e * xstride;                                                           \
                VT a0 = b;                                                                                   \
                for (size_t j = 0; j < need; j++) {                                                          \
                    MODEL__LOAD (VT, w, snap + j * lanes + q);                                               \
                    a0 += x0[j] * w;                                                                         \
                }                                                                                            \
                memcpy (score + e * lanes + q, &a0, sizeof a0);                                              \
            }                                                                                                \
        }                                                                                                    \
    }                                                                                                        \
                                                                                                             \
    static inline MODEL__INLINE void model__kernel_grad_##NAME (                                             \
        float *restrict grad, float *restrict snap, float keep, float coef, const float *restrict d,         \
        const float *restrict x, size_t xstride, unsigned n, size_t need, unsigned lanes)                    \
    {                                                                                                        \
        for (unsigned q = 0; q < lanes; q += V) {                                                            \
            size_t j = 0;                                                                                    \
            for (; j + 8 <= need; j += 8) {                                                                  \
                float *r = grad + j * lanes + q;                                                             \
                VT g0 = {0}, g1 = {0}, g2 = {0}, g3 = {0}, g4 = {0}, g5 = {0}, g6 = {0}, g7 = {0};           \
                if (!snap) {                                                                                 \
                    memcpy (&g0, r, sizeof g0);                                                              \
                    memcpy (&g1, r + lanes, sizeof g1);                                                      \
                    memcpy (&g2, r + 2 * lanes, sizeof g2);                                                  \
                    memcpy (&g3, r + 3 * lanes, sizeof g3);                                                  \
                    memcpy (&g4, r + 4 * lanes, sizeof g4);                                                  \
                    memcpy (&g5, r + 5 * lanes, sizeof g5);                                                  \
                    memcpy (&g6, r + 6 * lanes, sizeof g6);                                                  \
                    memcpy (&g7, r + 7 * lanes, sizeof g7);                                                  \
                }                                                                                            \
                for (unsigned e = 0; e < n; e++) {                                                           \
                    const float *xe = x + e * xstride + j;                                                   \
                    MODEL__LOAD (VT, de, d + e * lanes + q);                                                 \
                    g0 += xe[0] * de;                                                                        \
                    g1 += xe[1] * de;                                                                        \
                    g2 += xe[2] * de;                                                                        \
                    g3 += xe[3] * de;                                                                        \
                    g4 += xe[4] * de;                                                                        \
                    g5 += xe[5] * de;                                                                        \
                    g6 += xe[6] * de;                                                                        \
                    g7 += xe[7] * de;                                                                        \
                }                                                                                            \
                if (snap) {                                                                                  \
                    float *w = snap + j * lanes + q;                                                         \
                    MODEL__STEP (VT, w, g0, keep, coef);                                                     \
                    MODEL__STEP (VT, w + lanes, g1, keep, coef);                                             \
                    MODEL__STEP (VT, w + 2 * lanes, g2, keep, coef);                                         \
                    MODEL__STEP (VT, w + 3 * lanes, g3, keep, coef);                                         \
                    MODEL__STEP (VT, w + 4 * lanes, g4, keep, coef);                                         \
                    MODEL__STEP (VT, w + 5 * lanes, g5, keep, coef);                                         \
                    MODEL__STEP (VT, w + 6 * lanes, g6, keep, coef);                                         \
                    MODEL__STEP (VT, w + 7 * lanes, g7, keep, coef);                                         \
                    continue;                                                                                \
                }                                                                                            \
                memcpy (r, &g0, sizeof g0);                                                                  \
                memcpy (r + lanes, &g1, sizeof g1);                                                          \
                memcpy (r + 2 * lanes, &g2, sizeof g2);                                                      \
                memcpy (r + 3 * lanes, &g3, sizeof g3);                                                      \
                memcpy (r + 4 * lanes, &g4, sizeof g4);                                                      \
                memcpy (r + 5 * lanes, &g5, sizeof g5);                                                      \
                memcpy (r + 6 * lanes, &g6, sizeof g6);                                                      \
                memcpy (r + 7 * lanes, &g7, sizeof g7);                                                      \
            }                                                                                                \
            for (; j < need; j++) {                                                                          \
                float *r = grad + j * lanes + q;                                                             \
                VT g0 = {0};                                                                                 \
                if (!snap)                                                                                   \
                    memcpy (&g0, r, sizeof g0);                                                              \
                for (unsigned e = 0; e < n; e++) {                                                           \
                    MODEL__LOAD (VT, de, d + e * lanes + q);                                                 \
                    g0 += x[e * xstride + j] * de;                                                           \
                }                                                                                            \
                if (snap)                                                                                    \
                    MODEL__STEP (VT, snap + j * lanes + q, g0, keep, coef);                                  \
                else                                                                                         \
                    memcpy (r, &g0, sizeof g0);                                                              \
            }                                                                                                \
        }                                                                                                    \
    }
MODEL__DENSE_KERNELS (v4, model__v4, 4)
MODEL__DENSE_KERNELS (v8, model__v8, 8)
MODEL__DENSE_KERNELS (v16, model__v16, 16)

//  MODEL__STEP over N floats (a multiple of 4), then GRAD = 0: a
//  mini-batch's step on a private copy, in vectors of 16 and then of 4.
//  Each float is computed on its own, the same way in every clone
static inline MODEL__INLINE void model__kernel_step (float *restrict snap, float *restrict grad, size_t n,
                                                     float keep, float coef)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        MODEL__LOAD (model__v16, g, grad + i);
        MODEL__STEP (model__v16, snap + i, g, keep, coef);
        memset (grad + i, 0, sizeof g);
    }
    for (; i < n; i += 4) {
        MODEL__LOAD (model__v4, g, grad + i);
        MODEL__STEP (model__v4, snap + i, g, keep, coef);
        memset (grad + i, 0, sizeof g);
    }
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

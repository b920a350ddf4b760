/*  examples/hogwild/worker.c - training: a worker's mini-batches of dense
    and sparse examples, applied to the shared model.

    Why the worker works on private copies: C11 atomics, even relaxed
    ones, keep the compiler from vectorizing a loop, and a shared model
    that every thread writes after every example makes its cache lines
    bounce between cores (two threads then run at half the speed of one).
    So a worker copies the weights it needs from the shared model
    (relaxed atomic loads), scores and differentiates its examples on the
    copy with plain float loops the compiler vectorizes, sums the gradient
    privately, steps the copy, and every cfg.push mini-batches merges the
    copy into the model (relaxed load, merge, relaxed store: an update
    racing with another thread's may be lost, never torn).

    Why mini-batches are pushed in eights (cfg.push): the write of the
    shared model is one scalar atomic load and store per weight, as slow
    as scoring and differentiating a whole dense mini-batch of 16.  So a
    mini-batch updates only the private copy, with vector loops, and the
    copy goes on to the next one (a sparse copy keeps every row touched
    since the last push); every cfg.push mini-batches each weight goes to
    the model: the copy's value where the model still
    holds the value the copy read (no other thread wrote it: one thread
    alone computes exactly what writing every mini-batch would), the
    model's value plus the copy's change where another thread wrote it.
    A thread then sees the others' work a push later, and two threads
    write each line an eighth as often.

    Why one layout: the shared model keeps one row per feature (all
    classes side by side, at most a cache line), so a sparse example
    reads one line per feature it has and a mini-batch writes one line
    per feature it touched.  The private copies keep it: a row is one
    vector register (16 classes in AVX-512's), an example's scores are
    the sum of its features times their rows, and its gradient adds its
    features times one vector of score derivatives to the rows.

    Why dense examples wait in tiles: every example of a mini-batch is
    scored against the same copy, so nothing is lost by scoring up to 16
    of them together (a tile), and the tile's loops load each row once
    for eight examples and each example's derivatives once for eight rows
    instead of once per multiply.  That, and registers as wide as the CPU
    has, is most of the speed of the dense loop.

    Why a dense enough sparse example is learned as dense: a dense
    example costs about a nanosecond per row below its longest feature,
    with the tile's loops, and a sparse one about seven per nonzero
    feature, finding each one's private row and reading it from wherever
    it is.  So a sparse example whose rows all lie below eight times its
    number of nonzero features (Fashion-MNIST's pixels: 390 of 784, under
    indexing=direct) is scattered into the tile, zeros between its
    features, and learned as the dense example it is; one hashed into
    the default 2^18 rows, which spread it over the whole model, stays
    sparse.  Its L2 then shrinks the rows a
    dense mini-batch writes (those below its longest example).  The dense
    buffers are address space the size of the model; only the rows the
    longest example reaches are ever touched.

    Why it is exactly reproducible: the kernels sum in a fixed order
    (kernels.h), and nothing depends on timing or on hidden state.  */
#include "model.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"

enum { S_IDLE, S_DENSE, S_SPARSE };

//  Dense examples scored together (see "Why dense examples wait in tiles")
#define S_TILE 16
//  Rows ahead whose cache line an update asks for early
#define S_PREFETCH 8
//  A sparse example is learned as dense when its highest row is below
//  this many times its nonzero features (see "Why a dense enough sparse
//  example is learned as dense")
#define S_DENSER 8
//  ... and when the dense buffers' address space is at most this many
//  floats a copy (2^18 rows of 16 classes: 16 MiB)
#define S_DENSE_FLOATS ((size_t) 1 << 22)
_Static_assert(S_DENSE_FLOATS <= INT32_MAX, "a dense example's rows are signed 32-bit scatter indices");

struct model_worker {
    model_config cfg;
    unsigned lanes;  //  floats per shared row
    size_t stride;   //  floats per example in the dense tile: dim rounded up to a cache line

    //  The pending mini-batch: its kind, examples in it, the model it
    //  reads and will update, the biases as read and their summed gradient
    int kind;
    unsigned pending;
    model_blob *m;
    float *bsnap, *bgrad;  //  lanes each
    float *score;          //  lanes: one example's scores, then d loss / d score

    //  Dense: the private copy of the weights of features < hi, in the
    //  shared layout; their values when last read from the model (dbase,
    //  bbase); their summed gradient, the same way (zero between
    //  mini-batches; its rows are zeroed as hi grows to them).  The
    //  tile: up to S_TILE examples waiting to be scored, scaled (example
    //  e at [e * stride]), their labels and lengths, the longest; then
    //  their scores and derivatives (lanes each).  carry: dsnap and bsnap
    //  hold what the last mini-batch learned; steps: mini-batches learned
    //  on them since the last push
    float *dsnap, *dbase, *bbase, *dgrad, *tile, *tscore;
    unsigned tiled, tlabel[S_TILE];
    size_t tlen[S_TILE], tneed;
    size_t hi;
    bool carry;
    unsigned steps;

    //  Sparse: the rows touched since the last push, in order of first
    //  touch: slot[row] is 1 + the row's position in 'rows' (0:
    //  untouched); ssnap holds the private copy of each, sbase the values
    //  it read from the model, sgrad the pending mini-batch's summed
    //  gradient (zero in rows it did not touch).  The slots the pending
    //  mini-batch touched, in order (mrows; stamp[slot] is the mini-batch
    //  that last touched it, as 'steps' counts them from the last push)
    uint32_t *slot, *rows, *mrows, *stamp;
    float *ssnap, *sbase, *sgrad;
    size_t touched, cap_touched, mtouched;
    //  The example being added: its rows and values as converted, and
    //  (model_worker_add_sparse_le32's, when it takes the general way)
    //  its indices and values as read from the record's bytes
    uint32_t *eslot;
    float *evalue;
    uint64_t *windex;
    float *wvalue;
    size_t cap_example;

    model_stats stats;
};

static float *s_alloc_floats (size_t n)
{
    //  64-byte aligned: blocks and rows of 16 floats are cache lines
    size_t bytes = (n * sizeof (float) + 63) / 64 * 64;
    return aligned_alloc (64, bytes ? bytes : 64);
}

model_worker *model_worker_new (const model_config *cfg)
{
    assert (cfg);
    if (model_config_check (cfg))
        return NULL;
    model_worker *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->cfg = *cfg;
    self->lanes = model_row_floats (cfg->classes);
    self->stride = (cfg->dim + MODEL__BLOCK - 1) / MODEL__BLOCK * MODEL__BLOCK;
    self->bsnap = s_alloc_floats (self->lanes);
    self->bbase = s_alloc_floats (self->lanes);
    self->bgrad = s_alloc_floats (self->lanes);
    self->score = s_alloc_floats (self->lanes);
    if (!self->bsnap || !self->bbase || !self->bgrad || !self->score) {
        model_worker_destroy (&self);
        return NULL;
    }
    memset (self->bgrad, 0, self->lanes * sizeof (float));
    return self;
}

void model_worker_destroy (model_worker **self_p)
{
    assert (self_p);
    model_worker *self = *self_p;
    if (!self)
        return;
    free (self->bsnap);
    free (self->bbase);
    free (self->bgrad);
    free (self->score);
    free (self->dsnap);
    free (self->dbase);
    free (self->dgrad);
    free (self->tile);
    free (self->tscore);
    free (self->slot);
    free (self->rows);
    free (self->ssnap);
    free (self->sbase);
    free (self->sgrad);
    free (self->mrows);
    free (self->stamp);
    free (self->eslot);
    free (self->evalue);
    free (self->windex);
    free (self->wvalue);
    free (self);
    *self_p = NULL;
}

unsigned model_worker_pending (const model_worker *self)
{
    assert (self);
    return self->pending;
}

void model_worker_take_stats (model_worker *self, model_stats *out)
{
    assert (self && out);
    *out = self->stats;
    memset (&self->stats, 0, sizeof self->stats);
}

static MODEL__CLONES void s_dense_tile (model_worker *self);

static void s_check_model (const model_worker *self, const model_blob *m)
{
    (void) self;
    (void) m;
    assert (m && m->magic == MODEL_MAGIC && m->classes == self->cfg.classes && m->dim == self->cfg.dim
            && m->indexing == (uint32_t) self->cfg.indexing && m->row == self->lanes);
    assert (!self->pending || m == self->m);
}

//  One step of a dense mini-batch, on the private copy only: the update
//  every weight gets, in plain float loops the compiler vectorizes.  With
//  KEEP 1 it is the very arithmetic of an update of the shared model (1 *
//  w is w), so one thread learns the same bits as if every mini-batch
//  were written out at once
static MODEL__CLONES void s_step_dense (model_worker *self, size_t from, float coef, float keep)
{
    //  Up to the longest example so far: dim at most
    size_t lanes = self->lanes;
    model__kernel_step (self->dsnap + from * lanes, self->dgrad + from * lanes, (self->hi - from) * lanes,
                        keep, coef);
}

//  Write what the private copy learned since the last push into the
//  shared model, and take the model's values back as the copy.  A weight
//  no other thread changed since (its value is still the one the copy
//  started from, BASE) gets the copy's value, so that one thread alone
//  computes exactly what it would computing on the shared model; one
//  another thread changed gets this thread's change added to it
static void s_merge (_Atomic float *shared, float *snap, float *base, unsigned n)
{
    for (unsigned c = 0; c < n; c++) {
        float w = atomic_load_explicit (&shared[c], memory_order_relaxed);
        float v = w == base[c] ? snap[c] : w + (snap[c] - base[c]);
        atomic_store_explicit (&shared[c], v, memory_order_relaxed);
        snap[c] = base[c] = v;
    }
}

//  N values of the shared model's row at FROM into the copy SNAP and its
//  BASE, zero past them up to LANES: s_merge's way back
static inline void s_read (const _Atomic float *from, float *snap, float *base, unsigned n, unsigned lanes)
{
    for (unsigned c = 0; c < lanes; c++)
        base[c] = snap[c] = c < n ? atomic_load_explicit (&from[c], memory_order_relaxed) : 0;
}

static void s_push_dense (model_worker *self)
{
    unsigned classes = self->cfg.classes, lanes = self->lanes;
    size_t end = self->hi;
    _Atomic float *w = model_weights (self->m);
    //  The loop of scalar atomics costs as much as scoring and
    //  differentiating a mini-batch: hence a push every cfg.push of them
    for (size_t j = 0; j < end; j++) {
        _Atomic float *row = w + j * lanes;
        //  Ask for a later row's line for writing now: with several
        //  threads it is often in another core's cache, and fetching it
        //  while this one is updated hides most of the wait
        if (j + S_PREFETCH < end)
            __builtin_prefetch ((const void *) (row + S_PREFETCH * lanes), 1);
        s_merge (row, self->dsnap + j * lanes, self->dbase + j * lanes, classes);
    }
}

//  One step of a sparse mini-batch, on the private copy only: the rows it
//  touched, in the order it first touched them (the rows touched since
//  the last push but not by it stay as they are: L2 is lazy).  Not
//  cloned: the same bits on every CPU, as the sparse step always was
static void s_step_sparse (model_worker *self, float coef, float keep)
{
    unsigned lanes = self->lanes;
    for (size_t i = 0; i < self->mtouched; i++) {
        size_t at = (size_t) self->mrows[i] * lanes;
        model__kernel_step (self->ssnap + at, self->sgrad + at, lanes, keep, coef);
    }
    self->mtouched = 0;
}

static void s_push_sparse (model_worker *self)
{
    unsigned classes = self->cfg.classes, lanes = self->lanes;
    _Atomic float *w = model_weights (self->m);
    for (size_t s = 0; s < self->touched; s++) {
        s_merge (w + (size_t) self->rows[s] * lanes, self->ssnap + s * lanes, self->sbase + s * lanes,
                 classes);
        self->slot[self->rows[s]] = 0;
    }
    self->touched = 0;
}

//  The pending mini-batch's step, counted in the model's step counter:
//  *COEF multiplies its summed gradient, *KEEP the weights (L2).  Never
//  inlined into a clone, whose multiply-adds are fused: the fused and
//  unfused paths of a dense mini-batch then get the same KEEP
static MODEL__UNCLONED void s_rate (model_worker *self, float *coef, float *keep)
{
    uint64_t t = atomic_fetch_add_explicit (&self->m->step, self->pending, memory_order_relaxed);
    float lr = model_lr (&self->cfg, t);
    *coef = lr / (float) self->pending;
    *keep = 1 - lr * self->cfg.l2;
}

//  What the copy learned since the last push, into the model
static void s_push (model_worker *self)
{
    if (self->kind == S_DENSE)
        s_push_dense (self);
    else
        s_push_sparse (self);
    s_merge (model_biases (self->m), self->bsnap, self->bbase, self->cfg.classes);
    self->steps = 0;
}

//  A mini-batch whose weights took their step: the biases take theirs,
//  and the copy goes on to the next mini-batch (carry), pushed to the
//  model every cfg.push of them.  Called from a clone: never inlined
//  there, as s_rate
static MODEL__UNCLONED void s_stepped (model_worker *self, float coef)
{
    for (unsigned c = 0; c < self->cfg.classes; c++) {
        self->bsnap[c] -= coef * self->bgrad[c];
        self->bgrad[c] = 0;
    }
    self->carry = true;
    self->pending = 0;
    if (++self->steps == self->cfg.push)
        s_push (self);
}

static void s_apply (model_worker *self)
{
    float coef, keep;
    s_rate (self, &coef, &keep);
    if (self->kind == S_DENSE)
        s_step_dense (self, 0, coef, keep);
    else
        s_step_sparse (self, coef, keep);
    s_stepped (self, coef);
}

void model_worker_flush (model_worker *self)
{
    assert (self);
    if (self->tiled)
        s_dense_tile (self);
    if (self->pending)
        s_apply (self);
    if (self->steps)
        s_push (self);
    //  The caller may now pause for long (an epoch end): the next
    //  mini-batch reads the model afresh
    self->kind = S_IDLE;
    self->m = NULL;
    self->carry = false;
    self->hi = 0;
}

//  Make the pending mini-batch one of KIND on M, flushing one of the other
//  kind or model first.  A mini-batch that begins reads the biases,
//  unless it goes on from the copy of one just applied (carry)
static void s_begin (model_worker *self, model_blob *m, int kind)
{
    if (self->kind != kind || (self->m != m && self->pending == 0))
        model_worker_flush (self);
    if (self->pending == 0 && !self->carry) {
        self->kind = kind;
        self->m = m;
        self->hi = 0;
        s_read (model_biases (m), self->bsnap, self->bbase, self->cfg.classes, self->lanes);
    }
}

//  The example just scored (probabilities in SCORE) joins the bias
//  gradient and the statistics.  Returns with d loss / d score in SCORE
static void s_learned (model_worker *self, float *score, unsigned label, double loss, unsigned argmax)
{
    score[label] -= 1;
    for (unsigned c = 0; c < self->cfg.classes; c++)
        self->bgrad[c] += score[c];
    self->stats.examples++;
    self->stats.loss += loss;
    self->stats.correct += argmax == label;
}

//  ---------------------------------------------------------------------
//  Dense examples

static int s_dense_buffers (model_worker *self)
{
    if (self->dsnap)
        return 0;
    size_t n = self->cfg.dim * self->lanes;
    self->dsnap = s_alloc_floats (n);
    self->dbase = s_alloc_floats (n);
    self->dgrad = s_alloc_floats (n);
    self->tile = s_alloc_floats (S_TILE * self->stride);
    self->tscore = s_alloc_floats (S_TILE * self->lanes);
    //  Only address space: the rows are touched, and the gradient's zeroed,
    //  as the longest example so far reaches them (s_dense_tile)
    if (self->dsnap && self->dbase && self->dgrad && self->tile && self->tscore)
        return 0;
    free (self->dsnap);
    free (self->dbase);
    free (self->dgrad);
    free (self->tile);
    free (self->tscore);
    self->dsnap = self->dbase = self->dgrad = self->tile = self->tscore = NULL;
    return MODEL_ENOMEM;
}

//  Score the examples of the tile against the mini-batch's copy, learn
//  from them, and apply the mini-batch when they complete it.  One clone
//  per instruction set: the kernels inlined here are compiled for each
static MODEL__CLONES void s_dense_tile (model_worker *self)
{
    unsigned classes = self->cfg.classes, lanes = self->lanes, n = self->tiled;
    size_t need = self->tneed, stride = self->stride;
    if (need > self->hi) {
        //  The copy grows with the longest example of the mini-batch, so
        //  short examples on a wide model do not copy all of it
        const _Atomic float *w = model_weights (self->m);
        for (size_t j = self->hi; j < need; j++)
            s_read (w + j * lanes, self->dsnap + j * lanes, self->dbase + j * lanes, classes, lanes);
        memset (self->dgrad + self->hi * lanes, 0, (need - self->hi) * lanes * sizeof (float));
        self->hi = need;
    }
    //  Shorter examples are zero up to the longest
    for (unsigned e = 0; e < n; e++)
        memset (self->tile + e * stride + self->tlen[e], 0, (need - self->tlen[e]) * sizeof (float));
    float *score = self->tscore;
    if (lanes == 4)
        model__kernel_scores_v4 (score, self->dsnap, self->bsnap, self->tile, stride, n, need, lanes);
    else if (lanes == 8)
        model__kernel_scores_v8 (score, self->dsnap, self->bsnap, self->tile, stride, n, need, lanes);
    else
        model__kernel_scores_v16 (score, self->dsnap, self->bsnap, self->tile, stride, n, need, lanes);
    for (unsigned e = 0; e < n; e++) {
        unsigned argmax;
        float *s = score + e * lanes;
        double loss = model__kernel_softmax (s, classes, self->tlabel[e], &argmax);
        s_learned (self, s, self->tlabel[e], loss, argmax);
        //  Lanes past the classes: their derivative is 0, the padding stays 0
        for (unsigned c = classes; c < lanes; c++)
            s[c] = 0;
    }
    //  A tile that is a whole mini-batch (the default: 16 and 16) takes
    //  its step as its gradient is summed, with no pass over a gradient
    //  written and read back
    bool whole = self->pending == self->cfg.minibatch && self->pending == n;
    float coef = 0, keep = 1, *snap = NULL;
    if (whole) {
        s_rate (self, &coef, &keep);
        snap = self->dsnap;
    }
    if (lanes == 4)
        model__kernel_grad_v4 (self->dgrad, snap, keep, coef, score, self->tile, stride, n, need, lanes);
    else if (lanes == 8)
        model__kernel_grad_v8 (self->dgrad, snap, keep, coef, score, self->tile, stride, n, need, lanes);
    else
        model__kernel_grad_v16 (self->dgrad, snap, keep, coef, score, self->tile, stride, n, need, lanes);
    self->tiled = 0;
    self->tneed = 0;
    if (whole) {
        //  The rows past this tile's examples: a gradient of zero, which
        //  leaves them as they are unless L2 shrinks them
        if (keep != 1)
            s_step_dense (self, need, coef, keep);
        s_stepped (self, coef);
    }
    else if (self->pending == self->cfg.minibatch)
        s_apply (self);
}

//  The example just converted into the tile (N features) joins the
//  mini-batch; the tile is scored when full or when it ends the mini-batch
static void s_learn_dense (model_worker *self, unsigned label, size_t n)
{
    unsigned e = self->tiled++;
    self->tlabel[e] = label;
    self->tlen[e] = n;
    if (n > self->tneed)
        self->tneed = n;
    if (++self->pending == self->cfg.minibatch || self->tiled == S_TILE)
        s_dense_tile (self);
}

//  Scale N values into DST as floats; false when one is not finite
#define S_CONVERT(name, type)                                                                                \
    static bool name (float *restrict dst, const type *restrict src, size_t n, float scale)                  \
    {                                                                                                        \
        bool ok = true;                                                                                      \
        for (size_t j = 0; j < n; j++) {                                                                     \
            float v = (float) src[j] * scale;                                                                \
            ok &= fabsf (v) <= FLT_MAX;                                                                      \
            dst[j] = v;                                                                                      \
        }                                                                                                    \
        return ok;                                                                                           \
    }
S_CONVERT (s_convert_f32, float)
S_CONVERT (s_convert_f64, double)

//  Sixteen bytes at a time in vectors as wide as the CPU has: the
//  compiler vectorizes this loop whole, with no remainder, but only four
//  floats at a time, even for AVX-512
static MODEL__CLONES void s_bytes (float *restrict dst, const uint8_t *restrict src, size_t n, float scale)
{
    for (size_t j = 0; j + 16 <= n; j += 16)
#pragma GCC unroll 16
        for (size_t k = 0; k < 16; k++)
            dst[j + k] = (float) src[j + k] * scale;
}

#if MODEL__X86_DISPATCH
#include <immintrin.h>

//  The same for AVX-512, written with its instructions: sixteen bytes
//  widened to sixteen integers, then floats, in one register each.
//  Exact conversions and one rounding multiply: the same bits as s_bytes
__attribute__ ((target ("avx512f"))) static void
s_bytes_avx512 (float *restrict dst, const uint8_t *restrict src, size_t n, float scale)
{
    __m512 k = _mm512_set1_ps (scale);
    for (size_t j = 0; j + 16 <= n; j += 16) {
        __m128i b = _mm_loadu_si128 ((const __m128i *) (src + j));
        _mm512_storeu_ps (dst + j, _mm512_mul_ps (_mm512_cvtepi32_ps (_mm512_cvtepu8_epi32 (b)), k));
    }
}
#endif

//  Bytes: every value is finite when 255 * SCALE is, which leaves the
//  vector loop nothing but the conversion
static bool s_convert_u8 (float *restrict dst, const uint8_t *restrict src, size_t n, float scale)
{
    size_t j = 0;
    if (fabsf (scale) * 255.0f <= FLT_MAX) {
        j = n / 16 * 16;
#if MODEL__X86_DISPATCH
        if (__builtin_cpu_supports ("avx512f"))
            s_bytes_avx512 (dst, src, j, scale);
        else
#endif
            s_bytes (dst, src, j, scale);
    }
    bool ok = true;
    for (; j < n; j++) {
        float v = (float) src[j] * scale;
        ok &= fabsf (v) <= FLT_MAX;
        dst[j] = v;
    }
    return ok;
}

//  A refused example changes nothing: it is converted into the tile's next
//  slot (empty unless a dense mini-batch is pending, since a change of
//  kind or model empties the tile) before anything else, and only counts
//  once converted
#define S_ADD_DENSE(name, type, convert)                                                                     \
    int name (model_worker *self, model_blob *m, unsigned label, const type *x, size_t n, float scale)       \
    {                                                                                                        \
        assert (self && (x || n == 0));                                                                      \
        s_check_model (self, m);                                                                             \
        if (label >= self->cfg.classes)                                                                      \
            return MODEL_ELABEL;                                                                             \
        if (n > self->cfg.dim)                                                                               \
            return MODEL_EDIM;                                                                               \
        if (!(fabsf (scale) <= FLT_MAX))                                                                     \
            return MODEL_EVALUE;                                                                             \
        if (s_dense_buffers (self))                                                                          \
            return MODEL_ENOMEM;                                                                             \
        if (!convert (self->tile + self->tiled * self->stride, x, n, scale))                                 \
            return MODEL_EVALUE;                                                                             \
        s_begin (self, m, S_DENSE);                                                                          \
        s_learn_dense (self, label, n);                                                                      \
        return 0;                                                                                            \
    }
S_ADD_DENSE (model_worker_add_dense_u8, uint8_t, s_convert_u8)
S_ADD_DENSE (model_worker_add_dense_f32, float, s_convert_f32)
S_ADD_DENSE (model_worker_add_dense_f64, double, s_convert_f64)

//  ---------------------------------------------------------------------
//  Sparse examples

//  Room for an example of N features.  Called before anything changes,
//  so that a failure leaves the mini-batch as it was
static int s_example_buffers (model_worker *self, size_t n)
{
    if (n <= self->cap_example)
        return 0;
    size_t cap = n < 1024 ? 1024 : n;
    uint32_t *eslot = malloc (cap * sizeof *eslot);
    float *evalue = malloc (cap * sizeof *evalue), *wvalue = malloc (cap * sizeof *wvalue);
    uint64_t *windex = malloc (cap * sizeof *windex);
    if (!eslot || !evalue || !windex || !wvalue) {
        free (eslot);
        free (evalue);
        free (windex);
        free (wvalue);
        return MODEL_ENOMEM;
    }
    free (self->eslot);
    free (self->evalue);
    free (self->windex);
    free (self->wvalue);
    self->eslot = eslot;
    self->evalue = evalue;
    self->windex = windex;
    self->wvalue = wvalue;
    self->cap_example = cap;
    return 0;
}

//  Room for N more touched rows, the same way
static int s_sparse_buffers (model_worker *self, size_t n)
{
    if (!self->slot && !(self->slot = calloc (self->cfg.dim, sizeof *self->slot)))
        return MODEL_ENOMEM;
    size_t touched = self->touched;  //  0 unless a sparse copy is carried
    size_t want = touched + n < self->cfg.dim ? touched + n : self->cfg.dim;
    if (want <= self->cap_touched)
        return 0;
    size_t cap = self->cap_touched ? self->cap_touched : 256;
    while (cap < want)
        cap *= 2;
    if (cap > self->cfg.dim)
        cap = self->cfg.dim;
    size_t lanes = self->lanes;
    uint32_t *rows = malloc (cap * sizeof *rows), *mrows = malloc (cap * sizeof *mrows);
    uint32_t *stamp = malloc (cap * sizeof *stamp);
    float *ssnap = s_alloc_floats (cap * lanes), *sbase = s_alloc_floats (cap * lanes);
    float *sgrad = s_alloc_floats (cap * lanes);
    if (!rows || !mrows || !stamp || !ssnap || !sbase || !sgrad) {
        free (rows);
        free (mrows);
        free (stamp);
        free (ssnap);
        free (sbase);
        free (sgrad);
        return MODEL_ENOMEM;
    }
    if (touched) {
        memcpy (rows, self->rows, touched * sizeof *rows);
        memcpy (mrows, self->mrows, self->mtouched * sizeof *mrows);
        memcpy (stamp, self->stamp, touched * sizeof *stamp);
        memcpy (ssnap, self->ssnap, touched * lanes * sizeof *ssnap);
        memcpy (sbase, self->sbase, touched * lanes * sizeof *sbase);
        memcpy (sgrad, self->sgrad, touched * lanes * sizeof *sgrad);
    }
    memset (sgrad + touched * lanes, 0, (cap - touched) * lanes * sizeof *sgrad);
    free (self->rows);
    free (self->mrows);
    free (self->stamp);
    free (self->ssnap);
    free (self->sbase);
    free (self->sgrad);
    self->rows = rows;
    self->mrows = mrows;
    self->stamp = stamp;
    self->ssnap = ssnap;
    self->sbase = sbase;
    self->sgrad = sgrad;
    self->cap_touched = cap;
    return 0;
}

//  The slot of ROW in the copy, noted as touched by the pending
//  mini-batch; a row touched for the first time since the last push is
//  copied from the shared model
static inline uint32_t s_slot (model_worker *self, uint32_t row)
{
    uint32_t s = self->slot[row];
    if (s) {
        s--;
        if (self->stamp[s] != self->steps) {
            self->stamp[s] = self->steps;
            self->mrows[self->mtouched++] = s;
        }
        return s;
    }
    s = (uint32_t) self->touched++;
    self->rows[s] = row;
    self->slot[row] = s + 1;
    self->stamp[s] = self->steps;
    self->mrows[self->mtouched++] = s;
    unsigned lanes = self->lanes;
    s_read (model_weights (self->m) + (size_t) row * lanes, self->ssnap + (size_t) s * lanes,
            self->sbase + (size_t) s * lanes, self->cfg.classes, lanes);
    return s;
}

//  A sparse example's nonzero features into EVALUE and their rows into
//  ESLOT: *GOT of them, every row below *TOP.  0, MODEL_EVALUE or
//  MODEL_EINDEX, the first in the features' order; nothing else changes
static int s_sparse_convert (model_worker *self, const model_blob *m, const uint64_t *index,
                             const float *value, size_t n, float scale, size_t *got, size_t *top)
{
    size_t g = 0, t = 0;
    bool direct = m->indexing == MODEL_INDEX_DIRECT;
    for (size_t k = 0; k < n; k++) {
        float v = value[k] * scale;
        if (!(fabsf (v) <= FLT_MAX))
            return MODEL_EVALUE;
        if (direct && index[k] >= m->dim)
            return MODEL_EINDEX;
        //  A zero contributes nothing: its row is neither read nor written
        if (v != 0) {
            size_t row = model_column (m, index[k]);
            self->eslot[g] = (uint32_t) row;
            self->evalue[g++] = v;
            t = row + 1 > t ? row + 1 : t;
        }
    }
    *got = g;
    *top = t;
    return 0;
}

//  Whether a sparse example of GOT nonzero features, every row below TOP,
//  is learned as a dense one (see "Why a dense enough sparse example is
//  learned as dense").  An example with no feature follows the kind of
//  the mini-batch, so that it splits none; past a threshold a little
//  higher while dense examples are pending than otherwise, so that
//  examples near it do not split mini-batch after mini-batch either
static bool s_dense_enough (const model_worker *self, size_t got, size_t top)
{
    if ((size_t) self->cfg.dim * self->lanes > S_DENSE_FLOATS)
        return false;
    if (got == 0)
        return self->kind == S_DENSE;
    return top <= got * (self->kind == S_DENSE ? 2 * S_DENSER : S_DENSER);
}

//  The converted example (GOT features in the scratch arrays, rows below
//  TOP) into the tile's next slot, as a dense one; repeated rows add up
static void s_densify (model_worker *self, unsigned label, size_t got, size_t top)
{
    float *x = self->tile + self->tiled * self->stride;
    memset (x, 0, top * sizeof *x);
    for (size_t k = 0; k < got; k++)
        x[self->eslot[k]] += self->evalue[k];
    s_learn_dense (self, label, top);
}

//  What s_direct_dense needs to know of an example of N features (values
//  scaled by SCALE): whether all are finite, its highest index (*HIGH),
//  one past the highest index of a nonzero value (*TOP: 0 when none; a
//  zero contributes nothing, not even its row to the example's length)
//  and how many are nonzero (*GOT).  Exact, so any version gives the
//  same answer
static bool s_scan (const uint64_t *index, const float *value, size_t n, float scale, uint64_t *high,
                    uint64_t *top, size_t *got)
{
    uint64_t h = 0, t = 0;
    size_t g = 0;
    bool ok = true;
    for (size_t k = 0; k < n; k++) {
        float v = value[k] * scale;
        ok &= fabsf (v) <= FLT_MAX;
        g += v != 0;
        h = index[k] > h ? index[k] : h;
        uint64_t past = v != 0 ? index[k] + 1 : 0;
        t = past > t ? past : t;
    }
    *high = h;
    *top = t;
    *got = g;
    return ok;
}

#if MODEL__X86_DISPATCH
//  The same sixteen features at a time in AVX-512 (GCC 12 at -O2 leaves
//  the loop above scalar): a third of the time the sparse example of
//  Fashion-MNIST took in weir went into it
__attribute__ ((target ("avx512f,popcnt"))) static bool s_scan_avx512 (const uint64_t *index,
                                                                       const float *value, size_t n,
                                                                       float scale, uint64_t *high,
                                                                       uint64_t *top, size_t *got)
{
    if (n == 0)  //  INDEX and VALUE may be NULL, and NULL + 0 undefined
        return s_scan (index, value, 0, scale, high, top, got);
    __m512 k = _mm512_set1_ps (scale), big = _mm512_set1_ps (FLT_MAX), zero = _mm512_setzero_ps ();
    __m512i h0 = _mm512_setzero_si512 (), h1 = _mm512_setzero_si512 ();
    __m512i t0 = _mm512_setzero_si512 (), t1 = _mm512_setzero_si512 (), one = _mm512_set1_epi64 (1);
    size_t j = 0, g = 0;
    __mmask16 fine = 0xffff;
    for (; j + 16 <= n; j += 16) {
        __m512 v = _mm512_mul_ps (_mm512_loadu_ps (value + j), k);
        //  |v| <= FLT_MAX is false for an infinity and for NaN
        fine &= _mm512_cmp_ps_mask (_mm512_abs_ps (v), big, _CMP_LE_OQ);
        //  v != 0 is true for NaN, as in s_scan
        __mmask16 nonzero = _mm512_cmp_ps_mask (v, zero, _CMP_NEQ_UQ);
        g += (size_t) __builtin_popcount (nonzero);
        __m512i i0 = _mm512_loadu_si512 (index + j), i1 = _mm512_loadu_si512 (index + j + 8);
        h0 = _mm512_max_epu64 (h0, i0);
        h1 = _mm512_max_epu64 (h1, i1);
        //  One past each index of a nonzero value: the low eight lanes of
        //  the mask are the first eight features, the high eight the rest
        t0 = _mm512_mask_max_epu64 (t0, (__mmask8) nonzero, t0, _mm512_add_epi64 (i0, one));
        t1 = _mm512_mask_max_epu64 (t1, (__mmask8) (nonzero >> 8), t1, _mm512_add_epi64 (i1, one));
    }
    uint64_t h, t;
    size_t rest;
    bool ok = s_scan (index + j, value + j, n - j, scale, &h, &t, &rest);
    uint64_t vh = _mm512_reduce_max_epu64 (_mm512_max_epu64 (h0, h1));
    uint64_t vt = _mm512_reduce_max_epu64 (_mm512_max_epu64 (t0, t1));
    *high = vh > h ? vh : h;
    *top = vt > t ? vt : t;
    *got = g + rest;
    return ok && fine == 0xffff;
}

//  The nonzero features (values times SCALE) into X, zeroed, eight at a
//  time, when the indices ascend strictly, as libsvm files' and the
//  readers' do: then no two features share a row, and a store is the sum
//  the scalar loop makes (0 + v is v, and a zero is not stored, so a row
//  stays +0).  The scalar loop took four cycles a feature, a quarter of a
//  sparse example's time.  False, with X partly written, at the first
//  index that does not ascend
__attribute__ ((target ("avx512f"))) static bool s_scatter_avx512 (float *x, const uint64_t *index,
                                                                   const float *value, size_t n, float scale)
{
    __m512 k = _mm512_set1_ps (scale), zero = _mm512_setzero_ps ();
    __m512i carry = _mm512_setzero_si512 ();  //  lane 7: the index before the block
    __mmask8 first = 1;                       //  the first feature has none before it
    size_t j = 0;
    for (; j + 16 <= n; j += 16) {
        __m512 v = _mm512_mul_ps (_mm512_loadu_ps (value + j), k);
        __mmask16 nonzero = _mm512_cmp_ps_mask (v, zero, _CMP_NEQ_UQ);
        __m512i i0 = _mm512_loadu_si512 (index + j), i1 = _mm512_loadu_si512 (index + j + 8);
        //  Each lane against the one before it: [carry[7], i0[0..6]]
        __mmask8 up0 = _mm512_cmpgt_epu64_mask (i0, _mm512_alignr_epi64 (i0, carry, 7)) | first;
        __mmask8 up1 = _mm512_cmpgt_epu64_mask (i1, _mm512_alignr_epi64 (i1, i0, 7));
        if ((up0 & up1) != 0xff)
            return false;
        first = 0;
        carry = i1;
        __m256 lo = _mm512_castps512_ps256 (v);
        __m256 hi = _mm256_castpd_ps (_mm512_extractf64x4_pd (_mm512_castps_pd (v), 1));
        _mm512_mask_i64scatter_ps (x, (__mmask8) nonzero, i0, lo, 4);
        _mm512_mask_i64scatter_ps (x, (__mmask8) (nonzero >> 8), i1, hi, 4);
    }
    uint64_t last = j ? index[j - 1] : 0;
    for (; j < n; j++) {
        if (j && index[j] <= last)
            return false;
        last = index[j];
        float v = value[j] * scale;
        if (v != 0)
            x[index[j]] = v;
    }
    return true;
}
#endif

//  Under indexing=direct: whether the example (N features) is a valid one
//  dense enough to be learned as dense, scattered straight into the tile
//  from INDEX and VALUE, its length in *LEN.  Its checks and counts are
//  one scan; an example that fails one goes the sparse way, which finds
//  and names the first fault
static bool s_direct_dense (model_worker *self, const uint64_t *index, const float *value, size_t n,
                            float scale, size_t *len)
{
    uint64_t high, top;
    size_t got;
    bool ok;
#if MODEL__X86_DISPATCH
    if (__builtin_cpu_supports ("avx512f"))
        ok = s_scan_avx512 (index, value, n, scale, &high, &top, &got);
    else
#endif
        ok = s_scan (index, value, n, scale, &high, &top, &got);
    //  TOP is at most HIGH + 1, so at most dim when HIGH is in range
    if (!ok || (n && high >= self->cfg.dim) || !s_dense_enough (self, got, (size_t) top))
        return false;
    if (s_dense_buffers (self))
        return false;
    float *x = self->tile + self->tiled * self->stride;
    memset (x, 0, (size_t) top * sizeof *x);
#if MODEL__X86_DISPATCH
    if (__builtin_cpu_supports ("avx512f") && s_scatter_avx512 (x, index, value, n, scale)) {
        *len = (size_t) top;
        return true;
    }
    //  Indices that do not ascend: the rows they wrote, zeroed again
    memset (x, 0, (size_t) top * sizeof *x);
#endif
    for (size_t k = 0; k < n; k++) {
        float v = value[k] * scale;
        if (v != 0)
            x[index[k]] += v;
    }
    *len = (size_t) top;
    return true;
}

//  A sparse example's rows (GOT features converted into the scratch
//  arrays) into slots of the pending mini-batch, its scores and their
//  derivatives into the gradient: the whole example in one function
//  compiled for each instruction set (a row of 16 classes is one AVX-512
//  register, two AVX2 ones, four SSE ones)
static MODEL__CLONES void s_sparse_example (model_worker *self, unsigned label, size_t got)
{
    unsigned lanes = self->lanes;
    for (size_t k = 0; k < got; k++)
        self->eslot[k] = s_slot (self, self->eslot[k]);
    float *score = self->score;
    memcpy (score, self->bsnap, lanes * sizeof *score);
    model__kernel_sparse_scores (score, self->ssnap, self->eslot, self->evalue, got, lanes);
    unsigned argmax;
    double loss = model__kernel_softmax (score, self->cfg.classes, label, &argmax);
    s_learned (self, score, label, loss, argmax);
    //  Lanes past the classes are 0 in score: the padding stays 0
    for (size_t k = 0; k < got; k++)
        model__kernel_axpy_row (self->sgrad + (size_t) self->eslot[k] * lanes, self->evalue[k], score, lanes);
}

//  What a sparse example is checked for before its features: 0,
//  MODEL_ELABEL or MODEL_EVALUE (SCALE not finite)
static int s_sparse_refused (const model_worker *self, const model_blob *m, unsigned label, float scale)
{
    s_check_model (self, m);
    if (label >= self->cfg.classes)
        return MODEL_ELABEL;
    return fabsf (scale) <= FLT_MAX ? 0 : MODEL_EVALUE;
}

int model_worker_add_sparse (model_worker *self, model_blob *m, unsigned label, const uint64_t *index,
                             const float *value, size_t n, float scale)
{
    assert (self && ((index && value) || n == 0));
    int rc = s_sparse_refused (self, m, label, scale);
    if (rc)
        return rc;
    size_t got, top;
    if (m->indexing == MODEL_INDEX_DIRECT && s_direct_dense (self, index, value, n, scale, &top)) {
        s_begin (self, m, S_DENSE);
        s_learn_dense (self, label, top);
        return 0;
    }
    rc = s_example_buffers (self, n);
    if (!rc)
        rc = s_sparse_convert (self, m, index, value, n, scale, &got, &top);
    if (rc)
        return rc;
    //  Dense when it can have the dense buffers; sparse when not
    if (s_dense_enough (self, got, top) && s_dense_buffers (self) == 0) {
        s_begin (self, m, S_DENSE);
        s_densify (self, label, got, top);
        return 0;
    }
    if (s_sparse_buffers (self, got))
        return MODEL_ENOMEM;
    s_begin (self, m, S_SPARSE);
    s_sparse_example (self, label, got);
    if (++self->pending == self->cfg.minibatch)
        s_apply (self);
    return 0;
}

//  ---------------------------------------------------------------------
//  Sparse examples as records store them

#if MODEL__X86_DISPATCH
//  The uint32 at P, at any alignment: x86 is little-endian, as records'
//  numbers are
static inline uint32_t s_le32 (const uint8_t *p)
{
    uint32_t x;
    memcpy (&x, p, sizeof x);
    return x;
}

//  s_scan of N little-endian features, sixteen at a time: x86 is
//  little-endian, so a vector load of the bytes is the numbers.  *HIGH
//  and the nonzero features' highest index are taken as uint32 (an index
//  of 2^32-1 plus one would wrap), *TOP made from the latter
__attribute__ ((target ("avx512f,popcnt"))) static bool s_scan_le32_avx512 (const uint8_t *index,
                                                                            const uint8_t *value, size_t n,
                                                                            float scale, uint64_t *high,
                                                                            uint64_t *top, size_t *got)
{
    __m512 k = _mm512_set1_ps (scale), big = _mm512_set1_ps (FLT_MAX), zero = _mm512_setzero_ps ();
    __m512i h = _mm512_setzero_si512 (), t = _mm512_setzero_si512 ();
    size_t j = 0, g = 0;
    __mmask16 fine = 0xffff;
    for (; j + 16 <= n; j += 16) {
        __m512 v = _mm512_mul_ps (_mm512_loadu_ps (value + 4 * j), k);
        fine &= _mm512_cmp_ps_mask (_mm512_abs_ps (v), big, _CMP_LE_OQ);
        __mmask16 nonzero = _mm512_cmp_ps_mask (v, zero, _CMP_NEQ_UQ);
        g += (size_t) __builtin_popcount (nonzero);
        __m512i i = _mm512_loadu_si512 (index + 4 * j);
        h = _mm512_max_epu32 (h, i);
        t = _mm512_mask_max_epu32 (t, nonzero, t, i);
    }
    uint64_t hh = _mm512_reduce_max_epu32 (h);
    uint64_t tt = g ? (uint64_t) _mm512_reduce_max_epu32 (t) + 1 : 0;
    bool ok = fine == 0xffff;
    for (; j < n; j++) {
        uint64_t i = s_le32 (index + 4 * j);
        float v;
        memcpy (&v, value + 4 * j, sizeof v);
        v *= scale;
        ok &= fabsf (v) <= FLT_MAX;
        g += v != 0;
        hh = i > hh ? i : hh;
        tt = v != 0 && i + 1 > tt ? i + 1 : tt;
    }
    *high = hh;
    *top = tt;
    *got = g;
    return ok;
}

//  s_scatter_avx512 of N little-endian features, sixteen at a time.  The
//  indices are signed in a 32-bit scatter: the caller has them below dim,
//  which a model that may learn dense examples keeps within
//  S_DENSE_FLOATS (s_dense_enough)
__attribute__ ((target ("avx512f"))) static bool
s_scatter_le32_avx512 (float *x, const uint8_t *index, const uint8_t *value, size_t n, float scale)
{
    __m512 k = _mm512_set1_ps (scale), zero = _mm512_setzero_ps ();
    __m512i carry = _mm512_setzero_si512 ();  //  lane 15: the index before the block
    __mmask16 first = 1;
    size_t j = 0;
    for (; j + 16 <= n; j += 16) {
        __m512 v = _mm512_mul_ps (_mm512_loadu_ps (value + 4 * j), k);
        __mmask16 nonzero = _mm512_cmp_ps_mask (v, zero, _CMP_NEQ_UQ);
        __m512i i = _mm512_loadu_si512 (index + 4 * j);
        //  Each lane against the one before it: [carry[15], i[0..14]]
        __mmask16 up = _mm512_cmpgt_epu32_mask (i, _mm512_alignr_epi32 (i, carry, 15)) | first;
        if (up != 0xffff)
            return false;
        first = 0;
        carry = i;
        _mm512_mask_i32scatter_ps (x, nonzero, i, v, 4);
    }
    uint32_t last = j ? s_le32 (index + 4 * (j - 1)) : 0;
    for (; j < n; j++) {
        uint32_t i = s_le32 (index + 4 * j);
        if (j && i <= last)
            return false;
        last = i;
        float v;
        memcpy (&v, value + 4 * j, sizeof v);
        v *= scale;
        if (v != 0)
            x[i] = v;
    }
    return true;
}

//  s_direct_dense straight from the bytes, on a CPU with AVX-512; false,
//  the tile's next slot zeroed, for every example it does not learn this
//  way (the general way then finds out again what that example is)
static bool s_direct_dense_le32 (model_worker *self, const uint8_t *index, const uint8_t *value, size_t n,
                                 float scale, size_t *len)
{
    uint64_t high, top;
    size_t got;
    //  A model too large for the tile: no example is learned as dense
    if ((size_t) self->cfg.dim * self->lanes > S_DENSE_FLOATS)
        return false;
    if (!s_scan_le32_avx512 (index, value, n, scale, &high, &top, &got) || (n && high >= self->cfg.dim)
        || !s_dense_enough (self, got, (size_t) top) || s_dense_buffers (self))
        return false;
    float *x = self->tile + self->tiled * self->stride;
    memset (x, 0, (size_t) top * sizeof *x);
    if (s_scatter_le32_avx512 (x, index, value, n, scale)) {
        *len = (size_t) top;
        return true;
    }
    memset (x, 0, (size_t) top * sizeof *x);
    return false;
}
#endif

int model_worker_add_sparse_le32 (model_worker *self, model_blob *m, unsigned label, const void *index,
                                  const void *value, size_t n, float scale)
{
    assert (self && ((index && value) || n == 0));
    //  Before anything is allocated, as model_worker_add_sparse
    int rc = s_sparse_refused (self, m, label, scale);
    if (rc)
        return rc;
#if MODEL__X86_DISPATCH
    size_t top;
    if (m->indexing == MODEL_INDEX_DIRECT && __builtin_cpu_supports ("avx512f")
        && s_direct_dense_le32 (self, index, value, n, scale, &top)) {
        s_begin (self, m, S_DENSE);
        s_learn_dense (self, label, top);
        return 0;
    }
#endif
    //  Room made here, model_worker_add_sparse's own call finds it: the
    //  arrays it is given are not moved under it
    if (s_example_buffers (self, n))
        return MODEL_ENOMEM;
    model_sparse_le32 (index, value, n, self->windex, self->wvalue);
    return model_worker_add_sparse (self, m, label, self->windex, self->wvalue, n, scale);
}

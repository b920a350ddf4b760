/*  examples/hogwild/model.h - multinomial logistic regression (softmax)
    trained by many threads on one shared model without locks (hogwild).

    This is the learning core of the hogwild example.  It knows nothing of
    weir or msgpack: the plugin decodes records and calls it.

    The model lives in memory the caller provides (a weir workspace blob):
    a header, a step counter, the weights and the biases, laid out below.
    That memory is all the state training depends on (there is no optimizer
    state, no random number generator and no hidden static), so a copy of
    it taken while no worker holds a pending mini-batch (after each one's
    model_worker_flush) is a complete checkpoint: with one thread, a run
    stopped there and resumed from the copy produces bit-identical weights
    to an uninterrupted run with the same mini-batch boundaries and the
    same binary.

    Threads share the model through a model_worker each.  A worker keeps
    the pending mini-batch in private buffers (a copy of the weights it
    reads, and their gradient) and applies it to the shared weights when
    it is full (or on model_worker_flush): every access to the shared
    weights is a relaxed C11 atomic load or store, so concurrent workers
    race on values (an update may be lost, which is the hogwild bargain)
    but never on memory (no data race, ThreadSanitizer is clean).

    A mini-batch reads and writes only the rows of weights it needs: a
    dense one the rows of features below its longest example's length, a
    sparse one the rows of its nonzero features.  L2 regularization is
    lazy: it shrinks the rows a mini-batch writes, when it is applied.
    A sparse example dense enough (every row it has below eight times
    its number of nonzero features, and a model of at most 2^22 floats of
    weights) is learned as the dense example it is, with the dense loops:
    Fashion-MNIST as libsvm under MODEL_INDEX_DIRECT, for one.

    Conventions:
    - functions that can fail return 0 (or a label) on success and a
      negative MODEL_E* code on failure; model_strerror() names it;
    - NULL where an object is required, or a worker used by two threads at
      once, is a programmer error (assert);
    - nothing here prints, exits or keeps static state.
*/
#ifndef HOGWILD_MODEL_H_INCLUDED
#define HOGWILD_MODEL_H_INCLUDED

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*  Error codes: negative, never reused.  */
#define MODEL_ENOMEM  -1 /*  out of memory  */
#define MODEL_ELABEL  -2 /*  label >= classes  */
#define MODEL_EDIM    -3 /*  a dense example longer than the model's dim  */
#define MODEL_EVALUE  -4 /*  a feature value (times scale) that is NaN or infinite  */
#define MODEL_EBLOB   -5 /*  the memory is not a model of this shape (model_check)  */
#define MODEL_ECONFIG -6 /*  a configuration value out of range  */
#define MODEL_EINDEX -7  /*  a sparse index >= dim with MODEL_INDEX_DIRECT  */

/*  The message for a MODEL_E* code (a static string).  */
const char *model_strerror (int code);

/*  ---------------------------------------------------------------------
    Configuration  */

/*  The learning-rate schedule.  t is the shared step counter: the number
    of examples applied to the model so far, by all threads, in all runs
    (it is checkpointed with the weights).  */
typedef enum {
    MODEL_LR_CONSTANT = 0, /*  lr  */
    MODEL_LR_INV = 1,      /*  lr / (1 + decay * t)  */
    MODEL_LR_INVSQRT = 2,  /*  lr / sqrt (1 + decay * t)  */
} model_schedule;

/*  How a sparse index picks its row of weights (its column, in the
    matrix view of examples x features).  */
typedef enum {
    /*  Every index is hashed (the hashing trick, as Vowpal Wabbit does):
        row = fmix64 (index) % dim, where fmix64 is MurmurHash3's 64-bit
        finalizer:
            h ^= h >> 33; h *= 0xff51afd7ed558ccd; h ^= h >> 33;
            h *= 0xc4ceb9fe1a85ec53; h ^= h >> 33;
        Distinct indices may share a row; with dim much larger than the
        number of distinct indices that costs nothing measurable.  */
    MODEL_INDEX_HASH = 0,
    /*  Index i is row i, as for dense input: an index of dim or more
        has no row, and an example with one is refused (MODEL_EINDEX).  */
    MODEL_INDEX_DIRECT = 1,
} model_indexing;

typedef struct {
    /*  The shape: stored in the model memory by model_init.  */
    unsigned classes;        /*  labels are 0 .. classes-1; at least 2  */
    size_t dim;              /*  rows: features (dense) or hash buckets (sparse)  */
    model_indexing indexing; /*  how sparse indices become rows  */

    /*  Training: only the workers read these; they may change between
        runs (a resumed run with other values simply trains differently
        from there on).  */
    unsigned minibatch;      /*  examples per update of the worker's copy (1 .. 65536)  */
    float lr;                /*  learning rate of one mini-batch (mean gradient)  */
    model_schedule schedule;
    float decay;             /*  the schedule's decay, per example  */
    float l2;                /*  L2 penalty (l2/2 |w|^2) on the weights, not on biases  */
    unsigned push;           /*  mini-batches learned on a worker's copy per write of
                                 the shared model (1 .. 1024)  */
} model_config;

/*  Fill CFG with the defaults for CLASSES and DIM: minibatch 16, lr 0.2,
    MODEL_LR_INV with decay 5e-5, l2 0, MODEL_INDEX_HASH, push 8.

    DEFAULTS: they train Fashion-MNIST (pixels scaled by 1/255, dense, or
    sparse hashed into 2^18 rows) to 0.843 test accuracy in 10 passes
    (0.84 after 4) with one thread, 0.842 .. 0.844 with two.  They were
    tuned on 50000 training images with the last 10000 held out, where
    they reach 0.853 and their neighbours (lr 0.1 .. 0.3, decay 2e-5 ..
    1e-4) 0.846 .. 0.853.  The decay brings the rate to a quarter after
    one pass of 60000 examples and to 1/31 after ten: for another data
    set, scale decay with 1 / (examples per pass).  lr is the step of a
    mini-batch's mean gradient, so a larger mini-batch wants a larger lr.
    16 examples per update write the shared model a sixteenth as often as
    plain SGD; with 1, one thread runs several times slower and ends less
    accurate (0.830), with 64 somewhat faster and less accurate (0.836)
    at this lr.  L2 gained nothing (ten passes are far from overfitting a
    linear model), so it is off.  PUSH: one thread learns the same bits
    whatever it is (the write of the shared model is a loop of scalar
    atomics, one load and one store per weight); 8 takes 0.59x the time
    of 1 with one thread and 0.55x with two, at the same test accuracy
    (0.842 .. 0.844 from two threads; 4 gave the same, 16 was only a few
    per cent faster than 8).  */
void model_config_defaults (model_config *cfg, unsigned classes, size_t dim);

/*  0, or MODEL_ECONFIG when a value of CFG is out of range (classes < 2,
    dim 0 or too large, minibatch 0 or > 65536, push 0 or > 1024, lr,
    decay or l2 negative
    or not finite, an unknown schedule or indexing).  */
int model_config_check (const model_config *cfg);

/*  The learning rate CFG's schedule gives at step STEP.  Pure.  */
float model_lr (const model_config *cfg, uint64_t step);

/*  ---------------------------------------------------------------------
    The model memory

    Layout, in one block aligned to (at least, and ideally) 64 bytes:

        offset 0                  model_blob: the header (64 bytes), then
                                  the step counter on a cache line of its
                                  own (64 bytes)
        offset MODEL_HEADER_BYTES weights: dim rows of 'row' floats, one
                                  per feature (column): the weight of
                                  feature j for class c is at
                                  [j * row + c]
        after the weights         biases: one more row, class c at [c]

    'row' is model_row_floats (classes): classes rounded up to 4, 8 or a
    multiple of 16, so that a row never straddles a 64-byte cache line: a
    sparse example reads one line per nonzero feature, a mini-batch writes
    one line per feature it touched.  The padding stays 0.
    All floats are IEEE binary32 in the machine's byte order, accessed as
    _Atomic float.  A zeroed block is a valid model only after model_init.  */
#define MODEL_HEADER_BYTES 128
#define MODEL_MAGIC        0x4d475748u /*  "HWGM" in little-endian memory  */
#define MODEL_VERSION      1

typedef struct model_blob {
    uint32_t magic;      /*  MODEL_MAGIC  */
    uint32_t version;    /*  MODEL_VERSION  */
    uint32_t classes;
    uint32_t indexing;   /*  a model_indexing  */
    uint64_t dim;
    uint32_t row;        /*  floats per row: model_row_floats (classes)  */
    uint32_t reserved0;
    uint8_t reserved[32];
    /*  Examples applied so far: the schedule's clock.  On a line of its
        own: every worker bumps it once per mini-batch.  */
    _Atomic uint64_t step;
    uint8_t reserved2[56];
} model_blob;

/*  Bytes of model memory for CLASSES and DIM, or 0 when they are out of
    range or the size would overflow.  */
size_t model_bytes (unsigned classes, size_t dim);

/*  Floats per row for CLASSES: 4, 8 or a multiple of 16 (0 on overflow).  */
unsigned model_row_floats (unsigned classes);

/*  Lay out a fresh model in MEM (SIZE bytes, model_bytes() of CFG's shape):
    write the header and zero the step, the weights and the biases.  Call
    it once, before any worker uses MEM, from one thread (in weir: the
    plugin's init, which runs on a fresh start only).  0, MODEL_ECONFIG
    or MODEL_EBLOB (SIZE wrong, MEM not 8-byte aligned).  */
int model_init (void *mem, size_t size, const model_config *cfg);

/*  Check that MEM (SIZE bytes) holds a model of CFG's shape (classes, dim
    and indexing), as model_init left it: 0 or MODEL_EBLOB.  Use it on
    memory restored from a checkpoint before training on it.  Safe while
    workers train (it reads only the header).  */
int model_check (const void *mem, size_t size, const model_config *cfg);

/*  The weight rows and the biases of M (see the layout).  */
static inline _Atomic float *model_weights (model_blob *m)
{
    return (_Atomic float *) ((char *) m + MODEL_HEADER_BYTES);
}

static inline _Atomic float *model_biases (model_blob *m)
{
    return model_weights (m) + (size_t) m->dim * m->row;
}

/*  ---------------------------------------------------------------------
    Training: one worker per thread  */

typedef struct model_worker model_worker;

/*  What a worker saw since the last model_worker_take_stats: examples
    trained on, the sum of their cross-entropy losses (natural log) and how
    many of them the model predicted right before learning from them
    (progressive validation: an honest running accuracy).  A dense example
    counts once it is scored: examples wait in a tile of up to 16 that is
    scored when full, when it completes the mini-batch, or at
    model_worker_flush.  */
typedef struct {
    uint64_t examples;
    double loss;
    uint64_t correct;
} model_stats;

/*  A new worker for models of CFG's shape, trained with CFG's
    hyperparameters (copied: CFG may go away).  Its buffers come with the
    first example of each kind: dense, the address space of three copies
    of the weights (the weights, the values they were read as, their
    gradient) and of 16 examples, of which only the rows the longest
    example so far reaches are touched; sparse, an index of dim uint32_t
    (1 MiB for 2^18 rows) and three rows of floats and two uint32_t per
    row touched since the last push.  NULL when out of memory or CFG fails
   model_config_check.  A worker belongs to one thread at a time; different workers may train the same model
   concurrently.  */
model_worker *model_worker_new (const model_config *cfg);

/*  Destroy *SELF without flushing (call model_worker_flush first to keep
    what it learned since its last push: up to cfg.push mini-batches and
    the pending one) and set *SELF to NULL.  NULL or *SELF == NULL
    is a no-op.  */
void model_worker_destroy (model_worker **self);

/*  Learn from one example of class LABEL.  The example joins the pending
    mini-batch: it is scored with the model as it was when the mini-batch
    began (plus nothing of the mini-batch itself, as in mini-batch SGD),
    and the mini-batch is applied when it holds cfg.minibatch examples,
    to the worker's own copy of M's weights, which the next mini-batch
    goes on from and which is written into M every cfg.push mini-batches
    (and by model_worker_flush).  Each
    weight of M gets the copy's value when no other worker changed it
    since the copy read it, and the copy's change added to its value when
    one did: one worker alone computes exactly what it would with push 1.
    M must have passed model_check (or come from model_init) for this
    worker's configuration, and must be the same M for the whole
    mini-batch.  Until its next push the worker holds work bound to M: an
    example on another model first pushes it into M, so flush the worker
    before M is freed or replaced.

    Dense: feature j < N is X[j] * SCALE, row j; features N .. dim-1 are
    0.  N may be less than dim, not more (MODEL_EDIM).  The _u8 form is
    the one for pixels (SCALE 1/255).

    Sparse: feature INDEX[k] has value VALUE[k] * SCALE (k < N), in the
    row model_column() gives; repeated indices add up.  With
    MODEL_INDEX_DIRECT an index of dim or more is MODEL_EINDEX (a zero
    value's index too: the data does not fit the model; prediction
    ignores such a feature instead).  An example whose rows all lie
    below 8 times its nonzero features (16 times while the worker is on
    dense mini-batches, so that examples near the line do not split
    mini-batches), on a model of at most 2^22 floats of weights, is a
    dense example: under MODEL_INDEX_DIRECT and without L2, it learns
    exactly the bits model_worker_add_dense_f32 learns from the same
    values with zeros between them; its L2 shrinks the rows below its
    highest, as a dense mini-batch's does.  An example without nonzero
    features takes the pending mini-batch's kind.

    An example of the other kind (dense after sparse or the reverse)
    first applies the pending mini-batch.  Returns 0, MODEL_ELABEL,
    MODEL_EDIM, MODEL_EVALUE (a value or SCALE not finite), MODEL_EINDEX
    or MODEL_ENOMEM; a refused example changes nothing and the worker stays
    usable.  The worker does not keep X, INDEX or VALUE.  */
int model_worker_add_dense_u8 (model_worker *self, model_blob *m, unsigned label, const uint8_t *x, size_t n,
                               float scale);
int model_worker_add_dense_f32 (model_worker *self, model_blob *m, unsigned label, const float *x, size_t n,
                                float scale);
int model_worker_add_dense_f64 (model_worker *self, model_blob *m, unsigned label, const double *x, size_t n,
                                float scale);
int model_worker_add_sparse (model_worker *self, model_blob *m, unsigned label, const uint64_t *index,
                             const float *value, size_t n, float scale);

/*  The N indices and values of a sparse example as records keep them
    (little-endian uint32 at INDEX and IEEE float32 at VALUE, 4 bytes
    each, at any alignment: softmax's [indexes, values] bins) into
    INDEXES and VALUES (room for N each; NULL when N is 0).  No branch per
    feature: on a little-endian host the values are copied as they
    stand.  */
void model_sparse_le32 (const void *index, const void *value, size_t n, uint64_t *indexes, float *values);

/*  model_worker_add_sparse of the N indices and values as a record keeps
    them: little-endian uint32 at INDEX and IEEE float32 at VALUE, 4 bytes
    each, at any alignment (softmax's [indexes, values] bins, read where
    they lie in the batch).  It learns what model_worker_add_sparse learns
    from the same numbers and returns what it returns.  Under
    MODEL_INDEX_DIRECT, on a CPU with AVX-512, a dense enough example is
    checked and scattered into the tile straight from the bytes, sixteen
    at a time: no copy of the values, no widening of the indices (those
    took a tenth of a Fashion-MNIST job's time).  Any other example
    (hashed, not dense enough, out of index order, refused) is read into
    the worker's arrays by model_sparse_le32 and goes
    model_worker_add_sparse's way; one out of order is first scanned and
    partly scattered.  */
int model_worker_add_sparse_le32 (model_worker *self, model_blob *m, unsigned label, const void *index,
                                  const void *value, size_t n, float scale);

/*  Apply the pending mini-batch (if any) and write everything learned
    since the last push into the model it was read from.  Call it at
    every epoch end, before the model is checkpointed, and before
    destroying the worker or freeing the model.  */
void model_worker_flush (model_worker *self);

/*  Examples in the pending mini-batch (0 after a flush).  0 does not mean
    the model holds everything: mini-batches learned since the last push
    wait on the worker's copy until the next push or flush.  */
unsigned model_worker_pending (const model_worker *self);

/*  Copy the statistics gathered since the last call into *OUT and reset
    them.  */
void model_worker_take_stats (model_worker *self, model_stats *out);

/*  ---------------------------------------------------------------------
    Prediction (eval mode)

    The most likely label of an example under M's current weights, or a
    negative MODEL_E* code (MODEL_EDIM, MODEL_EVALUE).  A sparse feature
    the model has no row for (MODEL_INDEX_DIRECT, index dim or more)
    weighs nothing, as liblinear's predict ignores features past its
    model's: a test set may hold features no training example had.  When PROB is not
    NULL it receives the classes' probabilities.  The arguments mean what
    they mean for training.  Any number of threads may predict, also while
    workers train (each weight is read atomically; the model may change
    under the prediction).  Ties go to the lowest label.  Weights are read
    with scalar atomic loads, row by row of the nonzero features: fine for
    evaluation, not as fast as training.  Only more than 64 classes
    without PROB allocate (MODEL_ENOMEM).  */
int model_predict_dense_u8 (model_blob *m, const uint8_t *x, size_t n, float scale, float *prob);
int model_predict_dense_f32 (model_blob *m, const float *x, size_t n, float scale, float *prob);
int model_predict_dense_f64 (model_blob *m, const double *x, size_t n, float scale, float *prob);
int model_predict_sparse (model_blob *m, const uint64_t *index, const float *value, size_t n, float scale,
                          float *prob);

/*  The row of sparse INDEX in M (the hash or direct mapping above; an
    index of dim or more, which training and prediction refuse under
    MODEL_INDEX_DIRECT, is hashed here all the same).  Inline: it runs
    for every feature of every sparse example, and a power-of-two dim
    (the default 2^18) takes a mask, not a division.  */
static inline size_t model_column (const model_blob *m, uint64_t index)
{
    if (m->indexing == MODEL_INDEX_DIRECT && index < m->dim)
        return (size_t) index;
    /*  MurmurHash3's fmix64: every input bit flips each output bit with
        probability close to 1/2, so consecutive indices spread evenly  */
    uint64_t h = index;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return (size_t) ((m->dim & (m->dim - 1)) == 0 ? h & (m->dim - 1) : h % m->dim);
}

#ifdef __cplusplus
}
#endif

#endif

/*  tests/check_hogwild_model.c - the hogwild example's learning core
    (examples/hogwild/model.h): the memory layout, the arithmetic of one
    step, mini-batches, sparse columns, errors, exact resume, two threads.  */
#include <math.h>
#include <pthread.h>
#include <stdint.h>

#include "examples/hogwild/model.h"
#include "testutil.h"

//  A model in 64-byte aligned memory, laid out by model_init
static model_blob *s_model (const model_config *cfg, size_t *size)
{
    *size = model_bytes (cfg->classes, cfg->dim);
    ck_assert_uint_gt (*size, 0);
    void *mem = aligned_alloc (64, (*size + 63) / 64 * 64);
    ck_assert_ptr_nonnull (mem);
    ck_assert_int_eq (model_init (mem, *size, cfg), 0);
    return mem;
}

//  The weight of feature J for class C
static float s_weight (model_blob *m, unsigned c, size_t j)
{
    return atomic_load (&model_weights (m)[j * m->row + c]);
}

static float s_bias (model_blob *m, unsigned c)
{
    return atomic_load (&model_biases (m)[c]);
}

//  Toy data: class c of 3 has pixel c bright, plus a pixel that varies
static void s_toy (unsigned i, uint8_t x[8], unsigned *label)
{
    memset (x, 0, 8);
    *label = i % 3;
    x[*label] = 255;
    x[3 + i % 5] = (uint8_t) (i * 37);
}

//  The sparse index of the toy's feature J: SPARSE 1 spreads the features
//  over rows 100 .. 800, too far out for the worker to learn them as
//  dense (see s_dense_enough in worker.c); 2 keeps them in rows 0 .. 7,
//  where it does
static size_t s_col (size_t j, int sparse)
{
    return sparse == 1 ? 100 + j * 100 : j;
}

//  Toy example I into W on M, dense or as sparse pairs (index s_col (j)
//  for feature j, zeros left out)
static void s_add_toy (model_worker *w, model_blob *m, unsigned i, int sparse)
{
    uint8_t x[8];
    unsigned label;
    s_toy (i, x, &label);
    if (!sparse) {
        ck_assert_int_eq (model_worker_add_dense_u8 (w, m, label, x, 8, 1.0f / 255), 0);
        return;
    }
    uint64_t idx[8];
    float val[8];
    size_t n = 0;
    for (size_t j = 0; j < 8; j++)
        if (x[j]) {
            idx[n] = s_col (j, sparse);
            val[n++] = x[j];
        }
    ck_assert_int_eq (model_worker_add_sparse (w, m, label, idx, val, n, 1.0f / 255), 0);
}

START_TEST (test_layout)
{
    ck_assert_uint_eq (model_row_floats (2), 4);
    ck_assert_uint_eq (model_row_floats (4), 4);
    ck_assert_uint_eq (model_row_floats (5), 8);
    ck_assert_uint_eq (model_row_floats (10), 16);
    ck_assert_uint_eq (model_row_floats (16), 16);
    ck_assert_uint_eq (model_row_floats (17), 32);
    //  Header, 784 rows of 10 classes padded to 16, a row of biases
    ck_assert_uint_eq (model_bytes (10, 784), 128 + 785 * 16 * 4);
    ck_assert_uint_eq (model_bytes (3, 5), 128 + 6 * 4 * 4);
    ck_assert_uint_eq (model_bytes (1, 784), 0);
    ck_assert_uint_eq (model_bytes (10, 0), 0);
    ck_assert_uint_eq (model_bytes (10, (size_t) 1 << 40), 0);
    ck_assert_uint_eq (sizeof (model_blob), MODEL_HEADER_BYTES);

    model_config cfg;
    model_config_defaults (&cfg, 3, 5);
    size_t size;
    model_blob *m = s_model (&cfg, &size);
    ck_assert_uint_eq (m->magic, MODEL_MAGIC);
    ck_assert_uint_eq (m->version, MODEL_VERSION);
    ck_assert_uint_eq (m->classes, 3);
    ck_assert_uint_eq (m->dim, 5);
    ck_assert_uint_eq (m->row, 4);
    ck_assert_uint_eq (atomic_load (&m->step), 0);
    ck_assert_ptr_eq ((char *) model_weights (m), (char *) m + 128);
    ck_assert_ptr_eq ((char *) model_biases (m), (char *) m + 128 + 5 * 4 * 4);
    free (m);
}
END_TEST

START_TEST (test_init_check)
{
    model_config cfg, other;
    model_config_defaults (&cfg, 4, 100);
    size_t size;
    model_blob *m = s_model (&cfg, &size);
    ck_assert_int_eq (model_check (m, size, &cfg), 0);
    //  Hyperparameters may change between runs, the shape may not
    other = cfg;
    other.lr = 1;
    other.minibatch = 3;
    ck_assert_int_eq (model_check (m, size, &other), 0);
    other = cfg;
    other.classes = 5;
    ck_assert_int_eq (model_check (m, size, &other), MODEL_EBLOB);
    other = cfg;
    other.dim = 101;
    ck_assert_int_eq (model_check (m, size, &other), MODEL_EBLOB);
    other = cfg;
    other.indexing = MODEL_INDEX_DIRECT;
    ck_assert_int_eq (model_check (m, size, &other), MODEL_EBLOB);
    ck_assert_int_eq (model_check (m, size - 4, &cfg), MODEL_EBLOB);
    ck_assert_int_eq (model_init (m, size + 4, &cfg), MODEL_EBLOB);
    //  A zeroed blob (new in weir) is no model until model_init
    memset (m, 0, size);
    ck_assert_int_eq (model_check (m, size, &cfg), MODEL_EBLOB);
    other = cfg;
    other.lr = -1;
    ck_assert_int_eq (model_init (m, size, &other), MODEL_ECONFIG);
    free (m);
}
END_TEST

START_TEST (test_config)
{
    model_config cfg;
    model_config_defaults (&cfg, 10, 784);
    ck_assert_int_eq (model_config_check (&cfg), 0);
    ck_assert_uint_eq (cfg.minibatch, 16);
    model_config bad = cfg;
    bad.minibatch = 0;
    ck_assert_int_eq (model_config_check (&bad), MODEL_ECONFIG);
    bad = cfg;
    bad.decay = NAN;
    ck_assert_int_eq (model_config_check (&bad), MODEL_ECONFIG);
    bad = cfg;
    bad.l2 = INFINITY;
    ck_assert_int_eq (model_config_check (&bad), MODEL_ECONFIG);
    bad = cfg;
    bad.classes = 1;
    ck_assert_int_eq (model_config_check (&bad), MODEL_ECONFIG);
    bad = cfg;
    bad.schedule = 7;
    ck_assert_int_eq (model_config_check (&bad), MODEL_ECONFIG);
    ck_assert_ptr_null (model_worker_new (&bad));
    ck_assert_str_eq (model_strerror (MODEL_ELABEL), "label out of range");
    ck_assert_str_eq (model_strerror (-99), "unknown error");

    cfg.lr = 0.5f;
    cfg.decay = 0.01f;
    cfg.schedule = MODEL_LR_CONSTANT;
    ck_assert_float_eq (model_lr (&cfg, 12345), 0.5f);
    cfg.schedule = MODEL_LR_INV;
    ck_assert_float_eq (model_lr (&cfg, 0), 0.5f);
    ck_assert_float_eq_tol (model_lr (&cfg, 100), 0.25f, 1e-7);
    cfg.schedule = MODEL_LR_INVSQRT;
    ck_assert_float_eq_tol (model_lr (&cfg, 300), 0.25f, 1e-7);
    //  Far past float's 2^24: the step is kept in 64 bits
    cfg.schedule = MODEL_LR_INV;
    ck_assert_float_gt (model_lr (&cfg, (uint64_t) 1 << 40), 0);
}
END_TEST

//  One example on a zero model: every class has probability 1/K, so the
//  step is w[c][j] = -lr (1/K - [c == y]) x[j], exactly
START_TEST (test_one_step)
{
    model_config cfg;
    model_config_defaults (&cfg, 4, 3);
    cfg.minibatch = 1;
    cfg.push = 1;  //  the shared model written after every mini-batch
    cfg.lr = 0.5f;
    cfg.schedule = MODEL_LR_CONSTANT;
    size_t size;
    model_blob *m = s_model (&cfg, &size);
    model_worker *w = model_worker_new (&cfg);
    ck_assert_ptr_nonnull (w);
    const float x[3] = {1, 2, 0};
    ck_assert_int_eq (model_worker_add_dense_f32 (w, m, 2, x, 3, 1.0f), 0);
    ck_assert_uint_eq (model_worker_pending (w), 0);
    ck_assert_uint_eq (atomic_load (&m->step), 1);
    for (unsigned c = 0; c < 4; c++) {
        float g = 0.25f - (c == 2);
        for (size_t j = 0; j < 3; j++)
            ck_assert_float_eq_tol (s_weight (m, c, j), -0.5f * g * x[j], 1e-7);
        ck_assert_float_eq_tol (s_bias (m, c), -0.5f * g, 1e-7);
    }
    //  Rows of 4 classes have no padding; a dense example writes the rows
    //  of its features only
    ck_assert_uint_eq (m->row, 4);
    model_stats st;
    model_worker_take_stats (w, &st);
    ck_assert_uint_eq (st.examples, 1);
    ck_assert_double_eq_tol (st.loss, log (4.0), 1e-6);
    ck_assert_uint_eq (st.correct, 0);  //  a tie goes to label 0
    model_worker_take_stats (w, &st);
    ck_assert_uint_eq (st.examples, 0);
    model_worker_destroy (&w);
    ck_assert_ptr_null (w);
    model_worker_destroy (&w);
    free (m);
}
END_TEST

//  Examples wait in the mini-batch; the model moves when it is full or
//  flushed (with push 1), and the step counts examples
START_TEST (test_minibatch)
{
    model_config cfg;
    model_config_defaults (&cfg, 3, 8);
    cfg.minibatch = 4;
    cfg.push = 1;
    size_t size;
    model_blob *m = s_model (&cfg, &size);
    model_worker *w = model_worker_new (&cfg);
    for (unsigned i = 0; i < 3; i++)
        s_add_toy (w, m, i, 0);
    ck_assert_uint_eq (model_worker_pending (w), 3);
    ck_assert_uint_eq (atomic_load (&m->step), 0);
    ck_assert_float_eq (s_bias (m, 0), 0);
    s_add_toy (w, m, 3, 0);
    ck_assert_uint_eq (model_worker_pending (w), 0);
    ck_assert_uint_eq (atomic_load (&m->step), 4);
    ck_assert_float_ne (s_bias (m, 0), 0);
    s_add_toy (w, m, 4, 0);
    model_worker_flush (w);
    ck_assert_uint_eq (atomic_load (&m->step), 5);
    model_worker_flush (w);
    ck_assert_uint_eq (atomic_load (&m->step), 5);
    model_worker_destroy (&w);
    free (m);
}
END_TEST

//  Train on the toy examples FROM .. TO-1 with a new worker of CFG, and
//  flush
static void s_train_toy (model_blob *m, const model_config *cfg, unsigned from, unsigned to, int sparse)
{
    model_worker *w = model_worker_new (cfg);
    ck_assert_ptr_nonnull (w);
    for (unsigned i = from; i < to; i++)
        s_add_toy (w, m, i, sparse);
    model_worker_flush (w);
    model_worker_destroy (&w);
}

//  Mini-batches are learned on the worker's copy and written into the
//  model every cfg.push of them: one worker alone ends with the very
//  bits of push 1, and of two workers whose copies overlap in time,
//  neither undoes what the other wrote
START_TEST (test_push)
{
    model_config cfg;
    model_config_defaults (&cfg, 3, 8);
    cfg.minibatch = 2;
    cfg.push = 3;
    cfg.l2 = 0.01f;
    size_t size;
    model_blob *m = s_model (&cfg, &size);
    model_worker *w = model_worker_new (&cfg);
    for (unsigned i = 0; i < 4; i++)
        s_add_toy (w, m, i, 0);
    //  Two mini-batches learned, counted by the step, not yet written
    ck_assert_uint_eq (atomic_load (&m->step), 4);
    ck_assert_float_eq (s_bias (m, 0), 0);
    ck_assert_float_eq (s_weight (m, 0, 0), 0);
    for (unsigned i = 4; i < 6; i++)
        s_add_toy (w, m, i, 0);
    ck_assert_float_ne (s_bias (m, 0), 0);
    ck_assert_float_ne (s_weight (m, 0, 0), 0);
    //  A flush writes what is pending, whole mini-batches or not
    for (unsigned i = 6; i < 1003; i++)
        s_add_toy (w, m, i, 0);
    model_worker_flush (w);
    ck_assert_uint_eq (atomic_load (&m->step), 1003);
    model_worker_destroy (&w);

    //  The same examples with push 1 and with push 7: the same bits
    for (unsigned push = 1; push <= 7; push += 6) {
        model_config other = cfg;
        other.push = push;
        model_blob *m1 = s_model (&other, &size);
        s_train_toy (m1, &other, 0, 1003, 0);
        ck_assert_mem_eq (m1, m, size);
        free (m1);
    }
    free (m);

    //  And sparse examples, whose L2 shrinks only the rows each
    //  mini-batch touched
    cfg.indexing = MODEL_INDEX_DIRECT;
    cfg.dim = 1000;
    cfg.push = 1;
    model_blob *sparse1 = s_model (&cfg, &size);
    s_train_toy (sparse1, &cfg, 0, 1003, 1);
    for (unsigned push = 2; push <= 7; push += 5) {
        cfg.push = push;
        model_blob *m1 = s_model (&cfg, &size);
        s_train_toy (m1, &cfg, 0, 1003, 1);
        ck_assert_mem_eq (m1, sparse1, size);
        free (m1);
    }
    free (sparse1);

    //  Two workers on one model, interleaved: A learns a mini-batch, B
    //  learns one on the model as it was, A learns another and writes, B
    //  too.  The model ends with both changes, which are those each makes
    //  alone.  Each learns the same two examples twice, so that its second
    //  mini-batch touches no row its first did not: a sparse row read
    //  after the other's write would start from it
    cfg.push = 2;
    cfg.l2 = 0;
    cfg.schedule = MODEL_LR_CONSTANT;
    for (int sparse = 0; sparse <= 1; sparse++) {
        model_blob *alone_a = s_model (&cfg, &size), *alone_b = s_model (&cfg, &size);
        model_worker *a = model_worker_new (&cfg), *b = model_worker_new (&cfg);
        for (unsigned i = 0; i < 4; i++) {
            s_add_toy (a, alone_a, i % 2, sparse);
            s_add_toy (b, alone_b, 10 + i % 2, sparse);
        }
        m = s_model (&cfg, &size);
        for (unsigned i = 0; i < 4; i++) {
            s_add_toy (a, m, i % 2, sparse);
            s_add_toy (b, m, 10 + i % 2, sparse);
        }
        unsigned shared = 0;  //  weights both changed
        for (unsigned c = 0; c < 3; c++) {
            for (size_t k = 0; k < 8; k++) {
                size_t j = s_col (k, sparse);
                float both = s_weight (alone_a, c, j) + s_weight (alone_b, c, j);
                shared += s_weight (alone_a, c, j) != 0 && s_weight (alone_b, c, j) != 0;
                ck_assert_float_eq (s_weight (m, c, j), both);
            }
            ck_assert_float_eq (s_bias (m, c), s_bias (alone_a, c) + s_bias (alone_b, c));
        }
        ck_assert_uint_ge (shared, 4);
        model_worker_destroy (&a);
        model_worker_destroy (&b);
        free (alone_a);
        free (alone_b);
        free (m);
    }
}
END_TEST

START_TEST (test_errors)
{
    model_config cfg;
    model_config_defaults (&cfg, 3, 8);
    size_t size;
    model_blob *m = s_model (&cfg, &size);
    model_worker *w = model_worker_new (&cfg);
    uint8_t x[9] = {1, 2, 3};
    float f[2] = {1, NAN};
    double d[2] = {1, 1e300};
    uint64_t idx[2] = {1, 2};
    ck_assert_int_eq (model_worker_add_dense_u8 (w, m, 0, x, 8, 1), 0);
    ck_assert_int_eq (model_worker_add_dense_u8 (w, m, 3, x, 8, 1), MODEL_ELABEL);
    ck_assert_int_eq (model_worker_add_dense_u8 (w, m, 0, x, 9, 1), MODEL_EDIM);
    ck_assert_int_eq (model_worker_add_dense_f32 (w, m, 0, f, 2, 1), MODEL_EVALUE);
    ck_assert_int_eq (model_worker_add_dense_f64 (w, m, 0, d, 2, 1), MODEL_EVALUE);
    ck_assert_int_eq (model_worker_add_dense_u8 (w, m, 0, x, 8, INFINITY), MODEL_EVALUE);
    ck_assert_int_eq (model_worker_add_sparse (w, m, 0, idx, f, 2, 1), MODEL_EVALUE);
    ck_assert_int_eq (model_worker_add_sparse (w, m, 7, idx, f, 1, 1), MODEL_ELABEL);
    //  Refused examples change nothing
    ck_assert_uint_eq (model_worker_pending (w), 1);
    //  The one example waits in the tile, unscored, until the flush
    model_stats st;
    model_worker_take_stats (w, &st);
    ck_assert_uint_eq (st.examples, 0);
    ck_assert_int_eq (model_predict_dense_u8 (m, x, 9, 1, NULL), MODEL_EDIM);
    ck_assert_int_eq (model_predict_dense_f32 (m, f, 2, 1, NULL), MODEL_EVALUE);
    ck_assert_int_eq (model_predict_sparse (m, idx, f, 2, 1, NULL), MODEL_EVALUE);
    model_worker_flush (w);
    model_worker_take_stats (w, &st);
    ck_assert_uint_eq (st.examples, 1);
    ck_assert_uint_eq (atomic_load (&m->step), 1);
    model_worker_destroy (&w);
    free (m);
}
END_TEST

//  The documented hash, pinned: MurmurHash3's fmix64 modulo dim
static uint64_t s_fmix64 (uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

START_TEST (test_sparse_columns)
{
    model_config cfg;
    model_config_defaults (&cfg, 2, 1000);
    size_t size;
    model_blob *m = s_model (&cfg, &size);
    ck_assert_uint_eq (model_column (m, 5), s_fmix64 (5) % 1000);
    ck_assert_uint_eq (model_column (m, 123456789), s_fmix64 (123456789) % 1000);
    free (m);

    cfg.indexing = MODEL_INDEX_DIRECT;
    cfg.minibatch = 1;
    cfg.push = 1;  //  the shared model written after every mini-batch
    m = s_model (&cfg, &size);
    ck_assert_uint_eq (model_column (m, 5), 5);
    ck_assert_uint_eq (model_column (m, 999), 999);
    ck_assert_uint_eq (model_column (m, 1000), s_fmix64 (1000) % 1000);

    //  An index with no row is refused in training, a zero one too, and
    //  changes nothing: neither the model nor what the worker holds.  In
    //  prediction it weighs nothing
    model_worker *w = model_worker_new (&cfg);
    uint64_t far[2] = {7, 1000};
    float some[2] = {1, 0};
    ck_assert_int_eq (model_worker_add_sparse (w, m, 1, far, some, 2, 1), MODEL_EINDEX);
    ck_assert_uint_eq (model_worker_pending (w), 0);
    float with[2], without[2];
    some[1] = 5;
    ck_assert_int_eq (model_predict_sparse (m, far, some, 2, 1, with), 0);
    ck_assert_int_eq (model_predict_sparse (m, far, some, 1, 1, without), 0);
    ck_assert_float_eq (with[0], without[0]);
    ck_assert_float_eq (with[1], without[1]);
    ck_assert_str_eq (model_strerror (MODEL_EINDEX),
                      "a sparse index is beyond the model's rows (indexing=direct)");

    //  Only the touched columns move; a repeated index adds up
    uint64_t idx[3] = {7, 500, 7};
    float val[3] = {1, 2, 3};
    ck_assert_int_eq (model_worker_add_sparse (w, m, 1, idx, val, 3, 0.5f), 0);
    for (size_t j = 0; j < 1000; j++)
        if (j != 7 && j != 500) {
            ck_assert_float_eq (s_weight (m, 0, j), 0);
            ck_assert_float_eq (s_weight (m, 1, j), 0);
        }
    //  Zero model: p = 1/2, step -lr (p - y) x with x[7] = (1 + 3) / 2
    float lr = cfg.lr;
    ck_assert_float_eq_tol (s_weight (m, 1, 7), lr * 0.5f * 2.0f, 1e-6);
    ck_assert_float_eq_tol (s_weight (m, 0, 7), -lr * 0.5f * 2.0f, 1e-6);
    ck_assert_float_eq_tol (s_weight (m, 1, 500), lr * 0.5f * 1.0f, 1e-6);
    float prob[2];
    ck_assert_int_eq (model_predict_sparse (m, idx, val, 1, 1, prob), 1);
    ck_assert_float_eq_tol (prob[0] + prob[1], 1, 1e-6);
    ck_assert_float_gt (prob[1], 0.5f);
    model_worker_destroy (&w);
    free (m);
}
END_TEST

//  Ten classes (rows of 16 floats, the way of four partial sums) and 7
//  features: one step from a model of known weights moves each weight of
//  a feature by -lr (p_c - y_c) x_j, p the softmax of the scores summed
//  here in double, every feature counted (the last three, past the
//  multiple of four, too)
START_TEST (test_sparse_scores)
{
    model_config cfg;
    model_config_defaults (&cfg, 10, 64);
    cfg.indexing = MODEL_INDEX_DIRECT;
    cfg.minibatch = 1;
    cfg.push = 1;  //  the shared model written after every mini-batch
    size_t size;
    model_blob *m = s_model (&cfg, &size);
    ck_assert_uint_eq (m->row, 16);
    for (size_t j = 0; j < 64; j++)
        for (unsigned c = 0; c < 10; c++)
            atomic_store (&model_weights (m)[j * m->row + c], (float) ((j * 7 + c * 3) % 11) / 10 - 0.5f);
    uint64_t idx[7] = {3, 9, 17, 20, 33, 41, 63};
    float val[7] = {0.5f, 1, 0.25f, 2, 0.75f, 1.5f, 3};
    double score[10], before[7][10], sum = 0, top = -1e300;
    for (unsigned c = 0; c < 10; c++) {
        score[c] = 0;
        for (size_t k = 0; k < 7; k++) {
            before[k][c] = s_weight (m, c, idx[k]);
            score[c] += val[k] * before[k][c];
        }
        top = score[c] > top ? score[c] : top;
    }
    for (unsigned c = 0; c < 10; c++)
        sum += exp (score[c] - top);
    model_worker *w = model_worker_new (&cfg);
    ck_assert_int_eq (model_worker_add_sparse (w, m, 4, idx, val, 7, 1), 0);
    for (unsigned c = 0; c < 10; c++) {
        double p = exp (score[c] - top) / sum, y = c == 4;
        for (size_t k = 0; k < 7; k++)
            ck_assert_float_eq_tol (s_weight (m, c, idx[k]), before[k][c] - cfg.lr * (p - y) * val[k], 1e-5);
    }
    model_worker_destroy (&w);
    free (m);
}
END_TEST

//  A short dense example on a wide model reads and writes only its columns
START_TEST (test_dense_short)
{
    model_config cfg;
    model_config_defaults (&cfg, 3, 1000);
    cfg.minibatch = 2;
    cfg.l2 = 0.1f;
    size_t size;
    model_blob *m = s_model (&cfg, &size);
    model_worker *w = model_worker_new (&cfg);
    uint8_t x[8];
    unsigned label;
    for (unsigned i = 0; i < 10; i++) {
        s_toy (i, x, &label);
        ck_assert_int_eq (model_worker_add_dense_u8 (w, m, label, x, 8, 1.0f / 255), 0);
    }
    model_worker_flush (w);
    for (unsigned c = 0; c < m->row; c++)
        for (size_t j = 16; j < 1000; j++)
            ck_assert_float_eq (s_weight (m, c, j), 0);
    //  The padding lane of the rows (3 classes in rows of 4) stays 0
    for (size_t j = 0; j < 1000; j++)
        ck_assert_float_eq (s_weight (m, 3, j), 0);
    ck_assert_float_gt (s_weight (m, 0, 0), 0);
    model_worker_destroy (&w);
    free (m);
}
END_TEST

//  Dense and sparse examples may alternate: a change of kind applies the
//  pending mini-batch
START_TEST (test_mixed)
{
    model_config cfg;
    model_config_defaults (&cfg, 3, 1000);
    cfg.indexing = MODEL_INDEX_DIRECT;
    size_t size;
    model_blob *m = s_model (&cfg, &size);
    model_worker *w = model_worker_new (&cfg);
    uint8_t x[8];
    unsigned label;
    s_toy (0, x, &label);
    ck_assert_int_eq (model_worker_add_dense_u8 (w, m, label, x, 8, 1.0f / 255), 0);
    ck_assert_int_eq (model_worker_add_dense_u8 (w, m, label, x, 8, 1.0f / 255), 0);
    uint64_t idx[1] = {900};  //  too far to be learned as dense
    float val[1] = {1};
    ck_assert_int_eq (model_worker_add_sparse (w, m, 0, idx, val, 1, 1), 0);
    ck_assert_uint_eq (atomic_load (&m->step), 2);
    ck_assert_uint_eq (model_worker_pending (w), 1);
    ck_assert_int_eq (model_worker_add_dense_u8 (w, m, label, x, 8, 1.0f / 255), 0);
    ck_assert_uint_eq (atomic_load (&m->step), 3);
    model_worker_flush (w);
    ck_assert_uint_eq (atomic_load (&m->step), 4);
    model_worker_destroy (&w);
    free (m);
}
END_TEST

//  A sparse example whose rows all lie below eight times its nonzero
//  features is learned as the dense example it is, to the very bits; one
//  spread wider stays sparse.  Which way an example went shows in the
//  step counter: a change of kind applies the pending mini-batch
START_TEST (test_densify)
{
    model_config cfg;
    model_config_defaults (&cfg, 3, 8);
    cfg.indexing = MODEL_INDEX_DIRECT;
    cfg.minibatch = 4;
    cfg.push = 3;
    size_t size;
    model_blob *dense = s_model (&cfg, &size), *sparse = s_model (&cfg, &size);
    s_train_toy (dense, &cfg, 0, 1003, 0);
    s_train_toy (sparse, &cfg, 0, 1003, 2);
    ck_assert_mem_eq (dense, sparse, size);
    ck_assert_float_ne (s_weight (sparse, 0, 0), 0);
    free (dense);
    free (sparse);

    //  Hashed into 8 rows, the same: each example is the dense one with
    //  its values in the rows model_column gives
    cfg.indexing = MODEL_INDEX_HASH;
    dense = s_model (&cfg, &size);
    sparse = s_model (&cfg, &size);
    model_worker *wd = model_worker_new (&cfg), *ws = model_worker_new (&cfg);
    for (unsigned i = 0; i < 1003; i++) {
        uint8_t x[8];
        unsigned label;
        s_toy (i, x, &label);
        uint64_t idx[8];
        float val[8], row[8] = {0};
        size_t n = 0;
        for (size_t j = 0; j < 8; j++)
            if (x[j]) {
                idx[n] = j;
                val[n++] = x[j];
                row[model_column (dense, j)] += (float) x[j] * (1.0f / 255);
            }
        ck_assert_int_eq (model_worker_add_sparse (ws, sparse, label, idx, val, n, 1.0f / 255), 0);
        ck_assert_int_eq (model_worker_add_dense_f32 (wd, dense, label, row, 8, 1), 0);
    }
    model_worker_flush (wd);
    model_worker_flush (ws);
    ck_assert_mem_eq (dense, sparse, size);
    model_worker_destroy (&wd);
    model_worker_destroy (&ws);
    free (dense);
    free (sparse);
    cfg.indexing = MODEL_INDEX_DIRECT;

    //  A zero contributes nothing, not even its row to the example's
    //  length: with L2 an example with zeros in rows 2 .. 16 (some in the
    //  vector loops, one after) shrinks no more rows than the one
    //  without, and one with only a zero, far out, none
    model_config l2 = cfg;
    l2.dim = 1000;
    l2.l2 = 0.1f;
    model_blob *with = s_model (&l2, &size), *without = s_model (&l2, &size);
    for (size_t j = 15; j < 1000; j += 984) {
        atomic_store (&model_weights (with)[j * with->row], 1.0f);
        atomic_store (&model_weights (without)[j * without->row], 1.0f);
    }
    uint64_t z_idx[17], far_zero[1] = {999};
    float z_val[17], nothing[1] = {0};
    for (unsigned k = 0; k < 17; k++) {
        z_idx[k] = k;
        z_val[k] = k < 2;
    }
    model_worker *ww = model_worker_new (&l2), *wn = model_worker_new (&l2);
    ck_assert_int_eq (model_worker_add_sparse (ww, with, 1, z_idx, z_val, 17, 1), 0);
    ck_assert_int_eq (model_worker_add_sparse (ww, with, 1, far_zero, nothing, 1, 1), 0);
    ck_assert_int_eq (model_worker_add_sparse (wn, without, 1, z_idx, z_val, 2, 1), 0);
    ck_assert_int_eq (model_worker_add_sparse (wn, without, 1, NULL, NULL, 0, 1), 0);
    model_worker_flush (ww);
    model_worker_flush (wn);
    ck_assert_mem_eq (with, without, size);
    ck_assert_float_eq (s_weight (with, 0, 15), 1.0f);
    ck_assert_float_eq (s_weight (with, 0, 999), 1.0f);
    model_worker_destroy (&ww);
    model_worker_destroy (&wn);
    free (with);
    free (without);

    //  Repeated indices add up, as in a sparse example: 1 and 2 in row 1
    //  are 3 there
    model_blob *twice = s_model (&cfg, &size), *once = s_model (&cfg, &size);
    uint64_t rep[3] = {1, 0, 1}, one_rep[2] = {1, 0};
    float rep_value[3] = {1, 2, 2}, once_value[2] = {3, 2};
    model_worker *wt = model_worker_new (&cfg), *wo = model_worker_new (&cfg);
    ck_assert_int_eq (model_worker_add_sparse (wt, twice, 1, rep, rep_value, 3, 1), 0);
    ck_assert_int_eq (model_worker_add_sparse (wo, once, 1, one_rep, once_value, 2, 1), 0);
    model_worker_flush (wt);
    model_worker_flush (wo);
    ck_assert_mem_eq (twice, once, size);
    ck_assert_float_ne (s_weight (once, 1, 1), 0);
    model_worker_destroy (&wt);
    model_worker_destroy (&wo);
    free (twice);
    free (once);

    cfg.dim = 1000;
    cfg.minibatch = 16;
    model_blob *m = s_model (&cfg, &size);
    model_worker *w = model_worker_new (&cfg);
    uint64_t near[2] = {0, 5}, mid[2] = {0, 20}, far[2] = {0, 900}, out[2] = {0, 1000};
    float one[2] = {1, 1}, bad[2] = {1, NAN};
    uint8_t x[8] = {0};
    //  Rows below 6 for 2 features: dense
    ck_assert_int_eq (model_worker_add_sparse (w, m, 0, near, one, 2, 1), 0);
    //  Below 21: dense while dense examples are pending (16 times), so
    //  that examples near the line do not split mini-batch after
    //  mini-batch
    ck_assert_int_eq (model_worker_add_sparse (w, m, 1, mid, one, 2, 1), 0);
    ck_assert_uint_eq (model_worker_pending (w), 2);
    ck_assert_uint_eq (atomic_load (&m->step), 0);
    //  Below 901: sparse, which applies the two dense ones
    ck_assert_int_eq (model_worker_add_sparse (w, m, 2, far, one, 2, 1), 0);
    ck_assert_uint_eq (atomic_load (&m->step), 2);
    ck_assert_uint_eq (model_worker_pending (w), 1);
    //  Below 21 after a sparse one (8 times): sparse
    ck_assert_int_eq (model_worker_add_sparse (w, m, 1, mid, one, 2, 1), 0);
    //  No feature at all: the kind of the mini-batch
    ck_assert_int_eq (model_worker_add_sparse (w, m, 1, NULL, NULL, 0, 1), 0);
    ck_assert_uint_eq (model_worker_pending (w), 3);
    ck_assert_uint_eq (atomic_load (&m->step), 2);
    ck_assert_int_eq (model_worker_add_dense_u8 (w, m, 0, x, 8, 1), 0);
    ck_assert_uint_eq (atomic_load (&m->step), 5);
    ck_assert_int_eq (model_worker_add_sparse (w, m, 1, NULL, NULL, 0, 1), 0);
    ck_assert_uint_eq (model_worker_pending (w), 2);
    //  A refused example changes nothing, whichever way it would go
    ck_assert_int_eq (model_worker_add_sparse (w, m, 1, near, bad, 2, 1), MODEL_EVALUE);
    ck_assert_int_eq (model_worker_add_sparse (w, m, 1, out, one, 2, 1), MODEL_EINDEX);
    ck_assert_int_eq (model_worker_add_sparse (w, m, 1, near, one, 2, INFINITY), MODEL_EVALUE);
    ck_assert_uint_eq (model_worker_pending (w), 2);
    ck_assert_uint_eq (atomic_load (&m->step), 5);
    model_worker_flush (w);
    ck_assert_uint_eq (atomic_load (&m->step), 7);
    //  Both dense ones wrote row 0 and the sparse ones row 900
    ck_assert_float_ne (s_weight (m, 0, 0), 0);
    ck_assert_float_ne (s_weight (m, 2, 900), 0);
    model_worker_destroy (&w);
    free (m);

    //  The same checks and counts on examples long enough for the vector
    //  loops (16 features at a time): the fault, the highest index or the
    //  zeros within them
    cfg.minibatch = 16;
    m = s_model (&cfg, &size);
    w = model_worker_new (&cfg);
    uint64_t wide[40];
    float ones[40], sparse40[40];
    for (unsigned k = 0; k < 40; k++) {
        wide[k] = k;
        ones[k] = 1;
        sparse40[k] = k % 10 == 9;  //  4 nonzero: rows below 40 > 8 * 4
    }
    ck_assert_int_eq (model_worker_add_sparse (w, m, 0, wide, ones, 40, 1), 0);
    ones[5] = NAN;
    ck_assert_int_eq (model_worker_add_sparse (w, m, 0, wide, ones, 40, 1), MODEL_EVALUE);
    ones[5] = 1;
    ones[20] = -INFINITY;
    ck_assert_int_eq (model_worker_add_sparse (w, m, 0, wide, ones, 40, 1), MODEL_EVALUE);
    ones[20] = 1;
    wide[3] = 1000;
    ck_assert_int_eq (model_worker_add_sparse (w, m, 0, wide, ones, 40, 1), MODEL_EINDEX);
    //  A zero value's index too, in the upper eight of the sixteen
    wide[3] = 3;
    wide[12] = 1000;
    ones[12] = 0;
    ck_assert_int_eq (model_worker_add_sparse (w, m, 0, wide, ones, 40, 1), MODEL_EINDEX);
    ones[12] = 1;
    ck_assert_uint_eq (model_worker_pending (w), 1);
    ck_assert_uint_eq (atomic_load (&m->step), 0);
    wide[3] = 3;
    wide[12] = 900;  //  rows below 901 > 16 * 40: sparse
    ck_assert_int_eq (model_worker_add_sparse (w, m, 0, wide, ones, 40, 1), 0);
    ck_assert_uint_eq (atomic_load (&m->step), 1);
    wide[12] = 12;
    ck_assert_int_eq (model_worker_add_sparse (w, m, 0, wide, sparse40, 40, 1), 0);
    ck_assert_uint_eq (atomic_load (&m->step), 1);
    ck_assert_uint_eq (model_worker_pending (w), 2);
    ck_assert_int_eq (model_worker_add_sparse (w, m, 0, wide, ones, 40, 1), 0);
    ck_assert_uint_eq (atomic_load (&m->step), 3);
    model_worker_flush (w);
    model_worker_destroy (&w);
    free (m);

    //  A model whose dense buffers would be more than 2^22 floats a copy
    //  learns every sparse example as sparse; one of 2^18 rows of 16
    //  lanes is the widest that does not
    model_config_defaults (&cfg, 10, ((size_t) 1 << 18) + 1);
    cfg.indexing = MODEL_INDEX_DIRECT;
    for (int over = 1; over >= 0; over--) {
        cfg.dim = ((size_t) 1 << 18) + (size_t) over;
        m = s_model (&cfg, &size);
        w = model_worker_new (&cfg);
        ck_assert_int_eq (model_worker_add_sparse (w, m, 0, near, one, 2, 1), 0);
        ck_assert_int_eq (model_worker_add_dense_u8 (w, m, 0, x, 8, 1), 0);
        ck_assert_uint_eq (atomic_load (&m->step), (unsigned) over);
        model_worker_flush (w);
        model_worker_destroy (&w);
        free (m);
    }
}
END_TEST

//  Train EPOCHS epochs of the toy data (dense or sparse) on M, flushing
//  at each epoch end as the plugin does (a flushed worker is as new)
static void s_train (model_blob *m, const model_config *cfg, int sparse, unsigned from, unsigned epochs)
{
    for (unsigned e = from; e < from + epochs; e++)
        s_train_toy (m, cfg, e, e + 101, sparse);
}

//  N indices and values as a record keeps them (little-endian uint32 and
//  float32) at BYTES + 1, so that no load is aligned; *INDEX and *VALUE
//  point at them
static void s_le32_example (const uint64_t *idx, const float *val, size_t n, uint8_t *bytes,
                            const uint8_t **index, const uint8_t **value)
{
    uint8_t *ib = bytes + 1, *vb = bytes + 1 + 4 * n;
    for (size_t k = 0; k < n; k++) {
        uint32_t bits;
        memcpy (&bits, &val[k], sizeof bits);
        for (int b = 0; b < 4; b++) {
            ib[4 * k + (size_t) b] = (uint8_t) (idx[k] >> (8 * b));
            vb[4 * k + (size_t) b] = (uint8_t) (bits >> (8 * b));
        }
    }
    *index = ib;
    *value = vb;
}

//  Rows 0 to ROWS - 1, row 3 among them worth 5, learned once as that
//  (with model_worker_add_sparse) and once with row 3 twice, 2 in its
//  place and 3 as feature AT of ROWS + 1 (with model_worker_add_sparse,
//  or with LE32 model_worker_add_sparse_le32): repeated rows add up, so
//  the two models must be one
static void s_check_row_twice (const model_config *cfg, size_t rows, size_t at, int le32)
{
    uint64_t once[32], twice[33];
    float once_val[32], twice_val[33];
    uint8_t bytes[1 + 8 * 33];
    ck_assert_uint_le (rows, 32);
    for (size_t i = 0; i < rows; i++) {
        once[i] = i;
        once_val[i] = i == 3 ? 5.0f : (float) (i + 1);
    }
    for (size_t i = 0, j = 0; i <= rows; i++) {
        if (i == at) {
            twice[i] = 3;
            twice_val[i] = 3;
            continue;
        }
        twice[i] = j;
        twice_val[i] = j == 3 ? 2.0f : (float) (j + 1);
        j++;
    }
    size_t size;
    model_blob *a = s_model (cfg, &size), *b = s_model (cfg, &size);
    model_worker *wa = model_worker_new (cfg), *wb = model_worker_new (cfg);
    if (le32) {
        const uint8_t *ib, *vb;
        s_le32_example (twice, twice_val, rows + 1, bytes, &ib, &vb);
        ck_assert_int_eq (model_worker_add_sparse_le32 (wa, a, 1, ib, vb, rows + 1, 1), 0);
    }
    else
        ck_assert_int_eq (model_worker_add_sparse (wa, a, 1, twice, twice_val, rows + 1, 1), 0);
    ck_assert_int_eq (model_worker_add_sparse (wb, b, 1, once, once_val, rows, 1), 0);
    model_worker_flush (wa);
    model_worker_flush (wb);
    ck_assert_mem_eq (a, b, size);
    model_worker_destroy (&wa);
    model_worker_destroy (&wb);
    free (a);
    free (b);
}

//  Examples of 17 to 72 features, long enough for the vector loops of
//  the scatter into the tile (indexing=direct, dense enough): in index
//  order, in reverse (which the scalar loop takes), and as dense rows,
//  they train one model to the bit; zeros, -0 among them, are not stored
//  (an example with a -0 trains the model the one with +0 trains); and
//  an index repeated far apart adds up, whichever loop it meets first.
//  The vector loops run only on a CPU with AVX-512 (this test, and
//  mutants 178 to 181, exercise them there; elsewhere the scalar loop
//  takes every example and the models agree all the same)
START_TEST (test_sparse_scatter)
{
    model_config cfg;
    model_config_defaults (&cfg, 4, 96);
    cfg.indexing = MODEL_INDEX_DIRECT;
    cfg.minibatch = 4;
    size_t size;
    model_blob *m[3];
    model_worker *w[3];
    for (int k = 0; k < 3; k++) {
        m[k] = s_model (&cfg, &size);
        w[k] = model_worker_new (&cfg);
    }
    uint64_t seed = 99;
    for (unsigned e = 0; e < 600; e++) {
        uint64_t idx[96], rev_idx[96];
        float val[96], rev_val[96], row[96] = {0};
        size_t n = 0;
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        size_t want = 17 + (size_t) (seed >> 58);
        for (size_t j = 0; j < 96 && n < want; j++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            if ((seed >> 60) < 4)
                continue;
            idx[n] = j;
            //  One feature in eight is a zero, half of them -0
            val[n] = (seed >> 57) % 8 == 0 ? ((seed >> 40) & 1 ? -0.0f : 0.0f) : (float) ((seed >> 33) % 255);
            row[j] = val[n] == 0 ? 0.0f : val[n];
            n++;
        }
        for (size_t i = 0; i < n; i++) {
            rev_idx[i] = idx[n - 1 - i];
            rev_val[i] = val[n - 1 - i];
        }
        unsigned label = (unsigned) (seed >> 62);
        ck_assert_int_eq (model_worker_add_sparse (w[0], m[0], label, idx, val, n, 1.0f / 255), 0);
        ck_assert_int_eq (model_worker_add_sparse (w[1], m[1], label, rev_idx, rev_val, n, 1.0f / 255), 0);
        ck_assert_int_eq (model_worker_add_dense_f32 (w[2], m[2], label, row, 96, 1.0f / 255), 0);
    }
    for (int k = 0; k < 3; k++)
        model_worker_flush (w[k]);
    ck_assert_mem_eq (m[0], m[1], size);
    ck_assert_mem_eq (m[0], m[2], size);
    ck_assert_float_ne (s_weight (m[0], 1, 40), 0);

    //  Row 3 twice (2, then 3 further on) is row 3 once with 5: the second
    //  found in the vector loop (feature 31, 18 or 16 of 32, after a
    //  block of 16 stored) or in the scalar tail (feature 20 of 21)
    const size_t rows[4] = {31, 31, 31, 20}, at[4] = {31, 18, 16, 20};
    for (int c = 0; c < 4; c++)
        s_check_row_twice (&cfg, rows[c], at[c], 0);
    for (int k = 0; k < 3; k++) {
        model_worker_destroy (&w[k]);
        free (m[k]);
    }
}
END_TEST

//  model_worker_add_sparse_le32 learns, from bytes at any alignment, the
//  bits model_worker_add_sparse learns from the same numbers, and refuses
//  what it refuses: under both indexings, examples of 0 to 80 features in
//  index order (the vector loops), reversed, with a row repeated (both
//  fall back to the general way), at every length around the vector's
//  sixteen; with L2, so that an example's length counts too.  A row
//  repeated adds up wherever the vector loop meets it.  The vector loops
//  run only on a CPU with AVX-512 (mutants 193 to 198 need one to be
//  caught); elsewhere every example takes the general way
START_TEST (test_sparse_le32)
{
    for (int hashed = 0; hashed <= 1; hashed++) {
        model_config cfg;
        model_config_defaults (&cfg, 4, 96);
        cfg.indexing = hashed ? MODEL_INDEX_HASH : MODEL_INDEX_DIRECT;
        cfg.minibatch = 4;
        cfg.l2 = 1e-3f;
        size_t size;
        model_blob *m[2];
        model_worker *w[2];
        for (int k = 0; k < 2; k++) {
            m[k] = s_model (&cfg, &size);
            w[k] = model_worker_new (&cfg);
        }
        uint64_t seed = 7 + (uint64_t) hashed;
        for (unsigned e = 0; e < 800; e++) {
            uint64_t idx[96];
            float val[96];
            uint8_t bytes[1 + 8 * 96];
            size_t n = 0;
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            size_t want = e < 81 ? e : (size_t) (seed >> 57) % 81;
            int order = (int) (seed >> 40) % 4;  //  0, 1: ascending; 2: reversed; 3: a row twice
            for (size_t j = 0; j < 96 && n < want; j++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                if (want < 80 && (seed >> 60) < 3)
                    continue;
                idx[n] = j;
                val[n] = (seed >> 57) % 8 == 0 ? ((seed >> 40) & 1 ? -0.0f : 0.0f)
                                               : (float) ((seed >> 33) % 255) - 100;
                n++;
            }
            if (order == 2)
                for (size_t i = 0; i < n / 2; i++) {
                    uint64_t ti = idx[i];
                    float tv = val[i];
                    idx[i] = idx[n - 1 - i];
                    val[i] = val[n - 1 - i];
                    idx[n - 1 - i] = ti;
                    val[n - 1 - i] = tv;
                }
            if (order == 3 && n > 1)
                idx[(seed >> 20) % (n - 1) + 1] = idx[(seed >> 30) % n];
            const uint8_t *ib, *vb;
            s_le32_example (idx, val, n, bytes, &ib, &vb);
            unsigned label = (unsigned) (seed >> 62);
            ck_assert_int_eq (model_worker_add_sparse (w[0], m[0], label, idx, val, n, 1.0f / 255), 0);
            ck_assert_int_eq (model_worker_add_sparse_le32 (w[1], m[1], label, ib, vb, n, 1.0f / 255), 0);
        }
        ck_assert_int_eq (model_worker_add_sparse_le32 (w[1], m[1], 2, NULL, NULL, 0, 1), 0);
        ck_assert_int_eq (model_worker_add_sparse (w[0], m[0], 2, NULL, NULL, 0, 1), 0);

        //  What one refuses the other refuses, and the models stay equal:
        //  an index past the rows (direct; the largest uint32 must not
        //  wrap to row 0, and counts with a zero value too, also as the
        //  last of a block of sixteen, in order), a NaN among
        //  the first sixteen, an infinity past them, a label past the
        //  classes, a scale that is not finite; the largest uint32 is a
        //  row like any under hash
        uint64_t idx[20];
        float val[20];
        uint8_t bytes[1 + 8 * 20];
        for (int c = 0; c < 8; c++) {
            for (size_t k = 0; k < 20; k++) {
                idx[k] = k * 4;
                val[k] = (float) k + 1;
            }
            size_t n = 20;
            unsigned label = 1;
            float scale = 1;
            int want = 0;
            switch (c) {
            case 0: idx[19] = 96, want = hashed ? 0 : MODEL_EINDEX; break;
            case 1: idx[19] = 4294967295u, want = hashed ? 0 : MODEL_EINDEX; break;
            case 2: idx[3] = 4294967295u, val[3] = 0, want = hashed ? 0 : MODEL_EINDEX; break;
            case 3: n = 16, idx[15] = 4294967295u, val[15] = 0, want = hashed ? 0 : MODEL_EINDEX; break;
            case 4: val[5] = NAN, want = MODEL_EVALUE; break;
            case 5: val[17] = INFINITY, want = MODEL_EVALUE; break;
            case 6: label = 4, want = MODEL_ELABEL; break;
            case 7: scale = INFINITY, want = MODEL_EVALUE; break;
            }
            const uint8_t *ib, *vb;
            s_le32_example (idx, val, n, bytes, &ib, &vb);
            ck_assert_int_eq (model_worker_add_sparse (w[0], m[0], label, idx, val, n, scale), want);
            ck_assert_int_eq (model_worker_add_sparse_le32 (w[1], m[1], label, ib, vb, n, scale), want);
        }
        for (int k = 0; k < 2; k++)
            model_worker_flush (w[k]);
        ck_assert_mem_eq (m[0], m[1], size);
        model_blob *fresh = s_model (&cfg, &size);
        ck_assert_mem_ne (m[0], fresh, size);
        free (fresh);
        for (int k = 0; k < 2; k++) {
            model_worker_destroy (&w[k]);
            free (m[k]);
        }
    }

    //  Row 3 twice (2, then 3 further on), read from bytes, is row 3 once
    //  with 5: the second as feature 31 or 17 of 32 (in the second block
    //  of sixteen), 16 (its first lane, against the first block's last)
    //  or 20 of 21 (in the tail)
    model_config cfg;
    model_config_defaults (&cfg, 4, 96);
    cfg.indexing = MODEL_INDEX_DIRECT;
    const size_t rows[4] = {31, 31, 31, 20}, at[4] = {31, 17, 16, 20};
    for (int c = 0; c < 4; c++)
        s_check_row_twice (&cfg, rows[c], at[c], 1);
}
END_TEST

//  A run stopped at an epoch end and resumed from a copy of the memory
//  ends with the same bits as an uninterrupted one
START_TEST (test_resume_exact)
{
    for (int sparse = 0; sparse <= 1; sparse++) {
        model_config cfg;
        model_config_defaults (&cfg, 3, sparse ? 1000 : 8);
        cfg.minibatch = 7;
        cfg.l2 = 1e-3f;
        size_t size;
        model_blob *once = s_model (&cfg, &size), *cut = s_model (&cfg, &size);
        s_train (once, &cfg, sparse, 0, 5);
        s_train (cut, &cfg, sparse, 0, 2);
        void *copy = aligned_alloc (64, (size + 63) / 64 * 64);
        memcpy (copy, cut, size);
        free (cut);
        ck_assert_int_eq (model_check (copy, size, &cfg), 0);
        s_train (copy, &cfg, sparse, 2, 3);
        ck_assert_uint_eq (atomic_load (&once->step), 505);
        ck_assert_int_eq (memcmp (once, copy, size), 0);
        //  And it learned the toy problem
        uint8_t x[8];
        unsigned label;
        for (unsigned i = 0; i < 30; i++) {
            s_toy (i, x, &label);
            if (!sparse)
                ck_assert_int_eq (model_predict_dense_u8 (once, x, 8, 1.0f / 255, NULL), (int) label);
        }
        free (once);
        free (copy);
    }
}
END_TEST

typedef struct {
    model_blob *m;
    const model_config *cfg;
    unsigned seed;
} s_job;

static void *s_hogwild (void *arg)
{
    s_job *job = arg;
    model_worker *w = model_worker_new (job->cfg);
    for (unsigned i = 0; i < 3000; i++) {
        uint8_t x[8];
        unsigned label;
        s_toy (i * 2 + job->seed, x, &label);
        if (model_worker_add_dense_u8 (w, job->m, label, x, 8, 1.0f / 255))
            break;
        uint64_t idx[2] = {label, 900};
        float val[2] = {1, 1};
        //  Sparse examples on the same columns, to race on them too (900:
        //  too far to be learned as dense)
        if (i % 10 == 0 && model_worker_add_sparse (w, job->m, label, idx, val, 2, 1))
            break;
        if (i % 500 == 0)
            (void) model_predict_dense_u8 (job->m, x, 8, 1.0f / 255, NULL);
    }
    model_worker_flush (w);
    model_worker_destroy (&w);
    return NULL;
}

//  Two threads on one model without locks: no example is missing from
//  the step counter, the model learns (and TSan builds see no data race)
START_TEST (test_two_threads)
{
    model_config cfg;
    model_config_defaults (&cfg, 3, 1000);
    cfg.indexing = MODEL_INDEX_DIRECT;
    size_t size;
    model_blob *m = s_model (&cfg, &size);
    pthread_t tid[2];
    s_job jobs[2] = {{m, &cfg, 0}, {m, &cfg, 1}};
    for (int t = 0; t < 2; t++)
        ck_assert_int_eq (pthread_create (&tid[t], NULL, s_hogwild, &jobs[t]), 0);
    for (int t = 0; t < 2; t++)
        ck_assert_int_eq (pthread_join (tid[t], NULL), 0);
    ck_assert_uint_eq (atomic_load (&m->step), 2 * (3000 + 300));
    uint8_t x[8];
    unsigned label;
    for (unsigned i = 0; i < 30; i++) {
        s_toy (i, x, &label);
        ck_assert_int_eq (model_predict_dense_u8 (m, x, 8, 1.0f / 255, NULL), (int) label);
    }
    free (m);
}
END_TEST

//  The dense loops (tiles of up to 16 examples, eight examples and eight
//  rows at a time, rows of 4, 8, 16 and 32 lanes, short examples) against
//  mini-batch SGD written out plainly in doubles: a mini-batch's examples
//  are scored with the weights as it began, their gradients summed, and
//  the sum applied scaled by lr / size and the L2 penalty
static void s_reference_check (unsigned classes, size_t dim, unsigned minibatch, float l2, unsigned examples)
{
    model_config cfg;
    model_config_defaults (&cfg, classes, dim);
    cfg.minibatch = minibatch;
    cfg.l2 = l2;
    cfg.lr = 0.3f;
    cfg.schedule = MODEL_LR_INV;
    cfg.decay = 0.01f;
    size_t size;
    model_blob *m = s_model (&cfg, &size);
    model_worker *w = model_worker_new (&cfg);
    ck_assert_ptr_nonnull (w);
    //  The same examples learned with a push every mini-batch, on a model
    //  of their own: the same bits as the default's pushes every eight
    model_config every = cfg;
    every.push = 1;
    model_blob *m1 = s_model (&every, &size);
    model_worker *w1 = model_worker_new (&every);
    ck_assert_ptr_nonnull (w1);
    double *W = calloc ((dim + 1) * classes, sizeof *W), *G = calloc ((dim + 1) * classes, sizeof *G);
    double *p = calloc (classes, sizeof *p);
    float *x = calloc (dim, sizeof *x);
    ck_assert (W && G && p && x);
    //  The reference's scores for the pending examples, kept with them
    float *xs = calloc ((size_t) minibatch * dim, sizeof *xs);
    unsigned *labels = calloc (minibatch, sizeof *labels);
    size_t *lens = calloc (minibatch, sizeof *lens);
    ck_assert (xs && labels && lens);
    unsigned pending = 0;
    uint64_t step = 0, seed = 12345;
    size_t hi = 0;
    for (unsigned i = 0; i < examples; i++) {
        //  A length from dim / 2 to dim, values in [-1, 1]
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        size_t n = dim / 2 + (size_t) (seed >> 33) % (dim - dim / 2 + 1);
        for (size_t j = 0; j < n; j++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            x[j] = (float) ((double) (seed >> 40) / (double) (1u << 24) * 2 - 1);
        }
        unsigned label = (unsigned) (seed >> 20) % classes;
        ck_assert_int_eq (model_worker_add_dense_f32 (w, m, label, x, n, 1.0f), 0);
        ck_assert_int_eq (model_worker_add_dense_f32 (w1, m1, label, x, n, 1.0f), 0);
        memcpy (xs + (size_t) pending * dim, x, n * sizeof *x);
        labels[pending] = label;
        lens[pending++] = n;
        if (pending < minibatch && i + 1 < examples)
            continue;
        if (i + 1 == examples) {
            model_worker_flush (w);
            model_worker_flush (w1);
        }
        //  The reference: score every pending example on W, sum gradients
        memset (G, 0, (dim + 1) * classes * sizeof *G);
        for (unsigned e = 0; e < pending; e++) {
            const float *xe = xs + (size_t) e * dim;
            double top = -INFINITY, sum = 0;
            for (unsigned c = 0; c < classes; c++) {
                p[c] = W[dim * classes + c];
                for (size_t j = 0; j < lens[e]; j++)
                    p[c] += W[j * classes + c] * xe[j];
                top = fmax (top, p[c]);
            }
            for (unsigned c = 0; c < classes; c++)
                sum += p[c] = exp (p[c] - top);
            for (unsigned c = 0; c < classes; c++) {
                double d = p[c] / sum - (c == labels[e]);
                for (size_t j = 0; j < lens[e]; j++)
                    G[j * classes + c] += d * xe[j];
                G[dim * classes + c] += d;
            }
            if (lens[e] > hi)
                hi = lens[e];
        }
        double lr = cfg.lr / (1 + cfg.decay * (double) step);
        step += pending;
        //  L2 shrinks the rows the worker wrote: those of the features
        //  below the longest example since the last flush (its copy of
        //  the weights only grows between flushes)
        for (size_t j = 0; j < hi; j++)
            for (unsigned c = 0; c < classes; c++)
                W[j * classes + c] = (1 - lr * l2) * W[j * classes + c] - lr / pending * G[j * classes + c];
        for (unsigned c = 0; c < classes; c++)
            W[dim * classes + c] -= lr / pending * G[dim * classes + c];
        pending = 0;
    }
    ck_assert_uint_eq (atomic_load (&m->step), examples);
    ck_assert_mem_eq (m, m1, size);
    model_worker_destroy (&w1);
    free (m1);
    for (unsigned c = 0; c < classes; c++) {
        for (size_t j = 0; j < dim; j++)
            ck_assert_msg (fabs (s_weight (m, c, j) - W[j * classes + c])
                               <= 1e-4 * (1 + fabs (W[j * classes + c])),
                           "classes %u dim %zu minibatch %u: w[%u][%zu] is %g, not %g", classes, dim,
                           minibatch, c, j, (double) s_weight (m, c, j), W[j * classes + c]);
        ck_assert_double_eq_tol (s_bias (m, c), W[dim * classes + c], 1e-4);
        for (unsigned c2 = classes; c2 < m->row; c2++)
            ck_assert_float_eq (s_weight (m, c2, 0), 0);
    }
    model_worker_destroy (&w);
    free (W);
    free (G);
    free (p);
    free (x);
    free (xs);
    free (labels);
    free (lens);
    free (m);
}

START_TEST (test_dense_reference)
{
    s_reference_check (3, 8, 1, 0, 40);         //  rows of 4 lanes, tiles of one
    s_reference_check (7, 33, 5, 0, 61);        //  8 lanes, odd lengths, a short last mini-batch
    s_reference_check (10, 50, 16, 0, 96);      //  16 lanes, one tile per mini-batch
    s_reference_check (10, 50, 16, 0.1f, 96);   //  the same with L2: rows past a tile's examples shrink
    s_reference_check (10, 50, 37, 0.1f, 150);  //  mini-batches of three tiles, with L2
    s_reference_check (20, 19, 6, 0.05f, 70);   //  32 lanes: two vectors a row
}
END_TEST

Suite *check_suite (void)
{
    Suite *s = suite_create ("hogwild_model");
    TCase *tc = tcase_create ("memory");
    tcase_add_test (tc, test_layout);
    tcase_add_test (tc, test_sparse_scores);
    tcase_add_test (tc, test_init_check);
    tcase_add_test (tc, test_config);
    suite_add_tcase (s, tc);

    tc = tcase_create ("learning");
    tcase_add_test (tc, test_one_step);
    tcase_add_test (tc, test_minibatch);
    tcase_add_test (tc, test_push);
    tcase_add_test (tc, test_errors);
    tcase_add_test (tc, test_sparse_columns);
    tcase_add_test (tc, test_dense_short);
    tcase_add_test (tc, test_dense_reference);
    tcase_add_test (tc, test_mixed);
    tcase_add_test (tc, test_densify);
    tcase_add_test (tc, test_sparse_scatter);
    tcase_add_test (tc, test_sparse_le32);
    tcase_add_test (tc, test_resume_exact);
    tcase_add_test (tc, test_two_threads);
    suite_add_tcase (s, tc);
    return s;
}

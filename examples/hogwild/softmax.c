/*  examples/hogwild/softmax.c - multinomial logistic regression trained by
    SGD, hogwild: every runtime thread updates one shared model without
    locks.

        msgpack path=train.mp ! softmax classes=10 threads=2 ! null
        msgpack path=test.mp ! softmax mode=eval ! lines path=predicted.txt

    Records are [label, features]: label an integer 0 .. classes-1 (nil or
    missing is allowed in eval mode), features a bin (dense bytes), an
    array of numbers (dense), a map {index: number} (sparse, as the
    libsvm reader gives) or [indexes, values], two bins of little-endian
    uint32 and float32 (sparse, libsvm features=bins).  The learning
    itself is model.h's (model.c, worker.c, predict.c): this file reads
    properties and records and keeps the model in the workspace.  It
    reads the records' bytes itself (process_bytes; record.h), the
    common forms straight into the arrays the model takes (bins, in
    training, where they lie), and leaves any other to the decoded
    objects, whose path says what is wrong with a bad record.

    Everything training depends on lives in the blob (blob=, default
    "softmax"): the shape, the weights, the biases and the step counter
    that drives the learning-rate schedule.  There is no other state: no
    optimizer state, and the only randomness, the initial weights when
    seed= is not 0, is drawn once into the blob.  Each thread's pending
    mini-batch is applied at every epoch end, before the checkpoint copies
    the blob, so a checkpoint holds the whole state, and with threads=1 a
    killed and resumed job ends with the same weights, to the bit, as one
    that ran through.

    The model's shape is fixed when it is made: classes= (required), dim=,
    or the length of the first dense record (a sparse record hashes its
    indices into 2^18 rows unless dim= says otherwise; indexing=direct
    keeps index i in row i, and refuses a training record with an index
    of dim or more; evaluation ignores such a feature, as liblinear's
    predict does).  A model restored by --resume or loaded
    by --load-blobs brings its own shape; properties that disagree with it
    are refused.

    Validation and early stopping (validate=PATH, patience=K): PATH is a
    file of msgpack records of the training records' form, read when the
    stage opens.  At the end of every epoch, once every thread has
    applied what it learned, the last thread to get there scores the
    model on it: 'val_loss' (mean cross-entropy) and 'val_accuracy'.  A
    loss lower than every earlier one marks the epoch's checkpoint the
    best (weir_checkpoint_best: 'weir run --load-blobs DIR:best' takes
    it); K epochs in a row without one stop the job (weir_stop), as
    Keras' EarlyStopping does.  The best loss, its epoch and the epochs
    since are kept in blob BLOB.validation, so a resumed job counts on.
    On several ranks each rank scores the model it trained in the epoch,
    before the ranks' models are averaged; rank 0's score marks the
    checkpoint, and any rank that runs out of patience stops the job.

    Metrics, named for the data they are measured on: in training,
    'train_loss' (mean cross-entropy) and 'train_accuracy' (of each
    training example predicted before the model learns from it) of the
    last few thousand examples; in eval, 'eval_accuracy' over the records
    given that carry a label (the test set's accuracy when the test set
    is what is evaluated), and 'eval_labeled', how many they were.

    Build:
        cc -shared -fPIC $(pkg-config --cflags weir) softmax.c heldout.c record.c model.c worker.c \
           predict.c -o softmax.so  */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weir/plugin.h>

#include "heldout.h"
#include "model.h"
#include "record.h"

//  Examples between two updates of a thread's metrics
#define S_PUBLISH_EVERY 4096
//  Rows of a sparse model without dim=
#define S_SPARSE_DIM ((size_t) 1 << 18)

typedef struct {
    model_config cfg;  //  classes and dim 0 until known
    const char *blob;
    int eval;
    int scale_given;
    float scale;
    uint64_t seed;
    pthread_mutex_t lock;  //  making the model
    _Atomic (model_blob *) model;
    size_t bytes;
    //  Eval: what every thread saw, for the accuracy
    atomic_uint_fast64_t labeled, correct;
    //  validate=: the held-out set, patience=, the threads at the
    //  epoch's end so far (the last one scores), what the scores were
    heldout *val;
    uint64_t patience;
    atomic_uint arrived;
    struct s_progress *progress;
} s_state;

//  The validation's progress, in blob BLOB.validation: the best loss, the
//  epoch that had it (0: none yet), the epochs since
typedef struct s_progress {
    double best_loss;
    uint64_t best_epoch, since;
} s_progress;

typedef struct {
    s_state *state;
    model_worker *worker;  //  training, once the model exists
    float *values;         //  a record's numbers
    uint64_t *indexes;     //  a sparse record's indexes
    size_t cap;
    uint64_t since;      //  examples since the metrics were published
    msgpack_zone *zone;  //  for the records record.h does not read
} s_thread;

//  A property as a number; -1 after failing the job.
static int s_number (weir_stage *st, const char *key, const char *fallback, double *out)
{
    const char *text = weir_prop (st, key, fallback);
    char *end;
    errno = 0;
    double v = strtod (text, &end);
    //  A fraction, as in scale=1/255
    if (end != text && *end == '/') {
        const char *den = end + 1;
        double d = strtod (den, &end);
        v = end != den && d != 0 ? v / d : NAN;
    }
    if (end == text || *end || errno || !isfinite (v) || v < 0)
        return weir_fail (st, "property '%s': '%s' is not a non-negative number", key, text);
    *out = v;
    return 0;
}

static int s_count (weir_stage *st, const char *key, const char *fallback, uint64_t min, uint64_t max,
                    uint64_t *out)
{
    const char *text = weir_prop (st, key, fallback);
    char *end;
    errno = 0;
    unsigned long long v = strtoull (text, &end, 10);
    if (end == text || *end || errno || v < min || v > max || *text == '-')
        return weir_fail (st, "property '%s': '%s' is not a whole number from %llu to %llu", key, text,
                          (unsigned long long) min, (unsigned long long) max);
    *out = v;
    return 0;
}

//  The model's configuration from the properties.
static int s_config (weir_stage *st, s_state *self)
{
    model_config *cfg = &self->cfg;
    uint64_t classes, dim, minibatch, push;
    double lr, decay, l2;
    if (s_count (st, "classes", "0", 0, 1u << 20, &classes)
        || s_count (st, "dim", "0", 0, (uint64_t) 1 << 40, &dim)
        || s_count (st, "minibatch", "16", 1, 65536, &minibatch) || s_count (st, "push", "8", 1, 1024, &push)
        || s_number (st, "lr", "0.2", &lr) || s_number (st, "decay", "5e-5", &decay)
        || s_number (st, "l2", "0", &l2) || s_count (st, "seed", "0", 0, UINT64_MAX, &self->seed)
        || s_count (st, "patience", "0", 0, UINT32_MAX, &self->patience))
        return -1;
    model_config_defaults (cfg, (unsigned) classes, (size_t) dim);
    cfg->minibatch = (unsigned) minibatch;
    cfg->push = (unsigned) push;
    cfg->lr = (float) lr;
    cfg->decay = (float) decay;
    cfg->l2 = (float) l2;
    const char *schedule = weir_prop (st, "schedule", "inv");
    if (!strcmp (schedule, "inv"))
        cfg->schedule = MODEL_LR_INV;
    else if (!strcmp (schedule, "invsqrt"))
        cfg->schedule = MODEL_LR_INVSQRT;
    else if (!strcmp (schedule, "constant"))
        cfg->schedule = MODEL_LR_CONSTANT;
    else
        return weir_fail (st, "property 'schedule': '%s' is none of inv, invsqrt, constant", schedule);
    const char *indexing = weir_prop (st, "indexing", "hash");
    if (!strcmp (indexing, "hash"))
        cfg->indexing = MODEL_INDEX_HASH;
    else if (!strcmp (indexing, "direct"))
        cfg->indexing = MODEL_INDEX_DIRECT;
    else
        return weir_fail (st, "property 'indexing': '%s' is neither hash nor direct", indexing);
    const char *mode = weir_prop (st, "mode", "train");
    if (strcmp (mode, "train") && strcmp (mode, "eval"))
        return weir_fail (st, "property 'mode': '%s' is neither train nor eval", mode);
    self->eval = !strcmp (mode, "eval");
    self->blob = weir_prop (st, "blob", "softmax");
    //  scale: bytes are pixels unless said otherwise (1/255); numbers are
    //  taken as they are
    if (weir_prop (st, "scale", NULL)) {
        double scale;
        if (s_number (st, "scale", NULL, &scale))
            return -1;
        self->scale = (float) scale;
        self->scale_given = 1;
    }
    return 0;
}

//  Small random weights from SEED (xorshift64*), drawn once into the blob.
static void s_randomize (model_blob *m, unsigned classes, uint64_t seed)
{
    uint64_t x = seed;
    _Atomic float *w = model_weights (m);
    for (size_t j = 0; j < m->dim; j++)
        for (unsigned c = 0; c < classes; c++) {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            double u = (double) ((x * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0;
            atomic_store_explicit (&w[j * m->row + c], (float) ((u - 0.5) * 0.002), memory_order_relaxed);
        }
}

//  In a job of several ranks (mpirun), every rank trains its own copy of
//  the model between epoch boundaries; at each boundary the weights and
//  biases become their mean over the ranks (model averaging) and the step
//  counter counts every rank's examples.  Nothing changes on one rank.
static int s_share (weir_stage *st, s_state *self, model_blob *m)
{
    if (self->eval)
        return 0;
    size_t floats = ((size_t) m->dim + 1) * m->row;
    if (weir_blob_reduce (st, self->blob, MODEL_HEADER_BYTES, floats, WEIR_REDUCE_FLOAT32, WEIR_REDUCE_MEAN)
        || weir_blob_reduce (st, self->blob, offsetof (model_blob, step), 1, WEIR_REDUCE_INT64,
                             WEIR_REDUCE_SUM))
        return -1;
    return 0;
}

//  Make the model for DIM rows (lock held): a new blob, laid out.
static model_blob *s_make (weir_stage *st, s_state *self, size_t dim)
{
    if (self->cfg.classes < 2) {
        weir_fail (st, "property 'classes' is required to train a new model (at least 2)");
        return NULL;
    }
    self->cfg.dim = dim;
    size_t bytes = model_bytes (self->cfg.classes, dim);
    int rc = model_config_check (&self->cfg);
    if (rc || !bytes) {
        weir_fail (st, "cannot make a model of %u classes and %zu rows: %s", self->cfg.classes, dim,
                   model_strerror (rc ? rc : MODEL_ECONFIG));
        return NULL;
    }
    model_blob *m = weir_blob (st, self->blob, bytes);
    if (!m)
        return NULL;
    if ((rc = model_init (m, bytes, &self->cfg))) {
        weir_fail (st, "blob '%s': %s", self->blob, model_strerror (rc));
        return NULL;
    }
    if (self->seed)
        s_randomize (m, self->cfg.classes, self->seed);
    if (s_share (st, self, m))
        return NULL;
    self->bytes = bytes;
    atomic_store_explicit (&self->model, m, memory_order_release);
    return m;
}

//  A model the workspace already holds (restored, or loaded from another
//  job): its shape is the model's, and properties may only agree.
static int s_adopt (weir_stage *st, s_state *self, void *mem, size_t size)
{
    const model_blob *m = mem;
    if (size < sizeof *m || m->magic != MODEL_MAGIC)
        return weir_fail (st, "blob '%s' is not a softmax model", self->blob);
    if (self->cfg.classes && self->cfg.classes != m->classes)
        return weir_fail (st, "classes=%u, but the model in blob '%s' has %u classes", self->cfg.classes,
                          self->blob, m->classes);
    if (self->cfg.dim && self->cfg.dim != m->dim)
        return weir_fail (st, "dim=%zu, but the model in blob '%s' has %llu rows", self->cfg.dim, self->blob,
                          (unsigned long long) m->dim);
    self->cfg.classes = m->classes;
    self->cfg.dim = (size_t) m->dim;
    self->cfg.indexing = (model_indexing) m->indexing;
    int rc = model_check (mem, size, &self->cfg);
    if (rc)
        return weir_fail (st, "blob '%s': %s", self->blob, model_strerror (rc));
    if (s_share (st, self, (model_blob *) mem))
        return -1;
    self->bytes = size;
    atomic_store_explicit (&self->model, (model_blob *) mem, memory_order_release);
    return 0;
}

//  validate=PATH: the held-out set, read now, and the progress of its
//  scores (restored with the blob on a resume)
static int s_validation_open (weir_stage *st, s_state *self)
{
    const char *path = weir_prop (st, "validate", "");
    if (!*path) {
        if (self->patience)
            return weir_fail (st, "patience=%llu needs validate=PATH: the scores it waits on",
                              (unsigned long long) self->patience);
        return 0;
    }
    if (self->eval)
        return weir_fail (st, "validate= is for training; mode=eval scores what it is given");
    char error[600];
    if (heldout_load (path, &self->val, error, sizeof error))
        return weir_fail (st, "%s", error);
    char name[256];
    snprintf (name, sizeof name, "%s.validation", self->blob);
    self->progress = weir_blob (st, name, sizeof (s_progress));
    return self->progress ? 0 : -1;
}

//  At an epoch's end, every thread having applied what it learned: score
//  the model on the held-out set, mark the checkpoint when it is the best
//  yet, stop the job when patience ran out
static int s_validate (weir_stage *st, s_state *self)
{
    model_blob *m = atomic_load_explicit (&self->model, memory_order_acquire);
    if (!m)
        return 0;  //  no record yet, no model to score
    double loss, accuracy;
    char error[600];
    if (heldout_score (self->val, m, self->scale_given, self->scale, &loss, &accuracy, error, sizeof error))
        return weir_fail (st, "%s", error);
    weir_metric_set (st, "val_loss", loss);
    weir_metric_set (st, "val_accuracy", accuracy);
    s_progress *p = self->progress;
    uint64_t epoch = weir_epoch (st);
    if (p->best_epoch == 0 || loss < p->best_loss) {
        p->best_loss = loss;
        p->best_epoch = epoch;
        p->since = 0;
        weir_checkpoint_best (st);
    }
    else if (++p->since >= self->patience && self->patience) {
        weir_metric_set (st, "stopped_early_at", (double) epoch);
        weir_stop (st);
    }
    weir_metric_set (st, "val_best_epoch", (double) p->best_epoch);
    return 0;
}

static int s_open (weir_stage *st, void **state)
{
    s_state *self = calloc (1, sizeof *self);
    if (!self)
        return weir_fail (st, "out of memory");
    pthread_mutex_init (&self->lock, NULL);
    atomic_init (&self->model, NULL);
    int rc = s_config (st, self);
    if (!rc)
        rc = s_validation_open (st, self);
    size_t size;
    void *mem = rc ? NULL : (void *) weir_blob_find (st, self->blob, &size);
    if (!rc && mem)
        rc = s_adopt (st, self, mem, size);
    else if (!rc && self->eval)
        rc = weir_fail (st, "mode=eval needs a trained model in blob '%s': load one with --load-blobs DIR",
                        self->blob);
    else if (!rc && self->cfg.dim && !s_make (st, self, self->cfg.dim))
        rc = -1;
    if (rc) {
        heldout_destroy (&self->val);
        pthread_mutex_destroy (&self->lock);
        free (self);
        return -1;
    }
    *state = self;
    return 0;
}

static void s_close (weir_stage *st, void *state)
{
    s_state *self = state;
    heldout_destroy (&self->val);
    pthread_mutex_destroy (&self->lock);
    free (self);
}

static int s_thread_open (weir_stage *st, void *state, void **tstate)
{
    s_thread *t = calloc (1, sizeof *t);
    if (!t)
        return weir_fail (st, "out of memory");
    t->state = state;
    *tstate = t;
    return 0;
}

//  Publish the thread's training statistics.
static void s_publish (weir_stage *st, s_thread *t)
{
    model_stats stats;
    model_worker_take_stats (t->worker, &stats);
    if (stats.examples) {
        weir_metric_set (st, "train_loss", stats.loss / (double) stats.examples);
        weir_metric_set (st, "train_accuracy", (double) stats.correct / (double) stats.examples);
    }
    t->since = 0;
}

static void s_thread_close (weir_stage *st, void *tstate)
{
    s_thread *t = tstate;
    if (t->worker) {
        model_worker_flush (t->worker);
        model_worker_destroy (&t->worker);
    }
    free (t->values);
    free (t->indexes);
    if (t->zone)
        msgpack_zone_free (t->zone);
    free (t);
}

static int s_epoch_end (weir_stage *st, void *tstate, uint64_t epoch)
{
    s_thread *t = tstate;
    s_state *self = t->state;
    //  The checkpoint that follows copies the blob: it must hold every
    //  example of the epoch
    if (t->worker) {
        model_worker_flush (t->worker);
        s_publish (st, t);
    }
    //  The last thread of the stage to get here scores: every other one
    //  has flushed its mini-batch into the model by then
    if (self->val && atomic_fetch_add (&self->arrived, 1) + 1 == weir_thread_count (st)) {
        atomic_store (&self->arrived, 0);
        if (s_validate (st, self))
            return -1;
    }
    if (self->eval) {
        uint64_t labeled = atomic_load (&self->labeled);
        if (labeled) {
            weir_metric_set (st, "eval_accuracy", (double) atomic_load (&self->correct) / (double) labeled);
            weir_metric_set (st, "eval_labeled", (double) labeled);
        }
    }
    return 0;
}

//  Room for N numbers (and indexes) in T's buffers.
static int s_room (weir_stage *st, s_thread *t, size_t n)
{
    if (n <= t->cap)
        return 0;
    size_t cap = t->cap ? t->cap : 1024;
    while (cap < n)
        cap *= 2;
    float *values = realloc (t->values, cap * sizeof *values);
    if (values)
        t->values = values;
    uint64_t *indexes = values ? realloc (t->indexes, cap * sizeof *indexes) : NULL;
    if (indexes)
        t->indexes = indexes;
    if (!values || !indexes)
        return weir_fail (st, "out of memory for a record of %zu features", n);
    t->cap = cap;
    return 0;
}

static int s_is_number (const msgpack_object *o, double *v)
{
    switch (o->type) {
    case MSGPACK_OBJECT_POSITIVE_INTEGER: *v = (double) o->via.u64; return 1;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: *v = (double) o->via.i64; return 1;
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: *v = o->via.f64; return 1;
    default: return 0;
    }
}

//  What a record's features are multiplied by: scale=, or else 1/255 for
//  bytes and 1 for numbers
static float s_scale (const s_state *self, int bytes)
{
    return self->scale_given ? self->scale : bytes ? 1.0f / 255.0f : 1.0f;
}

//  A record's features: decoded into T's buffers, or (S_BYTES, S_BINS)
//  where they lie in the record
typedef struct {
    enum { S_BYTES, S_DENSE, S_SPARSE, S_BINS } kind;
    const uint8_t *bytes;  //  S_BYTES, or S_BINS' indexes
    const uint8_t *items;  //  S_BINS' values
    size_t n;
    float scale;
} s_features;

//  Features [indexes, values] (F, an array of two whose first is a bin):
//  a sparse record's uint32 indexes and float32 values in two bins
static int s_sparse_bins (weir_stage *st, s_thread *t, const msgpack_object *f, s_features *out)
{
    const msgpack_object *index = &f->via.array.ptr[0], *value = &f->via.array.ptr[1];
    if (value->type != MSGPACK_OBJECT_BIN)
        return weir_fail (st, "features [indexes, values] must be two bins, but the values are a msgpack %s",
                          weir_type_name (value));
    if (!record_sparse_count (index->via.bin.size, value->via.bin.size, &out->n))
        return weir_fail (st,
                          "features [indexes, values] must hold as many little-endian uint32 indexes as "
                          "float32 values, 4 bytes each, but their bins have %" PRIu32 " and %" PRIu32
                          " bytes",
                          index->via.bin.size, value->via.bin.size);
    out->kind = S_SPARSE;
    if (s_room (st, t, out->n))
        return -1;
    model_sparse_le32 (index->via.bin.ptr, value->via.bin.ptr, out->n, t->indexes, t->values);
    return 0;
}

static int s_features_of (weir_stage *st, s_thread *t, const msgpack_object *f, s_features *out)
{
    s_state *self = t->state;
    out->scale = s_scale (self, f->type == MSGPACK_OBJECT_BIN);
    double v;
    switch (f->type) {
    case MSGPACK_OBJECT_BIN:
        out->kind = S_BYTES;
        out->bytes = (const uint8_t *) f->via.bin.ptr;
        out->n = f->via.bin.size;
        return 0;
    case MSGPACK_OBJECT_ARRAY:
        if (f->via.array.size == 2 && f->via.array.ptr[0].type == MSGPACK_OBJECT_BIN)
            return s_sparse_bins (st, t, f, out);
        out->kind = S_DENSE;
        out->n = f->via.array.size;
        if (s_room (st, t, out->n))
            return -1;
        for (size_t i = 0; i < out->n; i++) {
            if (!s_is_number (&f->via.array.ptr[i], &v))
                return weir_fail (st, "feature %zu of a dense record is not a number but a msgpack %s", i,
                                  weir_type_name (&f->via.array.ptr[i]));
            t->values[i] = (float) v;
        }
        return 0;
    case MSGPACK_OBJECT_MAP:
        out->kind = S_SPARSE;
        out->n = f->via.map.size;
        if (s_room (st, t, out->n))
            return -1;
        for (size_t i = 0; i < out->n; i++) {
            const msgpack_object_kv *kv = &f->via.map.ptr[i];
            if (kv->key.type != MSGPACK_OBJECT_POSITIVE_INTEGER)
                return weir_fail (st, "a sparse record's key is not an index but a msgpack %s",
                                  weir_type_name (&kv->key));
            if (!s_is_number (&kv->val, &v))
                return weir_fail (st, "the value of index %llu is not a number but a msgpack %s",
                                  (unsigned long long) kv->key.via.u64, weir_type_name (&kv->val));
            t->indexes[i] = kv->key.via.u64;
            t->values[i] = (float) v;
        }
        return 0;
    default:
        return weir_fail (st,
                          "features must be a bin, an array of numbers, a map {index: number} or [indexes, "
                          "values] (two bins), not a msgpack %s",
                          weir_type_name (f));
    }
}

//  The model, made from the first record when no property fixed its size.
//  In a job of several ranks, a rank that had no record by the end of an
//  epoch in which others made the model was given theirs at the boundary
//  (the engine hands a rank that declared no reduced regions those of the
//  lowest rank that did, with their blobs): it takes that one, so every
//  rank trains a model of one shape without dim=.
static model_blob *s_model (weir_stage *st, s_state *self, const s_features *f)
{
    model_blob *m = atomic_load_explicit (&self->model, memory_order_acquire);
    if (m)
        return m;
    pthread_mutex_lock (&self->lock);
    m = atomic_load_explicit (&self->model, memory_order_relaxed);
    size_t size;
    void *given = m ? NULL : (void *) weir_blob_find (st, self->blob, &size);
    if (given)
        m = s_adopt (st, self, given, size) ? NULL : given;
    else if (!m)
        m = s_make (st, self, f->kind == S_SPARSE || f->kind == S_BINS ? S_SPARSE_DIM : f->n);
    pthread_mutex_unlock (&self->lock);
    return m;
}

//  The message for a record the model refused with RC
static int s_refused (weir_stage *st, s_thread *t, const model_blob *m, const char *what, const s_features *f,
                      int rc)
{
    //  The index that has no row, by name
    if (rc == MODEL_EINDEX && f->kind == S_BINS) {
        if (s_room (st, t, f->n))
            return -1;
        model_sparse_le32 (f->bytes, f->items, f->n, t->indexes, t->values);
    }
    for (size_t i = 0; rc == MODEL_EINDEX && i < f->n; i++)
        if (t->indexes[i] >= m->dim)
            return weir_fail (st,
                              "%s: index %llu, but the model has %llu rows (indexing=direct keeps index i in "
                              "row i; indexing=hash folds every index into them)",
                              what, (unsigned long long) t->indexes[i], (unsigned long long) m->dim);
    return weir_fail (st, "%s: %s", what, model_strerror (rc));
}

static int s_train (weir_stage *st, s_thread *t, model_blob *m, unsigned label, const s_features *f)
{
    s_state *self = t->state;
    if (!t->worker && !(t->worker = model_worker_new (&self->cfg)))
        return weir_fail (st, "out of memory for a training thread");
    int rc;
    if (f->kind == S_BYTES)
        rc = model_worker_add_dense_u8 (t->worker, m, label, f->bytes, f->n, f->scale);
    else if (f->kind == S_DENSE)
        rc = model_worker_add_dense_f32 (t->worker, m, label, t->values, f->n, f->scale);
    else if (f->kind == S_BINS)
        rc = model_worker_add_sparse_le32 (t->worker, m, label, f->bytes, f->items, f->n, f->scale);
    else
        rc = model_worker_add_sparse (t->worker, m, label, t->indexes, t->values, f->n, f->scale);
    if (rc) {
        char what[64];
        snprintf (what, sizeof what, "a record of label %u", label);
        return s_refused (st, t, m, what, f, rc);
    }
    if (++t->since >= S_PUBLISH_EVERY)
        s_publish (st, t);
    return 0;
}

static int s_predict (weir_stage *st, s_thread *t, model_blob *m, const msgpack_object *label,
                      const s_features *f)
{
    s_state *self = t->state;
    int predicted;
    assert (f->kind != S_BINS);  //  eval reads bins into T's arrays (s_process_bytes)
    if (f->kind == S_BYTES)
        predicted = model_predict_dense_u8 (m, f->bytes, f->n, f->scale, NULL);
    else if (f->kind == S_DENSE)
        predicted = model_predict_dense_f32 (m, t->values, f->n, f->scale, NULL);
    else
        predicted = model_predict_sparse (m, t->indexes, t->values, f->n, f->scale, NULL);
    if (predicted < 0)
        return s_refused (st, t, m, "cannot score a record", f, predicted);
    if (label && label->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
        atomic_fetch_add_explicit (&self->labeled, 1, memory_order_relaxed);
        if (label->via.u64 == (uint64_t) predicted)
            atomic_fetch_add_explicit (&self->correct, 1, memory_order_relaxed);
    }
    msgpack_pack_uint64 (weir_packer (st), (uint64_t) predicted);
    return weir_emit_packed (st);
}

//  A record whose LABEL and features F are read: trained on or scored
static int s_learn (weir_stage *st, s_thread *t, const msgpack_object *label, const s_features *f)
{
    s_state *self = t->state;
    model_blob *m = s_model (st, self, f);
    if (!m)
        return -1;
    if (self->eval)
        return s_predict (st, t, m, label, f);
    if (label->type != MSGPACK_OBJECT_POSITIVE_INTEGER || label->via.u64 >= m->classes)
        return weir_fail (st, "a label must be an integer from 0 to %u", m->classes - 1);
    return s_train (st, t, m, (unsigned) label->via.u64, f);
}

static int s_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    s_thread *t = tstate;
    if (rec->type != MSGPACK_OBJECT_ARRAY || rec->via.array.size != 2)
        return weir_fail (st, "a record must be [label, features], not a msgpack %s%s", weir_type_name (rec),
                          rec->type == MSGPACK_OBJECT_ARRAY ? " of another length" : "");
    s_features f = {0};
    if (s_features_of (st, t, &rec->via.array.ptr[1], &f))
        return -1;
    return s_learn (st, t, &rec->via.array.ptr[0], &f);
}

//  A record of a form record.h does not read, decoded as objects
static int s_process_decoded (weir_stage *st, s_thread *t, const char *data, size_t len)
{
    if (!t->zone && !(t->zone = msgpack_zone_new (MSGPACK_ZONE_CHUNK_SIZE)))
        return weir_fail (st, "out of memory");
    msgpack_zone_clear (t->zone);
    msgpack_object rec;
    size_t off = 0;
    msgpack_unpack_return rc = msgpack_unpack (data, len, &off, t->zone, &rec);
    if (rc == MSGPACK_UNPACK_NOMEM_ERROR)
        return weir_fail (st, "out of memory decoding a record of %zu bytes", len);
    if (rc != MSGPACK_UNPACK_SUCCESS)
        return weir_fail (st, "a record of %zu bytes cannot be decoded (msgpack error %d)", len, (int) rc);
    return s_process (st, t, &rec);
}

//  The engine's record bytes: the forms nearly all data has, read
//  straight into T's arrays (record.h), or for bytes and, in training,
//  bins taken where they lie; any other, decoded
static int s_process_bytes (weir_stage *st, void *tstate, const char *data, size_t len)
{
    s_thread *t = tstate;
    s_state *self = t->state;
    record_head h;
    if (!record_head_parse (data, len, &h) || (!h.labeled && !self->eval))
        return s_process_decoded (st, t, data, len);
    s_features f = {.n = h.n, .scale = s_scale (self, h.form == RECORD_BYTES)};
    if (h.form == RECORD_BYTES) {
        f.kind = S_BYTES;
        f.bytes = h.bytes;
    }
    else if (h.form == RECORD_SPARSE && !self->eval) {
        //  Trained on where they lie (model_worker_add_sparse_le32)
        f.kind = S_BINS;
        f.bytes = h.bytes;
        f.items = h.items;
    }
    else {
        if (s_room (st, t, h.n))
            return -1;
        f.kind = h.form == RECORD_NUMBERS ? S_DENSE : S_SPARSE;
        if (h.form == RECORD_SPARSE)
            model_sparse_le32 (h.bytes, h.items, h.n, t->indexes, t->values);
        else if (!(h.form == RECORD_PAIRS ? record_pairs (&h, t->indexes, t->values)
                                          : record_numbers (&h, t->values)))
            return s_process_decoded (st, t, data, len);
    }
    msgpack_object label = {.type = MSGPACK_OBJECT_NIL};
    if (h.labeled) {
        label.type = MSGPACK_OBJECT_POSITIVE_INTEGER;
        label.via.u64 = h.label;
    }
    return s_learn (st, t, &label, &f);
}

//  What 'weir elements' and 'weir plugin' show of it (the README's table)
static const weir_property_info s_props[] = {
    {"classes", NULL, "number of labels (2 or more); required for a new model"},
    {"dim", "0", "features per example; 0 takes the first dense record's length, or 2^18 rows for sparse"},
    {"indexing", "hash",
     "hash folds sparse indexes into dim rows; direct keeps index i in row i and refuses a training record "
     "with an index of dim or more (a record whose rows all lie below 8 times its nonzero features is "
     "learned with the dense loops)"},
    {"scale", "", "multiplies each feature (1/255 for bytes when not given, 1 for numbers)"},
    {"lr", "0.2", "learning rate of a mini-batch's mean gradient"},
    {"schedule", "inv", "inv, invsqrt or constant: how lr decays with the examples learned"},
    {"decay", "5e-5", "the schedule's decay, per example"},
    {"l2", "0", "L2 penalty on the weights"},
    {"minibatch", "16", "examples each thread gathers before it updates its copy of the model"},
    {"push", "8",
     "mini-batches each thread learns on its own copy of the model before it writes them into the "
     "shared one (1: every one)"},
    {"seed", "0", "0 starts from zero weights; another value draws small random ones"},
    {"blob", "softmax", "the workspace blob that holds the model"},
    {"mode", "train", "train, or eval: emit each record's predicted label and report eval_accuracy"},
    {"validate", "",
     "a msgpack file of held-out records, scored at every epoch's end (val_loss, val_accuracy); "
     "the best epoch's checkpoint is marked (--load-blobs DIR:best)"},
    {"patience", "0",
     "with validate=: stop the job after this many epochs without a lower val_loss (0: never)"},
    {NULL, NULL, NULL},
};

static const weir_processor s_softmax = {
    WEIR_PROCESSOR_INIT,
    .name = "softmax",
    .description =
        "multinomial logistic regression, trained hogwild by every thread, or evaluated (mode=eval)",
    .open = s_open,
    .thread_open = s_thread_open,
    .process = s_process,
    .process_bytes = s_process_bytes,
    .epoch_end = s_epoch_end,
    .thread_close = s_thread_close,
    .close = s_close,
    .props = s_props,
};

const weir_processor *weir_plugin_processor (void)
{
    return &s_softmax;
}

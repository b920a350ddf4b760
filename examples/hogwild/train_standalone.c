/*  examples/hogwild/train_standalone.c - trains model.h's model on msgpack
    files of [label, features] records, as the hogwild plugin will,
    without weir.

        train_standalone [OPTIONS] TRAIN TEST

    TRAIN and TEST are msgpack streams as idx2msgpack writes them: each
    record [label, features], features a bin (dense bytes, times --scale),
    an array of numbers (dense, times --scale) or a map {index: number}
    (sparse, times --scale).  The records are decoded into memory first,
    so that the timings are the learning alone.

    Threads share one model and take the training records in batches of
    256 from a common cursor, as weir's runtime threads take batches.  At
    the end of every pass every thread flushes its pending mini-batch (as
    the plugin does at an epoch end) and the test set is scored while the
    threads wait; that time is not counted.

    Prints one JSON object on stdout: the settings, train_seconds,
    examples_per_second, the final test accuracy and a curve of
    [train seconds, test accuracy, mean training loss] after each pass.

    --save FILE writes the model memory at the end and --load FILE starts
    from one, so that a run can be cut in two and compared with an
    uninterrupted one (with --threads 1 the weights must be identical).

    Build: cc -std=gnu11 -O2 train_standalone.c model.c worker.c predict.c -lmsgpackc -lm -lpthread  */
#include "model.h"

#include <errno.h>
#include <getopt.h>
#include <msgpack.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define S_CLAIM 256  //  records a thread takes at a time, as a weir batch

enum { S_BIN, S_ARRAY, S_MAP };

typedef struct {
    unsigned label;
    int kind;
    size_t n;   //  features (bytes, numbers or pairs)
    size_t at;  //  offset into the set's pool of that kind
} s_example;

typedef struct {
    s_example *ex;
    size_t count, cap;
    uint8_t *bytes;   //  S_BIN features
    float *nums;      //  S_ARRAY features and S_MAP values
    uint64_t *index;  //  S_MAP keys
    size_t nbytes, nnums, cap_bytes, cap_nums, cap_index;
} s_set;

typedef struct {
    model_config cfg;
    float scale;
    unsigned threads, passes;
    size_t limit;
    const char *save, *load;
} s_options;

//  Everything the threads share
typedef struct {
    const s_options *opt;
    const s_set *train;
    model_blob *m;
    atomic_size_t cursor;  //  next record to claim in this pass
    pthread_barrier_t pass_done, pass_go;
    pthread_mutex_t lock;  //  guards stats
    model_stats stats;
    int error;
} s_shared;

static void s_die (const char *fmt, ...) __attribute__ ((format (printf, 1, 2), noreturn));

static void s_die (const char *fmt, ...)
{
    va_list ap;
    fprintf (stderr, "train_standalone: ");
    va_start (ap, fmt);
    vfprintf (stderr, fmt, ap);
    va_end (ap);
    fputc ('\n', stderr);
    exit (1);
}

static void *s_grow (void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return p;
    size_t cap2 = *cap ? *cap : 1024;
    while (cap2 < need)
        cap2 *= 2;
    p = realloc (p, cap2 * size);
    if (!p)
        s_die ("out of memory");
    *cap = cap2;
    return p;
}

static int s_number (const msgpack_object *o, float *out)
{
    switch (o->type) {
    case MSGPACK_OBJECT_POSITIVE_INTEGER: *out = (float) o->via.u64; return 0;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: *out = (float) o->via.i64; return 0;
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: *out = (float) o->via.f64; return 0;
    default: return -1;
    }
}

//  Decode one record into SET; -1 when it is not [label, features]
static int s_add (s_set *set, const msgpack_object *rec)
{
    if (rec->type != MSGPACK_OBJECT_ARRAY || rec->via.array.size != 2)
        return -1;
    const msgpack_object *label = &rec->via.array.ptr[0], *f = &rec->via.array.ptr[1];
    if (label->type != MSGPACK_OBJECT_POSITIVE_INTEGER || label->via.u64 > UINT32_MAX)
        return -1;
    set->ex = s_grow (set->ex, &set->cap, set->count + 1, sizeof *set->ex);
    s_example *e = &set->ex[set->count];
    e->label = (unsigned) label->via.u64;
    if (f->type == MSGPACK_OBJECT_BIN) {
        e->kind = S_BIN;
        e->n = f->via.bin.size;
        e->at = set->nbytes;
        set->bytes = s_grow (set->bytes, &set->cap_bytes, set->nbytes + e->n, 1);
        memcpy (set->bytes + e->at, f->via.bin.ptr, e->n);
        set->nbytes += e->n;
    }
    else if (f->type == MSGPACK_OBJECT_ARRAY) {
        e->kind = S_ARRAY;
        e->n = f->via.array.size;
        e->at = set->nnums;
        set->nums = s_grow (set->nums, &set->cap_nums, set->nnums + e->n, sizeof *set->nums);
        for (size_t j = 0; j < e->n; j++)
            if (s_number (&f->via.array.ptr[j], &set->nums[e->at + j]))
                return -1;
        set->nnums += e->n;
    }
    else if (f->type == MSGPACK_OBJECT_MAP) {
        e->kind = S_MAP;
        e->n = f->via.map.size;
        e->at = set->nnums;
        set->nums = s_grow (set->nums, &set->cap_nums, set->nnums + e->n, sizeof *set->nums);
        set->index = s_grow (set->index, &set->cap_index, set->nnums + e->n, sizeof *set->index);
        for (size_t j = 0; j < e->n; j++) {
            const msgpack_object_kv *kv = &f->via.map.ptr[j];
            if (kv->key.type != MSGPACK_OBJECT_POSITIVE_INTEGER || s_number (&kv->val, &set->nums[e->at + j]))
                return -1;
            set->index[e->at + j] = kv->key.via.u64;
        }
        set->nnums += e->n;
    }
    else
        return -1;
    set->count++;
    return 0;
}

static void s_load_set (s_set *set, const char *path, size_t limit)
{
    memset (set, 0, sizeof *set);
    FILE *fp = fopen (path, "rb");
    if (!fp)
        s_die ("cannot open %s", path);
    msgpack_unpacker up;
    if (!msgpack_unpacker_init (&up, 1 << 20))
        s_die ("out of memory");
    msgpack_unpacked rec;
    msgpack_unpacked_init (&rec);
    for (;;) {
        if (!msgpack_unpacker_reserve_buffer (&up, 1 << 20))
            s_die ("out of memory");
        size_t got = fread (msgpack_unpacker_buffer (&up), 1, msgpack_unpacker_buffer_capacity (&up), fp);
        msgpack_unpacker_buffer_consumed (&up, got);
        msgpack_unpack_return rc;
        while (set->count < limit && (rc = msgpack_unpacker_next (&up, &rec)) == MSGPACK_UNPACK_SUCCESS)
            if (s_add (set, &rec.data))
                s_die ("%s: a record is not [label, bin|array|map of numbers]", path);
        if (set->count >= limit)
            break;
        if (rc == MSGPACK_UNPACK_PARSE_ERROR)
            s_die ("%s: not a msgpack stream", path);
        if (got == 0) {
            if (ferror (fp))
                s_die ("cannot read %s", path);
            if (msgpack_unpacker_message_size (&up))
                s_die ("%s: truncated record at the end", path);
            break;
        }
    }
    msgpack_unpacked_destroy (&rec);
    msgpack_unpacker_destroy (&up);
    fclose (fp);
}

static double s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static int s_train_one (model_worker *w, model_blob *m, const s_set *set, const s_example *e, float scale)
{
    switch (e->kind) {
    case S_BIN: return model_worker_add_dense_u8 (w, m, e->label, set->bytes + e->at, e->n, scale);
    case S_ARRAY: return model_worker_add_dense_f32 (w, m, e->label, set->nums + e->at, e->n, scale);
    default:
        return model_worker_add_sparse (w, m, e->label, set->index + e->at, set->nums + e->at, e->n, scale);
    }
}

static int s_predict_one (model_blob *m, const s_set *set, const s_example *e, float scale)
{
    switch (e->kind) {
    case S_BIN: return model_predict_dense_u8 (m, set->bytes + e->at, e->n, scale, NULL);
    case S_ARRAY: return model_predict_dense_f32 (m, set->nums + e->at, e->n, scale, NULL);
    default: return model_predict_sparse (m, set->index + e->at, set->nums + e->at, e->n, scale, NULL);
    }
}

static void *s_thread (void *arg)
{
    s_shared *sh = arg;
    const s_options *opt = sh->opt;
    model_worker *w = model_worker_new (&opt->cfg);
    int error = w ? 0 : MODEL_ENOMEM;
    for (unsigned pass = 0; pass < opt->passes; pass++) {
        for (;;) {
            size_t from = atomic_fetch_add (&sh->cursor, S_CLAIM);
            if (from >= sh->train->count || error)
                break;
            size_t to = from + S_CLAIM < sh->train->count ? from + S_CLAIM : sh->train->count;
            for (size_t i = from; i < to && !error; i++)
                error = s_train_one (w, sh->m, sh->train, &sh->train->ex[i], opt->scale);
        }
        //  The epoch end: the pending mini-batch goes into the model
        model_stats st = {0};
        if (w) {
            model_worker_flush (w);
            model_worker_take_stats (w, &st);
        }
        pthread_mutex_lock (&sh->lock);
        sh->stats.examples += st.examples;
        sh->stats.loss += st.loss;
        sh->stats.correct += st.correct;
        if (error && !sh->error)
            sh->error = error;
        pthread_mutex_unlock (&sh->lock);
        pthread_barrier_wait (&sh->pass_done);
        pthread_barrier_wait (&sh->pass_go);
    }
    model_worker_destroy (&w);
    return NULL;
}

static double s_accuracy (model_blob *m, const s_set *test, float scale)
{
    size_t right = 0;
    for (size_t i = 0; i < test->count; i++) {
        int label = s_predict_one (m, test, &test->ex[i], scale);
        if (label < 0)
            s_die ("cannot score a test record: %s", model_strerror (label));
        right += (unsigned) label == test->ex[i].label;
    }
    return test->count ? (double) right / (double) test->count : 0;
}

static void s_usage (FILE *out)
{
    fprintf (out, "usage: train_standalone [--threads N] [--passes P] [--minibatch B] [--lr LR]\n"
                  "         [--schedule constant|inv|invsqrt] [--decay D] [--l2 L2] [--dim DIM]\n"
                  "         [--indexing hash|direct] [--classes C] [--scale S] [--limit N]\n"
                  "         [--save FILE] [--load FILE] TRAIN TEST\n");
}

static double s_num (const char *s, const char *what)
{
    char *end;
    errno = 0;
    double v = strtod (s, &end);
    if (errno || end == s || *end) {
        fprintf (stderr, "train_standalone: %s: not a number: '%s'\n", what, s);
        exit (2);
    }
    return v;
}

//  The value named by --schedule, and by --indexing: 0 and *OUT, or -1
//  for a name that is none
static int s_schedule (const char *name, model_schedule *out)
{
    if (!strcmp (name, "constant"))
        *out = MODEL_LR_CONSTANT;
    else if (!strcmp (name, "inv"))
        *out = MODEL_LR_INV;
    else if (!strcmp (name, "invsqrt"))
        *out = MODEL_LR_INVSQRT;
    else
        return -1;
    return 0;
}

static int s_indexing (const char *name, model_indexing *out)
{
    if (!strcmp (name, "hash"))
        *out = MODEL_INDEX_HASH;
    else if (!strcmp (name, "direct"))
        *out = MODEL_INDEX_DIRECT;
    else
        return -1;
    return 0;
}

//  The options into OPT (*DIM_GIVEN when --dim is one), the operands left
//  at optind: -1 to go on, or the exit status (0 after --help, 2 for a
//  wrong command line)
static int s_parse_options (int argc, char **argv, s_options *opt, int *dim_given)
{
    static const struct option longs[] = {
        {"threads", 1, 0, 't'},  {"passes", 1, 0, 'p'},  {"minibatch", 1, 0, 'b'}, {"lr", 1, 0, 'r'},
        {"schedule", 1, 0, 's'}, {"decay", 1, 0, 'd'},   {"l2", 1, 0, 'l'},        {"dim", 1, 0, 'D'},
        {"indexing", 1, 0, 'i'}, {"classes", 1, 0, 'c'}, {"scale", 1, 0, 'S'},     {"limit", 1, 0, 'n'},
        {"save", 1, 0, 'w'},     {"load", 1, 0, 'L'},    {"help", 0, 0, 'h'},      {0, 0, 0, 0},
    };
    int ch;
    while ((ch = getopt_long (argc, argv, "h", longs, NULL)) != -1) {
        switch (ch) {
        case 't': opt->threads = (unsigned) s_num (optarg, "--threads"); break;
        case 'p': opt->passes = (unsigned) s_num (optarg, "--passes"); break;
        case 'b': opt->cfg.minibatch = (unsigned) s_num (optarg, "--minibatch"); break;
        case 'r': opt->cfg.lr = (float) s_num (optarg, "--lr"); break;
        case 'd': opt->cfg.decay = (float) s_num (optarg, "--decay"); break;
        case 'l': opt->cfg.l2 = (float) s_num (optarg, "--l2"); break;
        case 'D':
            opt->cfg.dim = (size_t) s_num (optarg, "--dim");
            *dim_given = 1;
            break;
        case 'c': opt->cfg.classes = (unsigned) s_num (optarg, "--classes"); break;
        case 'S': opt->scale = (float) s_num (optarg, "--scale"); break;
        case 'n': opt->limit = (size_t) s_num (optarg, "--limit"); break;
        case 'w': opt->save = optarg; break;
        case 'L': opt->load = optarg; break;
        case 's':
            if (s_schedule (optarg, &opt->cfg.schedule)) {
                s_usage (stderr);
                return 2;
            }
            break;
        case 'i':
            if (s_indexing (optarg, &opt->cfg.indexing)) {
                s_usage (stderr);
                return 2;
            }
            break;
        case 'h': s_usage (stdout); return 0;
        default: s_usage (stderr); return 2;
        }
    }
    if (argc - optind != 2 || opt->threads < 1 || opt->threads > 256) {
        s_usage (stderr);
        return 2;
    }
    if (model_config_check (&opt->cfg)) {
        fprintf (stderr, "train_standalone: %s\n", model_strerror (MODEL_ECONFIG));
        return 2;
    }
    return -1;
}

//  The model memory of OPT's shape, SIZE bytes: read from --load, or laid
//  out fresh
static void *s_model_memory (const s_options *opt, size_t size)
{
    void *mem = aligned_alloc (64, (size + 63) / 64 * 64);
    if (!mem)
        s_die ("out of memory");
    if (opt->load) {
        FILE *fp = fopen (opt->load, "rb");
        if (!fp || fread (mem, 1, size, fp) != size || fgetc (fp) != EOF)
            s_die ("%s: cannot read a model of this shape", opt->load);
        fclose (fp);
        if (model_check (mem, size, &opt->cfg))
            s_die ("%s: not a model of this shape", opt->load);
    }
    else if (model_init (mem, size, &opt->cfg))
        s_die ("cannot lay out the model");
    return mem;
}

//  What training measured: the time in passes, the last test accuracy,
//  and the curve of each pass as JSON arrays
typedef struct {
    double train_seconds, accuracy;
    char curve[16384];
    size_t used;
} s_result;

//  A pass's end, while the threads wait at pass_go and the model is
//  still: its statistics and the test accuracy into R's curve
static void s_score_pass (s_shared *sh, const s_set *test, unsigned pass, s_result *r)
{
    pthread_mutex_lock (&sh->lock);
    model_stats st = sh->stats;
    memset (&sh->stats, 0, sizeof sh->stats);
    int error = sh->error;
    pthread_mutex_unlock (&sh->lock);
    if (error)
        s_die ("training failed: %s", model_strerror (error));
    r->accuracy = s_accuracy (sh->m, test, sh->opt->scale);
    r->used += (size_t) snprintf (r->curve + r->used, sizeof r->curve - r->used, "%s[%.3f, %.4f, %.4f]",
                                  pass ? ", " : "", r->train_seconds, r->accuracy,
                                  st.examples ? st.loss / (double) st.examples : 0);
    if (r->used >= sizeof r->curve)
        s_die ("too many passes to print");
}

//  Train M on TRAIN for OPT's passes with OPT's threads, scoring TEST
//  after each pass
static void s_train (const s_options *opt, const s_set *train, const s_set *test, model_blob *m, s_result *r)
{
    s_shared sh = {.opt = opt, .train = train, .m = m};
    pthread_barrier_init (&sh.pass_done, NULL, opt->threads + 1);
    pthread_barrier_init (&sh.pass_go, NULL, opt->threads + 1);
    pthread_mutex_init (&sh.lock, NULL);
    pthread_t *tid = calloc (opt->threads, sizeof *tid);
    double started = s_now ();
    for (unsigned t = 0; t < opt->threads; t++)
        if (pthread_create (&tid[t], NULL, s_thread, &sh))
            s_die ("cannot start a thread");
    for (unsigned pass = 0; pass < opt->passes; pass++) {
        pthread_barrier_wait (&sh.pass_done);
        r->train_seconds += s_now () - started;
        s_score_pass (&sh, test, pass, r);
        atomic_store (&sh.cursor, 0);
        started = s_now ();
        pthread_barrier_wait (&sh.pass_go);
    }
    for (unsigned t = 0; t < opt->threads; t++)
        pthread_join (tid[t], NULL);
    if (opt->passes == 0)
        r->accuracy = s_accuracy (m, test, opt->scale);
    pthread_barrier_destroy (&sh.pass_done);
    pthread_barrier_destroy (&sh.pass_go);
    pthread_mutex_destroy (&sh.lock);
    free (tid);
}

//  The one JSON object of the run
static void s_print (const s_options *opt, const s_set *train, const s_set *test, model_blob *m,
                     double load_seconds, const s_result *r)
{
    static const char *schedules[] = {"constant", "inv", "invsqrt"};
    double examples = (double) train->count * opt->passes;
    printf (
        "{\"threads\": %u, \"passes\": %u, \"train_examples\": %zu, \"test_examples\": %zu, "
        "\"minibatch\": %u, \"lr\": %g, \"schedule\": \"%s\", \"decay\": %g, \"l2\": %g, \"dim\": %zu, "
        "\"steps\": %llu, \"load_seconds\": %.3f, \"train_seconds\": %.3f, \"examples_per_second\": %.0f, "
        "\"accuracy\": %.4f, \"curve\": [%s]}\n",
        opt->threads, opt->passes, train->count, test->count, opt->cfg.minibatch, opt->cfg.lr,
        schedules[opt->cfg.schedule], opt->cfg.decay, opt->cfg.l2, opt->cfg.dim,
        (unsigned long long) atomic_load (&m->step), load_seconds, r->train_seconds,
        r->train_seconds > 0 ? examples / r->train_seconds : 0, r->accuracy, r->curve);
}

static void s_set_release (s_set *set)
{
    free (set->ex);
    free (set->bytes);
    free (set->nums);
    free (set->index);
}

int main (int argc, char **argv)
{
    s_options opt = {.scale = 1.0f / 255, .threads = 1, .passes = 10, .limit = SIZE_MAX};
    model_config_defaults (&opt.cfg, 10, 784);
    int dim_given = 0;
    int status = s_parse_options (argc, argv, &opt, &dim_given);
    if (status >= 0)
        return status;

    double t0 = s_now ();
    s_set train, test;
    s_load_set (&train, argv[optind], opt.limit);
    s_load_set (&test, argv[optind + 1], SIZE_MAX);
    //  Sparse records get 2^18 hashed columns unless --dim says otherwise
    if (!dim_given && train.count && train.ex[0].kind == S_MAP)
        opt.cfg.dim = (size_t) 1 << 18;
    size_t size = model_bytes (opt.cfg.classes, opt.cfg.dim);
    void *mem = s_model_memory (&opt, size);
    model_blob *m = mem;
    double loaded = s_now ();

    s_result r = {0};
    s_train (&opt, &train, &test, m, &r);
    if (opt.save) {
        FILE *fp = fopen (opt.save, "wb");
        if (!fp || fwrite (mem, 1, size, fp) != size || fclose (fp))
            s_die ("cannot write %s", opt.save);
    }
    s_print (&opt, &train, &test, m, loaded - t0, &r);
    free (mem);
    s_set_release (&train);
    s_set_release (&test);
    return 0;
}

/*  bench/checkpoint_bench.c - what checkpoints cost.

    Prints one JSON document:
    - the pause of the pipe at an epoch end (last thread at the barrier to
      release) with 1 MB, 64 MB and 512 MB of blobs, synchronous and
      asynchronous, beside, in the same run, a plain memcpy of the blobs and
      a raw LevelDB synced WriteBatch of the same bytes (4 MiB values, as
      weir stores them);
    - the throughput of a per-record pipe with a checkpoint every 100k
      records against the same pipe without checkpoints, interleaved.

        checkpoint_bench [--quick] [--sizes 1,64,512] [--repeat N]

    Targets (issue 3): async pause within 2x the memcpy; sync pause within
    1.5x the raw LevelDB write; under 5 % of throughput lost to
    checkpoints every 100k records.  */
#include <leveldb/c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <weir/plugin.h>
#include <weir/weir.h>

static double s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static int s_cmp (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static double s_median (double *v, int n)
{
    qsort (v, (size_t) n, sizeof *v, s_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static char s_dir[256];

static void s_rmdir (const char *path)
{
    char cmd[512];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system (cmd) != 0)
        fprintf (stderr, "checkpoint_bench: cannot remove %s\n", path);
}

//  A processor that owns a blob of 'size' MB and touches one byte of it
//  per record, so that the blob is live model state.
static int s_model_open (weir_stage *st, void **state)
{
    size_t size = (size_t) strtoull (weir_prop (st, "mb", "1"), NULL, 10) << 20;
    unsigned char *blob = weir_blob (st, "model", size);
    if (!blob)
        return -1;
    memset (blob, 1, size);
    *state = blob;
    return 0;
}

static int s_model_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    unsigned char *blob = tstate;
    blob[rec->via.u64 & 4095] += 1;
    return weir_emit (st, rec);
}

static const weir_processor s_model = {
    WEIR_PROCESSOR_INIT,        .name = "model", .description = "a blob of mb= MB", .open = s_model_open,
    .process = s_model_process,
};

static int s_repack (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    return weir_emit (st, rec);
}

static const weir_processor s_repacker = {
    WEIR_PROCESSOR_INIT,
    .name = "repack",
    .description = "re-emits every record",
    .process = s_repack,
};

//  A new pipe; only a lack of memory refuses one, and ends the benchmark.
static weir_pipe *s_new_pipe (void)
{
    weir_pipe *pipe;
    if (weir_pipe_new (&pipe)) {
        fprintf (stderr, "checkpoint_bench: out of memory\n");
        exit (1);
    }
    return pipe;
}

//  Average pause over the epoch ends of a pipe holding MB of blobs.
static double s_pause (unsigned mb, int async, int epochs)
{
    char dir[300], prop[32];
    snprintf (dir, sizeof dir, "%s/ck", s_dir);
    s_rmdir (dir);
    snprintf (prop, sizeof prop, "mb=%u", mb);
    const char *rp[] = {"count=10G", NULL};
    const char *mp[] = {prop, NULL};
    weir_pipe *pipe = s_new_pipe ();
    weir_pipe_add (pipe, "range", rp);
    weir_pipe_add_processor (pipe, &s_model, NULL, mp);
    weir_pipe_add (pipe, "null", NULL);
    weir_pipe_set_checkpoint (pipe, dir);
    weir_pipe_set_keep (pipe, 2);
    weir_pipe_set_async_checkpoint (pipe, async);
    //  Epochs long enough for an asynchronous write to finish in the
    //  background, as it would in a real job
    weir_pipe_set_epoch_seconds (pipe, mb >= 256 ? 4 : 0.5);
    weir_pipe_set_epochs (pipe, (uint64_t) epochs);
    if (weir_pipe_run (pipe)) {
        fprintf (stderr, "checkpoint_bench: %s\n", weir_pipe_error (pipe));
        exit (1);
    }
    uint64_t count;
    double total, longest;
    weir_pipe_pauses (pipe, &count, &total, &longest);
    weir_pipe_destroy (&pipe);
    s_rmdir (dir);
    return count ? total / (double) count : 0;
}

static double s_memcpy (unsigned mb)
{
    size_t size = (size_t) mb << 20;
    char *a = malloc (size), *b = malloc (size);
    memset (a, 1, size);
    memset (b, 2, size);
    double t = s_now ();
    memcpy (b, a, size);
    t = s_now () - t;
    if (b[size - 1] != 1)
        exit (1);
    free (a);
    free (b);
    return t;
}

static double s_leveldb (unsigned mb)
{
    char dir[300];
    snprintf (dir, sizeof dir, "%s/raw", s_dir);
    s_rmdir (dir);
    size_t size = (size_t) mb << 20, chunk = (size_t) 4 << 20;
    char *blob = malloc (size);
    memset (blob, 3, size);
    leveldb_options_t *options = leveldb_options_create ();
    leveldb_options_set_create_if_missing (options, 1);
    leveldb_options_set_compression (options, leveldb_no_compression);
    leveldb_options_set_write_buffer_size (options, 64 << 20);
    char *err = NULL;
    leveldb_t *db = leveldb_open (options, dir, &err);
    if (!db) {
        fprintf (stderr, "checkpoint_bench: leveldb: %s\n", err);
        exit (1);
    }
    leveldb_writeoptions_t *wo = leveldb_writeoptions_create ();
    leveldb_writeoptions_set_sync (wo, 1);
    double t = s_now ();
    leveldb_writebatch_t *batch = leveldb_writebatch_create ();
    for (size_t off = 0, i = 0; off < size; off += chunk, i++) {
        char key[32];
        int n = snprintf (key, sizeof key, "blob#%08zu", i);
        leveldb_writebatch_put (batch, key, (size_t) n, blob + off, size - off < chunk ? size - off : chunk);
    }
    leveldb_write (db, wo, batch, &err);
    t = s_now () - t;
    if (err) {
        fprintf (stderr, "checkpoint_bench: leveldb: %s\n", err);
        exit (1);
    }
    leveldb_writebatch_destroy (batch);
    leveldb_writeoptions_destroy (wo);
    leveldb_close (db);
    leveldb_options_destroy (options);
    free (blob);
    s_rmdir (dir);
    return t;
}

//  Records per second of range ! repack ! null, with or without a
//  checkpoint every 100k records.
static double s_throughput (uint64_t records, int checkpoints, int async)
{
    char dir[300], count[64];
    snprintf (dir, sizeof dir, "%s/tp", s_dir);
    s_rmdir (dir);
    snprintf (count, sizeof count, "count=%llu", (unsigned long long) records);
    const char *rp[] = {count, NULL};
    weir_pipe *pipe = s_new_pipe ();
    weir_pipe_add (pipe, "range", rp);
    weir_pipe_add_processor (pipe, &s_repacker, NULL, NULL);
    weir_pipe_add (pipe, "null", NULL);
    if (checkpoints) {
        weir_pipe_set_checkpoint (pipe, dir);
        weir_pipe_set_keep (pipe, 2);
        weir_pipe_set_epoch_records (pipe, 100000);
        weir_pipe_set_async_checkpoint (pipe, async);
    }
    if (weir_pipe_run (pipe)) {
        fprintf (stderr, "checkpoint_bench: %s\n", weir_pipe_error (pipe));
        exit (1);
    }
    double rate = (double) records / weir_pipe_wall_seconds (pipe);
    weir_pipe_destroy (&pipe);
    s_rmdir (dir);
    return rate;
}

int main (int argc, char **argv)
{
    unsigned sizes[8] = {1, 64, 512};
    int nsizes = 3, repeat = 3;
    uint64_t records = 20000000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp (argv[i], "--quick")) {
            sizes[0] = 1;
            sizes[1] = 16;
            nsizes = 2;
            repeat = 1;
            records = 2000000;
        }
        else if (!strcmp (argv[i], "--repeat") && i + 1 < argc)
            repeat = atoi (argv[++i]);
        else if (!strcmp (argv[i], "--sizes") && i + 1 < argc) {
            nsizes = 0;
            for (char *p = strtok (argv[++i], ","); p && nsizes < 8; p = strtok (NULL, ","))
                sizes[nsizes++] = (unsigned) atoi (p);
        }
        else {
            fprintf (stderr, "usage: checkpoint_bench [--quick] [--sizes 1,64,512] [--repeat N]\n");
            return 2;
        }
    }
    if (repeat < 1)
        repeat = 1;
    snprintf (s_dir, sizeof s_dir, "%s/weir-ckbench-XXXXXX", getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp");
    if (!mkdtemp (s_dir)) {
        perror ("mkdtemp");
        return 1;
    }

    printf ("{\"bench\":\"checkpoint\",\"repeat\":%d,\"pauses\":[", repeat);
    for (int k = 0; k < nsizes; k++) {
        double mc[16], lv[16], sy[16], as[16];
        for (int r = 0; r < repeat && r < 16; r++) {
            fprintf (stderr, "checkpoint_bench: %u MB, repeat %d\n", sizes[k], r + 1);
            mc[r] = s_memcpy (sizes[k]);
            lv[r] = s_leveldb (sizes[k]);
            sy[r] = s_pause (sizes[k], 0, 3);
            as[r] = s_pause (sizes[k], 1, 3);
        }
        double m = s_median (mc, repeat), l = s_median (lv, repeat), s = s_median (sy, repeat),
               a = s_median (as, repeat);
        printf ("%s\n {\"blob_mb\":%u,\"memcpy_s\":%.6f,\"leveldb_synced_write_s\":%.6f,"
                "\"sync_pause_s\":%.6f,\"async_pause_s\":%.6f,"
                "\"sync_over_leveldb\":%.3f,\"async_over_memcpy\":%.3f}",
                k ? "," : "", sizes[k], m, l, s, a, s / l, a / m);
    }
    double with[16], with_async[16], without[16];
    for (int r = 0; r < repeat && r < 16; r++) {
        fprintf (stderr, "checkpoint_bench: throughput, repeat %d\n", r + 1);
        without[r] = s_throughput (records, 0, 0);
        with[r] = s_throughput (records, 1, 0);
        with_async[r] = s_throughput (records, 1, 1);
    }
    double w = s_median (with, repeat), wa = s_median (with_async, repeat), wo = s_median (without, repeat);
    printf ("\n],\"throughput\":{\"records\":%llu,\"pipe\":\"range ! repack callback ! null\","
            "\"without_checkpoints_per_s\":%.0f,\"with_checkpoint_every_100k_per_s\":%.0f,"
            "\"with_async_checkpoint_every_100k_per_s\":%.0f,"
            "\"lost_fraction_sync\":%.4f,\"lost_fraction_async\":%.4f}}\n",
            (unsigned long long) records, wo, w, wa, 1 - w / wo, 1 - wa / wo);
    s_rmdir (s_dir);
    return 0;
}

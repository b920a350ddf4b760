/*  bench/parallel_ideal.c - the best speedup two threads can get on this
    machine for work like the hogwild model's inner loop.

        parallel_ideal [ITERATIONS]

    The work is a dot product and an axpy over a private array of 8192
    floats (a 10 x 784 softmax model is 7840), the same 16-float blocks
    the model's kernels use (examples/hogwild/kernels.h), repeated
    ITERATIONS times (default 300000).  It is done once by one thread,
    then split in halves across two threads that share nothing (each
    allocates and touches its own arrays).  The runs alternate, seven of
    each, so that both sample the same background load; the medians go
    into one JSON object on stdout:

        {"t1_seconds": ..., "t2_seconds": ..., "speedup": ..., ...}

    A hogwild run cannot beat this speedup; on a shared two-core virtual
    machine it is well below 2.

    Build: cc -std=gnu11 -O2 parallel_ideal.c -lpthread  */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define S_FLOATS 8192
#define S_BLOCK 16
#define S_REPEATS 7

typedef struct {
    long iterations;
    pthread_barrier_t *start;
    float result;
} s_job;

static double s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static float s_dot (const float *restrict a, const float *restrict b, size_t n)
{
    float acc[S_BLOCK] = {0};
    for (size_t i = 0; i < n; i += S_BLOCK)
#pragma GCC unroll 16
        for (size_t k = 0; k < S_BLOCK; k++)
            acc[k] += a[i + k] * b[i + k];
    for (size_t half = S_BLOCK / 2; half; half /= 2)
        for (size_t k = 0; k < half; k++)
            acc[k] += acc[k + half];
    return acc[0];
}

static void s_axpy (float *restrict y, float a, const float *restrict x, size_t n)
{
    for (size_t i = 0; i < n; i += S_BLOCK)
#pragma GCC unroll 16
        for (size_t k = 0; k < S_BLOCK; k++)
            y[i + k] += a * x[i + k];
}

static void *s_work (void *arg)
{
    s_job *job = arg;
    //  Allocated and first touched here: private memory, near this core
    float *w = aligned_alloc (64, S_FLOATS * sizeof *w), *x = aligned_alloc (64, S_FLOATS * sizeof *x);
    if (!w || !x) {
        fprintf (stderr, "parallel_ideal: out of memory\n");
        exit (1);
    }
    for (size_t i = 0; i < S_FLOATS; i++) {
        w[i] = 0;
        x[i] = (float) (i % 255) / 255.0f;
    }
    pthread_barrier_wait (job->start);
    float sum = 0;
    for (long it = 0; it < job->iterations; it++) {
        //  A tiny step keeps the values bounded; the dot depends on the
        //  axpy before it, so nothing can be hoisted out of the loop
        float d = s_dot (w, x, S_FLOATS);
        s_axpy (w, 1e-7f - d * 1e-9f, x, S_FLOATS);
        sum += d;
    }
    job->result = sum;
    free (w);
    free (x);
    return NULL;
}

//  Wall seconds for ITERATIONS split over THREADS threads
static double s_run (unsigned threads, long iterations, float *sink)
{
    pthread_barrier_t start;
    pthread_barrier_init (&start, NULL, threads + 1);
    s_job jobs[2];
    pthread_t tid[2];
    for (unsigned t = 0; t < threads; t++) {
        jobs[t] = (s_job){.iterations = iterations / threads, .start = &start};
        if (pthread_create (&tid[t], NULL, s_work, &jobs[t])) {
            fprintf (stderr, "parallel_ideal: cannot start a thread\n");
            exit (1);
        }
    }
    pthread_barrier_wait (&start);
    double t0 = s_now ();
    for (unsigned t = 0; t < threads; t++) {
        pthread_join (tid[t], NULL);
        *sink += jobs[t].result;
    }
    double seconds = s_now () - t0;
    pthread_barrier_destroy (&start);
    return seconds;
}

static int s_compare (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

int main (int argc, char **argv)
{
    long iterations = argc > 1 ? atol (argv[1]) : 300000;
    if (iterations < 2 || argc > 2) {
        fprintf (stderr, "usage: parallel_ideal [ITERATIONS >= 2]\n");
        return 2;
    }
    iterations -= iterations % 2;
    double t1[S_REPEATS], t2[S_REPEATS];
    float sink = 0;
    for (int r = 0; r < S_REPEATS; r++) {
        t1[r] = s_run (1, iterations, &sink);
        t2[r] = s_run (2, iterations, &sink);
    }
    qsort (t1, S_REPEATS, sizeof *t1, s_compare);
    qsort (t2, S_REPEATS, sizeof *t2, s_compare);
    double m1 = t1[S_REPEATS / 2], m2 = t2[S_REPEATS / 2];
    printf (
        "{\"t1_seconds\": %.4f, \"t2_seconds\": %.4f, \"speedup\": %.3f, \"repeats\": %d, \"floats\": %d, "
        "\"iterations\": %ld, \"t1_min\": %.4f, \"t2_min\": %.4f, \"checksum\": %g}\n",
        m1, m2, m1 / m2, S_REPEATS, S_FLOATS, iterations, t1[0], t2[0], (double) sink);
    return 0;
}

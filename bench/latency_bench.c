/*  bench/latency_bench.c - how long a record of a trickling stream takes
    to get through weir.

    A writer thread writes lines into a FIFO at a steady rate; weir runs
    'lines path=IN linger=L ! identity ! lines path=OUT' between that FIFO
    and another; this process reads OUT.  Each line carries the time it
    was written (CLOCK_MONOTONIC, read in this process on both ends), so
    each record's latency is exact.  Prints one JSON object: per rate, the
    median, 99th percentile and maximum latency, against the target of
    2 x linger + 1 ms.

    Usage: latency_bench [--weir PATH] [--linger MS] [--seconds S]
                         [--rates R1,R2,...]  */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

typedef struct {
    const char *path;
    double rate;  //  lines per second
    uint64_t count;
} s_writer_args;

//  Write COUNT lines "SEQ SENT_NS" at RATE, on an absolute schedule so
//  that a late line does not delay the ones after it.
static void *s_writer (void *arg)
{
    s_writer_args *a = arg;
    FILE *f = fopen (a->path, "w");
    if (!f) {
        perror ("latency_bench: open the input FIFO");
        exit (1);
    }
    setvbuf (f, NULL, _IONBF, 0);
    uint64_t start = s_now (), period = (uint64_t) (1e9 / a->rate);
    //  Fast rates write in bursts of a millisecond's worth: one write per
    //  line at 100,000 lines/s would measure this thread, not weir
    uint64_t burst = a->rate > 1000 ? (uint64_t) (a->rate / 1000) : 1;
    char buf[64 * 1024];
    for (uint64_t i = 0; i < a->count;) {
        uint64_t due = start + i * period;
        struct timespec ts = {(time_t) (due / 1000000000u), (long) (due % 1000000000u)};
        while (clock_nanosleep (CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
        size_t len = 0;
        for (uint64_t k = 0; k < burst && i < a->count; k++, i++)
            len += (size_t) snprintf (buf + len, sizeof buf - len, "%llu %llu\n", (unsigned long long) i,
                                      (unsigned long long) s_now ());
        if (fwrite (buf, 1, len, f) != len) {
            perror ("latency_bench: write the input FIFO");
            exit (1);
        }
    }
    fclose (f);
    return NULL;
}

static int s_cmp (const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
    return x < y ? -1 : x > y;
}

//  One rate: run weir, feed it, collect every latency.  0 or -1.
static int s_run (const char *weir, const char *dir, unsigned linger, double rate, double seconds, int first)
{
    char in[512], out[512], desc[1200], lingers[32];
    snprintf (in, sizeof in, "%s/in", dir);
    snprintf (out, sizeof out, "%s/out", dir);
    unlink (in);
    unlink (out);
    if (mkfifo (in, 0600) || mkfifo (out, 0600)) {
        perror ("latency_bench: mkfifo");
        return -1;
    }
    snprintf (lingers, sizeof lingers, "%u", linger);
    snprintf (desc, sizeof desc, "lines path=%s linger=%s ! identity ! lines path=%s", in, lingers, out);
    pid_t pid = fork ();
    if (pid == 0) {
        execl (weir, weir, "run", "-q", desc, (char *) NULL);
        perror ("latency_bench: exec weir");
        _exit (127);
    }
    uint64_t count = (uint64_t) (rate * seconds);
    if (count < 20)
        count = 20;
    s_writer_args args = {in, rate, count};
    pthread_t writer;
    pthread_create (&writer, NULL, s_writer, &args);
    FILE *f = fopen (out, "r");
    uint64_t *lat = calloc (count, sizeof *lat), got = 0;
    char line[128];
    while (f && fgets (line, sizeof line, f)) {
        uint64_t now = s_now ();
        unsigned long long seq, sent;
        if (sscanf (line, "%llu %llu", &seq, &sent) == 2 && got < count)
            lat[got++] = now - sent;
    }
    if (f)
        fclose (f);
    pthread_join (writer, NULL);
    int status = 0;
    waitpid (pid, &status, 0);
    if (!WIFEXITED (status) || WEXITSTATUS (status) != 0 || got != count) {
        fprintf (stderr, "latency_bench: weir failed or lost records (%llu of %llu)\n",
                 (unsigned long long) got, (unsigned long long) count);
        free (lat);
        return -1;
    }
    qsort (lat, got, sizeof *lat, s_cmp);
    double p50 = (double) lat[got / 2] / 1e6, p99 = (double) lat[(got * 99) / 100] / 1e6;
    double max = (double) lat[got - 1] / 1e6, target = 2.0 * linger + 1.0;
    printf ("%s\n    {\"lines_per_second\": %.0f, \"lines\": %llu, \"p50_ms\": %.3f, \"p99_ms\": %.3f, "
            "\"max_ms\": %.3f, \"p99_target_ms\": %.1f, \"p99_within_target\": %s}",
            first ? "" : ",", rate, (unsigned long long) got, p50, p99, max, target,
            p99 <= target ? "true" : "false");
    fflush (stdout);
    free (lat);
    return 0;
}

int main (int argc, char **argv)
{
    const char *weir = "./weir";
    unsigned linger = 5;
    double seconds = 3;
    char rates[256] = "10,100,1000,100000";
    for (int i = 1; i < argc; i++) {
        if (!strcmp (argv[i], "--weir") && i + 1 < argc)
            weir = argv[++i];
        else if (!strcmp (argv[i], "--linger") && i + 1 < argc)
            linger = (unsigned) atoi (argv[++i]);
        else if (!strcmp (argv[i], "--seconds") && i + 1 < argc)
            seconds = atof (argv[++i]);
        else if (!strcmp (argv[i], "--rates") && i + 1 < argc)
            snprintf (rates, sizeof rates, "%s", argv[++i]);
        else {
            fprintf (stderr,
                     "usage: latency_bench [--weir PATH] [--linger MS] [--seconds S] [--rates R,...]\n");
            return 2;
        }
    }
    char dir[] = "/tmp/weir-latency-XXXXXX";
    if (!mkdtemp (dir)) {
        perror ("latency_bench: mkdtemp");
        return 1;
    }
    signal (SIGPIPE, SIG_IGN);
    printf ("{\n  \"benchmark\": \"latency\",\n  \"pipe\": \"lines (FIFO) ! identity ! lines (FIFO)\",\n"
            "  \"linger_ms\": %u,\n  \"seconds_per_rate\": %g,\n  \"runs\": [",
            linger, seconds);
    int rc = 0, first = 1;
    for (char *r = strtok (rates, ","); r && !rc; r = strtok (NULL, ","), first = 0)
        rc = s_run (weir, dir, linger, atof (r), seconds, first);
    printf ("\n  ]\n}\n");
    char path[600];
    snprintf (path, sizeof path, "%s/in", dir);
    unlink (path);
    snprintf (path, sizeof path, "%s/out", dir);
    unlink (path);
    rmdir (dir);
    return rc ? 1 : 0;
}

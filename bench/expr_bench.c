/*  bench/expr_bench.c - what filter's expressions cost per record.

        bench/expr_bench [--records N] [--repeats R]

    4,096 records like a JSON log's events, decoded once into msgpack
    objects ({"level", "service", "status", "msg", "ms"}), as a stage
    holds the batches it works on (16 of 256 records: in the cache), then
    each expression evaluated N times over them (default 1,000,000), R
    times (default 5):
    one field comparison, four conditions of which a record meets the
    first that holds (what a route over four branches evaluates), a
    number range, and a PCRE2 regular expression; and the four conditions
    as route runs them when each is PATH == "text" on one path, a switch
    that looks the path up once (lib/expr.h).  The peer, measured in
    the same run over the same records, is the same first condition
    written by hand in C: the key looked up in the map and the bytes
    compared, the least a filter can do.  Prints one JSON line: the median
    nanoseconds per record of each, and each expression's ratio to the
    hand-written loop.  Targets (issue 17): one comparison at most 15 ns,
    four branches at most 25 ns, at one thread.  */
#include "config.h"

#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/expr.h"

//  The records evaluated over and over: 16 batches of 256
#define S_SET 4096

static int s_cmp (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

//  Record I, packed into SBUF
static void s_pack (msgpack_packer *pk, size_t i)
{
    static const char *levels[] = {"debug", "info", "warn", "error"};
    static const char *services[] = {"api", "web", "db", "auth"};
    char msg[64];
    int n = snprintf (msg, sizeof msg, "%s /item/%zu", i % 5 ? "GET" : "POST", i);
    msgpack_pack_map (pk, 5);
    msgpack_pack_str_with_body (pk, "level", 5);
    msgpack_pack_str_with_body (pk, levels[i % 4], strlen (levels[i % 4]));
    msgpack_pack_str_with_body (pk, "service", 7);
    msgpack_pack_str_with_body (pk, services[i % 4], strlen (services[i % 4]));
    msgpack_pack_str_with_body (pk, "status", 6);
    msgpack_pack_uint32 (pk, (uint32_t) (i % 7) * 100);
    msgpack_pack_str_with_body (pk, "msg", 3);
    msgpack_pack_str_with_body (pk, msg, (size_t) n);
    msgpack_pack_str_with_body (pk, "ms", 2);
    msgpack_pack_double (pk, (double) (i % 13) * 1.5);
}

//  The hand-written peer of '.level == "error"'
static int s_by_hand (const msgpack_object *rec)
{
    if (rec->type != MSGPACK_OBJECT_MAP)
        return 0;
    for (uint32_t k = 0; k < rec->via.map.size; k++) {
        const msgpack_object *key = &rec->via.map.ptr[k].key, *v = &rec->via.map.ptr[k].val;
        if (key->type == MSGPACK_OBJECT_STR && key->via.str.size == 5 && memcmp (key->via.str.ptr, "level", 5) == 0)
            return v->type == MSGPACK_OBJECT_STR && v->via.str.size == 5 && memcmp (v->via.str.ptr, "error", 5) == 0;
    }
    return 0;
}

//  Median ns per record of R passes of EXPR (NULL: the hand-written loop)
//  over the N records; *KEPT how many it kept
static double s_time (const weir__expr *const *exprs, size_t nexprs, const msgpack_object *recs, size_t n,
                      int repeats, size_t *kept)
{
    double *ns = calloc ((size_t) repeats, sizeof *ns);
    weir__expr_scratch scratch = {0};
    if (nexprs && weir__expr_scratch_init (exprs[0], &scratch))
        exit (1);
    for (int r = 0; r < repeats; r++) {
        size_t yes = 0;
        uint64_t start = weir__now_ns ();
        for (size_t j = 0; j < n; j++) {
            const msgpack_object *rec = &recs[j % S_SET];
            if (!nexprs)
                yes += (size_t) s_by_hand (rec);
            else
                for (size_t k = 0; k < nexprs; k++)
                    if (weir__expr_eval (exprs[k], rec, &scratch)) {
                        yes++;
                        break;
                    }
        }
        ns[r] = (double) (weir__now_ns () - start) / (double) n;
        *kept = yes;
    }
    weir__expr_scratch_release (&scratch);
    qsort (ns, (size_t) repeats, sizeof *ns, s_cmp);
    double median = ns[repeats / 2];
    free (ns);
    return median;
}

//  The same for route's switch over four equalities on one path (what
//  route runs when its branches are all PATH == "text")
static double s_time_switch (const weir__expr_switch *sw, size_t count, const msgpack_object *recs, size_t n,
                             int repeats, size_t *kept)
{
    double *ns = calloc ((size_t) repeats, sizeof *ns);
    uint64_t mismatch = 0;
    for (int r = 0; r < repeats; r++) {
        size_t yes = 0;
        uint64_t start = weir__now_ns ();
        for (size_t j = 0; j < n; j++)
            yes += weir__expr_switch_eval (sw, &recs[j % S_SET], &mismatch) < count;
        ns[r] = (double) (weir__now_ns () - start) / (double) n;
        *kept = yes;
    }
    qsort (ns, (size_t) repeats, sizeof *ns, s_cmp);
    double median = ns[repeats / 2];
    free (ns);
    return median;
}

int main (int argc, char **argv)
{
    size_t n = 1000000;
    int repeats = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp (argv[i], "--records") == 0)
            n = strtoull (argv[i + 1], NULL, 10);
        else if (strcmp (argv[i], "--repeats") == 0)
            repeats = atoi (argv[i + 1]);
        else {
            fprintf (stderr, "usage: %s [--records N] [--repeats R]\n", argv[0]);
            return 2;
        }
    }
    if (n == 0 || repeats < 1) {
        fprintf (stderr, "expr_bench: --records and --repeats must be at least 1\n");
        return 2;
    }
    msgpack_sbuffer sbuf;
    msgpack_sbuffer_init (&sbuf);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &sbuf, msgpack_sbuffer_write);
    for (size_t i = 0; i < S_SET; i++)
        s_pack (&pk, i);
    msgpack_zone *zone = msgpack_zone_new (1 << 20);
    msgpack_object *recs = malloc (S_SET * sizeof *recs);
    size_t off = 0;
    for (size_t i = 0; i < S_SET; i++) {
        //  Every record but the last is followed by more
        int rc = zone && recs ? msgpack_unpack (sbuf.data, sbuf.size, &off, zone, &recs[i]) : -1;
        if (rc != MSGPACK_UNPACK_SUCCESS && rc != MSGPACK_UNPACK_EXTRA_BYTES) {
            fprintf (stderr, "expr_bench: cannot decode record %zu\n", i);
            return 1;
        }
    }
    static const char *texts[] = {
        ".level == \"error\"",
        ".service == \"api\"", ".service == \"web\"", ".service == \"db\"", ".service == \"auth\"",
        ".status >= 200 and .status < 400",
        ".msg =~ \"^POST /item/[0-9]*5$\"",
    };
    weir__expr *e[7];
    for (size_t k = 0; k < 7; k++) {
        weir__err err;
        weir__err_init (&err);
        if (weir__expr_new (texts[k], &e[k], &err)) {
            fprintf (stderr, "expr_bench: '%s': %s\n", texts[k], err.msg);
            return 1;
        }
    }
    size_t kept_hand, kept_one, kept_route, kept_range, kept_re;
    double hand = s_time (NULL, 0, recs, n, repeats, &kept_hand);
    double one = s_time ((const weir__expr *const *) &e[0], 1, recs, n, repeats, &kept_one);
    double route = s_time ((const weir__expr *const *) &e[1], 4, recs, n, repeats, &kept_route);
    double range = s_time ((const weir__expr *const *) &e[5], 1, recs, n, repeats, &kept_range);
    double re = s_time ((const weir__expr *const *) &e[6], 1, recs, n, repeats, &kept_re);
    weir__expr_switch *sw = weir__expr_switch_new ((const weir__expr *const *) &e[1], 4);
    size_t kept_switch = 0;
    double route_switch = sw ? s_time_switch (sw, 4, recs, n, repeats, &kept_switch) : 0;
    weir__expr_switch_destroy (&sw);
    if (kept_hand != kept_one || kept_route != n || kept_switch != n) {
        fprintf (stderr, "expr_bench: the expressions kept %zu and %zu records, wanted %zu and %zu\n", kept_one,
                 kept_route, kept_hand, n);
        return 1;
    }
    printf ("{\"bench\": \"expr\", \"evaluations\": %zu, \"distinct_records\": %d, \"repeats\": %d, \"ns_per_record\": {\"by_hand\": %.2f, "
            "\"one_comparison\": %.2f, \"route_4_branches\": %.2f, \"route_4_branches_switch\": %.2f, "
            "\"number_range\": %.2f, \"regex\": %.2f}, "
            "\"one_comparison_vs_by_hand\": %.2f, \"kept\": {\"one_comparison\": %zu, \"number_range\": %zu, "
            "\"regex\": %zu}, \"targets_ns\": {\"one_comparison\": 15, \"route_4_branches\": 25}}\n",
            n, S_SET, repeats, hand, one, route, route_switch, range, re, one / hand, kept_one, kept_range, kept_re);
    for (size_t k = 0; k < 7; k++)
        weir__expr_destroy (&e[k]);
    free (recs);
    msgpack_zone_free (zone);
    msgpack_sbuffer_destroy (&sbuf);
    return 0;
}

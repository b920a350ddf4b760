/*  bench/json_gen.c - JSON Lines of realistic log events, for the json
    benchmark: generated at run time, never committed.

        json_gen BYTES [SEED] > events.jsonl

    Writes whole lines until at least BYTES bytes are out (k, M and G
    suffixes: thousand, million, billion).  The same SEED (default 1) gives
    the same file.  Each line is one event of about 600 bytes, like what a
    web service logs:

        {"ts":"2024-03-01T12:34:56.789Z","level":"info","service":"checkout",
         "host":"web-17","pid":31337,"seq":1234567,
         "request":{"id":"5f0c...","method":"GET","path":"/api/v1/items/42?q=...",
                    "status":200,"bytes":5123,"duration_ms":12.345,
                    "headers":{"user-agent":"Mozilla/5.0 (...)","accept":"text/html"}},
         "user":{"id":987654321,"name":"Zoë","roles":["admin","dev"],"score":-0.5e-3},
         "msg":"payment \"accepted\"\n\tat C:\\pay\\gateway ...","tags":[...],
         "latency":[1.5,2.25,3],"retry":null,"ok":true,"trace_id":18446744073709551615}

    Strings carry escapes (quotes, backslashes, newlines, tabs, \u escapes)
    and UTF-8; numbers are small and large integers (up to the uint64
    range), negative numbers, decimals and exponents.  */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t s_state;

static uint64_t s_next (void)
{
    //  xorshift64*
    s_state ^= s_state >> 12;
    s_state ^= s_state << 25;
    s_state ^= s_state >> 27;
    return s_state * 2685821657736338717ull;
}

static unsigned s_below (unsigned n)
{
    return (unsigned) ((s_next () >> 33) % n);
}

#define S_PICK(array) (array[s_below (sizeof array / sizeof array[0])])

static const char *s_levels[] = {"debug", "info", "info", "info", "info", "warn", "error"};
static const char *s_services[] = {"checkout", "search", "auth", "inventory", "gateway", "billing"};
static const char *s_methods[] = {"GET", "GET", "GET", "POST", "PUT", "DELETE"};
static const char *s_paths[] = {"/api/v1/items/", "/api/v2/search?q=caf%C3%A9&page=",
                                "/login?next=%2Fhome&id=", "/static/js/app.", "/api/v1/orders/"};
static const int s_statuses[] = {200, 200, 200, 200, 201, 204, 301, 304, 400, 401, 404, 500, 503};
static const char *s_agents[] = {
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36",
    "curl/7.88.1",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1",
    "python-requests/2.28.1",
    "Go-http-client/1.1",
};
static const char *s_names[] = {
    "alice",      "bob",     "Zo\xc3\xab M\xc3\xbcller", "\xe6\x9d\x8e\xe9\x9b\xb7",
    "Jos\\u00e9", "O'Brien", "\\\"quoted\\\" name",      "svc-account"};
static const char *s_roles[] = {"admin", "dev", "ops", "viewer", "billing", "support"};
static const char *s_messages[] = {
    "payment \\\"accepted\\\" for order",
    "cache miss; fetching from C:\\\\data\\\\shard",
    "stack trace:\\n\\tat com.example.Handler.run(Handler.java:42)\\n\\tat java.lang.Thread.run",
    "user logged in from 10.0.0.1 \\u2014 welcome back",
    "slow query: SELECT * FROM items WHERE name = 'caf\xc3\xa9' AND price > 10",
    "retrying \\/api\\/v1\\/orders after timeout \\u00bd s",
    "emoji in text \xf0\x9f\x98\x80 and tab\\tseparated\\tfields",
    "ok",
};
static const char *s_tags[] = {"prod", "eu-west-1", "canary", "v2.3.1", "k8s", "blue", "green"};

int main (int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf (stderr, "usage: json_gen BYTES [SEED]\n");
        return 2;
    }
    char *end;
    double want = strtod (argv[1], &end);
    if (*end == 'k')
        want *= 1e3;
    else if (*end == 'M')
        want *= 1e6;
    else if (*end == 'G')
        want *= 1e9;
    else if (*end) {
        fprintf (stderr, "json_gen: '%s' is not a size\n", argv[1]);
        return 2;
    }
    s_state = argc > 2 ? strtoull (argv[2], NULL, 10) * 0x9e3779b97f4a7c15ull + 1 : 88172645463325252ull;
    static char out[1 << 16];
    setvbuf (stdout, out, _IOFBF, sizeof out);
    uint64_t written = 0, seq = 0;
    while ((double) written < want) {
        char line[4096];
        int n = 0;
#define S_ADD(...) n += snprintf (line + n, sizeof line - (size_t) n, __VA_ARGS__)
        unsigned ms = s_below (86400000);
        S_ADD ("{\"ts\":\"2024-03-%02uT%02u:%02u:%02u.%03uZ\",", 1 + s_below (28), ms / 3600000,
               ms / 60000 % 60, ms / 1000 % 60, ms % 1000);
        S_ADD ("\"level\":\"%s\",\"service\":\"%s\",\"host\":\"web-%u\",\"pid\":%u,\"seq\":%llu,",
               S_PICK (s_levels), S_PICK (s_services), s_below (64), 1000 + s_below (60000),
               (unsigned long long) seq++);
        S_ADD ("\"request\":{\"id\":\"%016llx%08x\",\"method\":\"%s\",\"path\":\"%s%u\",\"status\":%d,"
               "\"bytes\":%u,\"duration_ms\":%u.%03u,",
               (unsigned long long) s_next (), (unsigned) s_next (), S_PICK (s_methods), S_PICK (s_paths),
               s_below (100000), S_PICK (s_statuses), s_below (1 << 20), s_below (2000), s_below (1000));
        S_ADD ("\"headers\":{\"user-agent\":\"%s\",\"accept\":\"*/*\",\"x-forwarded-for\":\"%u.%u.%u.%u\"}},",
               S_PICK (s_agents), s_below (256), s_below (256), s_below (256), s_below (256));
        S_ADD ("\"user\":{\"id\":%llu,\"name\":\"%s\",\"roles\":[", (unsigned long long) (s_next () >> 20),
               S_PICK (s_names));
        for (unsigned i = 0, k = 1 + s_below (3); i < k; i++)
            S_ADD ("%s\"%s\"", i ? "," : "", S_PICK (s_roles));
        S_ADD ("],\"score\":%s%u.%ue-%u},", s_below (2) ? "-" : "", s_below (10), s_below (1000),
               s_below (12));
        S_ADD ("\"msg\":\"%s\",\"tags\":[", S_PICK (s_messages));
        for (unsigned i = 0, k = s_below (4); i < k; i++)
            S_ADD ("%s\"%s\"", i ? "," : "", S_PICK (s_tags));
        S_ADD ("],\"latency\":[");
        for (unsigned i = 0, k = 1 + s_below (4); i < k; i++)
            S_ADD ("%s%u.%u", i ? "," : "", s_below (100), s_below (100));
        S_ADD ("],\"retry\":%s,\"ok\":%s,\"trace_id\":%llu,\"delta\":%d}\n", s_below (4) ? "null" : "3",
               s_below (8) ? "true" : "false", (unsigned long long) s_next (), (int) s_below (20000) - 10000);
        if (fwrite (line, 1, (size_t) n, stdout) != (size_t) n) {
            perror ("json_gen");
            return 1;
        }
        written += (uint64_t) n;
    }
    if (fflush (stdout)) {
        perror ("json_gen");
        return 1;
    }
    return 0;
}

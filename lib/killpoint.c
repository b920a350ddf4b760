/*  lib/killpoint.c - WEIR_KILL_AT=POINT:N for test builds only (see
    lib/killpoint.h); compiled into tests/faults/weir-kp, never into the
    installed library.  */
#include "config.h"
#include "lib/killpoint.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const s_points[] = {
    "readers-stopped",      "pipe-drained",        "writers-synced",    "blobs-copied",      "ranks-prepared",
    "before-leveldb-write", "after-leveldb-write", "readers-resumed",   "output-synced",     "output-renamed",
    "shuffle-part-sent",    "keyed-epoch-ended",   "postgres-prepared", "postgres-settling", NULL,
};

static const char *s_target;  //  the point to kill at, NULL: none
static unsigned long s_at;    //  at its N-th hit
static _Atomic unsigned long s_hits;
static int s_signal = SIGKILL;  //  or SIGSTOP (WEIR_KILL_SIGNAL=STOP)

__attribute__ ((constructor)) static void s_parse (void)
{
    const char *at = getenv ("WEIR_KILL_AT");
    if (!at || !*at)
        return;
    const char *sig = getenv ("WEIR_KILL_SIGNAL");
    if (sig && !strcmp (sig, "STOP"))
        s_signal = SIGSTOP;
    else if (sig && *sig && strcmp (sig, "KILL")) {
        fprintf (stderr, "weir: WEIR_KILL_SIGNAL='%s': wants KILL or STOP\n", sig);
        _exit (2);
    }
    const char *colon = strrchr (at, ':');
    char *end = NULL;
    unsigned long n = colon ? strtoul (colon + 1, &end, 10) : 0;
    size_t len = colon ? (size_t) (colon - at) : strlen (at);
    for (size_t i = 0; s_points[i]; i++)
        if (strlen (s_points[i]) == len && !strncmp (s_points[i], at, len)) {
            if (!colon || !*(colon + 1) || *end || n == 0) {
                fprintf (stderr, "weir: WEIR_KILL_AT='%s': wants POINT:N with N >= 1\n", at);
                _exit (2);
            }
            s_target = s_points[i];
            s_at = n;
            return;
        }
    fprintf (stderr, "weir: WEIR_KILL_AT='%s': unknown kill point '%.*s'; the points are:", at, (int) len,
             at);
    for (size_t i = 0; s_points[i]; i++)
        fprintf (stderr, " %s", s_points[i]);
    fprintf (stderr, "\n");
    _exit (2);
}

void weir__kill_point (const char *name)
{
    //  A point the engine names must be in the table, or no sweep could
    //  ever reach it
    size_t i = 0;
    while (s_points[i] && strcmp (s_points[i], name))
        i++;
    if (!s_points[i]) {
        fprintf (stderr, "weir: kill point '%s' is not in lib/killpoint.c's table\n", name);
        abort ();
    }
    if (s_points[i] != s_target)
        return;
    if (atomic_fetch_add (&s_hits, 1) + 1 != s_at)
        return;
    if (s_signal == SIGSTOP) {
        static const char stopped[] = "weir: stopped at kill point ";
        if (write (STDERR_FILENO, stopped, sizeof stopped - 1) < 0 || write (STDERR_FILENO, name, strlen (name)) < 0
            || write (STDERR_FILENO, "\n", 1) < 0) {
            //  Nothing to do: the stop below is what matters
        }
        kill (getpid (), SIGSTOP);
        return;
    }
    static const char said[] = "weir: killed at kill point ";
    //  Async-signal-safe words: the process may hold any lock now
    if (write (STDERR_FILENO, said, sizeof said - 1) < 0 || write (STDERR_FILENO, name, strlen (name)) < 0
        || write (STDERR_FILENO, "\n", 1) < 0) {
        //  Nothing to do: the kill below is what matters
    }
    kill (getpid (), SIGKILL);
    //  SIGKILL cannot be caught; never return into the engine meanwhile
    for (;;)
        pause ();
}

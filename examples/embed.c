/*  examples/embed.c - weir embedded in a program, with a processor written
    as plain C callbacks.

    The pipe reads the integers 0..N-1, keeps the even ones, squares them
    and writes one per line:

        range count=N ! <square_evens threads=2> ! lines path=OUT

        usage: embed OUT.txt [N]

    Build it the way users do:
        cc embed.c $(pkg-config --cflags --libs weir) -o embed  */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <weir/plugin.h>
#include <weir/weir.h>

//  Shared by every thread of the stage: how many records it dropped.
typedef struct {
    atomic_uint_fast64_t dropped;
} square_state;

static int square_open (weir_stage *st, void **state)
{
    square_state *self = calloc (1, sizeof *self);
    if (!self)
        return weir_fail (st, "out of memory");
    *state = self;
    return 0;
}

static int square_process (weir_stage *st, void *state, const msgpack_object *rec)
{
    square_state *self = state;
    if (rec->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        return weir_fail (st, "expected a non-negative integer, got a msgpack %s", weir_type_name (rec));
    uint64_t v = rec->via.u64;
    if (v % 2) {
        atomic_fetch_add_explicit (&self->dropped, 1, memory_order_relaxed);
        return 0;
    }
    //  Pack the new record straight into the outgoing batch
    msgpack_pack_uint64 (weir_packer (st), v * v);
    return weir_emit_packed (st);
}

static void square_close (weir_stage *st, void *state)
{
    square_state *self = state;
    fprintf (stderr, "embed: the processor dropped %" PRIuFAST64 " odd records\n",
             atomic_load (&self->dropped));
    free (self);
}

static const weir_processor square_evens = {
    WEIR_PROCESSOR_INIT, .name = "square_evens",    .description = "keeps even integers and squares them",
    .open = square_open, .process = square_process, .close = square_close,
};

int main (int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf (stderr, "usage: embed OUT.txt [N]\n");
        return 2;
    }
    char count[64], path[4096];
    snprintf (count, sizeof count, "count=%s", argc == 3 ? argv[2] : "1000000");
    snprintf (path, sizeof path, "path=%s", argv[1]);
    const char *range_props[] = {count, NULL};
    const char *square_props[] = {"threads=2", NULL};
    const char *lines_props[] = {path, NULL};

    weir_pipe *pipe;
    if (weir_pipe_new (&pipe))
        return 1;
    int rc = weir_pipe_add (pipe, "range", range_props);
    if (!rc)
        rc = weir_pipe_add_processor (pipe, &square_evens, NULL, square_props);
    if (!rc)
        rc = weir_pipe_add (pipe, "lines", lines_props);
    if (!rc)
        rc = weir_pipe_run (pipe);
    if (rc) {
        fprintf (stderr, "embed: %s\n", weir_pipe_error (pipe));
        weir_pipe_destroy (&pipe);
        return weir_is_usage_error (rc) ? 2 : 1;
    }
    for (size_t i = 0; i < weir_pipe_stage_count (pipe); i++) {
        weir_stage_stats st = WEIR_STAGE_STATS_INIT;
        weir_pipe_stats (pipe, i, &st);
        printf ("%-14s threads=%u in=%" PRIu64 " out=%" PRIu64 "\n", st.name, st.threads, st.records_in,
                st.records_out);
    }
    weir_pipe_destroy (&pipe);
    return 0;
}

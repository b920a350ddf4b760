/*  bench/spin.c - a processor that computes: WORK rounds of a 64-bit
    linear congruential step per record, then passes the record on.  What
    the throughput benchmarks of bench/mpi_bench run, so that ranks and
    threads compete for cores, not for a queue.

        range count=1M ! spin work=2000 threads=2 ! null  */
#include <stdint.h>
#include <stdlib.h>
#include <weir/plugin.h>

typedef struct {
    uint64_t work;
    uint64_t sink;  //  what the rounds computed, kept so that they are not optimised away
} spin_state;

static int spin_open (weir_stage *st, void **state)
{
    spin_state *self = calloc (1, sizeof *self);
    if (!self)
        return weir_fail (st, "out of memory");
    self->work = strtoull (weir_prop (st, "work", "1000"), NULL, 10);
    *state = self;
    return 0;
}

static int spin_thread_open (weir_stage *st, void *state, void **tstate)
{
    spin_state *t = calloc (1, sizeof *t);
    if (!t)
        return weir_fail (st, "out of memory");
    t->work = ((spin_state *) state)->work;
    *tstate = t;
    return 0;
}

static void spin_thread_close (weir_stage *st, void *tstate)
{
    (void) st;
    free (tstate);
}

static int spin_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    spin_state *t = tstate;
    uint64_t x = rec->type == MSGPACK_OBJECT_POSITIVE_INTEGER ? rec->via.u64 : 1;
    for (uint64_t i = 0; i < t->work; i++)
        x = x * 6364136223846793005u + 1442695040888963407u;
    t->sink += x;
    return weir_emit (st, rec);
}

static void spin_close (weir_stage *st, void *state)
{
    (void) st;
    free (state);
}

static const weir_processor spin = {
    WEIR_PROCESSOR_INIT,
    .name = "spin",
    .description = "computes WORK rounds per record, then passes it on (benchmark plugin)",
    .open = spin_open,
    .thread_open = spin_thread_open,
    .thread_close = spin_thread_close,
    .process = spin_process,
    .close = spin_close,
};

const weir_processor *weir_plugin_processor (void)
{
    return &spin;
}

/*  tests/faults/faultproc.c - the processor of the fault-injection suite.

    Takes integer records, or str records that hold a decimal integer (as
    the lines reader gives them), adds each value V into slot V % slots of
    an int64 blob (relaxed atomic adds, as hogwild training does), and
    passes it on: out=int emits the integer, out=pair emits
    ["k<V, 12 digits>", "<V>"] for the leveldb writer.  The blob is the
    model whose checkpointed value tests/faults/fcheck recomputes from the
    checkpoint's reader offsets.

    Properties: blob=NAME (default sum), slots=N (default 4), out=int|pair,
    pad=BYTES (default 0): a second blob, "pad", of that many bytes that
    only makes every checkpoint that much larger.

    FAULTPROC_CRASH_AT=V in the environment raises SIGSEGV on the record
    whose value is V: a plugin that crashes mid-run.  It is outside the
    description so that --resume with the same description runs the
    fixed plugin.  FAULTPROC_SLEEP_US=N sleeps N microseconds a record.  */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <weir/plugin.h>

typedef struct {
    _Atomic int64_t *slots;
    uint64_t count;
    int pair;
    int crash;
    uint64_t crash_at;
    long sleep_us;
} fp_state;

static int fp_open (weir_stage *st, void **state)
{
    fp_state *self = calloc (1, sizeof *self);
    if (!self)
        return weir_fail (st, "out of memory");
    self->count = strtoull (weir_prop (st, "slots", "4"), NULL, 10);
    const char *out = weir_prop (st, "out", "int");
    self->pair = strcmp (out, "pair") == 0;
    if (self->count == 0 || (!self->pair && strcmp (out, "int"))) {
        free (self);
        return weir_fail (st, "slots must be at least 1, out int or pair");
    }
    const char *crash = getenv ("FAULTPROC_CRASH_AT");
    if (crash && *crash) {
        self->crash = 1;
        self->crash_at = strtoull (crash, NULL, 10);
    }
    const char *sleep_us = getenv ("FAULTPROC_SLEEP_US");
    self->sleep_us = sleep_us ? atol (sleep_us) : 0;
    self->slots = weir_blob (st, weir_prop (st, "blob", "sum"), self->count * sizeof (int64_t));
    uint64_t pad = strtoull (weir_prop (st, "pad", "0"), NULL, 10);
    if (!self->slots || (pad && !weir_blob (st, "pad", pad))) {
        free (self);
        return -1;
    }
    *state = self;
    return 0;
}

static int fp_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    fp_state *self = tstate;
    uint64_t v;
    if (rec->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
        v = rec->via.u64;
    else if (rec->type == MSGPACK_OBJECT_STR && rec->via.str.size > 0 && rec->via.str.size < 21) {
        char digits[24];
        memcpy (digits, rec->via.str.ptr, rec->via.str.size);
        digits[rec->via.str.size] = '\0';
        char *end;
        v = strtoull (digits, &end, 10);
        if (*end)
            return weir_fail (st, "not a decimal integer: '%s'", digits);
    }
    else
        return weir_fail (st, "expected a non-negative integer");
    if (self->sleep_us > 0) {
        struct timespec pause = {self->sleep_us / 1000000, self->sleep_us % 1000000 * 1000};
        nanosleep (&pause, NULL);
    }
    if (self->crash && v == self->crash_at)
        raise (SIGSEGV);
    atomic_fetch_add_explicit (&self->slots[v % self->count], (int64_t) v, memory_order_relaxed);
    msgpack_packer *pk = weir_packer (st);
    if (self->pair) {
        char key[24], value[24];
        int kn = snprintf (key, sizeof key, "k%012llu", (unsigned long long) v);
        int vn = snprintf (value, sizeof value, "%llu", (unsigned long long) v);
        msgpack_pack_array (pk, 2);
        msgpack_pack_str (pk, (size_t) kn);
        msgpack_pack_str_body (pk, key, (size_t) kn);
        msgpack_pack_str (pk, (size_t) vn);
        msgpack_pack_str_body (pk, value, (size_t) vn);
    }
    else
        msgpack_pack_uint64 (pk, v);
    return weir_emit_packed (st);
}

static void fp_close (weir_stage *st, void *state)
{
    (void) st;
    free (state);
}

static const weir_processor fp = {
    WEIR_PROCESSOR_INIT,
    .name = "faultproc",
    .description = "sums integer records into a blob and passes them on (fault-injection suite)",
    .open = fp_open,
    .process = fp_process,
    .close = fp_close,
};

const weir_processor *weir_plugin_processor (void)
{
    return &fp;
}

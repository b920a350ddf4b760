/*  pipeline/stage.c - what a processor callback can do with its weir_stage:
    read properties, emit records, stop the job, fail.  */
#include "config.h"

#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/pack.h"
#include "lib/scan.h"
#include "pipeline/pipe.h"

static void s_free (void *data, void *hint)
{
    free (data);
}

int weir__stage_flush (weir_stage *h)
{
    weir__stage *stage = h->stage;
    weir__batch *b = &h->sink.batch;
    if (b->count == 0)
        return 0;
    uint32_t count = b->count;
    size_t len;
    char *data = weir__batch_take (b, &len);
    zmq_msg_t msg;
    if (!data || zmq_msg_init_data (&msg, data, len, s_free, NULL)) {
        free (data);
        weir__err err;
        weir__err_set (&err, WEIR_ENOMEM, "%s: out of memory", stage->name);
        weir__pipe_fail (stage->pipe, &err);
        return WEIR__SINK_ABORT;
    }
    uint64_t wait = 0;
    int rc = weir__queue_send (stage->out, h->index, &msg, &wait);
    if (wait)
        atomic_fetch_add_explicit (&h->wait_ns, wait, memory_order_relaxed);
    if (rc) {
        zmq_msg_close (&msg);
        return WEIR__SINK_ABORT;
    }
    atomic_fetch_add_explicit (&stage->records_out, count, memory_order_relaxed);
    return 0;
}

const char *weir_prop (weir_stage *st, const char *key, const char *fallback)
{
    assert (st && key);
    //  Properties never change once the threads start, so threads read
    //  them without a lock; the 'used' mark (for the warning about
    //  properties nobody reads) is atomic.
    weir__props *props = &st->stage->props;
    for (size_t i = props->count; i-- > 0;)
        if (strcmp (props->items[i].key, key) == 0) {
            atomic_store_explicit (&props->items[i].used, 1, memory_order_relaxed);
            return props->items[i].value;
        }
    return fallback;
}

//  Count the record just packed and send the batch on when it is full.
static int s_commit (weir_stage *st)
{
    weir__batch *b = &st->sink.batch;
    if (b->oom) {
        weir__err err;
        weir__err_set (&err, WEIR_ENOMEM, "%s: out of memory", st->stage->name);
        weir__pipe_fail (st->stage->pipe, &err);
        return -1;
    }
    if (++b->count >= st->sink.limit && weir__stage_flush (st))
        return -1;
    st->packed_from = b->len;
    return 0;
}

int weir_emit (weir_stage *st, const msgpack_object *rec)
{
    assert (st && rec);
    weir__pack_object (&st->sink.batch, rec);
    return s_commit (st);
}

msgpack_packer *weir_packer (weir_stage *st)
{
    assert (st);
    st->packed_from = st->sink.batch.len;
    return &st->sink.batch.pk;
}

int weir_emit_packed (weir_stage *st)
{
    assert (st);
    weir__batch *b = &st->sink.batch;
    //  What the plugin packed must be one whole object, or the batch would
    //  be corrupt for every stage downstream
    size_t size = 0, where = 0, have = b->len - st->packed_from;
    weir__scan_result r = have ? weir__scan (b->data + st->packed_from, have, &size, &where)
                               : WEIR__SCAN_INCOMPLETE;
    if (r != WEIR__SCAN_OK || size != have) {
        b->len = st->packed_from;
        return weir_fail (st, "weir_emit_packed: the packer holds %s",
                          r == WEIR__SCAN_OK ? "more than one object"
                          : have == 0        ? "no object"
                                             : weir__scan_strerror (r));
    }
    return s_commit (st);
}

void weir_stop (weir_stage *st)
{
    assert (st);
    atomic_store (&st->stage->pipe->stop, 1);
}

int weir_fail (weir_stage *st, const char *fmt, ...)
{
    assert (st && fmt);
    weir__err err;
    char text[900];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (text, sizeof text, fmt, ap);
    va_end (ap);
    weir__err_set (&err, WEIR_EPROCESSOR, "%s: %s (epoch %" PRIu64 ")", st->stage->name, text,
                   st->stage->pipe->epoch);
    weir__pipe_fail (st->stage->pipe, &err);
    return -1;
}

void *weir_blob (weir_stage *st, const char *name, size_t size)
{
    assert (st && name);
    weir__err err;
    weir__err_init (&err);
    void *data = weir__workspace_blob (st->stage->pipe->workspace, name, size, &err);
    if (!data)
        weir_fail (st, "%s", err.msg);
    return data;
}

const void *weir_blob_find (weir_stage *st, const char *name, size_t *size)
{
    assert (st && name && size);
    return weir__workspace_find (st->stage->pipe->workspace, name, size);
}

int weir_blob_store (weir_stage *st, const char *name, const void *data, size_t size)
{
    assert (st && name && (data || !size));
    if (weir__workspace_restore (st->stage->pipe->workspace, name, data, size))
        return weir_fail (st, "out of memory storing blob '%s' of %zu bytes", name, size);
    return 0;
}

int weir_last_epoch (const weir_stage *st)
{
    return st->last_epoch;
}

uint64_t weir_epoch (const weir_stage *st)
{
    return st->stage->pipe->epoch;
}

unsigned weir_thread_index (const weir_stage *st)
{
    return st->index;
}

unsigned weir_thread_count (const weir_stage *st)
{
    return st->stage->threads;
}

const char *weir_stage_name (const weir_stage *st)
{
    return st->stage->name;
}

void *weir_user (weir_stage *st)
{
    return st->stage->user;
}

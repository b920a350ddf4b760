/*  pipeline/stage.c - stages, and what every stage has.  */
#include "config.h"
#include "pipeline/stage.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/shuffle.h"
#include "pipeline/keyed.h"

void weir__stages_init (weir__stages *self)
{
    self->items = NULL;
    self->count = 0;
    self->links = NULL;
    self->nlinks = 0;
    self->tail = SIZE_MAX;
}

static void s_stage_destroy (weir__stage **self_p)
{
    weir__stage *self = *self_p;
    if (!self)
        return;
    weir__input_destroy (&self->input);
    weir__output_destroy (&self->output);
    weir__rejects_destroy (&self->rejects);
    weir__stage_workers_release (self);
    free (self->workers);
    free (self->name);
    free (self->label);
    weir__key_destroy (&self->key);
    free (self->outs);
    weir__stage_set_ports (self, NULL, 0);
    weir__props_release (&self->props);
    weir__metrics_release (&self->metrics);
    //  Last: a plugin's code and its table go away with them
    weir__callbacks_destroy (&self->callbacks);
    free (self);
    *self_p = NULL;
}

void weir__stages_release (weir__stages *self)
{
    for (size_t i = 0; i < self->count; i++)
        s_stage_destroy (&self->items[i]);
    for (size_t i = 0; i < self->nlinks; i++) {
        weir__link *l = &self->links[i];
        free (l->from_name);
        free (l->from_port);
        free (l->to_name);
        free (l->to_port);
    }
    free (self->items);
    free (self->links);
    weir__stages_init (self);
}

weir__stage *weir__stages_reader (const weir__stages *self)
{
    for (size_t i = 0; i < self->count; i++)
        if (self->items[i]->kind == WEIR_ELEMENT_READER)
            return self->items[i];
    return self->items[0];
}

size_t weir__stages_readers (const weir__stages *self)
{
    size_t n = 0;
    for (size_t i = 0; i < self->count; i++)
        n += self->items[i]->kind == WEIR_ELEMENT_READER;
    return n;
}

int weir__stage_set_ports (weir__stage *self, const char *const *names, size_t count)
{
    for (size_t i = 0; i < self->nports; i++)
        free (self->ports[i]);
    free (self->ports);
    self->ports = NULL;
    self->nports = 0;
    if (!count)
        return 0;
    if (!(self->ports = calloc (count, sizeof *self->ports)))
        return WEIR_ENOMEM;
    for (; self->nports < count; self->nports++)
        if (!(self->ports[self->nports] = strdup (names[self->nports])))
            return WEIR_ENOMEM;
    return 0;
}

weir__stage *weir__stages_append (weir__stages *self, const char *name, long offset)
{
    weir__stage **items = realloc (self->items, (self->count + 1) * sizeof *items);
    if (!items)
        return NULL;
    self->items = items;
    weir__stage *stage = calloc (1, sizeof *stage);
    if (!stage || !(stage->name = strdup (name))) {
        free (stage);
        return NULL;
    }
    stage->index = self->count;
    stage->name_offset = offset;
    stage->label_offset = -1;
    stage->glued = -1;
    weir__props_init (&stage->props);
    weir__metrics_init (&stage->metrics);
    items[self->count++] = stage;
    return stage;
}

int weir__stage_workers_new (weir__stage *self, const weir__sink *sink, weir__err *err)
{
    int skip = self->rejects && weir__rejects_skip (self->rejects);
    self->workers = calloc (self->threads, sizeof *self->workers);
    if (!self->workers)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    for (unsigned t = 0; t < self->threads; t++) {
        weir__worker *w = &self->workers[t];
        w->stage = self;
        w->index = t;
        w->shard = SIZE_MAX;
        if (self->input) {
            w->sink = *sink;
            w->sink.skip = skip;
            w->sink.linger_ms = self->linger_ms;
        }
        w->sink.limit = self->batch;
        //  Room for a batch of small records; grows for larger ones
        if (weir__batch_init (&w->sink.batch, WEIR__BATCH_HEADER + (size_t) self->batch * 16))
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        if (self->nports > 1) {
            if (!(w->port_batches = calloc (self->nports - 1, sizeof *w->port_batches)))
                return weir__err_set (err, WEIR_ENOMEM, "out of memory");
            for (size_t p = 0; p + 1 < self->nports; p++)
                if (weir__batch_init (&w->port_batches[p], WEIR__BATCH_HEADER + (size_t) self->batch * 16))
                    return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        }
        if (weir__records_init (&w->decoder))
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        w->decoder_ready = 1;
    }
    return 0;
}

void weir__stage_workers_release (weir__stage *self)
{
    for (unsigned t = 0; self->workers && t < self->threads; t++) {
        weir__worker *w = &self->workers[t];
        weir__batch_release (&w->sink.batch);
        for (size_t p = 0; w->port_batches && p + 1 < self->nports; p++)
            weir__batch_release (&w->port_batches[p]);
        free (w->port_batches);
        w->port_batches = NULL;
        free (w->targets);
        w->targets = NULL;
        for (size_t i = 0; w->shuffles && i < self->nouts; i++)
            weir__shuffle_destroy (&w->shuffles[i]);
        free (w->shuffles);
        w->shuffles = NULL;
        weir__keyed_destroy (&w->keyed);
        w->ntargets = 0;
        if (w->decoder_ready)
            weir__records_release (&w->decoder);
        w->decoder_ready = 0;
    }
}

void weir__stage_input_count (weir__worker *w)
{
    if (w->shard != SIZE_MAX)
        weir__input_count (w->stage->input, w->shard, &w->seen);
}

const char *weir__stage_kind_name (weir_element_kind kind)
{
    return kind == WEIR_ELEMENT_READER ? "reader" : kind == WEIR_ELEMENT_WRITER ? "writer" : "processor";
}

int weir__stage_error (const weir__stage *self, weir__err *err, int code, long offset, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    weir__err_vset (err, code, fmt, ap);
    va_end (ap);
    err->offset = offset >= 0 ? offset : self->name_offset;
    return code;
}

weir__prop *weir__stage_prop (const weir__stage *self, const char *key)
{
    for (size_t k = self->props.count; k-- > 0;)
        if (strcmp (self->props.items[k].key, key) == 0)
            return &self->props.items[k];
    return NULL;
}

void weir__stage_records (const weir__stage *self, uint64_t *in, uint64_t *out, uint64_t *rejected)
{
    weir__counts *c = (weir__counts *) &self->counts;
    uint64_t sent = atomic_load (&c->out);
    //  A reader takes from its input what it sends on
    *in = c->base_in + (self->kind == WEIR_ELEMENT_READER ? sent : atomic_load (&c->in));
    *out = c->base_out + sent;
    *rejected = self->rejects ? weir__rejects_total (self->rejects) : 0;
}

//  Summed over the workers: the time each lived (a fused processor's, in
//  its reader's thread), less the time it waited on a queue.
static double s_busy (const weir__stage *self)
{
    uint64_t now = weir__now_ns (), busy = 0;
    for (unsigned t = 0; self->workers && t < self->threads; t++) {
        weir__worker *w = &self->workers[t];
        uint64_t start = atomic_load (&w->start_ns), end = atomic_load (&w->end_ns);
        uint64_t wait = atomic_load (&w->wait_ns);
        if (!start)
            continue;
        //  A fused processor's worker lives in its reader's thread: busy
        //  for the time it took there
        uint64_t life = self->runs_in ? atomic_load (&w->fused_ns) : (end ? end : now) - start;
        busy += life > wait ? life - wait : 0;
    }
    return (double) busy / 1e9;
}

const char *weir__stage_title (const weir__stage *self)
{
    return self->label ? self->label : self->name;
}

void weir__stage_stats (const weir__stage *self, weir_stage_stats *stats)
{
    weir__counts *c = (weir__counts *) &self->counts;
    stats->name = self->name;
    stats->label = self->label;
    stats->kind = self->kind;
    stats->threads = self->threads;
    stats->input_total = 0;
    stats->input_done = 0;
    stats->files_truncated = 0;
    stats->input_behind = 0;
    stats->cache_bytes = 0;
    stats->records_replayed = 0;
    if (self->input)
        weir__input_stats (self->input, stats);
    stats->records_rejected = self->rejects ? weir__rejects_count (self->rejects) : 0;
    stats->records_in = atomic_load_explicit (&c->in, memory_order_relaxed);
    stats->records_out = atomic_load_explicit (&c->out, memory_order_relaxed);
    //  A reader takes from its input what it sends on
    if (self->kind == WEIR_ELEMENT_READER)
        stats->records_in = stats->records_out;
    stats->batches_in = atomic_load_explicit (&c->batches, memory_order_relaxed);
    stats->job_records_in = c->job_known ? c->job_in : stats->records_in;
    stats->job_records_out = c->job_known ? c->job_out : stats->records_out;
    stats->job_records_rejected = c->job_known ? c->job_rejected : stats->records_rejected;
    //  The checkpoint's counts are rank 0's alone (the job's)
    stats->total_records_in = c->base_in + stats->job_records_in;
    stats->total_records_out = c->base_out + stats->job_records_out;
    stats->total_records_rejected =
        (self->rejects ? weir__rejects_total (self->rejects) - stats->records_rejected : 0)
        + stats->job_records_rejected;
    stats->busy_seconds = s_busy (self);
    stats->fused_with = self->runs_in ? (long) self->runs_in->index : -1;
    stats->queue_fill = self->in ? weir__queue_fill (self->in) : 0;
    //  Before the run, the bound the queue will have
    stats->queue_capacity = self->in                      ? weir__queue_capacity (self->in)
                            : self->host || self->runs_in ? 0
                                                          : self->capacity * (unsigned) self->nins;
}

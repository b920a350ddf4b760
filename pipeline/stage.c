/*  pipeline/stage.c - stages, their workers, their statistics.  */
#include "config.h"
#include "pipeline/stage.h"

#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"

void weir__stages_init (weir__stages *self)
{
    self->items = NULL;
    self->count = 0;
}

static void s_stage_destroy (weir__stage **self_p)
{
    weir__stage *self = *self_p;
    if (!self)
        return;
    weir__stage_workers_release (self);
    free (self->workers);
    free (self->name);
    weir__props_release (&self->props);
    free (self->path_template);
    free (self->slot_committed);
    weir__metrics_release (&self->metrics);
    weir__shards_release (&self->shards);
    free (self->offsets);
    //  Last: the plugin's code and its table go away with it
    weir_plugin_destroy (&self->plugin);
    free (self);
    *self_p = NULL;
}

void weir__stages_release (weir__stages *self)
{
    for (size_t i = 0; i < self->count; i++)
        s_stage_destroy (&self->items[i]);
    free (self->items);
    weir__stages_init (self);
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
    stage->glued = -1;
    weir__props_init (&stage->props);
    weir__shards_init (&stage->shards);
    weir__metrics_init (&stage->metrics);
    items[self->count++] = stage;
    return stage;
}

int weir__stage_workers_new (weir__stage *self, weir__err *err)
{
    self->workers = calloc (self->threads, sizeof *self->workers);
    if (!self->workers)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    for (unsigned t = 0; t < self->threads; t++) {
        weir__worker *w = &self->workers[t];
        w->stage = self;
        w->index = t;
        w->sink.limit = self->batch;
        //  Room for a batch of small records; grows for larger ones
        if (weir__batch_init (&w->sink.batch, WEIR__BATCH_HEADER + (size_t) self->batch * 16))
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
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
        if (w->decoder_ready)
            weir__records_release (&w->decoder);
        w->decoder_ready = 0;
    }
}

const char *weir__stage_kind_name (weir_element_kind kind)
{
    return kind == WEIR_ELEMENT_READER ? "reader" : kind == WEIR_ELEMENT_WRITER ? "writer" : "processor";
}

void weir__stage_input_plan (weir__stage *self, unsigned pass)
{
    uint64_t size = 0, done = 0;
    for (size_t i = 0; i < self->shards.count; i++) {
        const weir__shard *s = &self->shards.items[i];
        if (s->end == UINT64_MAX) {
            //  A pipe or standard input: its end is not known
            self->input_total = 0;
            return;
        }
        size += s->end - s->start;
        done += self->offsets[i] - s->start;
    }
    self->input_total = size * (self->passes ? self->passes : 1);
    atomic_store (&self->input_done, size * pass + done);
}

void weir__stage_input_count (weir__worker *w)
{
    if (!w->offset)
        return;
    uint64_t now = *w->offset;
    if (now > w->seen)
        atomic_fetch_add_explicit (&w->stage->input_done, now - w->seen, memory_order_relaxed);
    w->seen = now;
}

void weir__stage_stats (weir__stage *self, weir_stage_stats *stats)
{
    stats->name = self->name;
    stats->kind = self->kind;
    stats->threads = self->threads;
    stats->records_in = atomic_load_explicit (&self->records_in, memory_order_relaxed);
    stats->records_out = atomic_load_explicit (&self->records_out, memory_order_relaxed);
    //  A reader takes from its input what it sends on
    if (self->kind == WEIR_ELEMENT_READER)
        stats->records_in = stats->records_out;
    stats->batches_in = atomic_load_explicit (&self->batches_in, memory_order_relaxed);
    uint64_t now = weir__now_ns (), busy = 0;
    weir__worker *workers = self->workers;
    for (unsigned t = 0; workers && t < self->threads; t++) {
        weir__worker *w = &workers[t];
        uint64_t start = atomic_load (&w->start_ns), end = atomic_load (&w->end_ns);
        uint64_t wait = atomic_load (&w->wait_ns);
        if (!start)
            continue;
        uint64_t life = (end ? end : now) - start;
        busy += life > wait ? life - wait : 0;
    }
    stats->busy_seconds = (double) busy / 1e9;
    stats->queue_fill = self->in ? weir__queue_fill (self->in) : 0;
    stats->queue_capacity = self->in ? weir__queue_capacity (self->in) : 0;
    stats->input_total = self->input_total;
    stats->input_done = self->kind == WEIR_ELEMENT_READER ? atomic_load (&self->input_done) : 0;
    stats->records_rejected = atomic_load_explicit (&self->rejected, memory_order_relaxed);
    stats->files_truncated = atomic_load_explicit (&self->truncations, memory_order_relaxed);
    stats->job_records_in = self->job_known ? self->job_records[0] : stats->records_in;
    stats->job_records_out = self->job_known ? self->job_records[1] : stats->records_out;
    stats->job_records_rejected = self->job_known ? self->job_records[2] : stats->records_rejected;
}

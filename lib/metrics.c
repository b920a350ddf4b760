/*  lib/metrics.c - a small table of named doubles, lock-free to update.  */
#include "config.h"
#include "lib/metrics.h"

#include <string.h>
#include <weir/weir.h>

void weir__metrics_init (weir__metrics *self)
{
    memset (self, 0, sizeof *self);
    pthread_mutex_init (&self->lock, NULL);
    atomic_init (&self->count, 0);
    for (size_t i = 0; i < WEIR__METRICS_MAX; i++)
        atomic_init (&self->items[i].bits, 0);
}

void weir__metrics_release (weir__metrics *self)
{
    pthread_mutex_destroy (&self->lock);
}

static uint64_t s_bits (double v)
{
    uint64_t bits;
    memcpy (&bits, &v, sizeof bits);
    return bits;
}

static double s_value (uint64_t bits)
{
    double v;
    memcpy (&v, &bits, sizeof v);
    return v;
}

//  The slot of NAME, added if new; NULL when it cannot be.  A name is
//  written before the count that publishes it (release), and read after
//  the count (acquire), so lookups need no lock.
static _Atomic uint64_t *s_slot (weir__metrics *self, const char *name)
{
    size_t len = strlen (name);
    if (len == 0 || len >= WEIR__METRIC_NAME_MAX)
        return NULL;
    size_t n = atomic_load_explicit (&self->count, memory_order_acquire);
    for (size_t i = 0; i < n; i++)
        if (strcmp (self->items[i].name, name) == 0)
            return &self->items[i].bits;
    _Atomic uint64_t *slot = NULL;
    pthread_mutex_lock (&self->lock);
    n = atomic_load_explicit (&self->count, memory_order_relaxed);
    for (size_t i = 0; i < n && !slot; i++)
        if (strcmp (self->items[i].name, name) == 0)
            slot = &self->items[i].bits;
    if (!slot && n < WEIR__METRICS_MAX) {
        memcpy (self->items[n].name, name, len + 1);
        atomic_store_explicit (&self->items[n].bits, s_bits (0.0), memory_order_relaxed);
        atomic_store_explicit (&self->count, n + 1, memory_order_release);
        slot = &self->items[n].bits;
    }
    pthread_mutex_unlock (&self->lock);
    return slot;
}

int weir__metrics_set (weir__metrics *self, const char *name, double value)
{
    _Atomic uint64_t *slot = s_slot (self, name);
    if (!slot)
        return WEIR_EINVAL;
    atomic_store_explicit (slot, s_bits (value), memory_order_relaxed);
    return 0;
}

int weir__metrics_add (weir__metrics *self, const char *name, double delta)
{
    _Atomic uint64_t *slot = s_slot (self, name);
    if (!slot)
        return WEIR_EINVAL;
    uint64_t old = atomic_load_explicit (slot, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit (slot, &old, s_bits (s_value (old) + delta),
                                                   memory_order_relaxed, memory_order_relaxed))
        ;
    return 0;
}

size_t weir__metrics_count (weir__metrics *self)
{
    return atomic_load_explicit (&self->count, memory_order_acquire);
}

const char *weir__metrics_get (weir__metrics *self, size_t index, double *value)
{
    if (index >= weir__metrics_count (self))
        return NULL;
    *value = s_value (atomic_load_explicit (&self->items[index].bits, memory_order_relaxed));
    return self->items[index].name;
}

/*  lib/metrics.h - named values a stage publishes while it runs: a
    training loss, an accuracy, a count.  The progress line and the
    statistics show them.

    Any thread may set or add to a metric, lock-free once it exists; a new
    name takes the lock once.  Values are doubles kept as their bits in
    64-bit atomics: a reader sees a value some thread set, never a torn
    one.  */
#ifndef WEIR_METRICS_H_INCLUDED
#define WEIR_METRICS_H_INCLUDED

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define WEIR__METRICS_MAX 16      //  per stage
#define WEIR__METRIC_NAME_MAX 32  //  bytes, with the NUL

typedef struct weir__metrics {
    pthread_mutex_t lock;  //  only to add a name
    atomic_size_t count;   //  names published so far
    struct {
        char name[WEIR__METRIC_NAME_MAX];
        _Atomic uint64_t bits;
    } items[WEIR__METRICS_MAX];
} weir__metrics;

void weir__metrics_init (weir__metrics *self);
void weir__metrics_release (weir__metrics *self);

/*  Set metric NAME to VALUE, or add DELTA to it (a new one starts at 0).
    0, or WEIR_EINVAL for an empty or too long name or a full table.  */
int weir__metrics_set (weir__metrics *self, const char *name, double value);
int weir__metrics_add (weir__metrics *self, const char *name, double delta);

/*  How many, and each by index in the order they first appeared.  */
size_t weir__metrics_count (weir__metrics *self);
const char *weir__metrics_get (weir__metrics *self, size_t index, double *value);

#endif

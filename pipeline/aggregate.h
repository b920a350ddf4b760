/*  pipeline/aggregate.h - the builtin aggregations: count, sum, min, max,
    mean and distinct per key, each a processor of a keyed stage (key=,
    lib/key.h).  distinct counts each value= (the whole record unless
    given) once per key, keeping the values it saw as entries of their
    own in the key's group; it has no combiner.

        lines path=words.txt ! count key=. threads=2 ! json path=counts.jsonl
        json path=app.jsonl ! sum key=.user value=.bytes ! json path=bytes.jsonl

    A key's value lives in its thread's keyed state (pipeline/keyed.h),
    which the engine checkpoints per key group and hands over on a
    resume with another thread count; no lock: every record of a key
    comes to its thread.  Its producers fold their records by key first
    (lib/shuffle.h's combiner), when that halves what they send.

    What comes out is one [key, value] array per key: when the input
    ends (emit=end, the default), or at each epoch's end for the keys
    that changed in it (emit=epoch: a changelog).  */
#ifndef WEIR_AGGREGATE_H_INCLUDED
#define WEIR_AGGREGATE_H_INCLUDED

#include <weir/plugin.h>

#include "lib/error.h"
#include "lib/props.h"

extern const weir_processor weir__processor_count, weir__processor_sum, weir__processor_min,
    weir__processor_max, weir__processor_mean, weir__processor_distinct;

/*  Check an aggregation's properties: key= given, value= where it needs
    one, emit= known.  0 or WEIR_EPROPERTY with ERR's offset at the
    culprit.  */
int weir__aggregate_check (weir__props *props, const char *element, const weir_property_info *common,
                           weir__err *err);

#endif

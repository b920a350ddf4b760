/*  pipeline/fuse.h - a processor that runs in the threads of the reader
    feeding it (fuse=, pipeline/graph.h): fusion, as Beam calls it (Flink chains
    operators).

    Each reader thread drives the processor worker of the same index: it
    opens it before its first read, hands it each batch it fills (the
    records decoded from the reader's own buffer, still in cache, and
    processed before the reader reads on), and each marker it sends (the
    processor ends its epoch and passes the barrier on, then the reader
    alone waits at the controller for both), and closes it when it ends.
    No queue or thread lies between them: a hand-over fewer per batch,
    and one thread where there were two.  For a reader without a fused
    processor, the functions below are the path's (pipeline/path.h).  */
#ifndef WEIR_FUSE_H_INCLUDED
#define WEIR_FUSE_H_INCLUDED

#include <stdint.h>

#include "pipeline/stage.h"

/*  Reader worker R's fused processor opened, if it has one: 0, or -1
    when that failed the job (R then reads nothing).  */
int weir__fuse_open (weir__worker *r);

/*  R's batch on: through its fused processor, or down its links.  0,
    or WEIR__SINK_ABORT when the job failed or is being torn down.  */
int weir__fuse_send (weir__worker *r);

/*  A marker of KIND with FLAG (pipeline/path.h) from R: to its fused
    processor, which ends its epoch or stream and passes the marker on,
    or down R's links.  0 or -1.  */
int weir__fuse_marker (weir__worker *r, uint32_t kind, uint32_t flag);

/*  R's fused processor closed (its thread_close) and its busy time
    set: the time it took in R's thread.  */
void weir__fuse_close (weir__worker *r);

/*  The sink's send and idle (readers/reader.h) of a reader with a
    fused processor: as the path's, each batch through the processor,
    and its partial batch on after its own linger= while the input is
    idle.  */
int weir__fuse_sink_send (weir__sink *sink);
int weir__fuse_sink_idle (weir__sink *sink);

#endif

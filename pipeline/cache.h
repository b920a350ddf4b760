/*  pipeline/cache.h - a reader's records kept in memory for the passes
    after the first (cache=SIZE).

    A job of several passes reads its input again each pass: the file
    again, and, for a text format, the parsing again, which for a libsvm
    file is most of a training job's time.  With cache=, the records a
    shard gave the sink in one pass are kept, as the batch bytes they were
    and the offset just past each, and the passes after give the sink the
    same bytes with the same offsets from memory, without calling the
    reader.  What downstream sees is the same, record for record and
    offset for offset, and the sink's quota cuts the epochs where a read
    would: checkpoints, resumes and bit-exact runs are as they are without
    a cache.

    What is kept: only a shard read whole from its start in one pass (a
    resume that starts inside a shard keeps it from the next pass on), and
    only while the stage's cache has room; a shard that does not fit is
    dropped and read from its reader every pass, and the job's log says so
    once.  A shard in which the reader met a bad record is not kept, so
    that the dead letter gets it each pass as it does without a cache.
    The cache assumes, as the passes do, that the input does not change
    while the job runs.

    Threads: a shard's tape is written and read only by the thread that
    holds the shard; a pass starts after the controller's barrier, which
    orders the pass that wrote a tape before the one that reads it.  */
#ifndef WEIR_CACHE_H_INCLUDED
#define WEIR_CACHE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "readers/reader.h"
#include "readers/shards.h"

typedef struct weir__cache weir__cache;

/*  A cache of at most LIMIT bytes (records, and 16 bytes for each) for
    SHARDS shards.  NULL when out of memory.  */
weir__cache *weir__cache_new (uint64_t limit, size_t shards);
void weir__cache_destroy (weir__cache **self_p);

/*  The reader's read of shard I (SHARD) from *OFFSET into SINK, through
    the cache: from memory when the shard was kept whole and *OFFSET is
    one of its record boundaries, else READ (STATE, ...) with the records
    kept as they are added when the read starts the shard or goes on with
    one being kept.  Returns what READ would.  */
int weir__cache_read (weir__cache *self, size_t i, weir__shard *shard, uint64_t *offset, weir__sink *sink,
                      int (*read) (void *, weir__shard *, uint64_t *, weir__sink *, weir__err *), void *state,
                      weir__err *err);

/*  Bytes held now, and records given from memory so far.  Any thread.  */
uint64_t weir__cache_bytes (const weir__cache *self);
uint64_t weir__cache_replayed (const weir__cache *self);

#endif

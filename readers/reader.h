/*  readers/reader.h - what a builtin reader is.

    A reader splits its input into shards when the stage opens
    (readers/shards.h), then reader threads take shards one at a time and
    push their records into a sink; a bad record goes to the sink's
    reject() or fails the read.  */
#ifndef WEIR_READER_H_INCLUDED
#define WEIR_READER_H_INCLUDED

#include <stdint.h>
#include <weir/weir.h>

#include "lib/batch.h"
#include "lib/error.h"
#include "lib/props.h"
#include "readers/shards.h"

/*  Where a reader thread puts records.  Append a record's bytes to
    'batch' (raw, or with weir__pack_*), record the offset just past it,
    then call weir__sink_add.

    The quota is how many more records this thread may read in the current
    epoch; it is never 0 while read() runs or after weir__sink_add returned
    0.  When the batch is full or the quota used up, 'send' sends the batch
    on and claims more quota, or returns WEIR__SINK_PAUSE: the epoch is
    full, and read() must return at once (its offset already says where to
    go on from).  The engine implements it (pipeline/path.c).  */
typedef struct weir__sink weir__sink;

/*  A bad record of the input, as a reader met it.  */
/*  Said after a bad record's error, so that the way past it is in the
    message, as a processor's says it.  */
#define WEIR__SKIP_HINT "; on-error=skip would skip it, and dead-letter=FILE keep it"

typedef struct weir__bad {
    const char *path;    //  the file, or NULL
    uint64_t offset;     //  the byte it starts at
    uint64_t line;       //  its line, from 1, for a reader of lines; 0 when not known
    const char *bytes;   //  its bytes as read: perhaps only the first ones
    size_t len;          //  of them
    uint64_t size;       //  its length in bytes
    const char *reason;  //  what is wrong with it
} weir__bad;

struct weir__sink {
    weir__batch batch;
    uint32_t limit;                  //  records per batch
    uint64_t quota;                  //  records this thread may still read this epoch
    int (*send) (weir__sink *sink);  //  0, WEIR__SINK_PAUSE, or WEIR__SINK_ABORT
    //  Called every few tens of milliseconds while a read waits for input
    //  that has not come (a pipe, a terminal), the first time after
    //  linger_ms when the batch holds records, which it then sends on.
    //  0 to wait on, or
    //  WEIR__SINK_PAUSE (a stop, the epoch's time is up) or
    //  WEIR__SINK_ABORT, which read() returns.  May be NULL.
    int (*idle) (weir__sink *sink);
    //  on-error=skip: a bad record is given to reject(), which keeps it in
    //  the dead letter, and skipped; the reader moves its offset past it
    //  and goes on.  Otherwise (0) the reader fails, naming it.  reject()
    //  returns 0, or WEIR__SINK_ABORT, which read() returns.
    int skip;
    int (*reject) (weir__sink *sink, const weir__bad *bad);
    //  Something the job's log should say (a followed file truncated,
    //  records that cannot be found after a rotation)
    void (*warn) (weir__sink *sink, const char *message);
    void (*truncated) (weir__sink *sink);  //  counts a followed file truncated in place
    //  A followed file's size, as the window saw it at a read that
    //  brought bytes, or at the file's end for now: with the offsets, how
    //  far reading is behind the writer.  May be NULL
    void (*seen) (weir__sink *sink, uint64_t size);
    //  linger=: how long a read waiting for input holds a partial batch
    //  before idle() sends it on
    unsigned linger_ms;
    uint64_t first_ns;  //  when the batch's first record came (0: not known yet)
    //  The engine's, while it keeps the records of the shard being read
    //  for the passes after this one (cache=, pipeline/cache.h): told of
    //  each record as it is added, KEEP_ARG its argument.  NULL otherwise
    void (*keep) (weir__sink *sink);
    void *keep_arg;
};

#define WEIR__SINK_PAUSE 1  //  the epoch is full: return, go on next epoch
#define WEIR__SINK_ABORT 2  //  the job is being torn down
#define WEIR__READ_DRY 3    //  follow=1: nothing more in this file for now

/*  The record just appended is added: count it, send the batch on when it
    is full, claim more quota when it runs out.  A non-zero result must be
    returned by read().  */
static inline int weir__sink_add (weir__sink *s)
{
    s->batch.count++;
    if (s->keep)
        s->keep (s);
    if (--s->quota == 0 || s->batch.count >= s->limit)
        return s->send (s);
    return 0;
}

/*  How a reader's records stand in its files.  */
typedef enum {
    WEIR__RECORDS_COUNTED = 0,  /*  a record is named by its count from an offset  */
    WEIR__RECORDS_VERBATIM = 1, /*  their bytes are the file's, back to back  */
    WEIR__RECORDS_LINES = 2,    /*  one per line  */
    WEIR__RECORDS_VALUES = 3,   /*  one per line that is not blank (spaces, tabs, a CR)  */
    WEIR__RECORDS_SELF = 4,     /*  a record says where it is (range: the integers)  */
} weir__records_kind;

typedef struct weir__reader_class {
    const char *name;
    const char *description;
    const weir_property_info *props;
    /*  Read the properties, plan the shards.  */
    int (*open) (weir__props *props, void **state, weir__shards *shards, weir__err *err);
    /*  Read SHARD from *OFFSET into SINK, keeping *OFFSET just past the
        last record committed: 0 at the shard's end, what the sink returned
        (pause, abort), or a WEIR_E* code with ERR filled.  Called
        concurrently from several threads on different shards.  */
    int (*read) (void *state, weir__shard *shard, uint64_t *offset, weir__sink *sink, weir__err *err);
    void (*close) (void *state);
    /*  Readers that follow files (shards->follow): add the files that
        match now and are not shards yet; and wait until a file may have
        more, asking the sink's idle() meanwhile (0, or what idle said).
        read() then returns WEIR__READ_DRY at the end of a file for now,
        and 0 only once the file is gone.  */
    int (*discover) (void *state, weir__shards *shards, weir__err *err);
    int (*wait) (void *state, weir__sink *sink);
    /*  Whether SHARD has records past OFFSET now, for an input that grows
        by other means than files (a Kafka partition): a resume of a job
        that had finished reads them.  NULL: the engine sees growth itself
        (files) or there is none.  */
    int (*more) (void *state, const weir__shard *shard, uint64_t offset);
    /*  Once a checkpoint is written (durable, as writers' settle hears
        it), the OFFSETS it records for SHARDS; only shard i with i mod
        RANKS == RANK is this rank's to tell.  For readers that tell
        others how far they got (Kafka: a consumer group's offsets, for
        monitoring); never what a resume goes on from.  A failure is
        returned, and the engine warns and goes on.  NULL: nothing to tell.  */
    int (*settle) (void *state, const weir__shards *shards, const uint64_t *offsets, unsigned rank,
                   unsigned ranks, weir__err *err);
    /*  How its records stand in a shard's bytes, for a failure downstream
        to name the one it met (pipeline/origin.h)  */
    weir__records_kind records;
} weir__reader_class;

extern const weir__reader_class weir__reader_range;
extern const weir__reader_class weir__reader_lines;
extern const weir__reader_class weir__reader_msgpack;
extern const weir__reader_class weir__reader_leveldb;
extern const weir__reader_class weir__reader_libsvm;
extern const weir__reader_class weir__reader_json;
extern const weir__reader_class weir__reader_kafka;

#endif

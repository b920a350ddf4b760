/*  lib/batch.h - batches: many msgpack records packed back to back in one
    buffer that travels as one ZeroMQ message.

    Batching is what makes the per-record cost small: one queue message
    costs about 200 ns, one record a few.  A message starts with a
    header (kind, record count, and for a reader's batch where its
    records were read: 112 bytes in all) so that a stage can count
    records, or pass a batch on untouched, without decoding it, and a
    failure can name a record's place.  Control markers (an
    epoch's barrier, the end of the stream) are header-only messages of
    other kinds, and so travel in-band behind the data they follow.  */
#ifndef WEIR_BATCH_H_INCLUDED
#define WEIR_BATCH_H_INCLUDED

#include <msgpack.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum {
    WEIR__BATCH_DATA = 1,    /*  records follow the header  */
    WEIR__BATCH_EOS = 2,     /*  end of stream from one producer thread  */
    WEIR__BATCH_BARRIER = 3, /*  end of the epoch from one producer thread  */
    WEIR__BATCH_COMBINED = 4, /*  partial aggregates by key follow (lib/shuffle.h)  */
};

/*  Records of a reader's batch read one after another from one shard:
    COUNT of them from the batch's record FIRST on, the first at the
    shard's OFFSET.  */
typedef struct weir__batch_origin {
    uint64_t offset;
    uint32_t shard;
    uint32_t first;
    uint32_t count;
    uint32_t reserved;
} weir__batch_origin;

/*  Runs of records a batch says the origin of: one per shard it holds
    records of, as a reader thread goes from shard to shard  */
#define WEIR__BATCH_ORIGINS 4

typedef struct weir__batch_header {
    uint32_t kind;
    uint32_t count; /*  records in the batch  */
    /*  A reader's batch: where its records were read, in ORIGINS runs,
        from the shards of the stage of index ORIGIN_STAGE - 1.  0 in
        ORIGIN_STAGE or ORIGINS: not known (a processor's batch, a
        followed input), as in every marker; records past a bad one that
        was skipped, or past the last run, are in none.  A failure in a
        record of a run can name the file and the line it came from
        (pipeline/origin.h).  */
    uint32_t origin_stage;
    uint32_t origins;
    weir__batch_origin origin[WEIR__BATCH_ORIGINS];
} weir__batch_header;

#define WEIR__BATCH_HEADER ((size_t) sizeof (weir__batch_header))

/*  A batch being built.  The buffer always starts with room for the
    header; records are appended raw or through a msgpack packer.  */
typedef struct weir__batch {
    char *data;
    size_t len; /*  bytes used, header included  */
    size_t cap;
    uint32_t count;    /*  records committed  */
    uint32_t kind;     /*  what its header says it holds: WEIR__BATCH_DATA unless set  */
    int oom;           /*  an append failed for lack of memory  */
    /*  Where its records were read (the header's origin fields), kept by
        the reader that fills it; while ORIGIN_OPEN, every record added
        is one more of the last run (whose count is then the batch's
        count less its first).  Zeroed when the batch is taken or
        cleared  */
    uint32_t origin_stage, origins;
    weir__batch_origin origin[WEIR__BATCH_ORIGINS];
    int origin_open;
    msgpack_packer pk; /*  writes into this batch  */
} weir__batch;

/*  Allocate a buffer of CAP bytes (grows as needed).  0 or WEIR_ENOMEM.  */
int weir__batch_init (weir__batch *b, size_t cap);
void weir__batch_release (weir__batch *b);

/*  Make room for N more bytes; 0 or -1 (and sets oom).  */
int weir__batch_grow (weir__batch *b, size_t n);

/*  Append N raw bytes (part of or a whole record; count it yourself).  */
static inline int weir__batch_append (weir__batch *b, const void *p, size_t n)
{
    if (n == 0)
        return 0;
    if (b->len + n > b->cap && weir__batch_grow (b, n))
        return -1;
    memcpy (b->data + b->len, p, n);
    b->len += n;
    return 0;
}

/*  Bytes of record payload (without the header).  */
static inline size_t weir__batch_payload (const weir__batch *b)
{
    return b->len - WEIR__BATCH_HEADER;
}

/*  Write the header and hand the buffer over (for zmq_msg_init_data with
    free() as its release function); the batch gets a fresh empty buffer
    of the same capacity.  Returns NULL when that allocation fails, leaving
    the batch as it was.  */
char *weir__batch_take (weir__batch *b, size_t *len);

/*  Empty the batch, keeping its buffer.  */
void weir__batch_clear (weir__batch *b);

/*  The header B would be sent with now: a data batch of its records,
    with their origin when it is known.  */
void weir__batch_header_of (const weir__batch *b, weir__batch_header *h);

/*  Read the header of a received message; 0, or -1 if it is too short.  */
static inline int weir__batch_header_read (const void *data, size_t len, weir__batch_header *h)
{
    if (len < WEIR__BATCH_HEADER)
        return -1;
    memcpy (h, data, sizeof *h);
    return 0;
}

/*  Decoding the records of a batch one by one.  Strings and binaries in
    the objects point into the batch; containers are built in a zone that is
    reused for every record, so decoding allocates nothing in steady state.
    The batch must hold well-formed records (ours always do: readers
    validate what they take from outside).  */
typedef struct weir__records {
    const char *data;
    size_t len;
    size_t off;
    msgpack_zone zone;
} weir__records;

int weir__records_init (weir__records *it);
void weir__records_release (weir__records *it);

/*  Point at the payload of a batch (after its header).  */
void weir__records_reset (weir__records *it, const char *payload, size_t len);

/*  1 and *OBJ for the next record, 0 at the end, -1 on a malformed
    record, WEIR__RECORDS_NOMEM when decoding it ran out of memory.  *OBJ
    is valid until the next call.  */
#define WEIR__RECORDS_NOMEM -2
int weir__records_next (weir__records *it, msgpack_object *obj);

/*  The next record undecoded: 1, with *DATA and *LEN its bytes in the
    batch; 0 at the end; -1 on a malformed record.  The walk over its
    bytes that finds its end allocates nothing, and costs a fraction of
    decoding it.  */
int weir__records_next_bytes (weir__records *it, const char **data, size_t *len);

/*  The LEN bytes at DATA, one record a call above gave, decoded into *OBJ
    (valid until the next call): 0, -1 when malformed,
    WEIR__RECORDS_NOMEM.  */
int weir__records_decode (weir__records *it, const char *data, size_t len, msgpack_object *obj);

#endif

/*  lib/shuffle.h - a producer's side of a keyed link: its batches split
    by key, each part to the consumer thread that owns the key's group.

    A keyed stage (key=, lib/key.h) must see every record of a key in the
    same thread, so its producers cannot send a batch to whichever thread
    is least loaded: each record's key is read, hashed to its group, and
    the record copied into the part for the group's owner; the parts go
    to their threads over the same FIFO pipes as everything else, so the
    markers a producer sends after them still come behind them.

    A combiner (an aggregation's, pipeline/aggregate.h) folds the
    records by key before they go, into tables held across batches: the
    records the combiner leaves to its stage (a bad value, judged there)
    go with their batch, and the partial aggregates, one per key, go in
    batches of kind WEIR__BATCH_COMBINED when the producer is about to
    send a marker (weir__shuffle_flush), or when its tables hold enough
    keys.  A hot key costs its consumer one record per producer and epoch,
    not one per event.

    One shuffle per producer thread and keyed link, used by that thread
    alone.  */
#ifndef WEIR_SHUFFLE_H_INCLUDED
#define WEIR_SHUFFLE_H_INCLUDED

#include <msgpack.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/key.h"
#include "lib/exchange.h"
#include "lib/queue.h"

typedef struct weir__shuffle weir__shuffle;

/*  Where a producer's parts go: the keyed stage's threads on this rank,
    QUEUE's consumers, to which it sends as PRODUCER, and in a job of
    several ranks those of every other rank, down LINK of EXCHANGE
    (lib/exchange.h), as the same PRODUCER.  The stage's threads are
    numbered rank by rank: thread t of rank r is r x T + t of RANKS x T
    (T the queue's consumers), and own the groups weir__key_owner gives
    that number.  One rank: EXCHANGE NULL, RANK 0, RANKS 1.  */
typedef struct weir__shuffle_to {
    weir__queue *queue;
    unsigned producer;
    weir__exchange *exchange;
    unsigned link, rank, ranks;
} weir__shuffle_to;

/*  What a keyed stage that aggregates lets its producers do first.  */
typedef struct weir__combiner {
    size_t value_size;  //  of a key's partial aggregate
    //  Fold REC into VALUE (zeroed for a key new in the batch): 0, or 1
    //  when REC is to go on as it is (a bad value, for its stage to judge)
    int (*fold) (const struct weir__combiner *self, const msgpack_object *rec, void *value);
    //  Whether the value is a uint64_t (VALUE_SIZE 8) that folding a
    //  record adds one to (a count of records), which is done where the
    //  record is folded rather than through FOLD: a word count folds
    //  every word
    int counts;
    //  Append the partial aggregate VALUE of the key of LEN canonical
    //  bytes at KEY, of hash HASH, to B as one record: 0, -1 (out of
    //  memory), or 1 when VALUE holds nothing (every record of the key
    //  went on as it was)
    int (*pack) (const struct weir__combiner *self, const char *key, size_t len, uint64_t hash,
                 const void *value, weir__batch *b);
} weir__combiner;

weir__shuffle *weir__shuffle_new (void);
void weir__shuffle_destroy (weir__shuffle **self_p);

/*  What to do with a record whose key is longer than
    WEIR__KEY_MAX_BYTES, for REASON: 0 to go on without it, else fail.  */
typedef int (weir__shuffle_reject_fn) (void *ctx, const msgpack_object *rec, const char *reason);

/*  Split the records of PAYLOAD (LEN bytes, a batch's, after its header)
    by KEY among GROUPS key groups, folded by COMBINER when not NULL, and
    send each part to its consumer thread, of any rank, as TO says.  *SENT is
    the records that went (those folded into a partial aggregate, held
    until a flush, included).  0, WEIR__QUEUE_CLOSED, WEIR_ENOMEM, WEIR_ECORRUPT for a
    malformed record, or what REJECT returned.  */
int weir__shuffle_send (weir__shuffle *self, const weir__key *key, unsigned groups,
                        const weir__combiner *combiner, const weir__shuffle_to *to, const char *payload,
                        size_t len, weir__shuffle_reject_fn *reject, void *ctx, uint32_t *sent,
                        uint64_t *wait_ns);

/*  Make SELF ready for weir__shuffle_fold, with GROUPS, COMBINER and TO
    as every send and fold gives them.  0 or WEIR_ENOMEM.  */
int weir__shuffle_ready (weir__shuffle *self, unsigned groups, const weir__combiner *combiner,
                         const weir__shuffle_to *to);

/*  The str record of the N bytes at S, keyed by its whole self (its
    canonical key is its header and its bytes), folded by COMBINER into
    the partial aggregates, as a send would fold it, by a producer that
    emits it: a word emitted into 'count key=.' needs neither to be
    packed into a batch nor read back, its bytes need not follow a
    header (weir__partials_upsert_str), and its group is worked out only
    when its partial aggregate is flushed.  TO as for a send,
    which may flush when the tables hold enough keys.  1 when folded (the
    record counts as sent), 0 when it must go in a batch as it is (the
    combiner rests, or leaves the record to its stage), or what a flush
    returns, negative (WEIR_EABORTED for a queue closed).  */
int weir__shuffle_fold (weir__shuffle *self, const weir__combiner *combiner, const weir__shuffle_to *to,
                        const char *s, size_t n, uint64_t *wait_ns);

/*  Send the partial aggregates held for COMBINER (the one every send
    was given) to their consumer threads, as TO says: before the producer
    sends a marker, so that they come before it.  SELF may be NULL.  0,
    WEIR__QUEUE_CLOSED or WEIR_ENOMEM.  */
int weir__shuffle_flush (weir__shuffle *self, const weir__combiner *combiner, const weir__shuffle_to *to,
                         uint64_t *wait_ns);

#endif

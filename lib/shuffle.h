/*  lib/shuffle.h - a producer's side of a keyed link: its batches split
    by key, each part to the consumer thread that owns the key's group.

    A keyed stage (key=, lib/key.h) must see every record of a key in the
    same thread, so its producers cannot send a batch to whichever thread
    is least loaded: each record's key is read, hashed to its group, and
    the record copied into the part for the group's owner; the parts go
    to their threads over the same FIFO pipes as everything else, so the
    markers a producer sends after them still come behind them.

    One shuffle per producer thread, used by that thread alone.  */
#ifndef WEIR_SHUFFLE_H_INCLUDED
#define WEIR_SHUFFLE_H_INCLUDED

#include <msgpack.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/key.h"
#include "lib/queue.h"

typedef struct weir__shuffle weir__shuffle;

weir__shuffle *weir__shuffle_new (void);
void weir__shuffle_destroy (weir__shuffle **self_p);

/*  What to do with a record whose key is longer than
    WEIR__KEY_MAX_BYTES, for REASON: 0 to go on without it, else fail.  */
typedef int (weir__shuffle_reject_fn) (void *ctx, const msgpack_object *rec, const char *reason);

/*  Split the records of PAYLOAD (LEN bytes, a batch's, after its header)
    by KEY among GROUPS key groups, and send each part to its consumer
    thread of QUEUE as PRODUCER.  *SENT is the records sent.  0,
    WEIR__QUEUE_CLOSED, WEIR_ENOMEM, WEIR_ECORRUPT for a malformed record,
    or what REJECT returned.  */
int weir__shuffle_send (weir__shuffle *self, const weir__key *key, unsigned groups, weir__queue *queue,
                        unsigned producer, const char *payload, size_t len, weir__shuffle_reject_fn *reject,
                        void *ctx, uint32_t *sent, uint64_t *wait_ns);

#endif

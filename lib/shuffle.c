/*  lib/shuffle.c - batches split by key over a keyed stage's threads.  */
#include "config.h"
#include "lib/shuffle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/batch.h"
#include "lib/buf.h"
#include "lib/partials.h"
#include "lib/killpoint.h"

//  What goes to one consumer thread
typedef struct {
    weir__batch raw;       //  records as they came
    weir__batch combined;  //  partial aggregates (kind WEIR__BATCH_COMBINED)
} s_part;

struct weir__shuffle {
    weir__records records;  //  the batch being split
    weir__buf key;          //  the key of the record in hand, when not its own bytes
    s_part *parts;          //  [consumer]
    unsigned nparts;
    //  With a combiner: the partial aggregate of each key, for every
    //  consumer (one table, not one per consumer: half the cache)
    weir__partials *keys;
    unsigned plain;   //  batches to send without the combiner before it is tried again
    unsigned rest;    //  how many the next rest lasts
    uint64_t folded;  //  records folded into KEYS since the last flush
    //  [group]: its consumer thread, for OWNED_GROUPS groups over
    //  OWNED_BY threads (a division a record was a tenth of the split)
    unsigned *owner;
    unsigned owned_groups, owned_by;
};

//  A combiner that does not halve what it sends costs more than it saves:
//  the records are looked up twice, once in the producer's table and once
//  in the stage's.  It is judged once it has folded S_SAMPLE records, and
//  at each flush; one that fails rests for S_REST batches, twice as long
//  at each failure in a row up to S_REST_MAX (as Spark skips a partial
//  aggregation that does not reduce enough).  Keys that are all distinct
//  then cost the double look-up on a few per cent of their records.
#define S_SAMPLE 2048
#define S_REST 64
#define S_REST_MAX 4096

//  Partial aggregates are held across batches, until the producer sends a
//  marker (weir__shuffle_flush) or its table holds this many keys (256 kB
//  of lib/partials.c's slots for counts, 512 kB for other values, kept for
//  the next: a wide stage has a table per producer thread and keyed
//  link).  Folded batch by batch, a word count saved
//  nothing (a batch of 256 words held about 220 distinct ones, and the
//  combiner rested); held for an epoch, 22 million words become a few
//  thousand partials.
#define S_HOLD 4096

weir__shuffle *weir__shuffle_new (void)
{
    weir__shuffle *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->rest = S_REST;
    if (weir__records_init (&self->records)) {
        free (self);
        return NULL;
    }
    weir__buf_init (&self->key);
    return self;
}

void weir__shuffle_destroy (weir__shuffle **self_p)
{
    weir__shuffle *self = *self_p;
    if (!self)
        return;
    for (unsigned c = 0; c < self->nparts; c++) {
        weir__batch_release (&self->parts[c].raw);
        weir__batch_release (&self->parts[c].combined);
    }
    weir__partials_destroy (&self->keys);
    free (self->parts);
    free (self->owner);
    weir__buf_release (&self->key);
    weir__records_release (&self->records);
    free (self);
    *self_p = NULL;
}

//  REC folded by COMBINER into VALUE: 0, or 1 when it is to go on as it
//  is.  A count adds its one here, with no call.
static inline int s_fold (const weir__combiner *combiner, const msgpack_object *rec, void *value)
{
    if (!combiner->counts)
        return combiner->fold (combiner, rec, value);
    ++*(uint64_t *) value;
    return 0;
}

//  A part for each of N consumers, and a table for COMBINER's values when
//  there is one (a shuffle serves one link: the same combiner's, or
//  none).  0 or WEIR_ENOMEM.
static int s_parts (weir__shuffle *self, unsigned n, const weir__combiner *combiner)
{
    if (n > self->nparts) {
        s_part *parts = realloc (self->parts, n * sizeof *parts);
        if (!parts)
            return WEIR_ENOMEM;
        self->parts = parts;
        for (; self->nparts < n; self->nparts++) {
            s_part *p = &parts[self->nparts];
            memset (p, 0, sizeof *p);
            if (weir__batch_init (&p->raw, WEIR__BATCH_HEADER + 1024)
                || weir__batch_init (&p->combined, WEIR__BATCH_HEADER + 1024)) {
                weir__batch_release (&p->raw);
                return WEIR_ENOMEM;
            }
            p->combined.kind = WEIR__BATCH_COMBINED;
        }
    }
    if (combiner && !self->keys && !(self->keys = weir__partials_new (combiner->value_size)))
        return WEIR_ENOMEM;
    return 0;
}

//  Batch B of a part, when it holds records, to consumer C of every
//  rank's (one of this rank's goes into the queue, another rank's down
//  the exchange).  0, or what the queue returned (B is then cleared).
static int s_send_part (const weir__shuffle_to *to, unsigned c, weir__batch *b, uint64_t *wait_ns)
{
    if (!b->count)
        return 0;
    unsigned threads = weir__queue_consumers (to->queue), rank = c / threads;
    int rc = rank == to->rank
                 ? weir__queue_send_batch_to (to->queue, to->producer, c % threads, b, wait_ns)
                 : weir__exchange_send (to->exchange, to->link, rank, to->producer, c % threads, b, wait_ns);
    if (rc)
        weir__batch_clear (b);
    else
        WEIR_KILL_POINT ("shuffle-part-sent");
    return rc;
}

int weir__shuffle_flush (weir__shuffle *self, const weir__combiner *combiner, const weir__shuffle_to *to,
                         uint64_t *wait_ns)
{
    size_t keys = self && self->keys ? weir__partials_count (self->keys) : 0;
    if (!keys)
        return 0;
    //  Each key's partial aggregate into its consumer's batch, then each
    //  batch to its consumer
    //  (a send made the owners' table: there are keys)
    unsigned n = self->owned_by, groups = self->owned_groups;
    int rc = 0;
    uint64_t partials = 0;
    for (size_t i = 0; i < keys && !rc; i++) {
        const char *key;
        size_t len;
        const void *value = weir__partials_entry (self->keys, i, &key, &len);
        //  The key's hash for good, once per key and flush: the table
        //  hashed it its own, cheaper way for every record
        uint64_t hash = weir__key_hash (key, len);
        weir__batch *b = &self->parts[self->owner[weir__key_group (hash, groups)]].combined;
        int r = combiner->pack (combiner, key, len, hash, value, b);
        if (r < 0)
            rc = WEIR_ENOMEM;
        b->count += r == 0;
        partials += r == 0;
    }
    for (unsigned c = 0; c < n; c++) {
        weir__batch *b = &self->parts[c].combined;
        int r = rc ? (weir__batch_clear (b), 0) : s_send_part (to, c, b, wait_ns);
        if (!rc)
            rc = r;
    }
    weir__partials_clear (self->keys);
    //  Too little folded: rest.  A flush of a few records (an epoch's end
    //  in a trickle) says nothing either way.
    if (self->folded < S_SAMPLE)
        ;
    else if (partials * 2 > self->folded) {
        self->plain = self->rest;
        self->rest = self->rest < S_REST_MAX ? self->rest * 2 : S_REST_MAX;
    }
    else
        self->rest = S_REST;
    self->folded = 0;
    return rc;
}

//  Each of GROUPS groups' owner among N threads, in SELF->owner.  0 or
//  WEIR_ENOMEM.
static int s_owners (weir__shuffle *self, unsigned groups, unsigned n)
{
    if (self->owned_groups == groups && self->owned_by == n)
        return 0;
    unsigned *owner = realloc (self->owner, groups * sizeof *owner);
    if (!owner)
        return WEIR_ENOMEM;
    for (unsigned g = 0; g < groups; g++)
        owner[g] = weir__key_owner (g, groups, n);
    self->owner = owner;
    self->owned_groups = groups;
    self->owned_by = n;
    return 0;
}

int weir__shuffle_send (weir__shuffle *self, const weir__key *key, unsigned groups,
                        const weir__combiner *combiner, const weir__shuffle_to *to, const char *payload,
                        size_t len, weir__shuffle_reject_fn *reject, void *ctx, uint32_t *sent,
                        uint64_t *wait_ns)
{
    unsigned n = weir__queue_consumers (to->queue) * to->ranks;
    *sent = 0;
    const weir__combiner *fold = combiner;
    if (fold && self->plain) {
        self->plain--;
        fold = NULL;
    }
    int rc = s_parts (self, n, combiner);
    if (!rc)
        rc = s_owners (self, groups, n);
    if (rc)
        return rc;
    weir__records_reset (&self->records, payload, len);
    uint32_t folded = 0;
    for (;;) {
        size_t from = self->records.off;
        msgpack_object rec;
        int more = weir__records_next (&self->records, &rec);
        if (more == 0)
            break;
        uint64_t hash = 0;
        const char *k = NULL;
        size_t size = self->records.off - from, klen = 0;
        if (more < 0)
            rc = more == WEIR__RECORDS_NOMEM ? WEIR_ENOMEM : WEIR_ECORRUPT;
        //  One thread needs no hash, and a record no longer than the limit
        //  holds no key that is (a key is part of its record, and packed
        //  in its shortest form); a combiner needs the key, and the hash
        //  only for a record it leaves as it is
        else if ((n > 1 || fold || size > WEIR__KEY_MAX_BYTES)
                 && weir__key_of (key, &rec, &self->key, &k, &klen, fold || n == 1 ? NULL : &hash))
            rc = WEIR_ENOMEM;
        if (rc)
            break;
        if (klen > WEIR__KEY_MAX_BYTES) {
            char reason[160];
            snprintf (reason, sizeof reason,
                      "its key (key=%s) is %zu bytes, longer than the %u bytes a key may have",
                      weir__key_path (key), klen, (unsigned) WEIR__KEY_MAX_BYTES);
            if ((rc = reject (ctx, &rec, reason)))
                break;
            continue;
        }
        if (fold) {
            int fresh;
            void *value = weir__partials_upsert (self->keys, k, klen, &fresh);
            if (!value) {
                rc = WEIR_ENOMEM;
                break;
            }
            if (s_fold (fold, &rec, value) == 0) {
                folded++;
                continue;
            }
            if (n > 1)
                hash = weir__key_hash (k, klen);
        }
        //  With one thread every group is its, whatever the hash (0 when
        //  not worked out)
        s_part *p = &self->parts[self->owner[weir__key_group (hash, groups)]];
        if (weir__batch_append (&p->raw, payload + from, size)) {
            rc = WEIR_ENOMEM;
            break;
        }
        p->raw.count++;
    }
    //  Every part's records go, or after a failure none: none is left for
    //  the next batch to carry out of order.  What was folded waits for the
    //  flush, which comes before the producer's next marker, and counts as
    //  sent now.
    self->folded += folded;
    *sent = folded;
    for (unsigned c = 0; c < n; c++) {
        s_part *p = &self->parts[c];
        uint32_t count = p->raw.count;
        int r = 0;
        if (rc)
            weir__batch_clear (&p->raw);
        else if (!(r = s_send_part (to, c, &p->raw, wait_ns)))
            *sent += count;
        if (!rc)
            rc = r;
    }
    size_t keys = fold ? weir__partials_count (self->keys) : 0;
    if (!rc && (keys >= S_HOLD || (self->folded >= S_SAMPLE && keys * 2 > self->folded)))
        rc = weir__shuffle_flush (self, combiner, to, wait_ns);
    return rc;
}

int weir__shuffle_ready (weir__shuffle *self, unsigned groups, const weir__combiner *combiner,
                         const weir__shuffle_to *to)
{
    unsigned n = weir__queue_consumers (to->queue) * to->ranks;
    int rc = s_parts (self, n, combiner);
    return rc ? rc : s_owners (self, groups, n);
}

//  After a fold at emit that added a key or completed the sample: flush
//  when the table holds enough keys, or too many for what was folded.  1
//  (the record counts as folded), or what a flush returned, negative
static __attribute__ ((noinline)) int s_judge (weir__shuffle *self, const weir__combiner *combiner,
                                               const weir__shuffle_to *to, uint64_t *wait_ns)
{
    size_t keys = weir__partials_count (self->keys);
    if (keys >= S_HOLD || (self->folded >= S_SAMPLE && keys * 2 > self->folded)) {
        int rc = weir__shuffle_flush (self, combiner, to, wait_ns);
        if (rc)
            return rc < 0 ? rc : WEIR_EABORTED;  //  a queue closed: the job ends
    }
    return 1;
}

//  The fold at emit of a record that is not a count of a word seen
//  before: a new key, or a combiner that folds otherwise.  As
//  weir__shuffle_fold, and apart from it, so that its common case keeps
//  nothing alive across a call
static __attribute__ ((noinline)) int s_fold_str (weir__shuffle *self, const weir__combiner *combiner,
                                                  const weir__shuffle_to *to, const char *s, size_t n,
                                                  uint64_t *wait_ns)
{
    int fresh;
    void *value = weir__partials_upsert_str (self->keys, s, n, &fresh);
    if (!value)
        return WEIR_ENOMEM;
    msgpack_object rec = {.type = MSGPACK_OBJECT_STR};
    rec.via.str.ptr = s;
    rec.via.str.size = (uint32_t) n;
    if (s_fold (combiner, &rec, value))
        return 0;
    //  The table is judged as a send judges it after each batch; it can
    //  only come to hold enough keys, or too many for what was folded,
    //  when a key is new, or when the sample is complete
    if (++self->folded == S_SAMPLE || fresh)
        return s_judge (self, combiner, to, wait_ns);
    return 1;
}

int weir__shuffle_fold (weir__shuffle *self, const weir__combiner *combiner, const weir__shuffle_to *to,
                        const char *s, size_t n, uint64_t *wait_ns)
{
    //  Resting, the records go as they are, and the sends count the rest
    //  down batch by batch
    if (self->plain)
        return 0;
    //  A word counted before is found inline and counted here
    uint64_t *count;
    if (combiner->counts && (count = weir__partials_find_str (self->keys, s, n))) {
        ++*count;
        return ++self->folded == S_SAMPLE ? s_judge (self, combiner, to, wait_ns) : 1;
    }
    return s_fold_str (self, combiner, to, s, n, wait_ns);
}

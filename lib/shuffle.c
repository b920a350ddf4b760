/*  lib/shuffle.c - batches split by key over a keyed stage's threads.  */
#include "config.h"
#include "lib/shuffle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/batch.h"
#include "lib/buf.h"
#include "lib/keytable.h"
#include "lib/killpoint.h"

//  What goes to one consumer thread
typedef struct {
    weir__batch raw;       //  records as they came
    weir__batch combined;  //  partial aggregates (kind WEIR__BATCH_COMBINED)
    weir__keytable *keys;  //  the partial aggregate of each key, with a combiner
    uint32_t folded;       //  records folded into KEYS
} s_part;

struct weir__shuffle {
    weir__records records;  //  the batch being split
    weir__buf key;          //  the key of the record in hand, when not its own bytes
    s_part *parts;          //  [consumer]
    unsigned nparts;
    size_t value_size;  //  of the parts' KEYS, made for the first combiner
    unsigned plain;     //  batches to send without the combiner before it is tried again
};

//  A combiner that does not halve what a batch sends costs more than it
//  saves: the records are looked up twice, once in the producer's table
//  and once in the stage's.  Then it rests for this many batches (as
//  Spark skips a partial aggregation that does not reduce enough).
#define S_REST 64

weir__shuffle *weir__shuffle_new (void)
{
    weir__shuffle *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
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
        weir__keytable_destroy (&self->parts[c].keys);
    }
    free (self->parts);
    weir__buf_release (&self->key);
    weir__records_release (&self->records);
    free (self);
    *self_p = NULL;
}

//  A part for each of N consumers, with tables for COMBINER's values when
//  there is one (a producer feeds one stage per link: the same
//  combiner's, or none).  0 or WEIR_ENOMEM.
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
    for (unsigned c = 0; combiner && c < n; c++) {
        s_part *p = &self->parts[c];
        if (p->keys && self->value_size != combiner->value_size)
            weir__keytable_destroy (&p->keys);
        if (!p->keys && !(p->keys = weir__keytable_new (combiner->value_size)))
            return WEIR_ENOMEM;
    }
    if (combiner)
        self->value_size = combiner->value_size;
    return 0;
}

//  The partial aggregates of part P, into its combined batch (its keys
//  are cleared once the part is sent).  0 or -1.
static int s_pack (s_part *p, const weir__combiner *combiner)
{
    size_t keys = weir__keytable_count (p->keys);
    for (size_t i = 0; i < keys; i++) {
        const char *key;
        size_t len;
        const void *value = weir__keytable_entry (p->keys, i, &key, &len);
        int rc = combiner->pack (combiner, key, len, weir__keytable_hash (p->keys, i), value, &p->combined);
        if (rc < 0)
            return -1;
        p->combined.count += rc == 0;
    }
    return 0;
}

int weir__shuffle_send (weir__shuffle *self, const weir__key *key, unsigned groups,
                        const weir__combiner *combiner, weir__queue *queue, unsigned producer,
                        const char *payload, size_t len, weir__shuffle_reject_fn *reject, void *ctx,
                        uint32_t *sent, uint64_t *wait_ns)
{
    unsigned n = weir__queue_consumers (queue);
    *sent = 0;
    if (combiner && self->plain) {
        self->plain--;
        combiner = NULL;
    }
    int rc = s_parts (self, n, combiner);
    if (rc)
        return rc;
    weir__records_reset (&self->records, payload, len);
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
        //  in its shortest form); a combiner needs the key
        else if ((n > 1 || combiner || size > WEIR__KEY_MAX_BYTES)
                 && weir__key_of (key, &rec, &self->key, &k, &klen, &hash))
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
        unsigned c = n == 1 ? 0 : weir__key_owner (weir__key_group (hash, groups), groups, n);
        s_part *p = &self->parts[c];
        if (combiner) {
            int fresh;
            void *value = weir__keytable_upsert (p->keys, k, klen, hash, &fresh);
            if (!value) {
                rc = WEIR_ENOMEM;
                break;
            }
            if (combiner->fold (combiner, &rec, value) == 0) {
                p->folded++;
                continue;
            }
        }
        if (weir__batch_append (&p->raw, payload + from, size)) {
            rc = WEIR_ENOMEM;
            break;
        }
        p->raw.count++;
    }
    //  Every part goes, or after a failure none: none is left for the
    //  next batch to carry out of order
    uint32_t folded = 0, partials = 0;
    for (unsigned c = 0; c < n; c++) {
        s_part *p = &self->parts[c];
        if (!rc && combiner && s_pack (p, combiner))
            rc = WEIR_ENOMEM;
        folded += p->folded;
        partials += p->combined.count;
        weir__batch *b[2] = {&p->combined, &p->raw};
        for (int i = 0; i < 2; i++) {
            uint32_t count = b[i]->count;
            if (!count)
                continue;
            int r = rc ? rc : weir__queue_send_batch_to (queue, producer, c, b[i], wait_ns);
            if (r)
                weir__batch_clear (b[i]);
            else {
                *sent += i ? count : p->folded;
                WEIR_KILL_POINT ("shuffle-part-sent");
            }
            if (!rc)
                rc = r;
        }
        if (p->keys)
            weir__keytable_clear (p->keys);
        p->folded = 0;
    }
    if (combiner && (uint64_t) partials * 2 > folded)
        self->plain = S_REST;
    return rc;
}

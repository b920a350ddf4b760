/*  lib/shuffle.c - batches split by key over a keyed stage's threads.  */
#include "config.h"
#include "lib/shuffle.h"

#include <stdio.h>
#include <stdlib.h>

#include "lib/batch.h"
#include "lib/buf.h"

struct weir__shuffle {
    weir__records records;  //  the batch being split
    weir__buf key;          //  the key of the record in hand
    weir__batch *parts;     //  [consumer]
    unsigned nparts;
};

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
    for (unsigned c = 0; c < self->nparts; c++)
        weir__batch_release (&self->parts[c]);
    free (self->parts);
    weir__buf_release (&self->key);
    weir__records_release (&self->records);
    free (self);
    *self_p = NULL;
}

//  A part for each of N consumers.  0 or WEIR_ENOMEM.
static int s_parts (weir__shuffle *self, unsigned n)
{
    if (n <= self->nparts)
        return 0;
    weir__batch *parts = realloc (self->parts, n * sizeof *parts);
    if (!parts)
        return WEIR_ENOMEM;
    self->parts = parts;
    for (; self->nparts < n; self->nparts++)
        if (weir__batch_init (&parts[self->nparts], WEIR__BATCH_HEADER + 1024))
            return WEIR_ENOMEM;
    return 0;
}

int weir__shuffle_send (weir__shuffle *self, const weir__key *key, unsigned groups, weir__queue *queue,
                        unsigned producer, const char *payload, size_t len, weir__shuffle_reject_fn *reject,
                        void *ctx, uint32_t *sent, uint64_t *wait_ns)
{
    unsigned n = weir__queue_consumers (queue);
    *sent = 0;
    int rc = s_parts (self, n);
    if (rc)
        return rc;
    weir__records_reset (&self->records, payload, len);
    for (;;) {
        size_t from = self->records.off;
        msgpack_object rec;
        int more = weir__records_next (&self->records, &rec);
        if (more == 0)
            break;
        uint64_t hash;
        if (more < 0)
            rc = more == WEIR__RECORDS_NOMEM ? WEIR_ENOMEM : WEIR_ECORRUPT;
        else if (weir__key_pack (key, &rec, &self->key, &hash))
            rc = WEIR_ENOMEM;
        if (rc)
            break;
        if (self->key.len > WEIR__KEY_MAX_BYTES) {
            char reason[160];
            snprintf (reason, sizeof reason,
                      "its key (key=%s) is %zu bytes, longer than the %u bytes a key may have",
                      weir__key_path (key), self->key.len, (unsigned) WEIR__KEY_MAX_BYTES);
            if ((rc = reject (ctx, &rec, reason)))
                break;
            continue;
        }
        unsigned c = n == 1 ? 0 : weir__key_owner (weir__key_group (hash, groups), groups, n);
        if (weir__batch_append (&self->parts[c], payload + from, self->records.off - from)) {
            rc = WEIR_ENOMEM;
            break;
        }
        self->parts[c].count++;
    }
    //  Every part goes, or after a failure none: none is left for the
    //  next batch to carry out of order
    for (unsigned c = 0; c < n; c++) {
        uint32_t count = self->parts[c].count;
        if (!count)
            continue;
        int r = rc ? rc : weir__queue_send_batch_to (queue, producer, c, &self->parts[c], wait_ns);
        if (r)
            weir__batch_clear (&self->parts[c]);
        else
            *sent += count;
        if (!rc)
            rc = r;
    }
    return rc;
}

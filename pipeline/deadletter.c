/*  pipeline/deadletter.c - the file of a stage's bad records.  */
#include "config.h"
#include "pipeline/deadletter.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lib/batch.h"
#include "lib/jsontext.h"
#include "lib/pack.h"
#include "writers/outfile.h"

//  A record's bytes kept in its entry at most: enough to see what was
//  wrong, never a copy of a huge input
#define S_KEEP_BYTES ((size_t) 64 << 10)

struct weir__deadletter {
    const char *element;
    pthread_mutex_t lock;
    weir__outfile file;  //  one thread's buffer, under the lock
    weir__batch entry;   //  the entry being packed
};

int weir__deadletter_open (const char *element, const char *path, const char *resume, weir__deadletter **out,
                           weir__err *err)
{
    *out = NULL;
    weir__deadletter *self = calloc (1, sizeof *self);
    if (!self || weir__batch_init (&self->entry, 256)) {
        free (self);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    self->element = element;
    int rc = weir__outfile_open (&self->file, element, path, 1, resume, 0, err);
    if (rc) {
        weir__batch_release (&self->entry);
        free (self);
        return rc;
    }
    pthread_mutex_init (&self->lock, NULL);
    *out = self;
    return 0;
}

static int s_key (weir__batch *b, const char *key)
{
    return weir__pack_str (b, key, strlen (key));
}

//  The head every entry starts with: a map of PAIRS, then element,
//  reason, epoch.
static int s_head (weir__deadletter *self, uint32_t pairs, uint64_t epoch, const char *reason)
{
    weir__batch *b = &self->entry;
    weir__batch_clear (b);
    b->oom = 0;
    return weir__pack_map (b, pairs) || s_key (b, "element") || s_key (b, self->element)
           || s_key (b, "reason") || s_key (b, reason) || s_key (b, "epoch") || weir__pack_uint64 (b, epoch);
}

//  The entry packed: append it to the file (lock held).
static int s_put (weir__deadletter *self, int packed, weir__err *err)
{
    if (packed || self->entry.oom)
        return weir__err_set (err, WEIR_ENOMEM, "%s: out of memory writing a dead letter", self->element);
    weir__buf *out = weir__outfile_buf (&self->file, 0);
    if (weir__buf_append (out, self->entry.data + WEIR__BATCH_HEADER, weir__batch_payload (&self->entry)))
        return weir__err_set (err, WEIR_ENOMEM, "%s: out of memory writing a dead letter", self->element);
    return weir__outfile_spill (&self->file, 0, err);
}

int weir__deadletter_input (weir__deadletter *self, uint64_t epoch, const weir__bad *bad, weir__err *err)
{
    pthread_mutex_lock (&self->lock);
    weir__batch *b = &self->entry;
    size_t keep = bad->len < S_KEEP_BYTES ? bad->len : S_KEEP_BYTES;
    const char *file = bad->path ? bad->path : "";
    //  Text stays text (a str), so that a bad line reads as itself in
    //  the dead letter, not as base64; a sequence cut at the end of what
    //  is kept does not make it binary
    size_t text = weir__jsontext_utf8 (bad->bytes, keep);
    int str = text == keep || (keep < bad->len && keep - text < 4 && text > 0);
    int packed = s_head (self, bad->line ? 8 : 7, epoch, bad->reason) || s_key (b, "file") || s_key (b, file)
                 || s_key (b, "offset") || weir__pack_uint64 (b, bad->offset)
                 || (bad->line && (s_key (b, "line") || weir__pack_uint64 (b, bad->line))) || s_key (b, "size")
                 || weir__pack_uint64 (b, bad->size) || s_key (b, "record")
                 || weir__pack_bytes (b, bad->bytes, str ? text : keep, !str);
    int rc = s_put (self, packed, err);
    pthread_mutex_unlock (&self->lock);
    return rc;
}

int weir__deadletter_record (weir__deadletter *self, uint64_t epoch, const msgpack_object *record,
                             const char *reason, weir__err *err)
{
    pthread_mutex_lock (&self->lock);
    weir__batch *b = &self->entry;
    int packed = s_head (self, 4, epoch, reason) || s_key (b, "record") || weir__pack_object (b, record);
    int rc = s_put (self, packed, err);
    pthread_mutex_unlock (&self->lock);
    return rc;
}

int weir__deadletter_commit (weir__deadletter *self, char *out, weir__err *err)
{
    pthread_mutex_lock (&self->lock);
    int rc = weir__outfile_flush (&self->file, 0, err);
    if (!rc)
        rc = weir__outfile_commit (&self->file, out, err);
    pthread_mutex_unlock (&self->lock);
    return rc;
}

int weir__deadletter_close (weir__deadletter **self_p, weir__err *err)
{
    weir__deadletter *self = *self_p;
    if (!self)
        return 0;
    int rc = weir__outfile_close (&self->file, err);
    weir__batch_release (&self->entry);
    pthread_mutex_destroy (&self->lock);
    free (self);
    *self_p = NULL;
    return rc;
}

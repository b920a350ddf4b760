/*  writers/leveldb.c - [key, value] records into a LevelDB database.

    Each batch of records becomes one WriteBatch; at every epoch barrier a
    synced write makes everything before it durable.  Puts are idempotent:
    records replayed after a resume write the same keys again, so nothing
    is written twice in effect.  A str or bin key or value is stored as its
    bytes; an integer or any other value as its JSON-like text (so
    ["word", 7] stores "7").  */
#include "config.h"

#include <leveldb/c.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/batch.h"
#include "lib/leveldb.h"
#include "lib/text.h"
#include "writers/writer.h"

typedef struct {
    leveldb_t *db;
    leveldb_options_t *options;
    leveldb_writeoptions_t *plain, *synced;
    char *path;
    unsigned threads;
    weir__records *decoders;
    weir__buf *scratch;  //  per thread, for values stored as text
} s_leveldb;

static const weir_property_info s_props[] = {
    {"path", NULL, "the database directory (created if missing)"},
    {NULL, NULL, NULL},
};

static void s_free (s_leveldb *self)
{
    if (self->db)
        leveldb_close (self->db);
    if (self->options)
        leveldb_options_destroy (self->options);
    if (self->plain)
        leveldb_writeoptions_destroy (self->plain);
    if (self->synced)
        leveldb_writeoptions_destroy (self->synced);
    for (unsigned t = 0; self->decoders && t < self->threads; t++)
        weir__records_release (&self->decoders[t]);
    for (unsigned t = 0; self->scratch && t < self->threads; t++)
        weir__buf_release (&self->scratch[t]);
    free (self->decoders);
    free (self->scratch);
    free (self->path);
    free (self);
}

static int s_open (weir__props *props, unsigned threads, const char *resume, void **state, weir__err *err)
{
    const char *path = weir__props_get (props, "path", NULL);
    if (!path)
        return weir__err_set (err, WEIR_EPROPERTY, "leveldb: property 'path' is required");
    s_leveldb *self = calloc (1, sizeof *self);
    if (!self || !(self->path = strdup (path)) || !(self->decoders = calloc (threads, sizeof *self->decoders))
        || !(self->scratch = calloc (threads, sizeof *self->scratch))) {
        if (self)
            s_free (self);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    self->threads = threads;
    for (unsigned t = 0; t < threads; t++)
        weir__records_init (&self->decoders[t]);
    self->options = weir__leveldb_options (1);
    self->plain = leveldb_writeoptions_create ();
    self->synced = leveldb_writeoptions_create ();
    leveldb_writeoptions_set_sync (self->synced, 1);
    char *msg = NULL;
    self->db = leveldb_open (self->options, path, &msg);
    if (!self->db) {
        char why[512];
        weir__err_set (err, WEIR_EIO, "leveldb: cannot open '%s' for writing: %s", path,
                       weir__leveldb_why (msg, why, sizeof why));
        leveldb_free (msg);
        s_free (self);
        return WEIR_EIO;
    }
    *state = self;
    return 0;
}

//  The bytes of O: its own for str and bin, else its text (in SCRATCH).
static int s_bytes (const msgpack_object *o, weir__buf *scratch, const char **p, size_t *n)
{
    if (o->type == MSGPACK_OBJECT_STR) {
        *p = o->via.str.ptr;
        *n = o->via.str.size;
        return 0;
    }
    if (o->type == MSGPACK_OBJECT_BIN) {
        *p = o->via.bin.ptr;
        *n = o->via.bin.size;
        return 0;
    }
    size_t at = scratch->len;
    if (weir__text_append (scratch, o))
        return -1;
    //  Offsets, not pointers: the buffer may move as it grows
    *p = (const char *) (uintptr_t) at;
    *n = scratch->len - at;
    return 1;
}

static int s_write (void *state, unsigned thread, const char *payload, size_t len, uint32_t count,
                    weir__err *err)
{
    s_leveldb *self = state;
    weir__records *it = &self->decoders[thread];
    weir__records_reset (it, payload, len);
    leveldb_writebatch_t *batch = leveldb_writebatch_create ();
    weir__buf *scratch = &self->scratch[thread];
    msgpack_object o;
    int more, rc = 0;
    while ((more = weir__records_next (it, &o)) == 1) {
        const char *k, *v;
        size_t kn, vn;
        scratch->len = 0;
        int kt, vt;
        if (o.type != MSGPACK_OBJECT_ARRAY || o.via.array.size != 2) {
            rc = weir__err_set (err, WEIR_ECORRUPT,
                                "leveldb: '%s' takes [key, value] records, got msgpack type %d%s", self->path,
                                (int) o.type, o.type == MSGPACK_OBJECT_ARRAY ? " of another size" : "");
            break;
        }
        if ((kt = s_bytes (&o.via.array.ptr[0], scratch, &k, &kn)) < 0
            || (vt = s_bytes (&o.via.array.ptr[1], scratch, &v, &vn)) < 0) {
            rc = weir__err_set (err, WEIR_ENOMEM, "leveldb: out of memory");
            break;
        }
        if (kt)
            k = scratch->data + (uintptr_t) k;
        if (vt)
            v = scratch->data + (uintptr_t) v;
        leveldb_writebatch_put (batch, k, kn, v, vn);
    }
    if (!rc && more < 0)
        rc = weir__err_set (err, WEIR_ECORRUPT, "leveldb: malformed record in a batch");
    if (!rc) {
        char *msg = NULL;
        leveldb_write (self->db, self->plain, batch, &msg);
        if (msg)
            rc = weir__err_set (err, WEIR_EIO, "leveldb: cannot write '%s': %s", self->path, msg);
        leveldb_free (msg);
    }
    leveldb_writebatch_destroy (batch);
    return rc;
}

static int s_flush (void *state, unsigned thread, weir__err *err)
{
    return 0;
}

static int s_commit (void *state, char *out, weir__err *err)
{
    s_leveldb *self = state;
    //  A synced write makes every earlier write of the log durable
    leveldb_writebatch_t *batch = leveldb_writebatch_create ();
    char *msg = NULL;
    leveldb_write (self->db, self->synced, batch, &msg);
    leveldb_writebatch_destroy (batch);
    int rc = 0;
    if (msg)
        rc = weir__err_set (err, WEIR_EIO, "leveldb: cannot sync '%s': %s", self->path, msg);
    leveldb_free (msg);
    snprintf (out, WEIR__WRITER_STATE_MAX, "synced");
    return rc;
}

static int s_close (void *state, weir__err *err)
{
    s_free (state);
    return 0;
}

const weir__writer_class weir__writer_leveldb = {
    "leveldb", "[key, value] records into a LevelDB database (idempotent puts, synced at every epoch)",
    s_props,   s_open,
    s_write,   s_flush,
    s_commit,  s_close,
};

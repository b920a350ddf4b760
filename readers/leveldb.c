/*  readers/leveldb.c - every entry of a LevelDB database as [key, value].

    Keys and values come out as msgpack str (LevelDB's bytes, unchanged), in
    key order.  The database is one shard; its offset is the number of
    entries read, so a resumed job skips that many from the first key.

    NEEDSWORK: resuming skips entries one by one (linear in the offset);
    remembering the next key in the checkpoint would seek instead, but
    offsets are integers for now.  */
#include "config.h"

#include <leveldb/c.h>
#include <stdlib.h>
#include <string.h>

#include "lib/pack.h"
#include "lib/leveldb.h"
#include "readers/reader.h"

typedef struct {
    leveldb_t *db;
    leveldb_options_t *options;
    leveldb_readoptions_t *read;
} s_leveldb;

static const weir_property_info s_props[] = {
    {"path", NULL, "the database directory (required; must exist)"},
    {NULL, NULL, NULL},
};

static void s_close (void *state)
{
    s_leveldb *self = state;
    if (self->db)
        leveldb_close (self->db);
    if (self->options)
        leveldb_options_destroy (self->options);
    if (self->read)
        leveldb_readoptions_destroy (self->read);
    free (self);
}

static int s_open (weir__props *props, void **state, weir__shards *shards, weir__err *err)
{
    const char *path = weir__props_get (props, "path", NULL);
    if (!path)
        return weir__err_set (err, WEIR_EPROPERTY, "leveldb: property 'path' is required");
    s_leveldb *self = calloc (1, sizeof *self);
    if (!self)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    self->options = weir__leveldb_options (0);
    self->read = weir__leveldb_readoptions ();
    char *msg = NULL;
    self->db = leveldb_open (self->options, path, &msg);
    if (!self->db) {
        char why[512];
        weir__err_set (err, WEIR_EIO, "leveldb: cannot open '%s': %s", path,
                       weir__leveldb_why (msg, why, sizeof why));
        leveldb_free (msg);
        s_close (self);
        return WEIR_EIO;
    }
    if (weir__shards_add (shards, path, 0, UINT64_MAX)) {
        s_close (self);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    *state = self;
    return 0;
}

static int s_read (void *state, weir__shard *shard, uint64_t *offset, weir__sink *sink, weir__err *err)
{
    s_leveldb *self = state;
    leveldb_iterator_t *it = leveldb_create_iterator (self->db, self->read);
    leveldb_iter_seek_to_first (it);
    for (uint64_t skip = *offset; skip > 0 && leveldb_iter_valid (it); skip--)
        leveldb_iter_next (it);
    int rc = 0;
    for (; leveldb_iter_valid (it); leveldb_iter_next (it)) {
        size_t klen, vlen;
        const char *key = leveldb_iter_key (it, &klen);
        const char *value = leveldb_iter_value (it, &vlen);
        static const char pair = (char) 0x92;  //  an array of two
        if (weir__batch_append (&sink->batch, &pair, 1) || weir__pack_str (&sink->batch, key, klen)
            || weir__pack_str (&sink->batch, value, vlen)) {
            rc = weir__err_set (err, WEIR_ENOMEM, "leveldb: out of memory");
            break;
        }
        (*offset)++;
        if ((rc = weir__sink_add (sink)))
            break;
    }
    char *msg = NULL;
    leveldb_iter_get_error (it, &msg);
    if (msg && rc >= 0)
        rc = weir__err_set (err, WEIR_ECORRUPT, "leveldb: '%s' after entry %llu: %s", shard->path,
                            (unsigned long long) *offset, msg);
    leveldb_free (msg);
    leveldb_iter_destroy (it);
    return rc;
}

const weir__reader_class weir__reader_leveldb = {
    "leveldb",
    "every entry of a LevelDB database as [key, value], in key order",
    s_props,
    s_open,
    s_read,
    s_close,
    NULL,
    NULL,
    NULL,
    NULL,
    WEIR__RECORDS_COUNTED,
};

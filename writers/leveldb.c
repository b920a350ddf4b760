/*  writers/leveldb.c - [key, value] records into a LevelDB database.

    Each batch of records becomes one WriteBatch.  Puts are idempotent:
    records replayed after a resume write the same keys again, so nothing
    is written twice in effect.  A str or bin key or value is stored as its
    bytes; an integer or any other value as its JSON text (so
    ["word", 7] stores "7").

    Durability.  A synced write makes its own log durable, not the logs
    before it: when the memtable fills, LevelDB closes its log without
    syncing it and goes on in a new one, so one synced write at the end of
    an epoch does not make the epoch durable (a power cut lost 32,512
    committed records that way).  At each commit, durability=flush (the
    default) has LevelDB write its memtable to a table and wait: tables
    and the manifest are synced, so everything written is.
    durability=sync syncs every write instead.

    The commit marker.  A file WEIR-COMMIT in the database's directory
    says which job committed to it last and how often ("id:ID commit:N");
    the writer's checkpointed state says the same.  A resume checks them:
    a database removed or replaced since the checkpoint is refused rather
    than filled with only the records after it.  LevelDB leaves files it
    does not know alone.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <leveldb/c.h>
#include <sys/random.h>
#include <unistd.h>
#include <weir/plugin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/batch.h"
#include "lib/leveldb.h"
#include "lib/sync.h"
#include "lib/jsontext.h"
#include "writers/writer.h"

#define S_MARKER "WEIR-COMMIT"

typedef struct {
    leveldb_t *db;
    leveldb_options_t *options;
    leveldb_writeoptions_t *plain, *synced;
    char *path;
    int sync_each;  //  durability=sync
    char id[17];    //  the job's, in hex
    uint64_t commits;
    int named;  //  the database's own directory entry was synced
    unsigned threads;
    weir__records *decoders;
    weir__buf *scratch;  //  per thread, for values stored as text
} s_leveldb;

static const weir_property_info s_props[] = {
    {"path", NULL, "the database directory (required; created if missing)"},
    {"durability", "flush",
     "flush: at each epoch end LevelDB writes its memtable to a synced table; sync: every "
     "write is synced"},
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

static int s_new_id (s_leveldb *self, weir__err *err)
{
    unsigned char bytes[8];
    if (getrandom (bytes, sizeof bytes, 0) != (ssize_t) sizeof bytes)
        return weir__err_set (err, WEIR_ESYSTEM, "leveldb: cannot draw a job id: %s", strerror (errno));
    for (size_t i = 0; i < sizeof bytes; i++)
        snprintf (self->id + 2 * i, 3, "%02x", bytes[i]);
    self->commits = 0;
    return 0;
}

//  What the marker in the database says: 0, or -1 when it is missing or
//  unreadable.
static int s_read_marker (const char *path, char *id, uint64_t *commits)
{
    char file[4200];
    snprintf (file, sizeof file, "%s/%s", path, S_MARKER);
    FILE *f = fopen (file, "r");
    if (!f)
        return -1;
    unsigned long long n;
    int got = fscanf (f, "id:%16s commit:%llu", id, &n);
    fclose (f);
    if (got != 2)
        return -1;
    *commits = n;
    return 0;
}

//  Resuming from state RESUME: the database must hold at least what the
//  checkpoint counted on.
static int s_check_marker (s_leveldb *self, const char *resume, weir__err *err)
{
    unsigned long long n;
    if (sscanf (resume, "id:%16s commit:%llu", self->id, &n) != 2)
        return weir__err_set (err, WEIR_ECORRUPT,
                              "leveldb: the checkpoint's state of '%s' is malformed: '%s'", self->path,
                              resume);
    self->commits = n;
    char id[17];
    uint64_t commits;
    if (s_read_marker (self->path, id, &commits))
        return weir__err_set (
            err, WEIR_ECORRUPT,
            "leveldb: '%s' is not the database this job committed %llu times to (no %s in it): "
            "it was removed or replaced since the checkpoint, and resuming would lose the "
            "records committed before",
            self->path, n, S_MARKER);
    if (strcmp (id, self->id) || commits < n)
        return weir__err_set (
            err, WEIR_ECORRUPT,
            "leveldb: '%s' was %s since the checkpoint (its marker says id %s, commit %llu; the "
            "checkpoint says id %s, commit %llu): resuming would lose records",
            self->path, strcmp (id, self->id) ? "written by another job" : "rolled back", id,
            (unsigned long long) commits, self->id, n);
    return 0;
}

//  Write the marker for the commit just made, durably: a temporary file,
//  synced, renamed over the old one, the directory synced.
static int s_write_marker (s_leveldb *self, weir__err *err)
{
    char file[4200], tmp[4220];
    snprintf (file, sizeof file, "%s/%s", self->path, S_MARKER);
    snprintf (tmp, sizeof tmp, "%s.tmp", file);
    int fd = open (tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    char text[64];
    int len =
        snprintf (text, sizeof text, "id:%s commit:%llu\n", self->id, (unsigned long long) self->commits);
    int rc = fd < 0 || write (fd, text, (size_t) len) != len || fsync (fd);
    if (fd >= 0 && close (fd))
        rc = 1;
    if (!rc)
        rc = rename (tmp, file) || weir__sync_dir (self->path);
    //  The database's own name, once
    if (!rc && !self->named)
        rc = weir__sync_parent (self->path);
    if (rc)
        return weir__err_set (err, WEIR_EIO, "leveldb: cannot write '%s': %s", file, strerror (errno));
    self->named = 1;
    return 0;
}

static int s_open (weir__props *props, unsigned threads, const char *resume, unsigned flags, void **state,
                   weir__err *err)
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
    const char *durability = weir__props_get (props, "durability", "flush");
    self->sync_each = strcmp (durability, "sync") == 0;
    if (!self->sync_each && strcmp (durability, "flush")) {
        weir__prop *p = weir__props_find (props, "durability");
        s_free (self);
        return weir__err_at (err, WEIR_EPROPERTY, p->value_offset,
                             "leveldb: property 'durability': '%s' is neither flush nor sync", durability);
    }
    int rc = resume ? s_check_marker (self, resume, err) : s_new_id (self, err);
    if (rc) {
        s_free (self);
        return rc;
    }
    //  A resumed job's database must be there: LevelDB would make a new
    //  empty one
    self->options = weir__leveldb_options (resume == NULL);
    self->plain = leveldb_writeoptions_create ();
    leveldb_writeoptions_set_sync (self->plain, (unsigned char) self->sync_each);
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
    if (weir__jsontext_append (scratch, o))
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
                                "leveldb: '%s' takes [key, value] records, got a msgpack %s%s", self->path,
                                weir_type_name (&o), o.type == MSGPACK_OBJECT_ARRAY ? " of another size" : "");
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
    char *msg = NULL;
    if (self->sync_each) {
        //  Every write was synced, each in the log it went to
    }
    else {
        //  Write the memtable to a table and wait: LevelDB syncs tables and
        //  the manifest.  An empty key range: nothing else is compacted.
        leveldb_compact_range (self->db, "", 0, "", 0);
        //  A compaction's failure shows in the next write: make one
        leveldb_writebatch_t *batch = leveldb_writebatch_create ();
        leveldb_write (self->db, self->synced, batch, &msg);
        leveldb_writebatch_destroy (batch);
    }
    if (msg) {
        int rc = weir__err_set (err, WEIR_EIO, "leveldb: cannot sync '%s': %s", self->path, msg);
        leveldb_free (msg);
        return rc;
    }
    self->commits++;
    int rc = s_write_marker (self, err);
    snprintf (out, WEIR__WRITER_STATE_MAX, "id:%s commit:%llu", self->id, (unsigned long long) self->commits);
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
    NULL,  //  written in place: puts are idempotent, and a failed job leaves what it wrote
    NULL,  //  a synced commit is final: the resume puts again what came after the checkpoint
    NULL,  //  a record that is no [key, value] fails the job
};

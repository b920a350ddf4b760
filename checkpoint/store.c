/*  checkpoint/store.c - checkpoints in LevelDB: one atomic, synced batch
    each.  */
#include "config.h"
#include "checkpoint/store.h"

#include <errno.h>
#include <inttypes.h>
#include <leveldb/c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>
#include <sys/stat.h>

#include "checkpoint/copy.h"
#include "checkpoint/keys.h"
#include "checkpoint/layout.h"
#include "lib/leveldb.h"
#include "lib/killpoint.h"
#include "lib/sync.h"

#define S_PREFIX_LEN WEIR__STORE_PREFIX_LEN

struct weir__store {
    leveldb_t *db;
    leveldb_options_t *options;
    leveldb_readoptions_t *read;
    leveldb_writeoptions_t *write;
    char *dir;
    char *copy;              //  a read-only store: the private copy it opened
    struct timespec synced;  //  the directory's mtime when it was last synced
    //  The blobs of the latest checkpoint, by name, and the writes that
    //  hold their bytes: a blob that has not changed since is not written
    //  again (held_known 0: to be read from the latest checkpoint)
    weir__layout_blob *held;
    size_t nheld;
    int held_known;
};

//  The blobs of a checkpoint, or the bytes they need, sorted by name
//  (and write), to be looked up
typedef struct {
    weir__layout_blob *blobs;
    size_t count, cap;
} s_blobs;

static void s_blobs_release (s_blobs *set)
{
    for (size_t i = 0; i < set->count; i++)
        free (set->blobs[i].name);
    free (set->blobs);
    memset (set, 0, sizeof *set);
}

static int s_blobs_add (s_blobs *set, const char *name, size_t nlen, size_t size, uint64_t held,
                        uint64_t hash)
{
    if (set->count == set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 64;
        weir__layout_blob *more = realloc (set->blobs, cap * sizeof *more);
        if (!more)
            return WEIR_ENOMEM;
        set->blobs = more;
        set->cap = cap;
    }
    char *copy = strndup (name, nlen);
    if (!copy)
        return WEIR_ENOMEM;
    set->blobs[set->count++] = (weir__layout_blob){copy, size, held, hash};
    return 0;
}

static int s_blob_cmp (const void *a, const void *b)
{
    const weir__layout_blob *x = a, *y = b;
    int c = strcmp (x->name, y->name);
    return c ? c : (x->held > y->held) - (x->held < y->held);
}

static void s_blobs_sort (s_blobs *set)
{
    if (set->count)
        qsort (set->blobs, set->count, sizeof *set->blobs, s_blob_cmp);
}

//  The blob NAME (of write *HELD; NULL: any) in SET, or NULL
static const weir__layout_blob *s_blobs_find (const weir__layout_blob *blobs, size_t count, const char *name,
                                              const uint64_t *held)
{
    size_t lo = 0, hi = count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp (blobs[mid].name, name);
        if (c == 0 && held)
            c = (blobs[mid].held > *held) - (blobs[mid].held < *held);
        if (c == 0)
            return &blobs[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static int s_leveldb_error (weir__err *err, int code, const char *what, const char *dir, char *msg)
{
    weir__err_set (err, code, "checkpoint store '%s': %s: %s", dir, what, msg ? msg : "unknown error");
    leveldb_free (msg);
    return code;
}

//  What DIR holds, before LevelDB sees it.  LevelDB's own words do not
//  help a user ("NotFound: /x/ck/LOCK"), and opened with create_if_missing
//  on a directory whose CURRENT was lost, it makes a new empty store and
//  deletes the old tables: a job would silently start again from zero.
//  So a new store is made only in a directory that is missing, empty, or
//  left by a job killed while LevelDB made the store (before it could
//  hold a checkpoint).  0 with *MAKE set when it must be made.
static int s_check_dir (const char *dir, int create, int *make, weir__err *err)
{
    *make = 0;
    struct stat st;
    if (stat (dir, &st)) {
        if (errno != ENOENT || !create)
            return weir__err_set (err, WEIR_EIO, "'%s' holds no checkpoints: %s", dir, strerror (errno));
        //  The new directory's name must survive a power cut as its
        //  checkpoints will
        if (mkdir (dir, 0777) || weir__sync_parent (dir))
            return weir__err_set (err, WEIR_EIO, "cannot create checkpoint directory '%s': %s", dir,
                                  strerror (errno));
        *make = 1;
        return 0;
    }
    if (!S_ISDIR (st.st_mode))
        return weir__err_set (err, WEIR_EIO, "checkpoint directory '%s' is not a directory", dir);
    DIR *d = opendir (dir);
    if (!d)
        return weir__err_set (err, WEIR_EIO, "cannot read checkpoint directory '%s': %s", dir,
                              strerror (errno));
    //  OPENED: a file that only a store LevelDB finished making has (a
    //  log, a table, a later manifest, weir's own files)
    int current = 0, leveldb = 0, opened = 0, other = 0;
    struct dirent *e;
    while ((e = readdir (d))) {
        const char *n = e->d_name;
        size_t len = strlen (n);
        if (!strcmp (n, ".") || !strcmp (n, ".."))
            continue;
        if (!strcmp (n, "CURRENT"))
            current = 1;
        else if (!strcmp (n, "MANIFEST-000001") || !strcmp (n, "LOCK") || !strncmp (n, "LOG", 3)
                 || (len > 6 && !strcmp (n + len - 6, ".dbtmp")))
            leveldb = 1;
        else if (!strncmp (n, "MANIFEST-", 9) || !strcmp (n, WEIR__STORE_PID_FILE)
                 || !strcmp (n, WEIR__STORE_LATEST_FILE)
                 || (len > 4 && (!strcmp (n + len - 4, ".ldb") || !strcmp (n + len - 4, ".log"))))
            leveldb = opened = 1;
        else
            other = 1;
    }
    closedir (d);
    if (current)
        return 0;
    //  A job killed while LevelDB made the store (it writes its first
    //  manifest, then CURRENT) left no checkpoint: nothing can be lost, and
    //  LevelDB makes the store again over what it left
    if (leveldb && !opened && !other && create) {
        *make = 1;
        return 0;
    }
    if (leveldb)
        return weir__err_set (
            err, WEIR_ECORRUPT,
            "checkpoint directory '%s' has lost its CURRENT file: its checkpoints cannot be read; "
            "restore the directory from a copy, or move it away to start the job again",
            dir);
    if (other)
        return weir__err_set (err, WEIR_EIO, "'%s' is not a checkpoint directory: it holds other files", dir);
    if (!create)
        return weir__err_set (err, WEIR_EIO, "'%s' holds no checkpoints", dir);
    *make = 1;
    return 0;
}

//  LevelDB's reason for not opening DIR, in words for people.
static int s_open_error (weir__err *err, const char *dir, char *msg)
{
    if (msg && strstr (msg, "lock") && strstr (msg, "Resource temporarily unavailable")) {
        //  The job that holds the lock wrote its process id
        char path[4200];
        long pid = 0;
        snprintf (path, sizeof path, "%s/%s", dir, WEIR__STORE_PID_FILE);
        FILE *f = fopen (path, "r");
        if (f && fscanf (f, "%ld", &pid) != 1)
            pid = 0;
        if (f)
            fclose (f);
        if (pid > 0)
            weir__err_set (err, WEIR_EIO, "checkpoint directory '%s' is in use by another weir (pid %ld)",
                           dir, pid);
        else
            weir__err_set (err, WEIR_EIO, "checkpoint directory '%s' is in use by another weir", dir);
    }
    else if (msg && strstr (msg, "Corruption"))
        weir__err_set (
            err, WEIR_ECORRUPT,
            "the checkpoints of '%s' are damaged (%s): restore the directory from a copy, or move it "
            "away to start the job again",
            dir, msg);
    else
        weir__err_set (err, WEIR_EIO, "cannot open the checkpoints of '%s': %s", dir,
                       msg ? msg : "unknown error");
    leveldb_free (msg);
    return WEIR_EIO;
}

//  Open a private copy of DIR, read-only.  A job may be writing meanwhile,
//  so that the copy's manifest and tables do not match: try again.
static int s_open_copy (weir__store *self, weir__err *err)
{
    for (int tries = 0;; tries++) {
        if (!(self->copy = weir__copy_new (self->dir, err)))
            return WEIR_EIO;
        self->options = weir__leveldb_options (0);
        self->read = weir__leveldb_readoptions ();
        char *msg = NULL;
        self->db = leveldb_open (self->options, self->copy, &msg);
        if (self->db)
            return 0;
        if (tries == 4)
            return s_open_error (err, self->dir, msg);
        leveldb_free (msg);
        leveldb_options_destroy (self->options);
        leveldb_readoptions_destroy (self->read);
        self->options = NULL;
        self->read = NULL;
        weir__copy_destroy (&self->copy);
    }
}

int weir__store_open (const char *dir, int create, weir__store **out, weir__err *err)
{
    *out = NULL;
    int make;
    int rc = s_check_dir (dir, create, &make, err);
    if (rc)
        return rc;
    weir__store *self = calloc (1, sizeof *self);
    if (!self || !(self->dir = strdup (dir))) {
        free (self);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    if (!create) {
        if ((rc = s_open_copy (self, err)))
            weir__store_destroy (&self);
        *out = self;
        return rc;
    }
    self->options = weir__leveldb_options (make);
    //  Blobs are model weights: compressing them costs time for little
    leveldb_options_set_compression (self->options, leveldb_no_compression);
    leveldb_options_set_write_buffer_size (self->options, 64 << 20);
    self->read = weir__leveldb_readoptions ();
    self->write = leveldb_writeoptions_create ();
    leveldb_writeoptions_set_sync (self->write, 1);
    char *msg = NULL;
    self->db = leveldb_open (self->options, dir, &msg);
    if (!self->db) {
        s_open_error (err, dir, msg);
        weir__store_destroy (&self);
        return WEIR_EIO;
    }
    //  For the message another job gets on the lock
    char path[4200];
    snprintf (path, sizeof path, "%s/%s", dir, WEIR__STORE_PID_FILE);
    FILE *f = fopen (path, "w");
    if (f) {
        fprintf (f, "%ld\n", (long) getpid ());
        fclose (f);
    }
    *out = self;
    return 0;
}

int weir__store_reopen (weir__store *self, weir__err *err)
{
    if (self->db)
        leveldb_close (self->db);
    char *msg = NULL;
    self->db = leveldb_open (self->options, self->dir, &msg);
    if (!self->db)
        return s_leveldb_error (err, WEIR_EIO, "cannot reopen", self->dir, msg);
    return 0;
}

void weir__store_destroy (weir__store **self_p)
{
    weir__store *self = *self_p;
    if (!self)
        return;
    if (self->db)
        leveldb_close (self->db);
    if (self->options)
        leveldb_options_destroy (self->options);
    if (self->read)
        leveldb_readoptions_destroy (self->read);
    if (self->write)
        leveldb_writeoptions_destroy (self->write);
    weir__copy_destroy (&self->copy);
    s_blobs latest = {self->held, self->nheld, self->nheld};
    s_blobs_release (&latest);
    free (self->dir);
    free (self);
    *self_p = NULL;
}

const char *weir__store_dir (const weir__store *self)
{
    return self->dir;
}

int weir__store_epochs (weir__store *self, uint64_t **epochs, size_t *count, weir__err *err)
{
    *epochs = NULL;
    *count = 0;
    size_t cap = 0;
    leveldb_iterator_t *it = leveldb_create_iterator (self->db, self->read);
    leveldb_iter_seek (it, "e/", 2);
    int rc = 0;
    while (leveldb_iter_valid (it)) {
        size_t klen;
        const char *key = leveldb_iter_key (it, &klen);
        if (klen < S_PREFIX_LEN || memcmp (key, "e/", 2) != 0)
            break;
        uint64_t epoch = strtoull (key + 2, NULL, 10);
        //  An epoch counts only once its checksum key is there
        char probe[64];
        weir__store_prefix (probe, sizeof probe, epoch);
        strcat (probe, WEIR__STORE_SUM);
        leveldb_iter_seek (it, probe, strlen (probe));
        if (leveldb_iter_valid (it)) {
            key = leveldb_iter_key (it, &klen);
            if (klen == strlen (probe) && memcmp (key, probe, klen) == 0) {
                if (*count == cap) {
                    cap = cap ? cap * 2 : 16;
                    uint64_t *more = realloc (*epochs, cap * sizeof *more);
                    if (!more) {
                        rc = weir__err_set (err, WEIR_ENOMEM, "out of memory");
                        break;
                    }
                    *epochs = more;
                }
                (*epochs)[(*count)++] = epoch;
            }
        }
        //  On to the next epoch's keys
        weir__store_prefix (probe, sizeof probe, epoch);
        probe[S_PREFIX_LEN - 1] = '0';  //  '/' + 1
        leveldb_iter_seek (it, probe, S_PREFIX_LEN);
    }
    char *msg = NULL;
    leveldb_iter_get_error (it, &msg);
    leveldb_iter_destroy (it);
    if (msg && !rc)
        rc = s_leveldb_error (err, WEIR_ECORRUPT, "cannot list checkpoints", self->dir, msg);
    else
        leveldb_free (msg);
    if (rc) {
        free (*epochs);
        *epochs = NULL;
        *count = 0;
    }
    return rc;
}

uint64_t weir__store_written (const weir__store *self)
{
    char path[4200];
    unsigned long long epoch = 0;
    snprintf (path, sizeof path, "%s/%s", self->dir, WEIR__STORE_LATEST_FILE);
    FILE *f = fopen (path, "r");
    if (f && fscanf (f, "%llu", &epoch) != 1)
        epoch = 0;
    if (f)
        fclose (f);
    return epoch;
}

//  The epoch pointer KEY (latest, best): 0 and *EPOCH, 1 when there is none
static int s_pointer (weir__store *self, const char *key, uint64_t *epoch, weir__err *err)
{
    char *msg = NULL;
    size_t len;
    char *value = leveldb_get (self->db, self->read, key, strlen (key), &len, &msg);
    char what[64];
    snprintf (what, sizeof what, "cannot read the %s pointer", key);
    if (msg)
        return s_leveldb_error (err, WEIR_ECORRUPT, what, self->dir, msg);
    if (!value)
        return 1;
    char text[24];
    int ok = len > 0 && len < sizeof text;
    if (ok) {
        memcpy (text, value, len);
        text[len] = '\0';
        *epoch = strtoull (text, NULL, 10);
    }
    leveldb_free (value);
    if (!ok)
        return weir__err_set (err, WEIR_ECORRUPT, "checkpoint store '%s': the %s pointer is corrupt",
                              self->dir, key);
    return 0;
}

int weir__store_latest (weir__store *self, uint64_t *epoch, weir__err *err)
{
    return s_pointer (self, WEIR__STORE_LATEST, epoch, err);
}

int weir__store_best (weir__store *self, uint64_t *epoch, weir__err *err)
{
    return s_pointer (self, WEIR__STORE_BEST, epoch, err);
}

static void s_delete_key (void *batch, const char *key, size_t klen)
{
    leveldb_writebatch_delete (batch, key, klen);
}

//  weir__layout_blob_fn: one more blob into the s_blobs ARG
static int s_blob_add (void *arg, const char *name, size_t nlen, size_t size, uint64_t held, uint64_t hash)
{
    return s_blobs_add (arg, name, nlen, size, held, hash) ? -1 : 0;
}

//  The blobs of checkpoint EPOCH whose bytes a write holds, into SET:
//  from their entries, packed under 'b' (a store written before blobs
//  were kept once has none: its blobs' bytes are its own).  0 or -1
static int s_blobs_of (weir__store *self, uint64_t epoch, s_blobs *set)
{
    char key[40];
    weir__store_prefix (key, sizeof key, epoch);
    key[S_PREFIX_LEN] = WEIR__SECTION_BLOBS;
    char *msg = NULL;
    size_t vlen = 0;
    char *value = leveldb_get (self->db, self->read, key, S_PREFIX_LEN + 1, &vlen, &msg);
    int rc = msg ? -1 : value ? weir__layout_blobs_each (value, vlen, s_blob_add, set) : 0;
    leveldb_free (msg);
    leveldb_free (value);
    return rc;
}

//  What s_drop_bytes needs
typedef struct {
    leveldb_writebatch_t *batch;
    const s_blobs *live;
} s_dropping;

//  weir__layout_blob_fn: the bytes of a blob of a checkpoint deleted,
//  unless a checkpoint kept needs them
static int s_drop_bytes (void *arg, const char *name, size_t nlen, size_t size, uint64_t held, uint64_t hash)
{
    (void) hash;
    const s_dropping *d = arg;
    char *copy = strndup (name, nlen);
    if (!copy)
        return -1;
    if (!s_blobs_find (d->live->blobs, d->live->count, copy, &held))
        weir__layout_shared_keys (name, nlen, size, held, s_delete_key, d->batch);
    free (copy);
    return 0;
}

//  What the store holds of the latest checkpoint's blobs, when it does
//  not know yet (a store just opened, or rolled back)
static void s_know_held (weir__store *self)
{
    if (self->held_known)
        return;
    uint64_t latest;
    weir__err ignored;
    weir__err_init (&ignored);
    s_blobs set = {0};
    //  Not known, every blob is written again: never wrong, only slower
    if (weir__store_latest (self, &latest, &ignored) == 0 && s_blobs_of (self, latest, &set) == 0) {
        s_blobs_sort (&set);
        self->held = set.blobs;
        self->nheld = set.count;
    }
    else
        s_blobs_release (&set);
    self->held_known = 1;
}

//  Forget what the store holds of the latest checkpoint
static void s_forget_held (weir__store *self)
{
    s_blobs latest = {self->held, self->nheld, self->nheld};
    s_blobs_release (&latest);
    self->held = NULL;
    self->nheld = 0;
    self->held_known = 0;
}

//  weir__layout_find_fn: the latest checkpoint's blob NAME, when it has
//  those bytes still
static int s_find_held (void *arg, const char *name, size_t size, uint64_t hash, uint64_t *held)
{
    const weir__store *self = arg;
    const weir__layout_blob *b = s_blobs_find (self->held, self->nheld, name, NULL);
    if (!b || b->size != size || b->hash != hash)
        return 0;
    *held = b->held;
    return 1;
}

//  Delete every key of EPOCH into BATCH, and the bytes of its blobs that
//  no checkpoint kept (LIVE, sorted) needs.  Blob chunks are not
//  iterated (that would read every byte of them): their keys follow from
//  the blobs' entries under 'b', which sort before them.
static int s_delete_epoch (weir__store *self, leveldb_writebatch_t *batch, uint64_t epoch,
                           const s_blobs *live)
{
    char prefix[32];
    weir__store_prefix (prefix, sizeof prefix, epoch);
    leveldb_iterator_t *it = leveldb_create_iterator (self->db, self->read);
    int failed = 0;
    for (leveldb_iter_seek (it, prefix, S_PREFIX_LEN); leveldb_iter_valid (it);) {
        size_t klen, vlen;
        const char *key = leveldb_iter_key (it, &klen);
        if (klen < S_PREFIX_LEN || memcmp (key, prefix, S_PREFIX_LEN) != 0)
            break;
        if (klen > S_PREFIX_LEN + 2 && key[S_PREFIX_LEN] == WEIR__SECTION_CHUNKS
            && key[S_PREFIX_LEN + 1] == '/') {
            //  Past the chunks, without reading them
            char past[32];
            memcpy (past, prefix, S_PREFIX_LEN);
            past[S_PREFIX_LEN] = WEIR__SECTION_CHUNKS;
            past[S_PREFIX_LEN + 1] = '/' + 1;
            leveldb_iter_seek (it, past, S_PREFIX_LEN + 2);
            continue;
        }
        leveldb_writebatch_delete (batch, key, klen);
        if (klen == S_PREFIX_LEN + 1 && key[S_PREFIX_LEN] == WEIR__SECTION_BLOBS) {
            //  The blobs' entries: the bytes no kept checkpoint needs go
            const char *value = leveldb_iter_value (it, &vlen);
            s_dropping d = {batch, live};
            if (weir__layout_blobs_each (value, vlen, s_drop_bytes, &d)) {
                failed = 1;
                break;
            }
        }
        else if (klen > S_PREFIX_LEN + 2 && key[S_PREFIX_LEN] == WEIR__SECTION_BLOBS
                 && key[S_PREFIX_LEN + 1] == '/') {
            //  A store of before: a blob's size, its bytes its epoch's own
            const char *value = leveldb_iter_value (it, &vlen);
            weir__layout_chunk_keys (key, klen, value, vlen, s_delete_key, batch);
        }
        leveldb_iter_next (it);
    }
    char *msg = NULL;
    leveldb_iter_get_error (it, &msg);
    leveldb_iter_destroy (it);
    int rc = msg || failed ? -1 : 0;
    leveldb_free (msg);
    return rc;
}

//  Sync the store's directory if its entries changed since the last time.
static int s_sync_dir (weir__store *self)
{
    struct stat st;
    if (stat (self->dir, &st))
        return -1;
    if (st.st_mtim.tv_sec == self->synced.tv_sec && st.st_mtim.tv_nsec == self->synced.tv_nsec)
        return 0;
    if (weir__sync_dir (self->dir))
        return -1;
    self->synced = st.st_mtim;
    return 0;
}

//  Delete the checkpoints of EPOCHS (COUNT of them) that DROP marks into
//  BATCH, and the bytes of their blobs that neither a checkpoint kept nor
//  LAYOUT (the checkpoint being written, or NULL) needs.  0 or an error.
static int s_drop (weir__store *self, leveldb_writebatch_t *batch, const uint64_t *epochs, size_t count,
                   const char *drop, const weir__layout *layout, weir__err *err)
{
    s_blobs live = {0};
    int rc = 0;
    for (size_t i = 0; i < count && !rc; i++)
        if (!drop[i] && s_blobs_of (self, epochs[i], &live))
            rc = weir__err_set (err, WEIR_EIO, "checkpoint store '%s': cannot read epoch %" PRIu64, self->dir,
                                epochs[i]);
    for (size_t i = 0; layout && i < layout->nblobs && !rc; i++) {
        const weir__layout_blob *b = &layout->blobs[i];
        if (s_blobs_add (&live, b->name, strlen (b->name), b->size, b->held, b->hash))
            rc = weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    s_blobs_sort (&live);
    for (size_t i = 0; i < count && !rc; i++)
        if (drop[i] && s_delete_epoch (self, batch, epochs[i], &live))
            rc = weir__err_set (err, WEIR_EIO, "checkpoint store '%s': cannot read epoch %" PRIu64, self->dir,
                                epochs[i]);
    s_blobs_release (&live);
    return rc;
}

//  Retention, into BATCH: the deletion of all but the newest KEEP
//  checkpoints, the one of EPOCH (LAYOUT) among them (KEEP 0: none), and
//  of one of EPOCH already there, so that it is replaced whole.  The one
//  marked the best is kept too, unless EPOCH's takes the mark (BEST_NOW).
static int s_retain (weir__store *self, leveldb_writebatch_t *batch, uint64_t epoch, unsigned keep,
                     int best_now, const weir__layout *layout, weir__err *err)
{
    uint64_t *epochs;
    size_t count;
    int rc = weir__store_epochs (self, &epochs, &count, err);
    if (rc)
        return rc;
    char *drop = calloc (count ? count : 1, 1);
    if (!drop) {
        free (epochs);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    //  The checkpoint marked the best stays, unless this one takes its mark
    uint64_t best;
    weir__err ignored;
    weir__err_init (&ignored);
    int marked = !best_now && weir__store_best (self, &best, &ignored) == 0;
    size_t older = 0, dropped = 0;
    for (size_t i = 0; i < count; i++)
        older += epochs[i] < epoch;
    for (size_t i = 0; i < count; i++)
        if ((keep && epochs[i] < epoch && older-- >= keep && !(marked && epochs[i] == best))
            || epochs[i] == epoch)
            drop[i] = 1, dropped++;
    if (dropped)
        rc = s_drop (self, batch, epochs, count, drop, layout, err);
    free (drop);
    free (epochs);
    return rc;
}

//  The latest pointer at EPOCH, into BATCH.
static void s_put_latest (leveldb_writebatch_t *batch, uint64_t epoch)
{
    char latest[24];
    snprintf (latest, sizeof latest, "%" PRIu64, epoch);
    leveldb_writebatch_put (batch, WEIR__STORE_LATEST, strlen (WEIR__STORE_LATEST), latest, strlen (latest));
}

//  Every entry of LAYOUT into BATCH, its checksum, and the latest pointer
//  at EPOCH.
static void s_put_layout (leveldb_writebatch_t *batch, const weir__layout *layout, uint64_t epoch)
{
    for (size_t i = 0; i < layout->count; i++) {
        const weir__layout_entry *e = &layout->entries[i];
        leveldb_writebatch_put (batch, e->key, e->klen, e->value, e->vlen);
    }
    leveldb_writebatch_put (batch, layout->sum_key, strlen (layout->sum_key), layout->sum,
                            strlen (layout->sum));
    s_put_latest (batch, epoch);
}

//  Write BATCH, synced: the commit point of checkpoint EPOCH.
static int s_commit (weir__store *self, leveldb_writebatch_t *batch, uint64_t epoch, weir__err *err)
{
    char *msg = NULL;
    WEIR_KILL_POINT ("before-leveldb-write");
    leveldb_write (self->db, self->write, batch, &msg);
    WEIR_KILL_POINT ("after-leveldb-write");
    if (!msg)
        return 0;
    char what[64];
    snprintf (what, sizeof what, "cannot write checkpoint %" PRIu64, epoch);
    return s_leveldb_error (err, WEIR_EIO, what, self->dir, msg);
}

//  The hint of the newest epoch, not synced: it only has to outlive what
//  LevelDB loses when it is
static void s_write_hint (const weir__store *self, uint64_t epoch)
{
    char path[4200];
    snprintf (path, sizeof path, "%s/%s", self->dir, WEIR__STORE_LATEST_FILE);
    FILE *f = fopen (path, "w");
    if (f) {
        fprintf (f, "%" PRIu64 "\n", epoch);
        fclose (f);
    }
}

//  After a synced write: it made the log durable, not its name.  When
//  LevelDB started a new log (or table, or manifest) since, the directory
//  changed and is synced, or a power cut could take the write.
static int s_names_durable (weir__store *self, weir__err *err)
{
    if (s_sync_dir (self))
        return weir__err_set (err, WEIR_EIO, "checkpoint store '%s': cannot sync the directory: %s", self->dir,
                              strerror (errno));
    return 0;
}

int weir__store_write (weir__store *self, const weir__ckpt *ckpt, unsigned keep, weir__err *err)
{
    uint64_t epoch = weir__ckpt_epoch (ckpt);
    weir__layout layout;
    s_know_held (self);
    if (weir__layout_init (&layout, ckpt, s_find_held, self)) {
        weir__layout_release (&layout);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    leveldb_writebatch_t *batch = leveldb_writebatch_create ();
    uint64_t best = 0;
    (void) weir__ckpt_get_u64 (ckpt, WEIR__SECTION_META, WEIR_META_BEST, &best);
    int rc = s_retain (self, batch, epoch, keep, best == 1, &layout, err);
    if (!rc) {
        s_put_layout (batch, &layout, epoch);
        if (best == 1) {
            char text[24];
            snprintf (text, sizeof text, "%" PRIu64, epoch);
            leveldb_writebatch_put (batch, WEIR__STORE_BEST, strlen (WEIR__STORE_BEST), text, strlen (text));
        }
        rc = s_commit (self, batch, epoch, err);
    }
    leveldb_writebatch_destroy (batch);
    if (!rc) {
        //  This is the latest checkpoint now: its blobs are what the next
        //  one may find unchanged
        s_forget_held (self);
        s_blobs written = {layout.blobs, layout.nblobs, layout.nblobs};
        s_blobs_sort (&written);
        self->held = written.blobs;
        self->nheld = written.count;
        self->held_known = 1;
        layout.blobs = NULL;
        layout.nblobs = 0;
    }
    weir__layout_release (&layout);
    if (!rc)
        s_write_hint (self, epoch);
    return rc ? rc : s_names_durable (self, err);
}

int weir__store_rollback (weir__store *self, uint64_t epoch, unsigned *dropped, weir__err *err)
{
    *dropped = 0;
    uint64_t *epochs;
    size_t count;
    int rc = weir__store_epochs (self, &epochs, &count, err);
    if (rc)
        return rc;
    leveldb_writebatch_t *batch = leveldb_writebatch_create ();
    char *drop = calloc (count ? count : 1, 1);
    if (!drop)
        rc = weir__err_set (err, WEIR_ENOMEM, "out of memory");
    for (size_t i = 0; i < count && !rc; i++)
        if (epochs[i] > epoch) {
            drop[i] = 1;
            (*dropped)++;
        }
    if (!rc && *dropped)
        rc = s_drop (self, batch, epochs, count, drop, NULL, err);
    free (drop);
    free (epochs);
    //  The latest checkpoint is another now
    s_forget_held (self);
    if (!rc && *dropped) {
        s_put_latest (batch, epoch);
        //  A mark on a checkpoint rolled back goes with it
        uint64_t best;
        weir__err ignored;
        weir__err_init (&ignored);
        if (weir__store_best (self, &best, &ignored) == 0 && best > epoch)
            leveldb_writebatch_delete (batch, WEIR__STORE_BEST, strlen (WEIR__STORE_BEST));
        //  The hint first: lowered and never committed, it says nothing; left
        //  high after the commit, it would tell a later resume that the
        //  store lost its last checkpoints
        s_write_hint (self, epoch);
        if (!(rc = s_commit (self, batch, epoch, err)))
            rc = s_names_durable (self, err);
    }
    leveldb_writebatch_destroy (batch);
    return rc;
}

//  Every entry of CKPT's epoch into CKPT, each mixed into *HASH and
//  counted in *COUNT as the checksum counts them; the checksum entry's
//  value into *SUM.
static int s_read_entries (weir__store *self, weir__ckpt *ckpt, uint64_t *hash, size_t *count, char **sum,
                           weir__err *err)
{
    uint64_t epoch = weir__ckpt_epoch (ckpt);
    char prefix[32];
    weir__store_prefix (prefix, sizeof prefix, epoch);
    leveldb_iterator_t *it = leveldb_create_iterator (self->db, self->read);
    int rc = 0;
    for (leveldb_iter_seek (it, prefix, S_PREFIX_LEN); leveldb_iter_valid (it); leveldb_iter_next (it)) {
        size_t klen, vlen;
        const char *key = leveldb_iter_key (it, &klen);
        if (klen < S_PREFIX_LEN || memcmp (key, prefix, S_PREFIX_LEN) != 0)
            break;
        const char *value = leveldb_iter_value (it, &vlen);
        if (klen == S_PREFIX_LEN + 4 && memcmp (key + S_PREFIX_LEN, WEIR__STORE_SUM, 4) == 0) {
            *sum = strndup (value, vlen);
            continue;
        }
        *hash = weir__layout_hash (*hash, key, klen, value, vlen);
        (*count)++;
        if ((rc = weir__layout_take (ckpt, self->dir, key, klen, value, vlen, err)))
            break;
    }
    char *msg = NULL;
    leveldb_iter_get_error (it, &msg);
    leveldb_iter_destroy (it);
    if (msg && !rc) {
        char what[64];
        snprintf (what, sizeof what, "cannot read checkpoint %" PRIu64, epoch);
        rc = s_leveldb_error (err, WEIR_ECORRUPT, what, self->dir, msg);
    }
    else
        leveldb_free (msg);
    return rc;
}

//  After ERR's "checkpoint E does not exist": the epochs that do, so the
//  user need not run 'weir checkpoints' to pick one.
static void s_say_kept (weir__store *self, weir__err *err)
{
    uint64_t *epochs;
    size_t count, used = strlen (err->msg);
    weir__err ignored;
    weir__err_init (&ignored);
    if (weir__store_epochs (self, &epochs, &count, &ignored))
        return;
    //  Runs of consecutive epochs as A-B: a kept window is one run
    if (!count)
        snprintf (err->msg + used, sizeof err->msg - used, "; it holds no checkpoint");
    for (size_t i = 0; i < count && used < sizeof err->msg; i++) {
        size_t j = i;
        while (j + 1 < count && epochs[j + 1] == epochs[j] + 1)
            j++;
        const char *lead = i == 0 ? (count == 1 ? "; it holds checkpoint " : "; it holds checkpoints ") : ", ";
        if (j == i + 1)
            used += (size_t) snprintf (err->msg + used, sizeof err->msg - used, "%s%" PRIu64 ", %" PRIu64, lead,
                                       epochs[i], epochs[j]);
        else if (j > i)
            used += (size_t) snprintf (err->msg + used, sizeof err->msg - used, "%s%" PRIu64 " to %" PRIu64, lead,
                                       epochs[i], epochs[j]);
        else
            used += (size_t) snprintf (err->msg + used, sizeof err->msg - used, "%s%" PRIu64, lead, epochs[i]);
        i = j;
    }
    free (epochs);
}

//  weir__layout_get_fn: a value of the store
static int s_get (void *arg, const char *key, size_t klen, char *dst, size_t cap, size_t *len)
{
    const weir__store *self = arg;
    char *msg = NULL;
    size_t vlen = 0;
    char *value = leveldb_get (self->db, self->read, key, klen, &vlen, &msg);
    leveldb_free (msg);
    *len = value ? vlen : 0;
    int rc = value && vlen == cap ? 0 : -1;
    if (!rc && vlen)
        memcpy (dst, value, vlen);
    leveldb_free (value);
    return rc;
}

int weir__store_read (weir__store *self, uint64_t epoch, weir__ckpt **out, weir__err *err)
{
    *out = NULL;
    weir__ckpt *ckpt = weir__ckpt_new (epoch);
    if (!ckpt)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    uint64_t hash = 0;
    size_t count = 0;
    char *sum = NULL;
    int rc = s_read_entries (self, ckpt, &hash, &count, &sum, err);
    if (!rc) {
        rc = weir__layout_check (ckpt, self->dir, count, hash, sum, err);
        if (rc && !count && !sum)
            s_say_kept (self, err);
    }
    free (sum);
    if (!rc)
        rc = weir__layout_assemble (ckpt, self->dir, s_get, self, err);
    if (rc) {
        weir__ckpt_destroy (&ckpt);
        return rc;
    }
    *out = ckpt;
    return 0;
}

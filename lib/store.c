/*  lib/store.c - checkpoints in LevelDB: one atomic, synced batch each.  */
#include "config.h"
#include "lib/store.h"

#include <errno.h>
#include <inttypes.h>
#include <leveldb/c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define S_CHUNK ((size_t) 4 << 20)
#define S_PREFIX_LEN 23     //  "e/" + 20 digits + "/"

typedef struct {
    char section;
    char *name;
    const void *data;
    size_t len;
    int owned;
} s_item;

struct weir__ckpt {
    uint64_t epoch;
    s_item *items;
    size_t count, cap;
    int sorted;
};

struct weir__store {
    leveldb_t *db;
    leveldb_options_t *options;
    leveldb_readoptions_t *read;
    leveldb_writeoptions_t *write;
    char *dir;
};

uint64_t weir__hash64 (uint64_t seed, const void *data, size_t len)
{
    //  A multiply-and-shift mix over 8-byte words: one multiply per word,
    //  several GB/s.  It guards against lost or mixed-up keys; LevelDB's own
    //  CRCs guard the bytes on disk.
    const unsigned char *p = data;
    uint64_t h = seed ^ (len * 0x9e3779b97f4a7c15ull);
    while (len >= 8) {
        uint64_t w;
        memcpy (&w, p, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
        p += 8;
        len -= 8;
    }
    uint64_t w = 0;
    memcpy (&w, p, len);
    h = (h ^ w ^ len) * 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 29;
    return h;
}

weir__ckpt *weir__ckpt_new (uint64_t epoch)
{
    weir__ckpt *self = calloc (1, sizeof *self);
    if (self)
        self->epoch = epoch;
    return self;
}

void weir__ckpt_destroy (weir__ckpt **self_p)
{
    weir__ckpt *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < self->count; i++) {
        free (self->items[i].name);
        if (self->items[i].owned)
            free ((void *) self->items[i].data);
    }
    free (self->items);
    free (self);
    *self_p = NULL;
}

uint64_t weir__ckpt_epoch (const weir__ckpt *self)
{
    return self->epoch;
}

int weir__ckpt_put (weir__ckpt *self, char section, const char *name, const void *data, size_t len,
                    int copy)
{
    if (self->count == self->cap) {
        size_t cap = self->cap ? self->cap * 2 : 32;
        s_item *items = realloc (self->items, cap * sizeof *items);
        if (!items)
            return WEIR_ENOMEM;
        self->items = items;
        self->cap = cap;
    }
    s_item *it = &self->items[self->count];
    it->section = section;
    it->name = strdup (name);
    it->len = len;
    it->owned = copy;
    it->data = data;
    if (copy) {
        void *bytes = malloc (len ? len : 1);
        if (bytes && len)
            memcpy (bytes, data, len);
        it->data = bytes;
    }
    if (!it->name || !it->data) {
        free (it->name);
        if (copy)
            free ((void *) it->data);
        return WEIR_ENOMEM;
    }
    self->count++;
    self->sorted = 0;
    return 0;
}

int weir__ckpt_put_text (weir__ckpt *self, char section, const char *name, const char *text)
{
    return weir__ckpt_put (self, section, name, text, strlen (text), 1);
}

int weir__ckpt_put_u64 (weir__ckpt *self, char section, const char *name, uint64_t value)
{
    char text[24];
    snprintf (text, sizeof text, "%" PRIu64, value);
    return weir__ckpt_put_text (self, section, name, text);
}

static int s_item_cmp (const void *a, const void *b)
{
    const s_item *x = a, *y = b;
    if (x->section != y->section)
        return (unsigned char) x->section - (unsigned char) y->section;
    return strcmp (x->name, y->name);
}

static void s_sort (weir__ckpt *self)
{
    if (!self->sorted) {
        qsort (self->items, self->count, sizeof *self->items, s_item_cmp);
        self->sorted = 1;
    }
}

static const s_item *s_find (const weir__ckpt *self, char section, const char *name)
{
    s_sort ((weir__ckpt *) self);
    s_item key = {section, (char *) name, NULL, 0, 0};
    return bsearch (&key, self->items, self->count, sizeof *self->items, s_item_cmp);
}

const void *weir__ckpt_get (const weir__ckpt *self, char section, const char *name, size_t *len)
{
    const s_item *it = s_find (self, section, name);
    if (!it)
        return NULL;
    if (len)
        *len = it->len;
    return it->data;
}

int weir__ckpt_get_u64 (const weir__ckpt *self, char section, const char *name, uint64_t *value)
{
    size_t len;
    const char *text = weir__ckpt_get (self, section, name, &len);
    if (!text || len == 0 || len > 20)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] < '0' || text[i] > '9')
            return -1;
        v = v * 10 + (uint64_t) (text[i] - '0');
    }
    *value = v;
    return 0;
}

size_t weir__ckpt_count (const weir__ckpt *self, char section)
{
    size_t n = 0;
    for (size_t i = 0; i < self->count; i++)
        n += self->items[i].section == section;
    return n;
}

const char *weir__ckpt_item (const weir__ckpt *self, char section, size_t index, const void **data,
                             size_t *len)
{
    s_sort ((weir__ckpt *) self);
    for (size_t i = 0; i < self->count; i++)
        if (self->items[i].section == section && index-- == 0) {
            if (data)
                *data = self->items[i].data;
            if (len)
                *len = self->items[i].len;
            return self->items[i].name;
        }
    return NULL;
}

//  ---------------------------------------------------------------------
//  The store

leveldb_options_t *weir__leveldb_options (int create)
{
    leveldb_options_t *options = leveldb_options_create ();
    leveldb_options_set_create_if_missing (options, (unsigned char) (create != 0));
    leveldb_options_set_paranoid_checks (options, 1);
    return options;
}

leveldb_readoptions_t *weir__leveldb_readoptions (void)
{
    leveldb_readoptions_t *read = leveldb_readoptions_create ();
    leveldb_readoptions_set_verify_checksums (read, 1);
    leveldb_readoptions_set_fill_cache (read, 0);
    return read;
}

static int s_leveldb_error (weir__err *err, int code, const char *what, const char *dir, char *msg)
{
    weir__err_set (err, code, "checkpoint store '%s': %s: %s", dir, what, msg ? msg : "unknown error");
    leveldb_free (msg);
    return code;
}

int weir__store_open (const char *dir, int create, weir__store **out, weir__err *err)
{
    *out = NULL;
    struct stat st;
    if (!create && stat (dir, &st))
        return weir__err_set (err, WEIR_EIO, "checkpoint store '%s': %s", dir, strerror (errno));
    weir__store *self = calloc (1, sizeof *self);
    if (!self || !(self->dir = strdup (dir))) {
        free (self);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    self->options = weir__leveldb_options (create);
    //  Blobs are model weights: compressing them costs time for little
    leveldb_options_set_compression (self->options, leveldb_no_compression);
    leveldb_options_set_write_buffer_size (self->options, 64 << 20);
    self->read = weir__leveldb_readoptions ();
    self->write = leveldb_writeoptions_create ();
    leveldb_writeoptions_set_sync (self->write, 1);
    char *msg = NULL;
    self->db = leveldb_open (self->options, dir, &msg);
    if (!self->db) {
        s_leveldb_error (err, WEIR_EIO, "cannot open", dir, msg);
        weir__store_destroy (&self);
        return WEIR_EIO;
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
    free (self->dir);
    free (self);
    *self_p = NULL;
}

static void s_prefix (char *out, size_t size, uint64_t epoch)
{
    snprintf (out, size, "e/%020" PRIu64 "/", epoch);
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
        s_prefix (probe, sizeof probe, epoch);
        strcat (probe, "~sum");
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
        s_prefix (probe, sizeof probe, epoch);
        probe[S_PREFIX_LEN - 1] = '0';   //  '/' + 1
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

int weir__store_latest (weir__store *self, uint64_t *epoch, weir__err *err)
{
    char *msg = NULL;
    size_t len;
    char *value = leveldb_get (self->db, self->read, "latest", 6, &len, &msg);
    if (msg)
        return s_leveldb_error (err, WEIR_ECORRUPT, "cannot read the latest pointer", self->dir, msg);
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
        return weir__err_set (err, WEIR_ECORRUPT, "checkpoint store '%s': the latest pointer is corrupt",
                              self->dir);
    return 0;
}

typedef struct {
    char *key;
    size_t klen;
    const char *value;
    size_t vlen;
} s_kv;

static int s_kv_cmp (const void *a, const void *b)
{
    const s_kv *x = a, *y = b;
    size_t n = x->klen < y->klen ? x->klen : y->klen;
    int c = memcmp (x->key, y->key, n);
    return c ? c : (x->klen > y->klen) - (x->klen < y->klen);
}

static uint64_t s_hash_kv (uint64_t h, const char *key, size_t klen, const char *value, size_t vlen)
{
    uint64_t lens[2] = {klen, vlen};
    h = weir__hash64 (h, lens, sizeof lens);
    h = weir__hash64 (h, key, klen);
    return weir__hash64 (h, value, vlen);
}

//  Delete every key of EPOCH into BATCH.  Blob chunks are not iterated
//  (that would read every byte of them): their keys follow from the blob
//  sizes under 'b', which sort before them.
static int s_delete_epoch (weir__store *self, leveldb_writebatch_t *batch, uint64_t epoch)
{
    char prefix[32];
    s_prefix (prefix, sizeof prefix, epoch);
    leveldb_iterator_t *it = leveldb_create_iterator (self->db, self->read);
    for (leveldb_iter_seek (it, prefix, S_PREFIX_LEN); leveldb_iter_valid (it);) {
        size_t klen, vlen;
        const char *key = leveldb_iter_key (it, &klen);
        if (klen < S_PREFIX_LEN || memcmp (key, prefix, S_PREFIX_LEN) != 0)
            break;
        if (klen > S_PREFIX_LEN + 2 && key[S_PREFIX_LEN] == 'c' && key[S_PREFIX_LEN + 1] == '/') {
            //  Past the chunks, without reading them
            char past[32];
            memcpy (past, prefix, S_PREFIX_LEN);
            past[S_PREFIX_LEN] = 'c';
            past[S_PREFIX_LEN + 1] = '/' + 1;
            leveldb_iter_seek (it, past, S_PREFIX_LEN + 2);
            continue;
        }
        leveldb_writebatch_delete (batch, key, klen);
        if (klen > S_PREFIX_LEN + 2 && key[S_PREFIX_LEN] == 'b' && key[S_PREFIX_LEN + 1] == '/') {
            const char *value = leveldb_iter_value (it, &vlen);
            char digits[24];
            size_t size = 0;
            if (vlen < sizeof digits) {
                memcpy (digits, value, vlen);
                digits[vlen] = '\0';
                size = (size_t) strtoull (digits, NULL, 10);
            }
            size_t nlen = klen - S_PREFIX_LEN - 2;
            char *ckey = malloc (klen + 16);
            if (ckey) {
                for (size_t off = 0, chunk = 0; off < size; off += S_CHUNK, chunk++) {
                    int n = snprintf (ckey, klen + 16, "%sc/%.*s#%08zu", prefix, (int) nlen, key + S_PREFIX_LEN + 2,
                                      chunk);
                    leveldb_writebatch_delete (batch, ckey, (size_t) n);
                }
                free (ckey);
            }
        }
        leveldb_iter_next (it);
    }
    char *msg = NULL;
    leveldb_iter_get_error (it, &msg);
    leveldb_iter_destroy (it);
    int rc = msg ? -1 : 0;
    leveldb_free (msg);
    return rc;
}

//  The small sections (metadata, offsets, writers) are stored packed, one
//  key each: a checkpoint is a handful of LevelDB entries plus the blob
//  chunks, whatever the number of shards.  Each entry: u32 name length,
//  name, u32 value length, value.
static char *s_pack_section (const weir__ckpt *ckpt, char section, size_t *len)
{
    size_t size = 0;
    for (size_t i = 0; i < ckpt->count; i++)
        if (ckpt->items[i].section == section)
            size += 8 + strlen (ckpt->items[i].name) + ckpt->items[i].len;
    char *out = malloc (size ? size : 1), *p = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < ckpt->count; i++) {
        const s_item *it = &ckpt->items[i];
        if (it->section != section)
            continue;
        uint32_t n = (uint32_t) strlen (it->name), v = (uint32_t) it->len;
        memcpy (p, &n, 4);
        memcpy (p + 4, it->name, n);
        p += 4 + n;
        memcpy (p, &v, 4);
        if (v)
            memcpy (p + 4, it->data, v);
        p += 4 + v;
    }
    *len = size;
    return out;
}

static int s_unpack_section (weir__ckpt *ckpt, char section, const char *data, size_t len)
{
    while (len) {
        uint32_t n, v;
        if (len < 4 || (memcpy (&n, data, 4), len - 4 < (size_t) n + 4))
            return -1;
        memcpy (&v, data + 4 + n, 4);
        if (len - 8 - n < v)
            return -1;
        char *name = strndup (data + 4, n);
        int rc = name ? weir__ckpt_put (ckpt, section, name, data + 8 + n, v, 1) : -1;
        free (name);
        if (rc)
            return -1;
        data += 8 + n + v;
        len -= 8 + (size_t) n + v;
    }
    return 0;
}

int weir__store_write (weir__store *self, const weir__ckpt *ckpt, unsigned keep, weir__err *err)
{
    char prefix[32];
    s_prefix (prefix, sizeof prefix, ckpt->epoch);

    //  Every key of the checkpoint, blobs cut into chunks
    size_t n = 0, cap = ckpt->count + 16;
    for (size_t i = 0; i < ckpt->count; i++)
        if (ckpt->items[i].section == 'b')
            cap += ckpt->items[i].len / S_CHUNK + 2;
    s_kv *kvs = calloc (cap, sizeof *kvs);
    char **sizes = calloc (ckpt->count + 4, sizeof *sizes);
    int rc = 0;
    if (!kvs || !sizes) {
        rc = weir__err_set (err, WEIR_ENOMEM, "out of memory");
        goto done;
    }
    static const char small[] = {'m', 'o', 'w'};
    for (size_t k = 0; k < sizeof small; k++) {
        size_t len;
        char *packed = s_pack_section (ckpt, small[k], &len);
        char *key = malloc (S_PREFIX_LEN + 2);
        if (!packed || !key) {
            free (packed);
            free (key);
            rc = weir__err_set (err, WEIR_ENOMEM, "out of memory");
            goto done;
        }
        sizes[ckpt->count + k] = packed;    //  freed with the sizes
        kvs[n++] = (s_kv) {key, (size_t) snprintf (key, S_PREFIX_LEN + 2, "%s%c", prefix, small[k]), packed, len};
    }
    for (size_t i = 0; i < ckpt->count && !rc; i++) {
        const s_item *it = &ckpt->items[i];
        size_t klen = S_PREFIX_LEN + 2 + strlen (it->name) + 10;
        if (it->section != 'b')
            continue;
        //  A blob: its size under 'b', its bytes in chunks under 'c'
        char *key = malloc (klen);
        sizes[i] = malloc (24);
        if (!key || !sizes[i]) {
            free (key);
            rc = weir__err_set (err, WEIR_ENOMEM, "out of memory");
            break;
        }
        snprintf (sizes[i], 24, "%zu", it->len);
        kvs[n] = (s_kv) {key, (size_t) snprintf (key, klen, "%sb/%s", prefix, it->name), sizes[i],
                         strlen (sizes[i])};
        n++;
        for (size_t off = 0, chunk = 0; off < it->len; off += S_CHUNK, chunk++) {
            key = malloc (klen);
            if (!key) {
                rc = weir__err_set (err, WEIR_ENOMEM, "out of memory");
                break;
            }
            size_t len = it->len - off < S_CHUNK ? it->len - off : S_CHUNK;
            kvs[n] = (s_kv) {key, (size_t) snprintf (key, klen, "%sc/%s#%08zu", prefix, it->name, chunk),
                             (const char *) it->data + off, len};
            n++;
        }
    }
    if (rc)
        goto done;

    //  The checksum covers every key and value in key order, as they will
    //  be read back
    qsort (kvs, n, sizeof *kvs, s_kv_cmp);
    uint64_t h = 0;
    for (size_t i = 0; i < n; i++)
        h = s_hash_kv (h, kvs[i].key, kvs[i].klen, kvs[i].value, kvs[i].vlen);
    char sum_key[40], sum[48], latest[24];
    snprintf (sum_key, sizeof sum_key, "%s~sum", prefix);
    snprintf (sum, sizeof sum, "%zu %016" PRIx64, n, h);
    snprintf (latest, sizeof latest, "%" PRIu64, ckpt->epoch);

    leveldb_writebatch_t *batch = leveldb_writebatch_create ();
    //  Retention: the newest KEEP, this one included
    if (keep) {
        uint64_t *epochs;
        size_t count;
        if ((rc = weir__store_epochs (self, &epochs, &count, err))) {
            leveldb_writebatch_destroy (batch);
            goto done;
        }
        size_t older = 0;
        for (size_t i = 0; i < count; i++)
            older += epochs[i] < ckpt->epoch;
        //  Also replace an existing checkpoint of the same epoch whole
        for (size_t i = 0; i < count; i++)
            if ((epochs[i] < ckpt->epoch && older-- >= keep) || epochs[i] == ckpt->epoch)
                s_delete_epoch (self, batch, epochs[i]);
        free (epochs);
    }
    else
        s_delete_epoch (self, batch, ckpt->epoch);
    for (size_t i = 0; i < n; i++)
        leveldb_writebatch_put (batch, kvs[i].key, kvs[i].klen, kvs[i].value, kvs[i].vlen);
    leveldb_writebatch_put (batch, sum_key, strlen (sum_key), sum, strlen (sum));
    leveldb_writebatch_put (batch, "latest", 6, latest, strlen (latest));
    char *msg = NULL;
    leveldb_write (self->db, self->write, batch, &msg);
    leveldb_writebatch_destroy (batch);
    if (msg) {
        char what[64];
        snprintf (what, sizeof what, "cannot write checkpoint %" PRIu64, ckpt->epoch);
        rc = s_leveldb_error (err, WEIR_EIO, what, self->dir, msg);
    }
done:
    for (size_t i = 0; kvs && i < n; i++)
        free (kvs[i].key);
    for (size_t i = 0; sizes && i < ckpt->count + 3; i++)
        free (sizes[i]);
    free (sizes);
    free (kvs);
    return rc;
}

static int s_corrupt (weir__err *err, const weir__store *self, uint64_t epoch, const char *why)
{
    return weir__err_set (err, WEIR_ECORRUPT, "checkpoint %" PRIu64 " in '%s' is refused: %s", epoch,
                          self->dir, why);
}

//  Reassemble the blobs of CKPT from its 'c' chunk items.
static int s_assemble (weir__ckpt *ckpt, const weir__store *self, weir__err *err)
{
    size_t nblobs = weir__ckpt_count (ckpt, 'b');
    for (size_t b = 0; b < nblobs; b++) {
        const void *text;
        size_t tlen;
        const char *name = weir__ckpt_item (ckpt, 'b', b, &text, &tlen);
        char digits[24];
        if (tlen == 0 || tlen >= sizeof digits)
            return s_corrupt (err, self, ckpt->epoch, "a blob size is malformed");
        memcpy (digits, text, tlen);
        digits[tlen] = '\0';
        size_t size = (size_t) strtoull (digits, NULL, 10);
        char *bytes = malloc (size ? size : 1);
        if (!bytes)
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        size_t off = 0;
        for (size_t chunk = 0; off < size; chunk++) {
            char cname[4200];
            snprintf (cname, sizeof cname, "%s#%08zu", name, chunk);
            size_t clen;
            const void *data = weir__ckpt_get (ckpt, 'c', cname, &clen);
            if (!data || clen > size - off || (clen != S_CHUNK && off + clen != size)) {
                free (bytes);
                char why[4300];
                snprintf (why, sizeof why, "blob '%s' misses chunk %zu", name, chunk);
                return s_corrupt (err, self, ckpt->epoch, why);
            }
            memcpy (bytes + off, data, clen);
            off += clen;
        }
        //  Replace the size text with the bytes
        s_item *it = (s_item *) s_find (ckpt, 'b', name);
        if (it->owned)
            free ((void *) it->data);
        it->data = bytes;
        it->len = size;
        it->owned = 1;
    }
    //  Drop the chunks
    size_t w = 0;
    for (size_t i = 0; i < ckpt->count; i++) {
        if (ckpt->items[i].section == 'c') {
            free (ckpt->items[i].name);
            if (ckpt->items[i].owned)
                free ((void *) ckpt->items[i].data);
            continue;
        }
        ckpt->items[w++] = ckpt->items[i];
    }
    ckpt->count = w;
    return 0;
}

int weir__store_read (weir__store *self, uint64_t epoch, weir__ckpt **out, weir__err *err)
{
    *out = NULL;
    char prefix[32];
    s_prefix (prefix, sizeof prefix, epoch);
    weir__ckpt *ckpt = weir__ckpt_new (epoch);
    if (!ckpt)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    leveldb_iterator_t *it = leveldb_create_iterator (self->db, self->read);
    uint64_t h = 0;
    size_t n = 0;
    char *sum = NULL;
    int rc = 0;
    for (leveldb_iter_seek (it, prefix, S_PREFIX_LEN); leveldb_iter_valid (it); leveldb_iter_next (it)) {
        size_t klen, vlen;
        const char *key = leveldb_iter_key (it, &klen);
        if (klen < S_PREFIX_LEN || memcmp (key, prefix, S_PREFIX_LEN) != 0)
            break;
        const char *value = leveldb_iter_value (it, &vlen);
        if (klen == S_PREFIX_LEN + 4 && memcmp (key + S_PREFIX_LEN, "~sum", 4) == 0) {
            sum = strndup (value, vlen);
            continue;
        }
        h = s_hash_kv (h, key, klen, value, vlen);
        n++;
        if (klen == S_PREFIX_LEN + 1) {
            if (s_unpack_section (ckpt, key[S_PREFIX_LEN], value, vlen)) {
                rc = s_corrupt (err, self, epoch, "a packed section is malformed");
                break;
            }
            continue;
        }
        if (klen < S_PREFIX_LEN + 3 || key[S_PREFIX_LEN + 1] != '/') {
            rc = s_corrupt (err, self, epoch, "it holds a malformed key");
            break;
        }
        char *name = strndup (key + S_PREFIX_LEN + 2, klen - S_PREFIX_LEN - 2);
        rc = name ? weir__ckpt_put (ckpt, key[S_PREFIX_LEN], name, value, vlen, 1) : WEIR_ENOMEM;
        free (name);
        if (rc) {
            weir__err_set (err, rc, "out of memory");
            break;
        }
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
    if (!rc && !sum)
        rc = n ? s_corrupt (err, self, epoch, "its checksum key is missing")
               : weir__err_set (err, WEIR_ECORRUPT, "checkpoint %" PRIu64 " does not exist in '%s'", epoch,
                                self->dir);
    if (!rc) {
        char expected[48];
        snprintf (expected, sizeof expected, "%zu %016" PRIx64, n, h);
        if (strcmp (expected, sum) != 0)
            rc = s_corrupt (err, self, epoch, "its checksum does not match its contents (keys missing or altered)");
    }
    free (sum);
    if (!rc)
        rc = s_assemble (ckpt, self, err);
    if (rc) {
        weir__ckpt_destroy (&ckpt);
        return rc;
    }
    *out = ckpt;
    return 0;
}

/*  checkpoint/layout.c - a checkpoint as the store's entries, and back.  */
#include "config.h"
#include "checkpoint/layout.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint/keys.h"
#include "lib/buf.h"
#include "lib/hash.h"

#define S_CHUNK WEIR__STORE_CHUNK
#define S_PREFIX_LEN WEIR__STORE_PREFIX_LEN

static int s_corrupt (weir__err *err, const weir__ckpt *ckpt, const char *dir, const char *why)
{
    return weir__err_set (err, WEIR_ECORRUPT, "checkpoint %" PRIu64 " in '%s' is refused: %s",
                          weir__ckpt_epoch (ckpt), dir, why);
}

//  The checksum entry's value: "COUNT HASH"
static void s_sum (char *out, size_t size, size_t count, uint64_t hash)
{
    snprintf (out, size, "%zu %016" PRIx64, count, hash);
}

int weir__layout_blob_value (const char *text, size_t len, size_t *size, uint64_t *held, uint64_t *hash)
{
    char buf[64];
    *size = 0;
    *held = *hash = 0;
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy (buf, text, len);
    buf[len] = '\0';
    unsigned long long n, e, h;
    int used = 0;
    if (sscanf (buf, "%llu %llu %llx%n", &n, &e, &h, &used) == 3 && (size_t) used == len) {
        *size = (size_t) n, *held = e, *hash = h;
        return 1;
    }
    //  A store written before blobs were kept once: the size alone
    if (strspn (buf, "0123456789") != len)
        return -1;
    *size = (size_t) strtoull (buf, NULL, 10);
    return 0;
}

//  The key of chunk CHUNK of blob NAME (NLEN bytes) of checkpoint HELD's
//  write, into OUT of SIZE bytes; its length
static size_t s_shared_key (char *out, size_t size, const char *name, size_t nlen, uint64_t held,
                            size_t chunk)
{
    int n = snprintf (out, size, "s/%020" PRIu64 "/%.*s#%08zu", held, (int) nlen, name, chunk);
    return n < 0 ? 0 : (size_t) n;
}

//  ---------------------------------------------------------------------
//  Small sections, packed

static char *s_pack_section (const weir__ckpt *ckpt, char section, size_t *len)
{
    size_t size = 0, count = weir__ckpt_count (ckpt, section);
    for (size_t i = 0; i < count; i++) {
        size_t vlen;
        size += 8 + strlen (weir__ckpt_item (ckpt, section, i, NULL, &vlen));
        size += vlen;
    }
    char *out = malloc (size ? size : 1), *p = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < count; i++) {
        const void *value;
        size_t vlen;
        const char *name = weir__ckpt_item (ckpt, section, i, &value, &vlen);
        uint32_t n = (uint32_t) strlen (name), v = (uint32_t) vlen;
        memcpy (p, &n, 4);
        memcpy (p + 4, name, n);
        p += 4 + n;
        memcpy (p, &v, 4);
        if (v)
            memcpy (p + 4, value, v);
        p += 4 + v;
    }
    *len = size;
    return out;
}

//  FN for each item of a packed section, LEN bytes at DATA: its name
//  (NLEN bytes, not terminated) and value.  0, or -1 when malformed or
//  FN returned non-zero
typedef int (s_item_fn) (void *arg, const char *name, size_t nlen, const char *value, size_t vlen);
static int s_each_item (const char *data, size_t len, s_item_fn *fn, void *arg)
{
    while (len) {
        uint32_t n, v;
        if (len < 4 || (memcpy (&n, data, 4), len - 4 < (size_t) n + 4))
            return -1;
        memcpy (&v, data + 4 + n, 4);
        if (len - 8 - n < v || fn (arg, data + 4, n, data + 8 + n, v))
            return -1;
        data += 8 + n + v;
        len -= 8 + (size_t) n + v;
    }
    return 0;
}

//  What s_put_item needs
typedef struct {
    weir__ckpt *ckpt;
    char section;
} s_unpacking;

static int s_put_item (void *arg, const char *name, size_t nlen, const char *value, size_t vlen)
{
    const s_unpacking *u = arg;
    char *copy = strndup (name, nlen);
    int rc = copy ? weir__ckpt_put (u->ckpt, u->section, copy, value, vlen, 1) : -1;
    free (copy);
    return rc ? -1 : 0;
}

static int s_unpack_section (weir__ckpt *ckpt, char section, const char *data, size_t len)
{
    s_unpacking u = {ckpt, section};
    return s_each_item (data, len, s_put_item, &u);
}

//  ---------------------------------------------------------------------
//  Writing

static int s_entry_cmp (const void *a, const void *b)
{
    const weir__layout_entry *x = a, *y = b;
    size_t n = x->klen < y->klen ? x->klen : y->klen;
    int c = memcmp (x->key, y->key, n);
    return c ? c : (x->klen > y->klen) - (x->klen < y->klen);
}

uint64_t weir__layout_hash (uint64_t h, const char *key, size_t klen, const char *value, size_t vlen)
{
    uint64_t lens[2] = {klen, vlen};
    h = weir__hash64 (h, lens, sizeof lens);
    h = weir__hash64 (h, key, klen);
    return weir__hash64 (h, value, vlen);
}

//  Add KEY (built from FMT) with VALUE, borrowed; OWN is freed with SELF.
static int s_put (weir__layout *self, const char *value, size_t vlen, char *own, const char *fmt, ...)
    WEIR_PRINTF (5, 6);

static int s_put (weir__layout *self, const char *value, size_t vlen, char *own, const char *fmt, ...)
{
    if (own)
        self->owned[self->nowned++] = own;
    va_list ap;
    va_start (ap, fmt);
    char *key = NULL;
    int klen = vasprintf (&key, fmt, ap);
    va_end (ap);
    if (klen < 0 || self->count == self->cap)
        return WEIR_ENOMEM;
    self->entries[self->count++] = (weir__layout_entry){key, (size_t) klen, value, vlen};
    return 0;
}

//  Every entry of CKPT under PREFIX: the small sections packed, and each
//  blob's entry; the bytes of a blob the store holds already (FIND) are
//  not written again, the others go in chunks under this epoch's write.
static int s_fill (weir__layout *self, const weir__ckpt *ckpt, const char *prefix, weir__layout_find_fn *find,
                   void *arg)
{
    uint64_t epoch = weir__ckpt_epoch (ckpt);
    size_t nblobs = weir__ckpt_count (ckpt, WEIR__SECTION_BLOBS);
    self->blobs = calloc (nblobs ? nblobs : 1, sizeof *self->blobs);
    if (!self->blobs)
        return WEIR_ENOMEM;
    self->cap = 4 + nblobs;
    for (size_t i = 0; i < nblobs; i++) {
        size_t len;
        weir__ckpt_item (ckpt, WEIR__SECTION_BLOBS, i, NULL, &len);
        self->cap += len / S_CHUNK + 1;
    }
    self->entries = calloc (self->cap, sizeof *self->entries);
    self->owned = calloc (4 + nblobs, sizeof *self->owned);
    if (!self->entries || !self->owned)
        return WEIR_ENOMEM;
    static const char small[] = {WEIR__SECTION_META, WEIR__SECTION_OFFSETS, WEIR__SECTION_WRITERS,
                                 WEIR__SECTION_FILES};
    for (size_t k = 0; k < sizeof small; k++) {
        //  Only inputs of files have a files section
        if (small[k] == WEIR__SECTION_FILES && weir__ckpt_count (ckpt, WEIR__SECTION_FILES) == 0)
            continue;
        size_t len;
        char *packed = s_pack_section (ckpt, small[k], &len);
        if (!packed || s_put (self, packed, len, packed, "%s%c", prefix, small[k]))
            return WEIR_ENOMEM;
    }
    //  The blobs' entries packed under 'b' as a small section is, one key
    //  whatever their number (a keyed stage has one per key group): each
    //  blob's size, the write that holds its bytes and their hash.  Its
    //  bytes in chunks under 's/HELD/', when this write holds them
    weir__buf packed;
    weir__buf_init (&packed);
    for (size_t i = 0; i < nblobs; i++) {
        const void *data;
        size_t len;
        const char *name = weir__ckpt_item (ckpt, WEIR__SECTION_BLOBS, i, &data, &len);
        weir__layout_blob *blob = &self->blobs[self->nblobs];
        blob->size = len;
        blob->hash = weir__hash64 (0, data, len);
        if (!find || !find (arg, name, len, blob->hash, &blob->held))
            blob->held = epoch;
        if (!(blob->name = strdup (name))) {
            weir__buf_release (&packed);
            return WEIR_ENOMEM;
        }
        self->nblobs++;
        char text[64];
        uint32_t n = (uint32_t) strlen (name),
                 v = (uint32_t) snprintf (text, sizeof text, "%zu %" PRIu64 " %016" PRIx64, len, blob->held,
                                          blob->hash);
        if (weir__buf_append (&packed, &n, 4) || weir__buf_append (&packed, name, n)
            || weir__buf_append (&packed, &v, 4) || weir__buf_append (&packed, text, v)) {
            weir__buf_release (&packed);
            return WEIR_ENOMEM;
        }
        for (size_t off = 0, chunk = 0; blob->held == epoch && off < len; off += S_CHUNK, chunk++)
            if (s_put (self, (const char *) data + off, len - off < S_CHUNK ? len - off : S_CHUNK, NULL,
                       "s/%020" PRIu64 "/%s#%08zu", epoch, name, chunk)) {
                weir__buf_release (&packed);
                return WEIR_ENOMEM;
            }
    }
    //  The buffer is the layout's to free, as a packed section's
    if (nblobs && s_put (self, packed.data, packed.len, packed.data, "%s%c", prefix, WEIR__SECTION_BLOBS))
        return WEIR_ENOMEM;
    if (!nblobs)
        weir__buf_release (&packed);
    return 0;
}

//  What s_held_item needs
typedef struct {
    weir__layout_blob_fn *fn;
    void *arg;
} s_blobs_each;

static int s_held_item (void *arg, const char *name, size_t nlen, const char *value, size_t vlen)
{
    const s_blobs_each *e = arg;
    size_t size;
    uint64_t held, hash;
    int shared = weir__layout_blob_value (value, vlen, &size, &held, &hash);
    return shared < 0 || (shared && e->fn (e->arg, name, nlen, size, held, hash)) ? -1 : 0;
}

int weir__layout_blobs_each (const char *packed, size_t len, weir__layout_blob_fn *fn, void *arg)
{
    s_blobs_each e = {fn, arg};
    return s_each_item (packed, len, s_held_item, &e);
}

int weir__layout_init (weir__layout *self, const weir__ckpt *ckpt, weir__layout_find_fn *find, void *arg)
{
    memset (self, 0, sizeof *self);
    char prefix[32];
    weir__store_prefix (prefix, sizeof prefix, weir__ckpt_epoch (ckpt));
    if (s_fill (self, ckpt, prefix, find, arg))
        return WEIR_ENOMEM;
    //  The checksum covers every key and value of the epoch's own in key
    //  order, as they will be read back; the bytes of blobs, which may
    //  serve later checkpoints too, by the hash in their entry
    qsort (self->entries, self->count, sizeof *self->entries, s_entry_cmp);
    uint64_t h = 0;
    size_t own = 0;
    for (size_t i = 0; i < self->count; i++) {
        const weir__layout_entry *e = &self->entries[i];
        if (e->klen < S_PREFIX_LEN || memcmp (e->key, prefix, S_PREFIX_LEN))
            continue;
        h = weir__layout_hash (h, e->key, e->klen, e->value, e->vlen);
        own++;
    }
    snprintf (self->sum_key, sizeof self->sum_key, "%s%s", prefix, WEIR__STORE_SUM);
    s_sum (self->sum, sizeof self->sum, own, h);
    return 0;
}

void weir__layout_release (weir__layout *self)
{
    for (size_t i = 0; i < self->count; i++)
        free (self->entries[i].key);
    for (size_t i = 0; i < self->nowned; i++)
        free (self->owned[i]);
    for (size_t i = 0; i < self->nblobs; i++)
        free (self->blobs[i].name);
    free (self->entries);
    free (self->owned);
    free (self->blobs);
}

//  ---------------------------------------------------------------------
//  Reading

int weir__layout_take (weir__ckpt *ckpt, const char *dir, const char *key, size_t klen, const char *value,
                       size_t vlen, weir__err *err)
{
    if (klen == S_PREFIX_LEN + 1) {
        if (s_unpack_section (ckpt, key[S_PREFIX_LEN], value, vlen))
            return s_corrupt (err, ckpt, dir, "a packed section is malformed");
        return 0;
    }
    if (klen < S_PREFIX_LEN + 3 || key[S_PREFIX_LEN + 1] != '/')
        return s_corrupt (err, ckpt, dir, "it holds a malformed key");
    char *name = strndup (key + S_PREFIX_LEN + 2, klen - S_PREFIX_LEN - 2);
    int rc = name ? weir__ckpt_put (ckpt, key[S_PREFIX_LEN], name, value, vlen, 1) : WEIR_ENOMEM;
    free (name);
    if (rc)
        weir__err_set (err, rc, "out of memory");
    return rc;
}

int weir__layout_check (const weir__ckpt *ckpt, const char *dir, size_t count, uint64_t hash, const char *sum,
                        weir__err *err)
{
    if (!sum)
        return count ? s_corrupt (err, ckpt, dir, "its checksum key is missing")
                     : weir__err_set (err, WEIR_ECORRUPT, "checkpoint %" PRIu64 " does not exist in '%s'",
                                      weir__ckpt_epoch (ckpt), dir);
    char expected[48];
    s_sum (expected, sizeof expected, count, hash);
    if (strcmp (expected, sum) != 0)
        return s_corrupt (err, ckpt, dir,
                          "its checksum does not match its contents (keys missing or altered)");
    return 0;
}

int weir__layout_assemble (weir__ckpt *ckpt, const char *dir, weir__layout_get_fn *get, void *arg,
                           weir__err *err)
{
    size_t nblobs = weir__ckpt_count (ckpt, WEIR__SECTION_BLOBS);
    for (size_t b = 0; b < nblobs; b++) {
        const void *text;
        size_t tlen, size;
        uint64_t held, hash;
        const char *name = weir__ckpt_item (ckpt, WEIR__SECTION_BLOBS, b, &text, &tlen);
        int shared = weir__layout_blob_value (text, tlen, &size, &held, &hash);
        if (shared < 0)
            return s_corrupt (err, ckpt, dir, "a blob size is malformed");
        char *bytes = malloc (size ? size : 1);
        if (!bytes)
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        size_t off = 0;
        for (size_t chunk = 0; off < size; chunk++) {
            char cname[4200];
            size_t clen = 0, want = size - off < S_CHUNK ? size - off : S_CHUNK;
            const void *data = NULL;
            int got;
            if (shared) {
                size_t klen = s_shared_key (cname, sizeof cname, name, strlen (name), held, chunk);
                got = get (arg, cname, klen, bytes + off, want, &clen) == 0;
            }
            else {
                snprintf (cname, sizeof cname, "%s#%08zu", name, chunk);
                data = weir__ckpt_get (ckpt, WEIR__SECTION_CHUNKS, cname, &clen);
                got = data != NULL;
            }
            if (!got || clen != want) {
                free (bytes);
                char why[4400];
                if (shared)
                    snprintf (why, sizeof why,
                              "blob '%s' misses chunk %zu of its bytes, which checkpoint %" PRIu64 " wrote",
                              name, chunk, held);
                else
                    snprintf (why, sizeof why, "blob '%s' misses chunk %zu", name, chunk);
                return s_corrupt (err, ckpt, dir, why);
            }
            if (data)
                memcpy (bytes + off, data, clen);
            off += clen;
        }
        if (shared && weir__hash64 (0, bytes, size) != hash) {
            free (bytes);
            char why[4400];
            snprintf (why, sizeof why,
                      "the bytes of blob '%s', which checkpoint %" PRIu64 " wrote, do not match their hash",
                      name, held);
            return s_corrupt (err, ckpt, dir, why);
        }
        //  Replace the size text with the bytes
        weir__ckpt_replace (ckpt, WEIR__SECTION_BLOBS, name, bytes, size);
    }
    weir__ckpt_drop (ckpt, WEIR__SECTION_CHUNKS);
    return 0;
}

void weir__layout_shared_keys (const char *name, size_t nlen, size_t size, uint64_t held,
                               weir__layout_key_fn *fn, void *arg)
{
    char key[4400];
    for (size_t off = 0, chunk = 0; off < size; off += S_CHUNK, chunk++)
        fn (arg, key, s_shared_key (key, sizeof key, name, nlen, held, chunk));
}

void weir__layout_chunk_keys (const char *key, size_t klen, const char *value, size_t vlen,
                              weir__layout_key_fn *fn, void *arg)
{
    //  A size that is no number has no chunks
    size_t size;
    uint64_t held, hash;
    if (weir__layout_blob_value (value, vlen, &size, &held, &hash) != 0)
        return;
    size_t nlen = klen - S_PREFIX_LEN - 2;
    char *ckey = malloc (klen + 16);
    if (!ckey)
        return;
    for (size_t off = 0, chunk = 0; off < size; off += S_CHUNK, chunk++) {
        int n = snprintf (ckey, klen + 16, "%.*s%c/%.*s#%08zu", S_PREFIX_LEN, key, WEIR__SECTION_CHUNKS,
                          (int) nlen, key + S_PREFIX_LEN + 2, chunk);
        fn (arg, ckey, (size_t) n);
    }
    free (ckey);
}

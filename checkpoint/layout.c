/*  checkpoint/layout.c - a checkpoint as the store's entries, and back.  */
#include "config.h"
#include "checkpoint/layout.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint/keys.h"
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

//  A blob's size entry, decimal: 0 and *SIZE, or -1 (and 0) when it is
//  empty or too long to be one
static int s_blob_size (const char *text, size_t len, size_t *size)
{
    char digits[24];
    *size = 0;
    if (len == 0 || len >= sizeof digits)
        return -1;
    memcpy (digits, text, len);
    digits[len] = '\0';
    *size = (size_t) strtoull (digits, NULL, 10);
    return 0;
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

//  Every entry of CKPT under PREFIX: the small sections packed, blobs cut
//  into chunks.
static int s_fill (weir__layout *self, const weir__ckpt *ckpt, const char *prefix)
{
    size_t nblobs = weir__ckpt_count (ckpt, WEIR__SECTION_BLOBS);
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
    for (size_t i = 0; i < nblobs; i++) {
        const void *data;
        size_t len;
        const char *name = weir__ckpt_item (ckpt, WEIR__SECTION_BLOBS, i, &data, &len);
        //  A blob: its size under 'b', its bytes in chunks under 'c'
        char *size = NULL;
        int n = asprintf (&size, "%zu", len);
        if (n < 0 || s_put (self, size, (size_t) n, size, "%s%c/%s", prefix, WEIR__SECTION_BLOBS, name))
            return WEIR_ENOMEM;
        for (size_t off = 0, chunk = 0; off < len; off += S_CHUNK, chunk++)
            if (s_put (self, (const char *) data + off, len - off < S_CHUNK ? len - off : S_CHUNK, NULL,
                       "%s%c/%s#%08zu", prefix, WEIR__SECTION_CHUNKS, name, chunk))
                return WEIR_ENOMEM;
    }
    return 0;
}

int weir__layout_init (weir__layout *self, const weir__ckpt *ckpt)
{
    memset (self, 0, sizeof *self);
    char prefix[32];
    weir__store_prefix (prefix, sizeof prefix, weir__ckpt_epoch (ckpt));
    if (s_fill (self, ckpt, prefix))
        return WEIR_ENOMEM;
    //  The checksum covers every key and value in key order, as they will
    //  be read back
    qsort (self->entries, self->count, sizeof *self->entries, s_entry_cmp);
    uint64_t h = 0;
    for (size_t i = 0; i < self->count; i++) {
        const weir__layout_entry *e = &self->entries[i];
        h = weir__layout_hash (h, e->key, e->klen, e->value, e->vlen);
    }
    snprintf (self->sum_key, sizeof self->sum_key, "%s%s", prefix, WEIR__STORE_SUM);
    s_sum (self->sum, sizeof self->sum, self->count, h);
    return 0;
}

void weir__layout_release (weir__layout *self)
{
    for (size_t i = 0; i < self->count; i++)
        free (self->entries[i].key);
    for (size_t i = 0; i < self->nowned; i++)
        free (self->owned[i]);
    free (self->entries);
    free (self->owned);
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

int weir__layout_assemble (weir__ckpt *ckpt, const char *dir, weir__err *err)
{
    size_t nblobs = weir__ckpt_count (ckpt, WEIR__SECTION_BLOBS);
    for (size_t b = 0; b < nblobs; b++) {
        const void *text;
        size_t tlen, size;
        const char *name = weir__ckpt_item (ckpt, WEIR__SECTION_BLOBS, b, &text, &tlen);
        if (s_blob_size (text, tlen, &size))
            return s_corrupt (err, ckpt, dir, "a blob size is malformed");
        char *bytes = malloc (size ? size : 1);
        if (!bytes)
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        size_t off = 0;
        for (size_t chunk = 0; off < size; chunk++) {
            char cname[4200];
            snprintf (cname, sizeof cname, "%s#%08zu", name, chunk);
            size_t clen;
            const void *data = weir__ckpt_get (ckpt, WEIR__SECTION_CHUNKS, cname, &clen);
            if (!data || clen > size - off || (clen != S_CHUNK && off + clen != size)) {
                free (bytes);
                char why[4300];
                snprintf (why, sizeof why, "blob '%s' misses chunk %zu", name, chunk);
                return s_corrupt (err, ckpt, dir, why);
            }
            memcpy (bytes + off, data, clen);
            off += clen;
        }
        //  Replace the size text with the bytes
        weir__ckpt_replace (ckpt, WEIR__SECTION_BLOBS, name, bytes, size);
    }
    weir__ckpt_drop (ckpt, WEIR__SECTION_CHUNKS);
    return 0;
}

void weir__layout_chunk_keys (const char *key, size_t klen, const char *value, size_t vlen,
                              weir__layout_key_fn *fn, void *arg)
{
    //  A size that is no number has no chunks
    size_t size;
    s_blob_size (value, vlen, &size);
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

/*  checkpoint/ckpt.c - a checkpoint's items in memory.  */
#include "config.h"
#include "checkpoint/ckpt.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weir/weir.h>

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

int weir__ckpt_put (weir__ckpt *self, char section, const char *name, const void *data, size_t len, int copy)
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
    return text ? weir__ckpt_parse_u64 (text, len, value) : -1;
}

int weir__ckpt_parse_u64 (const char *text, size_t len, uint64_t *value)
{
    if (len == 0 || len > 20)
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

//  The first item of SECTION or after it, in the sorted items: sections
//  are contiguous, so a section's items are found without a scan.
static size_t s_first (const weir__ckpt *self, char section)
{
    s_sort ((weir__ckpt *) self);
    size_t lo = 0, hi = self->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((unsigned char) self->items[mid].section < (unsigned char) section)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t weir__ckpt_count (const weir__ckpt *self, char section)
{
    return s_first (self, (char) (section + 1)) - s_first (self, section);
}

const char *weir__ckpt_item (const weir__ckpt *self, char section, size_t index, const void **data,
                             size_t *len)
{
    size_t i = s_first (self, section) + index;
    if (i >= self->count || self->items[i].section != section)
        return NULL;
    if (data)
        *data = self->items[i].data;
    if (len)
        *len = self->items[i].len;
    return self->items[i].name;
}

int weir__ckpt_replace (weir__ckpt *self, char section, const char *name, void *data, size_t len)
{
    s_item *it = (s_item *) s_find (self, section, name);
    if (!it) {
        free (data);
        return -1;
    }
    if (it->owned)
        free ((void *) it->data);
    it->data = data;
    it->len = len;
    it->owned = 1;
    return 0;
}

void weir__ckpt_drop (weir__ckpt *self, char section)
{
    size_t kept = 0;
    for (size_t i = 0; i < self->count; i++) {
        s_item *it = &self->items[i];
        if (it->section != section) {
            self->items[kept++] = *it;
            continue;
        }
        free (it->name);
        if (it->owned)
            free ((void *) it->data);
    }
    //  Removing items keeps the rest in order
    self->count = kept;
}

//  The packed form: the epoch (8 bytes), then per item its section (1),
//  name length (4), name, data length (8) and data, in host order: it
//  travels between ranks of one job, never to disk.
int weir__ckpt_pack (const weir__ckpt *self, char **buf, size_t *len)
{
    size_t total = 8;
    for (size_t i = 0; i < self->count; i++)
        total += 1 + 4 + strlen (self->items[i].name) + 8 + self->items[i].len;
    char *out = malloc (total), *p = out;
    if (!out)
        return WEIR_ENOMEM;
    memcpy (p, &self->epoch, 8), p += 8;
    for (size_t i = 0; i < self->count; i++) {
        const s_item *it = &self->items[i];
        uint32_t nl = (uint32_t) strlen (it->name);
        uint64_t dl = it->len;
        *p++ = it->section;
        memcpy (p, &nl, 4), p += 4;
        memcpy (p, it->name, nl), p += nl;
        memcpy (p, &dl, 8), p += 8;
        if (dl)
            memcpy (p, it->data, dl), p += dl;
    }
    *buf = out;
    *len = total;
    return 0;
}

int weir__ckpt_unpack (const char *buf, size_t len, weir__ckpt **out)
{
    *out = NULL;
    uint64_t epoch;
    if (len < 8)
        return WEIR_ECORRUPT;
    memcpy (&epoch, buf, 8);
    weir__ckpt *ck = weir__ckpt_new (epoch);
    if (!ck)
        return WEIR_ENOMEM;
    size_t at = 8;
    char name[WEIR__CKPT_NAME_MAX + 1];
    while (at < len) {
        uint32_t nl;
        uint64_t dl;
        if (len - at < 5)
            goto corrupt;
        char section = buf[at++];
        memcpy (&nl, buf + at, 4), at += 4;
        if (nl > WEIR__CKPT_NAME_MAX || len - at < (size_t) nl + 8)
            goto corrupt;
        memcpy (name, buf + at, nl), at += nl;
        name[nl] = '\0';
        memcpy (&dl, buf + at, 8), at += 8;
        if (dl > len - at)
            goto corrupt;
        if (weir__ckpt_put (ck, section, name, buf + at, (size_t) dl, 1)) {
            weir__ckpt_destroy (&ck);
            return WEIR_ENOMEM;
        }
        at += (size_t) dl;
    }
    *out = ck;
    return 0;
corrupt:
    weir__ckpt_destroy (&ck);
    return WEIR_ECORRUPT;
}

/*  lib/workspace.c - the job's named blobs.  */
#include "config.h"
#include "lib/workspace.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"

typedef struct {
    char *name;
    void *data;
    size_t size;
    int touched;  //  restored since the last weir__workspace_untouch
} s_blob;

//  A region of a blob kept as one value across the ranks of a job
typedef struct {
    char *name;
    size_t offset, count, width;
    int type, op;
    void *last;  //  its value after the last reduction
} s_reduce;

struct weir__workspace {
    pthread_mutex_t lock;
    s_blob *blobs;
    size_t count, cap;
    //  The blobs by name: open addressing, each slot a blob's index + 1
    //  (0 empty), at most half full.  A keyed stage has a blob per key
    //  group, up to 65536 of them, each looked up at each epoch's end
    uint32_t *index;
    size_t slots;
    s_reduce *reduce;
    size_t nreduce;
};

weir__workspace *weir__workspace_new (void)
{
    weir__workspace *self = calloc (1, sizeof *self);
    if (self)
        pthread_mutex_init (&self->lock, NULL);
    return self;
}

void weir__workspace_destroy (weir__workspace **self_p)
{
    weir__workspace *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < self->count; i++) {
        free (self->blobs[i].name);
        free (self->blobs[i].data);
    }
    free (self->blobs);
    free (self->index);
    for (size_t i = 0; i < self->nreduce; i++) {
        free (self->reduce[i].name);
        free (self->reduce[i].last);
    }
    free (self->reduce);
    pthread_mutex_destroy (&self->lock);
    free (self);
    *self_p = NULL;
}

//  The slot of NAME in the index: its blob's, or the empty one it would
//  take
static size_t s_slot (const weir__workspace *self, const char *name)
{
    size_t mask = self->slots - 1, i = (size_t) weir__hash64 (0, name, strlen (name)) & mask;
    while (self->index[i] && strcmp (self->blobs[self->index[i] - 1].name, name) != 0)
        i = (i + 1) & mask;
    return i;
}

static s_blob *s_find (weir__workspace *self, const char *name)
{
    if (!self->slots)
        return NULL;
    uint32_t at = self->index[s_slot (self, name)];
    return at ? &self->blobs[at - 1] : NULL;
}

//  Room for one more blob in the array and the index; 0 or -1
static int s_room (weir__workspace *self)
{
    if (self->count == self->cap) {
        size_t cap = self->cap ? self->cap * 2 : 16;
        s_blob *blobs = realloc (self->blobs, cap * sizeof *blobs);
        if (!blobs)
            return -1;
        self->blobs = blobs;
        self->cap = cap;
    }
    if ((self->count + 1) * 2 > self->slots) {
        size_t slots = self->slots ? self->slots * 2 : 32;
        uint32_t *index = calloc (slots, sizeof *index);
        if (!index)
            return -1;
        free (self->index);
        self->index = index;
        self->slots = slots;
        for (size_t k = 0; k < self->count; k++)
            self->index[s_slot (self, self->blobs[k].name)] = (uint32_t) k + 1;
    }
    return 0;
}

//  A new zeroed blob (lock held); NULL when out of memory.
static s_blob *s_add (weir__workspace *self, const char *name, size_t size)
{
    if (s_room (self))
        return NULL;
    s_blob *blobs = self->blobs;
    //  64-byte alignment: no two blobs share a cache line, and vectorised
    //  updates of a model stay aligned
    size_t rounded = (size + 63) / 64 * 64;
    void *data = aligned_alloc (64, rounded ? rounded : 64);
    char *copy = strdup (name);
    if (!data || !copy) {
        free (data);
        free (copy);
        return NULL;
    }
    memset (data, 0, rounded ? rounded : 64);
    s_blob *b = &blobs[self->count];
    b->name = copy;
    b->data = data;
    b->size = size;
    b->touched = 0;
    self->index[s_slot (self, copy)] = (uint32_t) ++self->count;
    return b;
}

void *weir__workspace_blob (weir__workspace *self, const char *name, size_t size, weir__err *err)
{
    pthread_mutex_lock (&self->lock);
    s_blob *b = s_find (self, name);
    void *data = NULL;
    if (b && b->size != size)
        weir__err_set (err, WEIR_EPROCESSOR,
                       "blob '%s' is %zu bytes, not %zu (a resumed checkpoint or another "
                       "stage made it so)",
                       name, b->size, size);
    else if (!b && !(b = s_add (self, name, size)))
        weir__err_set (err, WEIR_ENOMEM, "out of memory for blob '%s' of %zu bytes", name, size);
    else
        data = b->data;
    pthread_mutex_unlock (&self->lock);
    return data;
}

void *weir__workspace_find (weir__workspace *self, const char *name, size_t *size)
{
    pthread_mutex_lock (&self->lock);
    s_blob *b = s_find (self, name);
    void *data = b ? b->data : NULL;
    if (b)
        *size = b->size;
    pthread_mutex_unlock (&self->lock);
    return data;
}

int weir__workspace_restore (weir__workspace *self, const char *name, const void *data, size_t size)
{
    pthread_mutex_lock (&self->lock);
    s_blob *b = s_find (self, name);
    if (b && b->size != size) {
        //  Replace it whole: the checkpoint says what the blob is
        free (b->data);
        size_t rounded = (size + 63) / 64 * 64;
        b->data = aligned_alloc (64, rounded ? rounded : 64);
        b->size = size;
        if (!b->data) {
            b->size = 0;
            pthread_mutex_unlock (&self->lock);
            return WEIR_ENOMEM;
        }
    }
    else if (!b && !(b = s_add (self, name, size))) {
        pthread_mutex_unlock (&self->lock);
        return WEIR_ENOMEM;
    }
    if (size)
        memcpy (b->data, data, size);
    b->touched = 1;
    pthread_mutex_unlock (&self->lock);
    return 0;
}

int weir__workspace_touched (weir__workspace *self, size_t index)
{
    pthread_mutex_lock (&self->lock);
    int touched = index < self->count && self->blobs[index].touched;
    pthread_mutex_unlock (&self->lock);
    return touched;
}

void weir__workspace_untouch (weir__workspace *self)
{
    pthread_mutex_lock (&self->lock);
    for (size_t i = 0; i < self->count; i++)
        self->blobs[i].touched = 0;
    pthread_mutex_unlock (&self->lock);
}

size_t weir__workspace_count (weir__workspace *self)
{
    pthread_mutex_lock (&self->lock);
    size_t n = self->count;
    pthread_mutex_unlock (&self->lock);
    return n;
}

const char *weir__workspace_item (weir__workspace *self, size_t index, void **data, size_t *size)
{
    pthread_mutex_lock (&self->lock);
    const char *name = NULL;
    if (index < self->count) {
        name = self->blobs[index].name;
        *data = self->blobs[index].data;
        *size = self->blobs[index].size;
    }
    pthread_mutex_unlock (&self->lock);
    return name;
}

//  Whether this very region is declared already (lock held).
static int s_declared (weir__workspace *self, const char *name, size_t offset, size_t count, size_t width,
                       int type, int op)
{
    for (size_t i = 0; i < self->nreduce; i++) {
        s_reduce *r = &self->reduce[i];
        if (!strcmp (r->name, name) && r->offset == offset && r->count == count && r->width == width
            && r->type == type && r->op == op)
            return 1;
    }
    return 0;
}

int weir__workspace_add_reduce (weir__workspace *self, const char *name, size_t offset, size_t count,
                                size_t width, int type, int op)
{
    int rc = 0;
    pthread_mutex_lock (&self->lock);
    s_blob *b = s_find (self, name);
    if (!b)
        rc = WEIR__WORKSPACE_NO_BLOB;
    else if (offset % width || offset > b->size || count > (b->size - offset) / width)
        rc = WEIR__WORKSPACE_OUTSIDE;
    else if (s_declared (self, name, offset, count, width, type, op))
        rc = 0;
    else {
        s_reduce *r = realloc (self->reduce, (self->nreduce + 1) * sizeof *r);
        char *copy = strdup (name);
        void *last = malloc (count > 0 ? count * width : 1);
        if (r)
            self->reduce = r;
        if (!r || !copy || !last) {
            free (copy);
            free (last);
            rc = WEIR_ENOMEM;
        }
        else {
            memcpy (last, (char *) b->data + offset, count * width);
            self->reduce[self->nreduce++] = (s_reduce){copy, offset, count, width, type, op, last};
        }
    }
    pthread_mutex_unlock (&self->lock);
    return rc;
}

size_t weir__workspace_reduce_count (weir__workspace *self)
{
    pthread_mutex_lock (&self->lock);
    size_t n = self->nreduce;
    pthread_mutex_unlock (&self->lock);
    return n;
}

const char *weir__workspace_reduce (weir__workspace *self, size_t index, weir__workspace_region *out)
{
    const char *name = NULL;
    pthread_mutex_lock (&self->lock);
    if (index < self->nreduce) {
        s_reduce *r = &self->reduce[index];
        s_blob *b = s_find (self, r->name);
        name = r->name;
        out->data = NULL;
        //  A blob stored anew (weir_blob_store) may have moved or shrunk
        if (b && r->offset + r->count * r->width <= b->size)
            out->data = (char *) b->data + r->offset;
        out->offset = r->offset;
        out->count = r->count;
        out->width = r->width;
        out->type = r->type;
        out->op = r->op;
        out->last = r->last;
    }
    pthread_mutex_unlock (&self->lock);
    return name;
}

void weir__workspace_reduce_rebase (weir__workspace *self)
{
    pthread_mutex_lock (&self->lock);
    for (size_t i = 0; i < self->nreduce; i++) {
        s_reduce *r = &self->reduce[i];
        s_blob *b = s_find (self, r->name);
        if (b && r->offset + r->count * r->width <= b->size)
            memcpy (r->last, (char *) b->data + r->offset, r->count * r->width);
    }
    pthread_mutex_unlock (&self->lock);
}

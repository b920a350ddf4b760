/*  readers/shards.c - the shards of a reader's input.  */
#include "config.h"
#include "readers/shards.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <weir/weir.h>

#include "readers/window.h"

void weir__shards_init (weir__shards *self)
{
    self->items = NULL;
    self->count = 0;
    self->cap = 0;
    self->follow = 0;
    self->read = NULL;
    self->nread = 0;
    self->read_cap = 0;
}

void weir__shards_release (weir__shards *self)
{
    for (size_t i = 0; i < self->count; i++) {
        if (self->items[i].kept) {
            weir__window_close (self->items[i].kept);
            free (self->items[i].kept);
        }
        free (self->items[i].path);
    }
    free (self->items);
    free (self->read);
    weir__shards_init (self);
}

int weir__shards_add (weir__shards *self, const char *path, uint64_t start, uint64_t end)
{
    //  split=1 plans a shard per line: growing one at a time would copy
    //  the array once per shard
    if (self->count == self->cap) {
        size_t cap = self->cap < 8 ? 8 : self->cap + self->cap / 2;
        weir__shard *more = realloc (self->items, cap * sizeof *more);
        if (!more)
            return WEIR_ENOMEM;
        self->items = more;
        self->cap = cap;
    }
    weir__shard *items = self->items;
    memset (&items[self->count], 0, sizeof items[self->count]);
    if (path && !(items[self->count].path = strdup (path)))
        return WEIR_ENOMEM;
    items[self->count].start = start;
    items[self->count].end = end;
    self->count++;
    return 0;
}

//  Is the file the glob found at the path of shard I one a FIXED shard
//  reads, or one read and left?  It is looked for by its identity: a
//  rotation may have renamed it since the glob.
static int s_copy (const weir__shards *self, size_t i, const unsigned char *fixed)
{
    const weir__shard *shard = &self->items[i];
    if (fixed[i] || !shard->path || !shard->id.known)
        return 0;
    int fd = open (shard->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd >= 0 && (fstat (fd, &st) || !weir__identity_is (fd, &st, &shard->id))) {
        close (fd);
        fd = -1;
    }
    if (fd < 0 && (fd = weir__identity_find (shard->path, &shard->id)) >= 0 && fstat (fd, &st)) {
        close (fd);
        fd = -1;
    }
    int copy = 0;
    for (size_t k = 0; fd >= 0 && k < self->count && !copy; k++)
        copy = fixed[k] && !self->items[k].gone && weir__identity_is (fd, &st, &self->items[k].id);
    for (size_t k = 0; fd >= 0 && k < self->nread && !copy; k++)
        copy = weir__identity_is (fd, &st, &self->read[k]);
    if (fd >= 0)
        close (fd);
    return copy;
}

int weir__shards_drop_copies (weir__shards *self, const unsigned char *fixed)
{
    //  Every shard is judged before any is dropped: FIXED is by index
    unsigned char *copy = calloc (self->count + 1, 1);
    if (!copy)
        return WEIR_ENOMEM;
    for (size_t i = 0; i < self->count; i++)
        copy[i] = (unsigned char) s_copy (self, i, fixed);
    size_t kept = 0;
    for (size_t i = 0; i < self->count; i++) {
        weir__shard *shard = &self->items[i];
        if (!copy[i]) {
            self->items[kept++] = *shard;
            continue;
        }
        if (shard->kept) {
            weir__window_close (shard->kept);
            free (shard->kept);
        }
        free (shard->path);
    }
    self->count = kept;
    free (copy);
    return 0;
}

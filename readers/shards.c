/*  readers/shards.c - the shards of a reader's input.  */
#include "config.h"
#include "readers/shards.h"

#include <stdlib.h>
#include <string.h>
#include <weir/weir.h>

#include "readers/window.h"

void weir__shards_init (weir__shards *self)
{
    self->items = NULL;
    self->count = 0;
    self->cap = 0;
    self->follow = 0;
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

/*  readers/known.c - the files a followed glob's shards already know.  */
#include "config.h"
#include "readers/known.h"

#include <stdlib.h>
#include <weir/weir.h>

int weir__known_add (weir__shards *self, const weir__identity *id)
{
    for (size_t k = 0; k < self->nread; k++)
        if (self->read[k].dev == id->dev && self->read[k].ino == id->ino) {
            self->read[k] = *id;
            return 0;
        }
    if (self->nread == self->read_cap) {
        size_t cap = self->read_cap < 8 ? 8 : self->read_cap * 2;
        weir__identity *more = realloc (self->read, cap * sizeof *more);
        if (!more)
            return WEIR_ENOMEM;
        self->read = more;
        self->read_cap = cap;
    }
    self->read[self->nread++] = *id;
    return 0;
}

int weir__known_has (const weir__shards *self, int fd, const struct stat *st, const weir__shard *except)
{
    for (size_t i = 0; i < self->count; i++) {
        const weir__shard *shard = &self->items[i];
        if (shard != except && !shard->gone && weir__identity_is (fd, st, &shard->id))
            return 1;
    }
    for (size_t k = 0; k < self->nread; k++)
        if (weir__identity_is (fd, st, &self->read[k]))
            return 1;
    return 0;
}

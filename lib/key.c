/*  lib/key.c - the key of a record, canonical, and its group.  */
#include "config.h"
#include "lib/key.h"

#include <stdlib.h>
#include <string.h>

#include "lib/fieldpath.h"
#include "lib/hash.h"
#include "lib/pack.h"

struct weir__key {
    char *path;         //  the text the steps point into
    weir__step *steps;  //  none: the whole record
    size_t nsteps;
};

weir__key *weir__key_new (const char *path, weir__err *err)
{
    weir__key *self = calloc (1, sizeof *self);
    if (!self || !(self->path = strdup (path))) {
        free (self);
        weir__err_set (err, WEIR_ENOMEM, "out of memory");
        return NULL;
    }
    const char *p = self->path;
    if (p[0] == '.' && p[1] == '\0')
        return self;
    //  A step is at least two characters ('.a', '[0]')
    size_t most = strlen (p) / 2 + 1;
    if (!(self->steps = calloc (most, sizeof *self->steps))) {
        weir__key_destroy (&self);
        weir__err_set (err, WEIR_ENOMEM, "out of memory");
        return NULL;
    }
    if (!*p) {
        weir__err_set (err, WEIR_EPROPERTY,
                       "the path is empty: give one ('.user', '[0]', '.' for the whole record)");
        err->offset = 0;
        weir__key_destroy (&self);
        return NULL;
    }
    while (*p) {
        if (self->nsteps == most || weir__step_read (&p, &self->steps[self->nsteps])) {
            weir__err_set (err, WEIR_EPROPERTY,
                           "expected a path step ('.NAME', '.\"NAME\"' or '[N]') at column %zu of the path",
                           (size_t) (p - self->path) + 1);
            err->offset = p - self->path;
            weir__key_destroy (&self);
            return NULL;
        }
        self->nsteps++;
    }
    return self;
}

void weir__key_destroy (weir__key **self_p)
{
    weir__key *self = *self_p;
    if (!self)
        return;
    free (self->steps);
    free (self->path);
    free (self);
    *self_p = NULL;
}

const char *weir__key_path (const weir__key *self)
{
    return self->path;
}

int weir__key_whole (const weir__key *self)
{
    return self->nsteps == 0;
}

static int s_write (void *data, const char *buf, size_t len)
{
    return weir__buf_append (data, buf, len);
}

const msgpack_object *weir__key_find (const weir__key *self, const msgpack_object *rec)
{
    const msgpack_object *at = rec;
    for (size_t i = 0; i < self->nsteps && at; i++)
        at = weir__step_take (&self->steps[i], at);
    return at;
}

int weir__key_of (const weir__key *self, const msgpack_object *rec, weir__buf *scratch, const char **key,
                  size_t *len, uint64_t *hash)
{
    const msgpack_object *at = self->nsteps ? weir__key_find (self, rec) : rec;
    scratch->len = 0;
    //  A str, the most common key (a word, a user): its bytes in the
    //  record are its key when its header is the shortest, as a packer
    //  writes it, and nothing is copied
    if (at && at->type == MSGPACK_OBJECT_STR) {
        uint32_t n = at->via.str.size;
        char head[5];
        size_t h = weir__pack_bytes_header (head, n, 0);
        const char *body = at->via.str.ptr;
        int same = 1;
        for (size_t i = 0; i < h; i++)
            same &= body[i - h] == head[i];
        if (same) {
            *key = body - h;
            *len = h + n;
        }
        else {
            if (weir__buf_append (scratch, head, h) || weir__buf_append (scratch, body, n))
                return -1;
            *key = scratch->data;
            *len = scratch->len;
        }
        if (hash)
            *hash = weir__key_hash (*key, *len);
        return 0;
    }
    msgpack_packer pk;
    msgpack_packer_init (&pk, scratch, s_write);
    //  msgpack-c packs every value in its shortest form: the bytes are
    //  canonical whatever form the record came in
    int rc = at ? msgpack_pack_object (&pk, *at) : msgpack_pack_nil (&pk);
    if (rc)
        return -1;
    *key = scratch->data;
    *len = scratch->len;
    if (hash)
        *hash = weir__key_hash (*key, *len);
    return 0;
}

/*  lib/fieldpath.h - the steps of a path into a record.

    A path ('.user.id', '.tags[0]', '."a b"', or '.' for the whole record;
    <weir/plugin.h> says it for plugin authors) is a chain of steps: a key
    of a map, or an index of an array.  weir_field walks one as it reads
    it; filter's expressions (lib/expr.h) read theirs once and walk the
    steps for every record.  A step points into the text it was read from,
    which must outlive it.  */
#ifndef WEIR_FIELDPATH_H_INCLUDED
#define WEIR_FIELDPATH_H_INCLUDED

#include <msgpack.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct weir__step {
    int index;        //  [N], else .KEY
    uint64_t n;       //  N
    const char *key;  //  KEY, LEN bytes, in the path's text
    size_t len;
    int escaped;  //  KEY holds \" or \\ to read as '"' or '\'
} weir__step;

/*  Whether the N bytes at A and B are the same.  Keys and short values
    (a level, a service) are compared with two overlapping loads of each
    rather than a call to memcmp, which costs more than the comparison:
    filter and route compare a key or two per record.  */
static inline int weir__same_bytes (const char *a, const char *b, size_t n)
{
    if (n >= 4 && n <= 8) {
        uint32_t a0, b0, a1, b1;
        memcpy (&a0, a, 4), memcpy (&b0, b, 4);
        memcpy (&a1, a + n - 4, 4), memcpy (&b1, b + n - 4, 4);
        return ((a0 ^ b0) | (a1 ^ b1)) == 0;
    }
    if (n < 4) {
        for (size_t i = 0; i < n; i++)
            if (a[i] != b[i])
                return 0;
        return 1;
    }
    return memcmp (a, b, n) == 0;
}

/*  Does a step start at P ('.' then a name character or '"', or '[')?  */
int weir__step_starts (const char *p);

/*  Read the step at *P into S and move *P past it: 0, or -1 when no
    well-formed step is there (*P then unmoved).  */
int weir__step_read (const char **p, weir__step *s);

/*  Whether the str of LEN bytes at K is the key of step S, which holds
    escapes.  */
int weir__step_key_is_escaped (const weir__step *s, const char *k, size_t len);

/*  The value step S leads to from AT, or NULL when it is absent (a
    missing key, an index past the end, AT no map or array).  A map with
    a key twice gives its first.  Inline: filter takes a step per field
    of every record.  */
static inline const msgpack_object *weir__step_take (const weir__step *s, const msgpack_object *at)
{
    if (s->index)
        return at->type == MSGPACK_OBJECT_ARRAY && s->n < at->via.array.size ? &at->via.array.ptr[s->n] : NULL;
    if (at->type != MSGPACK_OBJECT_MAP)
        return NULL;
    for (uint32_t i = 0; i < at->via.map.size; i++) {
        const msgpack_object *k = &at->via.map.ptr[i].key;
        if (k->type != MSGPACK_OBJECT_STR)
            continue;
        if (s->escaped ? weir__step_key_is_escaped (s, k->via.str.ptr, k->via.str.size)
                       : k->via.str.size == s->len && weir__same_bytes (k->via.str.ptr, s->key, s->len))
            return &at->via.map.ptr[i].val;
    }
    return NULL;
}

#endif

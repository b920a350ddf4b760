/*  lib/field.c - values inside a record, by path: weir_field of
    <weir/plugin.h>.

    The path is walked as it is read, one step at a time: no compiled
    form, as a plugin's path is a few bytes and the record's maps are
    small.  The whole path is checked even when the value is found absent
    early, so that a malformed path is an error on every record, not only
    on those that reach the bad step.  */
#include "config.h"

#include <string.h>
#include <weir/plugin.h>

//  One step of a path: a key (KEY, LEN bytes; ESCAPED when it holds
//  backslash escapes to read), or an index
typedef struct {
    int index;  //  [N], else .KEY
    uint64_t n;
    const char *key;
    size_t len;
    int escaped;
} s_step;

static int s_name_char (char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

//  The step at *P into S, *P moved past it: 0, or WEIR_EINVAL.
static int s_next (const char **p, s_step *s)
{
    const char *at = *p;
    memset (s, 0, sizeof *s);
    if (*at == '[') {
        at++;
        if (*at < '0' || *at > '9')
            return WEIR_EINVAL;
        s->index = 1;
        while (*at >= '0' && *at <= '9') {
            if (s->n > (UINT64_MAX - 9) / 10)
                return WEIR_EINVAL;
            s->n = s->n * 10 + (uint64_t) (*at++ - '0');
        }
        if (*at++ != ']')
            return WEIR_EINVAL;
    }
    else if (*at == '.' && at[1] == '"') {
        at += 2;
        s->key = at;
        while (*at && *at != '"') {
            if (*at == '\\') {
                if (at[1] != '"' && at[1] != '\\')
                    return WEIR_EINVAL;
                s->escaped = 1;
                at++;
            }
            at++;
        }
        if (*at != '"')
            return WEIR_EINVAL;
        s->len = (size_t) (at - s->key);
        at++;
    }
    else if (*at == '.' && s_name_char (at[1])) {
        s->key = ++at;
        while (s_name_char (*at))
            at++;
        s->len = (size_t) (at - s->key);
    }
    else
        return WEIR_EINVAL;
    *p = at;
    return 0;
}

//  Whether the str of LEN bytes at K is the key of step S.
static int s_key_is (const s_step *s, const char *k, size_t len)
{
    if (!s->escaped)
        return len == s->len && memcmp (k, s->key, len) == 0;
    size_t i = 0;
    for (size_t j = 0; j < s->len; j++, i++) {
        if (s->key[j] == '\\')
            j++;
        if (i >= len || k[i] != s->key[j])
            return 0;
    }
    return i == len;
}

int weir_field (const msgpack_object *rec, const char *path, const msgpack_object **out)
{
    *out = NULL;
    if (!rec || !path || !*path)
        return WEIR_EINVAL;
    const char *p = path;
    if (p[0] == '.' && p[1] == '\0') {
        *out = rec;
        return 0;
    }
    const msgpack_object *at = rec;
    while (*p) {
        s_step s;
        if (s_next (&p, &s))
            return WEIR_EINVAL;
        if (!at)
            continue;  //  absent already: the rest is only checked
        const msgpack_object *next = NULL;
        if (s.index && at->type == MSGPACK_OBJECT_ARRAY && s.n < at->via.array.size)
            next = &at->via.array.ptr[s.n];
        else if (!s.index && at->type == MSGPACK_OBJECT_MAP)
            for (uint32_t i = 0; i < at->via.map.size && !next; i++) {
                const msgpack_object *k = &at->via.map.ptr[i].key;
                if (k->type == MSGPACK_OBJECT_STR && s_key_is (&s, k->via.str.ptr, k->via.str.size))
                    next = &at->via.map.ptr[i].val;
            }
        at = next;
    }
    if (!at)
        return 1;
    *out = at;
    return 0;
}

/*  lib/fieldpath.c - the steps of a path into a record.  */
#include "config.h"
#include "lib/fieldpath.h"

#include <string.h>

static int s_name_char (char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

int weir__step_key_is_escaped (const weir__step *s, const char *k, size_t len)
{
    size_t i = 0;
    for (size_t j = 0; j < s->len; j++, i++) {
        if (s->key[j] == '\\')
            j++;
        if (i >= len || k[i] != s->key[j])
            return 0;
    }
    return i == len;
}

int weir__step_starts (const char *p)
{
    return *p == '[' || (*p == '.' && (p[1] == '"' || s_name_char (p[1])));
}

int weir__step_read (const char **p, weir__step *s)
{
    const char *at = *p;
    memset (s, 0, sizeof *s);
    if (*at == '[') {
        at++;
        if (*at < '0' || *at > '9')
            return -1;
        s->index = 1;
        while (*at >= '0' && *at <= '9') {
            if (s->n > (UINT64_MAX - 9) / 10)
                return -1;
            s->n = s->n * 10 + (uint64_t) (*at++ - '0');
        }
        if (*at++ != ']')
            return -1;
    }
    else if (*at == '.' && at[1] == '"') {
        at += 2;
        s->key = at;
        while (*at && *at != '"') {
            if (*at == '\\') {
                if (at[1] != '"' && at[1] != '\\')
                    return -1;
                s->escaped = 1;
                at++;
            }
            at++;
        }
        if (*at != '"')
            return -1;
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
        return -1;
    *p = at;
    return 0;
}

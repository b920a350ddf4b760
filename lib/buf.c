/*  lib/buf.c - growable byte buffer.  */
#include "config.h"
#include "lib/buf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

void weir__buf_init (weir__buf *b)
{
    b->data = NULL;
    b->len = b->cap = 0;
}

void weir__buf_release (weir__buf *b)
{
    free (b->data);
    weir__buf_init (b);
}

int weir__buf_reserve (weir__buf *b, size_t n)
{
    if (b->cap - b->len >= n)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->len < n) {
        if (cap > SIZE_MAX / 2)
            return -1;
        cap *= 2;
    }
    char *data = realloc (b->data, cap);
    if (!data)
        return -1;
    b->data = data;
    b->cap = cap;
    return 0;
}

int weir__buf_printf (weir__buf *b, const char *fmt, ...)
{
    char small[128];
    va_list ap;
    va_start (ap, fmt);
    int n = vsnprintf (small, sizeof small, fmt, ap);
    va_end (ap);
    if (n < 0)
        return -1;
    if ((size_t) n < sizeof small)
        return weir__buf_append (b, small, (size_t) n);
    if (weir__buf_reserve (b, (size_t) n + 1))
        return -1;
    va_start (ap, fmt);
    vsnprintf (b->data + b->len, (size_t) n + 1, fmt, ap);
    va_end (ap);
    b->len += (size_t) n;
    return 0;
}

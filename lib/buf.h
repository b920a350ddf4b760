/*  lib/buf.h - a growable byte buffer.  */
#ifndef WEIR_BUF_H_INCLUDED
#define WEIR_BUF_H_INCLUDED

#include <stddef.h>
#include <string.h>

typedef struct weir__buf {
    char *data;
    size_t len;
    size_t cap;
} weir__buf;

void weir__buf_init (weir__buf *b);
void weir__buf_release (weir__buf *b);

/*  Make room for N more bytes: 0 or -1 (out of memory).  */
int weir__buf_reserve (weir__buf *b, size_t n);

static inline int weir__buf_append (weir__buf *b, const void *p, size_t n)
{
    //  An empty string may come with a NULL pointer: memcpy must not see it
    if (n == 0)
        return 0;
    if (b->cap - b->len < n && weir__buf_reserve (b, n))
        return -1;
    memcpy (b->data + b->len, p, n);
    b->len += n;
    return 0;
}

static inline int weir__buf_putc (weir__buf *b, char c)
{
    if (b->len == b->cap && weir__buf_reserve (b, 1))
        return -1;
    b->data[b->len++] = c;
    return 0;
}

int weir__buf_printf (weir__buf *b, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

#endif

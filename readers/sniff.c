/*  readers/sniff.c - what the first bytes of a file say it is.  */
#include "config.h"
#include "readers/sniff.h"

#include <string.h>

#include "lib/jsontext.h"

const char *weir__sniff_compressed (const unsigned char *p, size_t n, const char **cat)
{
    //  gzip: 1f 8b and deflate (8), the only method it defines
    if (n >= 3 && p[0] == 0x1f && p[1] == 0x8b && p[2] == 8) {
        *cat = "zcat";
        return "gzip";
    }
    if (n >= 4 && !memcmp (p, "BZh", 3) && p[3] >= '1' && p[3] <= '9') {
        *cat = "bzcat";
        return "bzip2";
    }
    if (n >= 6 && !memcmp (p, "\xfd" "7zXZ\0", 6)) {
        *cat = "xzcat";
        return "xz";
    }
    if (n >= 4 && !memcmp (p, "\x28\xb5\x2f\xfd", 4)) {
        *cat = "zstdcat";
        return "zstd";
    }
    *cat = NULL;
    return NULL;
}

int weir__sniff_text (const unsigned char *p, size_t n, int whole)
{
    if (!n)
        return 0;
    int newline = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned c = p[i];
        if (c == '\n')
            newline = 1;
        else if (c < 0x20 && c != '\t' && c != '\r' && c != '\f')
            return 0;
        else if (c == 0x7f)
            return 0;
    }
    size_t valid = weir__jsontext_utf8 ((const char *) p, n);
    //  A multibyte sequence cut by the end of what was looked at is fine
    if (valid < n && (whole || n - valid >= 4))
        return 0;
    return newline || whole;
}

int weir__sniff_binary (const unsigned char *p, size_t n)
{
    //  As git and file(1) judge: a NUL is binary; bytes of no UTF-8
    //  sequence are not, as Latin-1 text has them
    size_t odd = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned c = p[i];
        if (c == 0)
            return 1;
        odd += (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != 0x1b) || c == 0x7f;
    }
    return odd >= 4 && odd * 10 > n;
}

const char *weir__sniff_text_kind (const unsigned char *p, size_t n)
{
    size_t i = 0;
    while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
        i++;
    if (i < n && (p[i] == '{' || p[i] == '['))
        return "JSON Lines (json path=...)";
    return "text (lines path=...)";
}

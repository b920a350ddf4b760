/*  lib/number.c - decimal integers with k, M, G suffixes.  */
#include "config.h"
#include "lib/number.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <weir/weir.h>

int weir__parse_int (const char *text, int64_t *out)
{
    //  strtoll would skip leading blanks; a value is the number alone
    if (!*text || isspace ((unsigned char) *text))
        return -1;
    errno = 0;
    char *end;
    long long v = strtoll (text, &end, 10);
    if (errno || end == text)
        return -1;
    int64_t scale = 1;
    if (*end == 'k')
        scale = 1000;
    else if (*end == 'M')
        scale = 1000000;
    else if (*end == 'G')
        scale = 1000000000;
    if (scale > 1)
        end++;
    if (*end)
        return -1;
    if (v > LLONG_MAX / scale || v < LLONG_MIN / scale)
        return -1;
    *out = (int64_t) v * scale;
    return 0;
}

int weir_number_parse (const char *text, int64_t *out)
{
    return weir__parse_int (text, out) ? WEIR_ESYNTAX : 0;
}

/*  lib/jsonwhere.c - the first byte where a line stops being JSON.  */
#include "config.h"
#include "lib/jsonwhere.h"

#include <string.h>

#include "lib/decimal.h"

typedef struct {
    const unsigned char *p, *start, *end;
    int max_depth;
    const unsigned char *at;
    const char *problem;
} s_walk;

static int s_fail (s_walk *w, const unsigned char *at, const char *problem)
{
    w->at = at;
    w->problem = problem;
    return -1;
}

static void s_blanks (s_walk *w)
{
    while (w->p < w->end && (*w->p == ' ' || *w->p == '\t' || *w->p == '\n' || *w->p == '\r'))
        w->p++;
}

//  What stands where a value should: the words for it
static int s_unexpected (s_walk *w, const char *expected_problem)
{
    if (w->p == w->end)
        return s_fail (w, w->p, expected_problem);
    if (w->end - w->p >= 3 && memcmp (w->p, "\xef\xbb\xbf", 3) == 0)
        return s_fail (w, w->p, "a byte order mark (U+FEFF) is allowed only at the start of a file");
    return s_fail (w, w->p, expected_problem);
}

static int s_hex4 (const unsigned char *p, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = p[i];
        if (c >= '0' && c <= '9')
            v = v * 16 + (c - '0');
        else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
            v = v * 16 + ((c | 0x20) - 'a' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

//  The length of the valid UTF-8 sequence at P (N bytes left), or 0
static size_t s_utf8 (const unsigned char *p, size_t n)
{
    unsigned c = p[0];
    if (c >= 0xc2 && c <= 0xdf)
        return n >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
        return n >= 3 && p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 ? 3 : 0;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
        return n >= 4 && p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 && (p[3] & 0xc0) == 0x80 ? 4 : 0;
    }
    return 0;
}

static int s_string (s_walk *w)
{
    const unsigned char *open = w->p++;
    while (w->p < w->end) {
        const unsigned char *c = w->p;
        if (*c == '"') {
            w->p++;
            return 0;
        }
        if (*c < 0x20)
            return s_fail (w, c, "a control character in a string must be escaped");
        if (*c >= 0x80) {
            size_t k = s_utf8 (c, (size_t) (w->end - c));
            if (!k)
                return s_fail (w, c, "invalid UTF-8 in a string");
            w->p += k;
            continue;
        }
        if (*c != '\\') {
            w->p++;
            continue;
        }
        if (w->end - c < 2)
            break;
        if (strchr ("\"\\/bfnrt", c[1]) && c[1]) {
            w->p += 2;
            continue;
        }
        unsigned u, low;
        if (c[1] != 'u')
            return s_fail (w, c,
                           "invalid escape in a string (JSON has \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
        if (w->end - c < 6 || s_hex4 (c + 2, &u))
            return s_fail (w, c, "\\u must be followed by four hexadecimal digits");
        w->p += 6;
        if (u >= 0xdc00 && u <= 0xdfff)
            return s_fail (w, c, "a lone low surrogate (\\uDC00-\\uDFFF without a high one before it)");
        if (u >= 0xd800 && u <= 0xdbff) {
            if (w->end - w->p < 6 || w->p[0] != '\\' || w->p[1] != 'u' || s_hex4 (w->p + 2, &low)
                || low < 0xdc00 || low > 0xdfff)
                return s_fail (w, c, "a lone high surrogate (\\uD800-\\uDBFF not followed by a low one)");
            w->p += 6;
        }
    }
    return s_fail (w, open, "the string is not closed before the end of the line");
}

static int s_digits (s_walk *w)
{
    const unsigned char *from = w->p;
    while (w->p < w->end && *w->p >= '0' && *w->p <= '9')
        w->p++;
    return w->p > from;
}

static int s_number (s_walk *w)
{
    const unsigned char *from = w->p;
    if (*w->p == '-')
        w->p++;
    if (w->p == w->end || *w->p < '0' || *w->p > '9')
        return s_fail (w, w->p, "a digit must follow the minus sign");
    if (*w->p == '0') {
        w->p++;
        if (w->p < w->end && *w->p >= '0' && *w->p <= '9')
            return s_fail (w, from, "a number may not start with 0 followed by digits");
    }
    else
        s_digits (w);
    if (w->p < w->end && *w->p == '.') {
        w->p++;
        if (!s_digits (w))
            return s_fail (w, w->p, "a digit must follow the decimal point");
    }
    if (w->p < w->end && (*w->p == 'e' || *w->p == 'E')) {
        w->p++;
        if (w->p < w->end && (*w->p == '+' || *w->p == '-'))
            w->p++;
        if (!s_digits (w))
            return s_fail (w, w->p, "a digit must follow the exponent's e");
    }
    double v;
    if (weir__decimal_parse ((const char *) from, (size_t) (w->p - from), &v) == WEIR__DECIMAL_RANGE)
        return s_fail (w, from, "the number is beyond the range of a double");
    return 0;
}

static int s_literal (s_walk *w, const char *word)
{
    size_t n = strlen (word);
    if ((size_t) (w->end - w->p) < n || memcmp (w->p, word, n) != 0)
        return s_fail (w, w->p, "expected a value (an object, array, string, number, true, false or null)");
    w->p += n;
    return 0;
}

static int s_value (s_walk *w, int depth);

static int s_array (s_walk *w, int depth)
{
    w->p++;
    s_blanks (w);
    if (w->p < w->end && *w->p == ']') {
        w->p++;
        return 0;
    }
    for (;;) {
        if (s_value (w, depth))
            return -1;
        s_blanks (w);
        if (w->p < w->end && *w->p == ',') {
            w->p++;
            s_blanks (w);
            continue;
        }
        if (w->p < w->end && *w->p == ']') {
            w->p++;
            return 0;
        }
        return s_fail (w, w->p,
                       w->p == w->end ? "the line ends inside an array" : "expected ',' or ']' in an array");
    }
}

static int s_object (s_walk *w, int depth)
{
    w->p++;
    s_blanks (w);
    if (w->p < w->end && *w->p == '}') {
        w->p++;
        return 0;
    }
    for (;;) {
        if (w->p == w->end)
            return s_fail (w, w->p, "the line ends inside an object");
        if (*w->p != '"')
            return s_fail (w, w->p, "expected a key (a string in double quotes) in an object");
        if (s_string (w))
            return -1;
        s_blanks (w);
        if (w->p == w->end || *w->p != ':')
            return s_fail (w, w->p, "expected ':' after a key");
        w->p++;
        s_blanks (w);
        if (s_value (w, depth))
            return -1;
        s_blanks (w);
        if (w->p < w->end && *w->p == ',') {
            w->p++;
            s_blanks (w);
            continue;
        }
        if (w->p < w->end && *w->p == '}') {
            w->p++;
            return 0;
        }
        return s_fail (
            w, w->p, w->p == w->end ? "the line ends inside an object" : "expected ',' or '}' in an object");
    }
}

static int s_value (s_walk *w, int depth)
{
    if (w->p == w->end)
        return s_fail (w, w->p, "the line ends where a value should be");
    switch (*w->p) {
    case '{':
    case '[':
        if (depth >= w->max_depth)
            return s_fail (w, w->p, "arrays and objects are nested too deep (at most 32 levels)");
        return *w->p == '{' ? s_object (w, depth + 1) : s_array (w, depth + 1);
    case '"': return s_string (w);
    case 't': return s_literal (w, "true");
    case 'f': return s_literal (w, "false");
    case 'n': return s_literal (w, "null");
    case '-':
    case '0' ... '9': return s_number (w);
    }
    return s_unexpected (w, "expected a value (an object, array, string, number, true, false or null)");
}

int weir__jsonwhere (const char *text, size_t n, int max_depth, size_t *where, const char **problem)
{
    s_walk w = {(const unsigned char *) text,
                (const unsigned char *) text,
                (const unsigned char *) text + n,
                max_depth,
                NULL,
                NULL};
    s_blanks (&w);
    int rc = s_value (&w, 0);
    if (!rc) {
        s_blanks (&w);
        if (w.p < w.end)
            rc = s_fail (&w, w.p, "unexpected text after the value");
    }
    if (!rc)
        return 0;
    *where = (size_t) (w.at - w.start);
    *problem = w.problem;
    return 1;
}

//  Is the integer of N digits at P (no sign) beyond the 64-bit range?
static int s_too_wide (const char *p, size_t n, int negative)
{
    const char *limit = negative ? "9223372036854775808" : "18446744073709551615";
    size_t digits = strlen (limit);
    return n > digits || (n == digits && memcmp (p, limit, n) > 0);
}

int weir__jsonwhere_widen (const char *text, size_t n, weir__buf *out)
{
    out->len = 0;
    if (weir__buf_reserve (out, n + 16))
        return -1;
    int found = 0;
    size_t i = 0, copied = 0;
    while (i < n) {
        char c = text[i];
        if (c == '"') {
            for (i++; i < n && text[i] != '"'; i++)
                if (text[i] == '\\')
                    i++;
            i++;
            continue;
        }
        if (c != '-' && (c < '0' || c > '9')) {
            i++;
            continue;
        }
        size_t digits = c == '-' ? i + 1 : i;
        int integer = 1;
        for (i++; i < n && strchr ("0123456789.eE+-", text[i]) && text[i]; i++)
            if (text[i] < '0' || text[i] > '9')
                integer = 0;
        if (integer && i > digits && s_too_wide (text + digits, i - digits, c == '-')) {
            if (weir__buf_append (out, text + copied, i - copied) || weir__buf_append (out, ".0", 2))
                return -1;
            copied = i;
            found = 1;
        }
    }
    if (weir__buf_append (out, text + copied, n - copied))
        return -1;
    return found;
}

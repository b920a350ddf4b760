/*  lib/jsontext.c - msgpack objects as JSON text.

    The text is written straight from the msgpack bytes: a writer needs no
    decoded objects, and so no allocation per record.  Strings go through
    a table that says, for each byte, whether it is copied, escaped or the
    start of a UTF-8 sequence to check; runs of bytes copied as they are
    (most of any text) are found by the table and copied at once.  */
#include "config.h"
#include "lib/jsontext.h"

#include <math.h>
#include <stdint.h>

#include "lib/batch.h"
#include "lib/decimal.h"
#include "lib/pack.h"
#include "lib/scan.h"

//  Deeper than any record that passed lib/scan.h; a guard against bytes
//  that did not
#define S_MAX_DEPTH 64

//  What a byte of a string needs: copied (0), escaped (1), or checked as
//  the start of a UTF-8 sequence (2)
static const unsigned char s_class[256] = {
    [0x00 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1, [0x7f] = 1, [0x80 ... 0xff] = 2,
};

//  The letter after the backslash of a short escape; 'u' for \u00XX
static const char s_escape[128] = {
    [0x00 ... 0x07] = 'u', ['\b'] = 'b',          ['\t'] = 't', ['\n'] = 'n',  [0x0b] = 'u', ['\f'] = 'f',
    ['\r'] = 'r',          [0x0e ... 0x1f] = 'u', ['"'] = '"',  ['\\'] = '\\', [0x7f] = 'u',
};

static const char s_hex[] = "0123456789abcdef";
static const char s_base64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

//  The length of the valid UTF-8 sequence at P (N bytes left), or 0
static size_t s_utf8 (const unsigned char *p, size_t n)
{
    unsigned c = p[0];
    if (c >= 0xc2 && c <= 0xdf)
        return n >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        //  No overlong forms (E0 80..9F), no surrogates (ED A0..BF)
        unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
        return n >= 3 && p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 ? 3 : 0;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        //  No overlong forms (F0 80..8F), nothing past U+10FFFF
        unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
        return n >= 4 && p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 && (p[3] & 0xc0) == 0x80 ? 4 : 0;
    }
    return 0;
}

//  A short string, with room reserved for its worst case (6 bytes a
//  byte): one pass that copies byte by byte, no call per run
static void s_short_string (weir__buf *b, const unsigned char *p, const unsigned char *end)
{
    char *o = b->data + b->len;
    *o++ = '"';
    while (p < end) {
        unsigned c = *p;
        unsigned kind = s_class[c];
        if (!kind) {
            *o++ = (char) c;
            p++;
        }
        else if (kind == 1) {
            o[0] = '\\';
            o[1] = s_escape[c];
            if (o[1] != 'u')
                o += 2;
            else {
                o[2] = '0';
                o[3] = '0';
                o[4] = s_hex[c >> 4];
                o[5] = s_hex[c & 15];
                o += 6;
            }
            p++;
        }
        else {
            size_t k = s_utf8 (p, (size_t) (end - p));
            if (k) {
                memcpy (o, p, k);
                o += k;
                p += k;
            }
            else {
                memcpy (o, "\xef\xbf\xbd", 3);
                o += 3;
                p++;
            }
        }
    }
    *o++ = '"';
    b->len = (size_t) (o - b->data);
}

int weir__jsontext_string (weir__buf *b, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *) s, *end = p + n;
    if (n <= 4096) {
        if (weir__buf_reserve (b, 6 * n + 2))
            return -1;
        s_short_string (b, p, end);
        return 0;
    }
    //  Room for the common case, a string without escapes
    if (weir__buf_reserve (b, n + 2))
        return -1;
    b->data[b->len++] = '"';
    while (p < end) {
        const unsigned char *run = p;
        while (p < end && !s_class[*p])
            p++;
        if (weir__buf_append (b, run, (size_t) (p - run)))
            return -1;
        if (p == end)
            break;
        if (weir__buf_reserve (b, 6))
            return -1;
        char *o = b->data + b->len;
        if (s_class[*p] == 1) {
            o[0] = '\\';
            o[1] = s_escape[*p];
            if (o[1] != 'u')
                b->len += 2;
            else {
                o[2] = '0';
                o[3] = '0';
                o[4] = s_hex[*p >> 4];
                o[5] = s_hex[*p & 15];
                b->len += 6;
            }
            p++;
            continue;
        }
        size_t k = s_utf8 (p, (size_t) (end - p));
        if (k) {
            memcpy (o, p, k);
            b->len += k;
            p += k;
        }
        else {
            //  U+FFFD REPLACEMENT CHARACTER for the byte
            memcpy (o, "\xef\xbf\xbd", 3);
            b->len += 3;
            p++;
        }
    }
    return weir__buf_putc (b, '"');
}

static int s_base64_string (weir__buf *b, const unsigned char *p, size_t n)
{
    if (weir__buf_reserve (b, (n + 2) / 3 * 4 + 2))
        return -1;
    char *o = b->data + b->len;
    *o++ = '"';
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t) p[i] << 16 | (uint32_t) p[i + 1] << 8 | p[i + 2];
        o[0] = s_base64[v >> 18];
        o[1] = s_base64[(v >> 12) & 63];
        o[2] = s_base64[(v >> 6) & 63];
        o[3] = s_base64[v & 63];
        o += 4;
    }
    if (i < n) {
        uint32_t v = (uint32_t) p[i] << 16 | (i + 1 < n ? (uint32_t) p[i + 1] << 8 : 0);
        o[0] = s_base64[v >> 18];
        o[1] = s_base64[(v >> 12) & 63];
        o[2] = i + 1 < n ? s_base64[(v >> 6) & 63] : '=';
        o[3] = '=';
        o += 4;
    }
    *o++ = '"';
    b->len = (size_t) (o - b->data);
    return 0;
}

static int s_uint (weir__buf *b, uint64_t v, int negative)
{
    if (weir__buf_reserve (b, 24))
        return -1;
    b->len += weir__decimal_format_uint (b->data + b->len, v, negative);
    return 0;
}

static int s_int (weir__buf *b, int64_t v)
{
    //  The magnitude of INT64_MIN does not fit an int64
    return v < 0 ? s_uint (b, (uint64_t) 0 - (uint64_t) v, 1) : s_uint (b, (uint64_t) v, 0);
}

static int s_double (weir__buf *b, double v)
{
    if (!isfinite (v))
        return weir__buf_append (b, "null", 4);
    if (weir__buf_reserve (b, WEIR__DECIMAL_MAX + 2))
        return -1;
    char *o = b->data + b->len;
    size_t n = weir__decimal_format (o, v);
    b->len += n;
    //  "2" would read back as an integer
    if (!memchr (o, '.', n) && !memchr (o, 'e', n)) {
        o[n] = '.';
        o[n + 1] = '0';
        b->len += 2;
    }
    return 0;
}

typedef struct {
    weir__buf *b;
    const unsigned char *p, *end;
} s_walk;

#define S_NEED(w, k)                                                                                         \
    do {                                                                                                     \
        if ((size_t) ((w)->end - (w)->p) < (size_t) (k))                                                     \
            return -2;                                                                                       \
    } while (0)

static uint64_t s_be (const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v = v << 8 | p[i];
    return v;
}

//  Read an unsigned length of BYTES bytes
static int s_length (s_walk *w, int bytes, uint64_t *out)
{
    S_NEED (w, bytes);
    *out = s_be (w->p, bytes);
    w->p += bytes;
    return 0;
}

static int s_value (s_walk *w, int depth, int inkey);

static int s_str (s_walk *w, uint64_t n)
{
    S_NEED (w, n);
    const unsigned char *s = w->p;
    w->p += n;
    return weir__jsontext_string (w->b, (const char *) s, (size_t) n);
}

static int s_bin (s_walk *w, uint64_t n)
{
    S_NEED (w, n);
    const unsigned char *s = w->p;
    w->p += n;
    return s_base64_string (w->b, s, (size_t) n);
}

static int s_ext (s_walk *w, uint64_t n)
{
    S_NEED (w, n + 1);
    int type = (int8_t) w->p[0];
    const unsigned char *s = w->p + 1;
    w->p += n + 1;
    weir__buf *b = w->b;
    if (weir__buf_append (b, "{\"ext\":", 7) || s_int (b, type) || weir__buf_append (b, ",\"base64\":", 10)
        || s_base64_string (b, s, (size_t) n))
        return -1;
    return weir__buf_putc (b, '}');
}

static int s_array (s_walk *w, uint64_t n, int depth, int inkey)
{
    if (weir__buf_putc (w->b, '['))
        return -1;
    for (uint64_t i = 0; i < n; i++) {
        if (i && weir__buf_putc (w->b, ','))
            return -1;
        int rc = s_value (w, depth + 1, inkey);
        if (rc)
            return rc;
    }
    return weir__buf_putc (w->b, ']');
}

//  A map key that is not a str or a bin, as a string of its JSON text
static int s_key (s_walk *w, int depth, int inkey)
{
    unsigned c = *w->p;
    int scalar = c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3 || (c >= 0xca && c <= 0xd3);
    if (scalar) {
        //  Digits, signs, points and letters: nothing to escape
        int rc;
        if (weir__buf_putc (w->b, '"') || (rc = s_value (w, depth, inkey)) == -1)
            return -1;
        return rc ? rc : weir__buf_putc (w->b, '"');
    }
    if (inkey) {
        //  Within a key's text: the hex of its bytes, which needs no quoting
        size_t size, where;
        if (weir__scan (w->p, (size_t) (w->end - w->p), &size, &where) != WEIR__SCAN_OK)
            return -2;
        if (weir__buf_reserve (w->b, 2 * size + 10))
            return -1;
        char *o = w->b->data + w->b->len;
        memcpy (o, "\"msgpack:", 9);
        o += 9;
        for (size_t i = 0; i < size; i++) {
            *o++ = s_hex[w->p[i] >> 4];
            *o++ = s_hex[w->p[i] & 15];
        }
        *o++ = '"';
        w->b->len = (size_t) (o - w->b->data);
        w->p += size;
        return 0;
    }
    weir__buf text;
    weir__buf_init (&text);
    s_walk inner = {&text, w->p, w->end};
    int rc = s_value (&inner, depth, 1);
    if (!rc)
        rc = weir__jsontext_string (w->b, text.data, text.len);
    w->p = inner.p;
    weir__buf_release (&text);
    return rc;
}

static int s_map (s_walk *w, uint64_t n, int depth, int inkey)
{
    if (weir__buf_putc (w->b, '{'))
        return -1;
    for (uint64_t i = 0; i < n; i++) {
        if (i && weir__buf_putc (w->b, ','))
            return -1;
        S_NEED (w, 1);
        unsigned c = *w->p;
        int plain = (c >= 0xa0 && c <= 0xbf) || (c >= 0xd9 && c <= 0xdb) || (c >= 0xc4 && c <= 0xc6);
        int rc = plain ? s_value (w, depth + 1, inkey) : s_key (w, depth + 1, inkey);
        if (!rc && weir__buf_putc (w->b, ':'))
            rc = -1;
        if (!rc)
            rc = s_value (w, depth + 1, inkey);
        if (rc)
            return rc;
    }
    return weir__buf_putc (w->b, '}');
}

//  A float32, as JSON's number of the same value
static inline int s_float32 (s_walk *w)
{
    S_NEED (w, 4);
    uint32_t bits = (uint32_t) s_be (w->p, 4);
    float f;
    memcpy (&f, &bits, 4);
    w->p += 4;
    return s_double (w->b, (double) f);
}

static inline int s_float64 (s_walk *w)
{
    S_NEED (w, 8);
    uint64_t bits = s_be (w->p, 8);
    double d;
    memcpy (&d, &bits, 8);
    w->p += 8;
    return s_double (w->b, d);
}

//  A signed integer of BYTES bytes
static inline int s_signed (s_walk *w, int bytes)
{
    uint64_t n;
    if (s_length (w, bytes, &n))
        return -2;
    //  Sign-extend from BYTES bytes
    int shift = 64 - 8 * bytes;
    return s_int (w->b, (int64_t) (n << shift) >> shift);
}

static int s_value (s_walk *w, int depth, int inkey)
{
    if (depth > S_MAX_DEPTH)
        return -2;
    S_NEED (w, 1);
    unsigned c = *w->p++;
    weir__buf *b = w->b;
    uint64_t n;
    if (c <= 0x7f)
        return s_uint (b, c, 0);
    if (c >= 0xe0)
        return s_int (b, (int8_t) c);
    if (c <= 0x8f)
        return s_map (w, c & 15, depth, inkey);
    if (c <= 0x9f)
        return s_array (w, c & 15, depth, inkey);
    if (c <= 0xbf)
        return s_str (w, c & 31);
    switch (c) {
    case 0xc0: return weir__buf_append (b, "null", 4);
    case 0xc2: return weir__buf_append (b, "false", 5);
    case 0xc3: return weir__buf_append (b, "true", 4);
    case 0xc4:
    case 0xc5:
    case 0xc6: return s_length (w, 1 << (c - 0xc4), &n) ? -2 : s_bin (w, n);
    case 0xc7:
    case 0xc8:
    case 0xc9: return s_length (w, 1 << (c - 0xc7), &n) ? -2 : s_ext (w, n);
    case 0xca: return s_float32 (w);
    case 0xcb: return s_float64 (w);
    case 0xcc:
    case 0xcd:
    case 0xce:
    case 0xcf: return s_length (w, 1 << (c - 0xcc), &n) ? -2 : s_uint (b, n, 0);
    case 0xd0:
    case 0xd1:
    case 0xd2:
    case 0xd3: return s_signed (w, 1 << (c - 0xd0));
    case 0xd4:
    case 0xd5:
    case 0xd6:
    case 0xd7:
    case 0xd8: return s_ext (w, (uint64_t) 1 << (c - 0xd4));
    case 0xd9:
    case 0xda:
    case 0xdb: return s_length (w, 1 << (c - 0xd9), &n) ? -2 : s_str (w, n);
    case 0xdc:
    case 0xdd: return s_length (w, c == 0xdc ? 2 : 4, &n) ? -2 : s_array (w, n, depth, inkey);
    case 0xde:
    case 0xdf: return s_length (w, c == 0xde ? 2 : 4, &n) ? -2 : s_map (w, n, depth, inkey);
    }
    return -2;  //  0xc1, never used
}

int weir__jsontext_packed (weir__buf *b, const char *p, size_t n, size_t *used)
{
    s_walk w = {b, (const unsigned char *) p, (const unsigned char *) p + n};
    int rc = s_value (&w, 0, 0);
    *used = (size_t) ((const char *) w.p - p);
    return rc;
}

int weir__jsontext_append (weir__buf *b, const msgpack_object *o)
{
    weir__batch packed;
    if (weir__batch_init (&packed, 256))
        return -1;
    int rc = weir__pack_object (&packed, o) ? -1 : 0;
    size_t used;
    if (!rc)
        rc =
            weir__jsontext_packed (b, packed.data + WEIR__BATCH_HEADER, weir__batch_payload (&packed), &used);
    weir__batch_release (&packed);
    //  A decoded object always packs into a well-formed one
    return rc ? -1 : 0;
}

size_t weir__jsontext_utf8 (const char *text, size_t n)
{
    const unsigned char *p = (const unsigned char *) text, *end = p + n;
    while (p < end) {
        size_t k = *p < 0x80 ? 1 : s_utf8 (p, (size_t) (end - p));
        if (!k)
            break;
        p += k;
    }
    return (size_t) (p - (const unsigned char *) text);
}

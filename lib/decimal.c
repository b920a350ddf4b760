/*  lib/decimal.c - doubles as decimal text, exactly, in the C locale.  */
#include "config.h"
#include "lib/decimal.h"

#include <assert.h>
#include <errno.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  The powers of ten that are exact doubles (5^22 < 2^53)
static const double s_pow10[] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

#if FLT_EVAL_METHOD == 0 && LDBL_MANT_DIG == 64 && (defined(__x86_64__) || defined(__i386__))
//  The powers of ten that are exact extended doubles (5^27 < 2^64)
static const long double s_pow10l[] = {
    1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,  1e10L, 1e11L, 1e12L, 1e13L,
    1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L, 1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L,
};
#endif

static locale_t s_c_locale;
static pthread_once_t s_once = PTHREAD_ONCE_INIT;

static void s_make_locale (void)
{
    //  Never freed: one object for the life of the process.  Should it
    //  fail, (locale_t) 0 makes uselocale a query, and the thread's own
    //  locale is used: wrong only under a locale with another decimal point
    s_c_locale = newlocale (LC_ALL_MASK, "C", (locale_t) 0);
}

//  Switch this thread to the C locale; give the result to s_leave.
static locale_t s_enter (void)
{
    pthread_once (&s_once, s_make_locale);
    return s_c_locale ? uselocale (s_c_locale) : (locale_t) 0;
}

static void s_leave (locale_t old)
{
    if (old)
        uselocale (old);
}

static inline int s_digit (char c)
{
    return c >= '0' && c <= '9';
}

//  The slow path: the text is valid, but too long or too far from 1 for
//  the exact one.  strtod rounds correctly; it wants a NUL.
static int s_strtod (const char *p, size_t n, double *out)
{
    char small[128], *text = n < sizeof small ? small : malloc (n + 1);
    if (!text)
        return WEIR__DECIMAL_NOMEM;
    memcpy (text, p, n);
    text[n] = '\0';
    locale_t old = s_enter ();
    errno = 0;
    char *end;
    double v = strtod (text, &end);
    int e = errno;
    s_leave (old);
    int rc = 0;
    if (end != text + n)
        rc = WEIR__DECIMAL_SYNTAX;  //  cannot happen: our syntax is a subset of strtod's
    else if (e == ERANGE && isinf (v))
        rc = WEIR__DECIMAL_RANGE;
    if (text != small)
        free (text);
    if (!rc)
        *out = v;
    return rc;
}

//  Eight ASCII digits in CHUNK (the first in its lowest byte)?  Each byte
//  must be 0x30 .. 0x39: its high nibble 3, and adding 6 must not carry
//  out of the low one; no byte can carry into the next
static inline int s_eight_digits (uint64_t chunk)
{
    return ((chunk & UINT64_C (0xf0f0f0f0f0f0f0f0))
            | (((chunk + UINT64_C (0x0606060606060606)) & UINT64_C (0xf0f0f0f0f0f0f0f0)) >> 4))
           == UINT64_C (0x3333333333333333);
}

//  Their value: pairs of digits, then fours, then all eight, each step
//  one multiply and add of lanes that cannot overflow into each other
static inline uint64_t s_eight_value (uint64_t chunk)
{
    uint64_t v = chunk - UINT64_C (0x3030303030303030);
    v = (v * 10 + (v >> 8)) & UINT64_C (0x00ff00ff00ff00ff);
    v = (v * 100 + (v >> 16)) & UINT64_C (0x0000ffff0000ffff);
    return (v * 10000 + (v >> 32)) & UINT64_C (0xffffffff);
}

//  Take the run of digits at P[*AT] .. into *W, leading zeros skipped and
//  19 significant digits at most (19 always fit a uint64), and return its
//  length.  In a FRACTION, every digit taken or skipped moves *SCALE down
//  one; in the integer part, every digit dropped moves it up.  Eight
//  digits at a time while they fit: a %.17g has 16 or 17.  Always
//  inlined: called, it kept the state it is given pointers to in memory,
//  and a read of libsvm text took 16% longer
static inline __attribute__ ((always_inline)) size_t s_run (const char *p, size_t *at, size_t n, int fraction,
                                                            uint64_t *w, int *digits, int *dropped,
                                                            int64_t *scale)
{
    size_t i = *at;
    if (*w == 0)
        for (; i < n && p[i] == '0'; i++)
            *scale -= fraction;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t chunk;
    while (*digits + 8 <= 19 && n - i >= 8 && (memcpy (&chunk, p + i, 8), s_eight_digits (chunk))) {
        *w = *w * 100000000 + s_eight_value (chunk);
        *digits += 8;
        *scale -= 8 * fraction;
        i += 8;
    }
#endif
    for (; i < n && s_digit (p[i]); i++) {
        if (*w == 0 && p[i] == '0')
            *scale -= fraction;
        else if (*digits < 19) {
            *w = *w * 10 + (uint64_t) (p[i] - '0');
            (*digits)++;
            *scale -= fraction;
        }
        else {
            *dropped = 1;
            *scale += !fraction;
        }
    }
    size_t length = i - *at;
    *at = i;
    return length;
}

//  Parse the number at the start of the N bytes at P; *USED: its length.
//  What follows it is the caller's to judge
static int s_parse (const char *p, size_t n, double *out, size_t *used)
{
    size_t i = 0;
    int negative = 0;
    if (i < n && (p[i] == '+' || p[i] == '-'))
        negative = p[i++] == '-';
    //  The value is W * 10^SCALE, W made of the first 19 significant
    //  digits (19 always fit a uint64)
    uint64_t w = 0;
    int digits = 0, dropped = 0;
    int64_t scale = 0;
    size_t seen = s_run (p, &i, n, 0, &w, &digits, &dropped, &scale);
    if (i < n && p[i] == '.') {
        i++;
        seen += s_run (p, &i, n, 1, &w, &digits, &dropped, &scale);
    }
    if (!seen)
        return WEIR__DECIMAL_SYNTAX;
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        int eneg = 0;
        i++;
        if (i < n && (p[i] == '+' || p[i] == '-'))
            eneg = p[i++] == '-';
        if (i == n || !s_digit (p[i]))
            return WEIR__DECIMAL_SYNTAX;
        int64_t e = 0;
        //  Beyond a million the value is 0 or infinite anyway; strtod says which
        for (; i < n && s_digit (p[i]); i++)
            if (e < 1000000)
                e = e * 10 + (p[i] - '0');
        scale += eneg ? -e : e;
    }
    n = *used = i;
    if (w == 0) {
        *out = negative ? -0.0 : 0.0;
        return 0;
    }
#if FLT_EVAL_METHOD == 0
    //  Both operands exact, so the one rounding of * or / is the correct
    //  rounding of the decimal (Clinger, 1990)
    if (!dropped && w <= (UINT64_C (1) << 53) && scale >= -22 && scale <= 22) {
        double v = (double) w;
        v = scale >= 0 ? v * s_pow10[scale] : v / s_pow10[-scale];
        *out = negative ? -v : v;
        return 0;
    }
#endif
#if FLT_EVAL_METHOD == 0 && LDBL_MANT_DIG == 64 && (defined(__x86_64__) || defined(__i386__))
    //  x87's extended doubles (64-bit significands) hold W and 10^27
    //  exactly, so one * or / rounds the decimal correctly to 64 bits.
    //  The second rounding, to a double, is then correct too unless the
    //  64-bit value lies exactly halfway between two doubles (its low 11
    //  bits 10000000000): a value on either side of a midpoint stays on
    //  its side when rounded to 64 bits, as the midpoint is one of them.
    //  That case, one value in 2^11, goes to strtod.  This path takes the
    //  16 to 19 digits of a %.17g (0.050980392156862744) that Clinger's
    //  cannot, and is several times faster than strtod
    if (!dropped && scale >= -27 && scale <= 27) {
        long double v = (long double) w;
        v = scale >= 0 ? v * s_pow10l[scale] : v / s_pow10l[-scale];
        //  The significand is the first 8 bytes, its leading 1 explicit
        uint64_t bits;
        memcpy (&bits, &v, sizeof bits);
        if ((bits & 0x7ff) != 0x400) {
            double d = (double) v;
            *out = negative ? -d : d;
            return 0;
        }
    }
#endif
    return s_strtod (p, n, out);
}

int weir__decimal_parse (const char *p, size_t n, double *out)
{
    size_t used;
    int rc = s_parse (p, n, out, &used);
    return rc ? rc : used == n ? 0 : WEIR__DECIMAL_SYNTAX;
}

int weir__decimal_parse_prefix (const char *p, size_t n, double *out, size_t *used)
{
    return s_parse (p, n, out, used);
}

int weir__decimal_parse_int (const char *p, size_t n, int64_t *out)
{
    size_t i = 0;
    int negative = 0;
    if (i < n && (p[i] == '+' || p[i] == '-'))
        negative = p[i++] == '-';
    if (i == n)
        return WEIR__DECIMAL_SYNTAX;
    //  The magnitude, up to 2^63 (INT64_MIN's)
    const uint64_t limit = (uint64_t) INT64_MAX + (uint64_t) negative;
    uint64_t v = 0;
    int range = 0;
    for (; i < n; i++) {
        if (!s_digit (p[i]))
            return WEIR__DECIMAL_SYNTAX;
        unsigned d = (unsigned) (p[i] - '0');
        if (v > (limit - d) / 10)
            range = 1;
        else
            v = v * 10 + d;
    }
    if (range)
        return WEIR__DECIMAL_RANGE;
    *out = negative ? (int64_t) (0 - v) : (int64_t) v;
    return 0;
}

size_t weir__decimal_format_uint (char *out, uint64_t v, int negative)
{
    char digits[24];
    char *p = digits + sizeof digits;
    do
        *--p = (char) ('0' + v % 10);
    while ((v /= 10) != 0);
    if (negative)
        *--p = '-';
    size_t n = (size_t) (digits + sizeof digits - p);
    memcpy (out, p, n);
    return n;
}

size_t weir__decimal_format (char *out, double v)
{
    assert (isfinite (v));
    //  Integers are the most common values (labels, counts, bytes), and
    //  %.15g writes those below 1e15 as plain digits too
    double a = fabs (v);
    if (a < 1e15 && (double) (int64_t) a == a)
        return weir__decimal_format_uint (out, (uint64_t) a, signbit (v) != 0);
#if FLT_EVAL_METHOD == 0
    //  Numbers people wrote (0.25, 3.1416, 12.5) have few decimals: find
    //  the fewest K with V == W / 10^K exactly (correctly rounded, as
    //  parsing W e-K gives), W < 10^15.  That decimal has at most 15
    //  digits and lies within half an ulp of V, far inside the half unit
    //  of the 15th digit, so it is what %.15g writes too; the range is
    //  where %g writes no exponent.
    if (a >= 1e-4) {
        for (int k = 1; k <= 19 && a * s_pow10[k] < 1e15; k++) {
            double w = nearbyint (a * s_pow10[k]);
            if (w / s_pow10[k] != a)
                continue;
            char digits[24];
            size_t n = weir__decimal_format_uint (digits, (uint64_t) w, 0), o = 0;
            if (signbit (v))
                out[o++] = '-';
            if (n <= (size_t) k) {
                //  0.000ddd
                out[o++] = '0';
                out[o++] = '.';
                memset (out + o, '0', (size_t) k - n);
                o += (size_t) k - n;
                memcpy (out + o, digits, n);
                o += n;
            }
            else {
                memcpy (out + o, digits, n - (size_t) k);
                o += n - (size_t) k;
                out[o++] = '.';
                memcpy (out + o, digits + n - (size_t) k, (size_t) k);
                o += (size_t) k;
            }
            return o;
        }
    }
#endif
    locale_t old = s_enter ();
    int n = 0;
    for (int precision = 15; precision <= 17; precision++) {
        n = snprintf (out, WEIR__DECIMAL_MAX, "%.*g", precision, v);
        if (precision == 17 || strtod (out, NULL) == v)
            break;
    }
    s_leave (old);
    assert (n > 0 && n < WEIR__DECIMAL_MAX);
    return (size_t) n;
}

size_t weir__decimal_format_float (char *out, float v)
{
    assert (isfinite (v));
    float a = fabsf (v);
    if (a < 1e6f && (float) (int32_t) a == a)
        return weir__decimal_format_uint (out, (uint64_t) a, signbit (v) != 0);
    locale_t old = s_enter ();
    int n = 0;
    for (int precision = 6; precision <= 9; precision++) {
        n = snprintf (out, WEIR__DECIMAL_MAX, "%.*g", precision, (double) v);
        if (precision == 9 || (strtof (out, NULL) == v && (float) strtod (out, NULL) == v))
            break;
    }
    s_leave (old);
    assert (n > 0 && n < WEIR__DECIMAL_MAX);
    return (size_t) n;
}

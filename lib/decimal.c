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

int weir__decimal_parse (const char *p, size_t n, double *out)
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
    size_t seen = 0;
    for (; i < n && s_digit (p[i]); i++, seen++) {
        if (w == 0 && p[i] == '0')
            continue;
        if (digits < 19) {
            w = w * 10 + (uint64_t) (p[i] - '0');
            digits++;
        }
        else {
            dropped = 1;
            scale++;
        }
    }
    if (i < n && p[i] == '.')
        for (i++; i < n && s_digit (p[i]); i++, seen++) {
            if (w == 0 && p[i] == '0')
                scale--;
            else if (digits < 19) {
                w = w * 10 + (uint64_t) (p[i] - '0');
                digits++;
                scale--;
            }
            else
                dropped = 1;
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
    if (i != n)
        return WEIR__DECIMAL_SYNTAX;
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
    return s_strtod (p, n, out);
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
        if (precision == 9 || strtof (out, NULL) == v)
            break;
    }
    s_leave (old);
    assert (n > 0 && n < WEIR__DECIMAL_MAX);
    return (size_t) n;
}

/*  lib/decimal.h - doubles as decimal text, exactly, whatever the locale.

    Text formats that carry numbers (libsvm) must read back exactly what
    they wrote, and must not change with the locale of the program that
    embeds weir: strtod and printf follow LC_NUMERIC, so under a German
    locale they would write "0,5" and stop reading "0.5" at the point.
    These functions always use the C locale.

    Parsing takes the syntax that JSON and libsvm files use, and no more:
    an optional sign, digits with an optional decimal point (at least one
    digit in all), an optional exponent.  No blanks, no hexadecimal, no
    inf or nan.  Conversion is correctly rounded: a fast exact path for
    a significand up to 2^53 and a power of ten up to 22 (Clinger's:
    both operands are exact doubles, so one IEEE operation rounds once),
    on x86 a second one for up to 19 digits and a power up to 27 in
    extended precision (decimal.c says why it is exact), strtod for the
    rest.

    Formatting writes the first of %.15g, %.16g and %.17g that reads back
    as the same double: 17 digits always round-trip, and most numbers
    people write need 15 or fewer.  */
#ifndef WEIR_DECIMAL_H_INCLUDED
#define WEIR_DECIMAL_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

/*  Longest text weir__decimal_format writes ("-2.2250738585072014e-308"),
    with room to spare.  */
#define WEIR__DECIMAL_MAX 32

/*  Results of the parsers: the text is no number of the accepted syntax,
    its value does not fit, or there was no memory to convert it.  */
#define WEIR__DECIMAL_SYNTAX -1
#define WEIR__DECIMAL_RANGE -2
#define WEIR__DECIMAL_NOMEM -3

/*  Parse the N bytes at P (not NUL-terminated) as a number: 0 and *OUT,
    WEIR__DECIMAL_SYNTAX, WEIR__DECIMAL_RANGE when it overflows to
    infinity, or WEIR__DECIMAL_NOMEM.  Underflow is not an error: it
    rounds to a subnormal or to zero, as the text says.  */
int weir__decimal_parse (const char *p, size_t n, double *out);

/*  The same for the number at the start of the N bytes at P, whatever
    follows it: 0, *OUT and *USED, its length, or an error as above (the
    number at P is malformed, as "1e" or "-" are).  A parser of a text
    format checks what follows, and reads a field once.  */
int weir__decimal_parse_prefix (const char *p, size_t n, double *out, size_t *used);

/*  Parse the N bytes at P as a plain integer (an optional sign, then
    digits): 0 and *OUT, WEIR__DECIMAL_SYNTAX, or WEIR__DECIMAL_RANGE
    when it does not fit an int64.  */
int weir__decimal_parse_int (const char *p, size_t n, int64_t *out);

/*  Write V into OUT (at least WEIR__DECIMAL_MAX bytes; not always
    NUL-terminated) and return the length: the shortest of %.15g, %.16g
    and %.17g that reads back as V.  Integral values below 1e15 in
    magnitude take a fast path that writes the same digits.  V must be
    finite.  */
size_t weir__decimal_format (char *out, double v);

/*  The same for a float: the shortest of %.6g .. %.9g that reads back as
    the same float, so 0.1f is written 0.1 and not 0.100000001490116;
    read back both straight to a float (strtof) and to a double then
    rounded to a float, as the libsvm reader reads a value for
    features=bins (a text near a float's midpoint could round twice to
    the other side; %.9g never is).  */
size_t weir__decimal_format_float (char *out, float v);

/*  Write the decimal digits of V, after a '-' when NEGATIVE (printf's
    %llu is several times slower); return the length.  */
size_t weir__decimal_format_uint (char *out, uint64_t v, int negative);

#endif

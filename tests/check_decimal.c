/*  tests/check_decimal.c - numbers as decimal text: exact both ways, the
    shortest form, the same in every locale.  */
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>

#include "lib/decimal.h"
#include "tests/testutil.h"

static uint64_t s_state = 0x853c49e6748fea9bull;

//  xorshift64*: the same numbers on every run
static uint64_t s_random (void)
{
    s_state ^= s_state >> 12;
    s_state ^= s_state << 25;
    s_state ^= s_state >> 27;
    return s_state * 0x2545f4914f6cdd1dull;
}

static uint64_t s_bits (double v)
{
    uint64_t bits;
    memcpy (&bits, &v, sizeof bits);
    return bits;
}

static double s_parsed (const char *text)
{
    double v = -1;
    ck_assert_msg (weir__decimal_parse (text, strlen (text), &v) == 0, "'%s' did not parse", text);
    return v;
}

START_TEST (test_parse_syntax)
{
    const char *good[] = {"0",
                          "-0",
                          "+0",
                          "1",
                          "+1",
                          "-1",
                          "0.5",
                          ".5",
                          "5.",
                          "-.5e-3",
                          "1e5",
                          "1E+5",
                          "00012",
                          "1.25e-0",
                          "123456789012345678901234567890",
                          "0.000000000000000000000001"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        ck_assert_msg (s_bits (s_parsed (good[i])) == s_bits (strtod (good[i], NULL)), "'%s'", good[i]);
    const char *bad[] = {"",    "+",  "-",  ".",    "e5",    "1e",  "1e+",   "0x10", "inf",   "-inf",
                         "nan", " 1", "1 ", "1..2", "1.2.3", "--1", "1e5.5", "1,5",  "1_000", "١"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double v;
        ck_assert_msg (weir__decimal_parse (bad[i], strlen (bad[i]), &v) == WEIR__DECIMAL_SYNTAX, "'%s'",
                       bad[i]);
    }
    double v;
    ck_assert_int_eq (weir__decimal_parse ("1e309", 5, &v), WEIR__DECIMAL_RANGE);
    ck_assert_int_eq (weir__decimal_parse ("-2e308", 6, &v), WEIR__DECIMAL_RANGE);
    ck_assert_int_eq (weir__decimal_parse ("1e99999999999", 13, &v), WEIR__DECIMAL_RANGE);
    //  Underflow reads as what the text says, rounded: no error
    ck_assert (s_parsed ("1e-400") == 0);
    ck_assert (s_parsed ("4.9406564584124654e-324") == 4.9406564584124654e-324);
    ck_assert (s_parsed ("0e99999999999") == 0);
    ck_assert (signbit (s_parsed ("-0.0")));
    //  Not NUL-terminated: only N bytes count
    ck_assert_int_eq (weir__decimal_parse ("12345", 2, &v), 0);
    ck_assert (v == 12);
}
END_TEST

START_TEST (test_parse_int)
{
    struct {
        const char *text;
        int rc;
        int64_t v;
    } cases[] = {
        {"0", 0, 0},
        {"-0", 0, 0},
        {"+5", 0, 5},
        {"-17", 0, -17},
        {"9223372036854775807", 0, INT64_MAX},
        {"-9223372036854775808", 0, INT64_MIN},
        {"9223372036854775808", WEIR__DECIMAL_RANGE, 0},
        {"-9223372036854775809", WEIR__DECIMAL_RANGE, 0},
        {"99999999999999999999999", WEIR__DECIMAL_RANGE, 0},
        {"", WEIR__DECIMAL_SYNTAX, 0},
        {"-", WEIR__DECIMAL_SYNTAX, 0},
        {"1.0", WEIR__DECIMAL_SYNTAX, 0},
        {"1e3", WEIR__DECIMAL_SYNTAX, 0},
        {" 1", WEIR__DECIMAL_SYNTAX, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t v = 42;
        int rc = weir__decimal_parse_int (cases[i].text, strlen (cases[i].text), &v);
        ck_assert_msg (rc == cases[i].rc, "'%s': %d", cases[i].text, rc);
        if (rc == 0)
            ck_assert_msg (v == cases[i].v, "'%s': %lld", cases[i].text, (long long) v);
    }
}
END_TEST

//  Random decimal texts, near the edges of the fast path and far from
//  it: the result is strtod's, bit for bit.
START_TEST (test_parse_is_correctly_rounded)
{
    char text[80];
    for (int k = 0; k < 300000; k++) {
        int digits = 1 + (int) (s_random () % 25), point = (int) (s_random () % (unsigned) (digits + 1));
        size_t n = 0;
        if (s_random () % 2)
            text[n++] = '-';
        for (int i = 0; i < digits; i++) {
            if (i == point && i > 0)
                text[n++] = '.';
            text[n++] = (char) ('0' + s_random () % 10);
        }
        int e = (int) (s_random () % 3 == 0 ? s_random () % 640 : s_random () % 50) - (k % 2 ? 320 : 25);
        if (s_random () % 4)
            n += (size_t) snprintf (text + n, sizeof text - n, "e%d", e);
        text[n] = '\0';
        double got, want = strtod (text, NULL);
        int rc = weir__decimal_parse (text, n, &got);
        if (isinf (want))
            ck_assert_msg (rc == WEIR__DECIMAL_RANGE, "'%s'", text);
        else
            ck_assert_msg (rc == 0 && s_bits (got) == s_bits (want), "'%s': %.17g, strtod %.17g", text, got,
                           want);
    }
}
END_TEST

//  Long significands (16 to 19 digits, as %.17g writes) with powers of
//  ten up to 27, where x86 parses in extended precision, and integers
//  exactly halfway between two doubles, which that path must hand on
//  (ties go to the even double): strtod's result, bit for bit.
START_TEST (test_parse_long_significands)
{
    char text[80];
    for (int k = 0; k < 400000; k++) {
        int digits = 16 + (int) (s_random () % 4), point = (int) (s_random () % (unsigned) (digits + 1));
        size_t n = 0;
        text[n++] = (char) ('1' + s_random () % 9);
        for (int i = 1; i < digits; i++) {
            if (i == point)
                text[n++] = '.';
            text[n++] = (char) ('0' + s_random () % 10);
        }
        if (k % 2)
            n += (size_t) snprintf (text + n, sizeof text - n, "e%d", (int) (s_random () % 55) - 27);
        text[n] = '\0';
        double got, want = strtod (text, NULL);
        ck_assert_msg (weir__decimal_parse (text, n, &got) == 0 && s_bits (got) == s_bits (want),
                       "'%s': %.17g, strtod %.17g", text, got, want);
    }
    static const char *const halfway[] = {
        "9007199254740993",    "9007199254740995",    "18014398509481986",    "18014398509481990",
        "9223372036854776832", "9223372036854777856", "0.9007199254740993e1", "-9007199254740993",
    };
    for (size_t i = 0; i < sizeof halfway / sizeof halfway[0]; i++) {
        double got, want = strtod (halfway[i], NULL);
        ck_assert_int_eq (weir__decimal_parse (halfway[i], strlen (halfway[i]), &got), 0);
        ck_assert_msg (s_bits (got) == s_bits (want), "'%s': %.17g, strtod %.17g", halfway[i], got, want);
    }
    //  Every double written by %.17g reads back as itself
    for (int k = 0; k < 200000; k++) {
        uint64_t bits = ((uint64_t) s_random () << 32 | s_random ()) & ~(UINT64_C (0x7ff) << 52);
        bits |= (uint64_t) (1023 - 40 + s_random () % 80) << 52;
        double v;
        memcpy (&v, &bits, sizeof v);
        int n = snprintf (text, sizeof text, "%.17g", v);
        double got;
        ck_assert_msg (weir__decimal_parse (text, (size_t) n, &got) == 0 && s_bits (got) == s_bits (v),
                       "'%s': %.17g", text, got);
    }
}
END_TEST

//  The first of %.15g, %.16g, %.17g that reads back.
static size_t s_reference (char *out, double v)
{
    int n = 0;
    for (int p = 15; p <= 17; p++) {
        n = snprintf (out, WEIR__DECIMAL_MAX, "%.*g", p, v);
        if (strtod (out, NULL) == v)
            break;
    }
    return (size_t) n;
}

static void s_check_format (double v)
{
    char got[WEIR__DECIMAL_MAX + 1], want[WEIR__DECIMAL_MAX + 1];
    size_t n = weir__decimal_format (got, v);
    got[n] = '\0';
    s_reference (want, v);
    ck_assert_msg (strcmp (got, want) == 0, "%.17g: '%s', wanted '%s'", v, got, want);
    double back;
    ck_assert_int_eq (weir__decimal_parse (got, n, &back), 0);
    ck_assert_msg (s_bits (back) == s_bits (v), "%.17g: '%s' reads back as %.17g", v, got, back);
}

START_TEST (test_format_round_trips_shortest)
{
    const double edges[] = {0.0,
                            -0.0,
                            1,
                            -1,
                            0.5,
                            0.1,
                            0.2,
                            0.1 + 0.2,
                            1.0 / 3,
                            2.0 / 3,
                            1e15,
                            1e15 - 1,
                            -1e15 + 1,
                            999999999999999.9,
                            1e16,
                            1e22,
                            1e23,
                            123456789012345678.0,
                            5e-324,
                            DBL_MIN,
                            DBL_MAX,
                            -DBL_MAX,
                            1e-5,
                            0.00392156862745098,
                            255.0 / 255,
                            17.0 / 255,
                            9007199254740993.0};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        s_check_format (edges[i]);
    char text[WEIR__DECIMAL_MAX];
    ck_assert_int_eq (weir__decimal_format (text, -0.0), 2);
    ck_assert (memcmp (text, "-0", 2) == 0);
    ck_assert_int_eq (weir__decimal_format (text, 0.1), 3);
    ck_assert (memcmp (text, "0.1", 3) == 0);
    ck_assert_int_eq (weir__decimal_format (text, 1e-5), 5);
    ck_assert (memcmp (text, "1e-05", 5) == 0);
    for (int k = 0; k < 200000; k++) {
        //  Any finite double, then the values learning data is made of
        uint64_t bits = s_random ();
        double v;
        memcpy (&v, &bits, sizeof v);
        if (isfinite (v))
            s_check_format (v);
        s_check_format ((double) (s_random () % 256) / 255);
        s_check_format ((double) (int64_t) (s_random () % 2000000) / 1000 - 1000);
        s_check_format ((double) (int64_t) s_random () / 8);
        //  Decimals of up to 17 digits, as people and programs write them
        char dec[40];
        int digits = 1 + (int) (s_random () % 17), point = (int) (s_random () % (unsigned) (digits + 6));
        size_t n = 0;
        if (point > digits) {
            dec[n++] = '0';
            dec[n++] = '.';
            for (int z = digits; z < point; z++)
                dec[n++] = '0';
            point = 0;
        }
        for (int i = 0; i < digits; i++) {
            if (i == point && i > 0)
                dec[n++] = '.';
            dec[n++] = (char) ('0' + s_random () % 10);
        }
        dec[n] = '\0';
        s_check_format ((s_random () % 2 ? -1 : 1) * strtod (dec, NULL));
    }
}
END_TEST

START_TEST (test_format_float)
{
    char text[WEIR__DECIMAL_MAX + 1];
    size_t n = weir__decimal_format_float (text, 0.1f);
    text[n] = '\0';
    ck_assert_str_eq (text, "0.1");
    n = weir__decimal_format_float (text, 16777216.0f);
    text[n] = '\0';
    ck_assert_str_eq (text, "16777216");
    for (int k = 0; k < 200000; k++) {
        uint32_t bits = (uint32_t) s_random ();
        float v;
        memcpy (&v, &bits, sizeof v);
        if (!isfinite (v))
            continue;
        n = weir__decimal_format_float (text, v);
        text[n] = '\0';
        ck_assert_msg (strtof (text, NULL) == v, "%.9g: '%s'", (double) v, text);
        ck_assert (n <= 16);
    }
}
END_TEST

//  A program that embeds weir may set a locale with a decimal comma:
//  the text must not change.  The locale is built for the test when the
//  system has none.
START_TEST (test_locale_does_not_matter)
{
    const char *names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8"};
    int found = 0;
    for (size_t i = 0; i < 3 && !found; i++)
        found = setlocale (LC_NUMERIC, names[i]) != NULL;
    char *dir = NULL;
    if (!found && system ("command -v localedef >/dev/null 2>&1") == 0) {
        dir = testutil_mkdtemp ();
        char cmd[4400];
        snprintf (cmd, sizeof cmd, "localedef -i de_DE -f UTF-8 '%s/de_DE.UTF-8' >/dev/null 2>&1", dir);
        if (system (cmd) == 0) {
            setenv ("LOCPATH", dir, 1);
            found = setlocale (LC_NUMERIC, "de_DE.UTF-8") != NULL;
        }
    }
    if (!found) {
        fprintf (stderr, "check_decimal: no locale with a decimal comma, locale test skipped\n");
        if (dir)
            testutil_rmdir (dir);
        return;
    }
    char text[64];
    snprintf (text, sizeof text, "%g", 0.5);
    ck_assert_str_eq (text, "0,5");  //  the locale is in force
    size_t n = weir__decimal_format (text, 0.25);
    ck_assert_int_eq (n, 4);
    ck_assert (memcmp (text, "0.25", 4) == 0);
    n = weir__decimal_format_float (text, 0.25f);
    ck_assert (n == 4 && memcmp (text, "0.25", 4) == 0);
    double v;
    //  Long enough for the slow path
    const char *slow = "0.1234567890123456789012345";
    ck_assert_int_eq (weir__decimal_parse (slow, strlen (slow), &v), 0);
    ck_assert (v > 0.1234 && v < 0.1235);
    ck_assert_int_eq (weir__decimal_parse ("0,5", 3, &v), WEIR__DECIMAL_SYNTAX);
    for (int k = 0; k < 10000; k++) {
        double x = (double) (s_random () % 256) / 255 + 1e-300 * (double) (s_random () % 3), back;
        n = weir__decimal_format (text, x);
        ck_assert (!memchr (text, ',', n));
        ck_assert_int_eq (weir__decimal_parse (text, n, &back), 0);
        ck_assert (s_bits (back) == s_bits (x));
    }
    setlocale (LC_NUMERIC, "C");
    unsetenv ("LOCPATH");
    if (dir)
        testutil_rmdir (dir);
}
END_TEST

Suite *check_suite (void)
{
    Suite *s = suite_create ("decimal");
    TCase *tc = tcase_create ("core");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_parse_syntax);
    tcase_add_test (tc, test_parse_int);
    tcase_add_test (tc, test_parse_is_correctly_rounded);
    tcase_add_test (tc, test_parse_long_significands);
    tcase_add_test (tc, test_format_round_trips_shortest);
    tcase_add_test (tc, test_format_float);
    tcase_add_test (tc, test_locale_does_not_matter);
    suite_add_tcase (s, tc);
    return s;
}

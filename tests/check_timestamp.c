/*  tests/check_timestamp.c - RFC 3339 instants, epoch seconds and
    durations, against the C library's own calendar (timegm, gmtime_r).  */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "lib/timestamp.h"
#include "tests/testutil.h"

static int64_t s_parsed (const char *text)
{
    int64_t ms = 0;
    ck_assert_msg (weir__timestamp_parse (text, strlen (text), &ms) == 0, "'%s' did not parse", text);
    return ms;
}

START_TEST (test_parse)
{
    ck_assert_int_eq (s_parsed ("1970-01-01T00:00:00Z"), 0);
    ck_assert_int_eq (s_parsed ("2026-11-27T17:55:55Z"), 1795802155000LL);
    ck_assert_int_eq (s_parsed ("2026-11-27T17:55:55.25Z"), 1795802155250LL);
    ck_assert_int_eq (s_parsed ("2026-11-27T17:55:55.999999Z"), 1795802155999LL);
    ck_assert_int_eq (s_parsed ("2026-11-27t18:55:55+01:00"), 1795802155000LL);
    ck_assert_int_eq (s_parsed ("2026-11-27 12:25:55-05:30"), 1795802155000LL);
    ck_assert_int_eq (s_parsed ("1969-12-31T23:59:59.5z"), -500);
    ck_assert_int_eq (s_parsed ("2024-02-29T00:00:00Z"), 1709164800000LL);
    ck_assert_int_eq (s_parsed ("2016-12-31T23:59:60Z"), s_parsed ("2017-01-01T00:00:00Z"));
    const char *bad[] = {"",
                         "2026-11-27",
                         "2026-11-27T17:55:55",
                         "2026-11-27T17:55Z",
                         "2026-13-01T00:00:00Z",
                         "2026-02-29T00:00:00Z",
                         "2100-02-29T00:00:00Z",
                         "2026-11-31T00:00:00Z",
                         "2026-11-27T24:00:00Z",
                         "2026-11-27T17:60:00Z",
                         "2026-11-27T17:55:55.Z",
                         "2026-11-27T17:55:55+0100",
                         "2026-11-27T17:55:55Zjunk",
                         "26-11-27T17:55:55Z",
                         "2026/11/27T17:55:55Z"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int64_t ms;
        ck_assert_msg (weir__timestamp_parse (bad[i], strlen (bad[i]), &ms) == -1, "'%s' parsed", bad[i]);
    }
    //  Only LEN bytes count: what follows is not read
    int64_t ms;
    ck_assert_int_eq (weir__timestamp_parse ("1970-01-01T00:00:01Zxyz", 20, &ms), 0);
    ck_assert_int_eq (ms, 1000);
}
END_TEST

//  Every day of years 1 to 9999 (every fourth hour, some minutes),
//  against timegm and gmtime_r, both ways
START_TEST (test_calendar_matches_libc)
{
    for (int64_t t = -62135596800LL; t < 253402300799LL; t += 86400 * 7 + 3600 * 4 + 61) {
        struct tm tm;
        time_t tt = (time_t) t;
        ck_assert (gmtime_r (&tt, &tm));
        char text[64], mine[32];
        snprintf (text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
        ck_assert_int_eq (s_parsed (text), t * 1000);
        size_t n = weir__timestamp_format (t * 1000, mine, sizeof mine);
        ck_assert_uint_eq (n, strlen (text));
        ck_assert_str_eq (mine, text);
    }
}
END_TEST

START_TEST (test_format)
{
    char out[32];
    weir__timestamp_format (1795802155250LL, out, sizeof out);
    ck_assert_str_eq (out, "2026-11-27T17:55:55.250Z");
    weir__timestamp_format (-500, out, sizeof out);
    ck_assert_str_eq (out, "1969-12-31T23:59:59.500Z");
    weir__timestamp_format (-86400000LL, out, sizeof out);
    ck_assert_str_eq (out, "1969-12-31T00:00:00Z");
    //  A short buffer is cut, still a C string
    ck_assert_uint_eq (weir__timestamp_format (0, out, 5), 4);
    ck_assert_str_eq (out, "1970");
}
END_TEST

START_TEST (test_seconds)
{
    int64_t ms;
    ck_assert_int_eq (weir__timestamp_of_seconds (1795802155.25, &ms), 0);
    ck_assert_int_eq (ms, 1795802155250LL);
    //  Decimals a double holds a hair below what they say
    for (int64_t k = 0; k < 100000; k++) {
        char text[32];
        snprintf (text, sizeof text, "%lld.%03lld", 1795802400LL + k * 7, k % 1000);
        ck_assert_int_eq (weir__timestamp_of_seconds (strtod (text, NULL), &ms), 0);
        ck_assert_int_eq (ms, (1795802400LL + k * 7) * 1000 + k % 1000);
    }
    ck_assert_int_eq (weir__timestamp_of_seconds (-0.5, &ms), 0);
    ck_assert_int_eq (ms, -500);
    ck_assert_int_eq (weir__timestamp_of_seconds (NAN, &ms), -1);
    ck_assert_int_eq (weir__timestamp_of_seconds (1e300, &ms), -1);
}
END_TEST

START_TEST (test_duration)
{
    int64_t ms;
    const struct {
        const char *text;
        int64_t ms;
    } good[] = {{"60s", 60000}, {"5m", 300000},   {"1.5h", 5400000},
                {"250ms", 250}, {"1d", 86400000}, {"0.5s", 500}};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        ck_assert_msg (weir__duration_parse (good[i].text, &ms) == 0, "'%s' did not parse", good[i].text);
        ck_assert_int_eq (ms, good[i].ms);
    }
    const char *bad[] = {"", "60", "s", "-5s", "0s", "0.5ms", "5 s", "5sec", "1e20d", "nan s", "5S"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg (weir__duration_parse (bad[i], &ms) == -1, "'%s' parsed", bad[i]);
}
END_TEST

Suite *check_suite (void)
{
    Suite *s = suite_create ("timestamp");
    TCase *tc = tcase_create ("core");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_parse);
    tcase_add_test (tc, test_calendar_matches_libc);
    tcase_add_test (tc, test_format);
    tcase_add_test (tc, test_seconds);
    tcase_add_test (tc, test_duration);
    suite_add_tcase (s, tc);
    return s;
}

/*  tests/check_props.c - property lists: integers, lookups, refusals.  */
#include "config.h"

#include <stdint.h>

#include "lib/props.h"
#include "lib/suggest.h"
#include "testutil.h"

//  weir__parse_int of TEXT must succeed with WANT
static void s_int_ok (const char *text, int64_t want)
{
    int64_t v = 12345;
    ck_assert_msg (weir__parse_int (text, &v) == 0, "'%s' refused", text);
    ck_assert_msg (v == want, "'%s' read as %lld, not %lld", text, (long long) v, (long long) want);
}

static void s_int_bad (const char *text)
{
    int64_t v = 12345;
    ck_assert_msg (weir__parse_int (text, &v) == -1, "'%s' accepted as %lld", text, (long long) v);
}

START_TEST (test_parse_int_plain)
{
    s_int_ok ("0", 0);
    s_int_ok ("42", 42);
    s_int_ok ("-17", -17);
    s_int_ok ("007", 7);  //  decimal, not octal
    s_int_ok ("9223372036854775807", INT64_MAX);
    s_int_ok ("-9223372036854775808", INT64_MIN);
}
END_TEST

START_TEST (test_parse_int_suffixes)
{
    s_int_ok ("5k", 5000);
    s_int_ok ("3M", 3000000);
    s_int_ok ("2G", 2000000000);
    s_int_ok ("-4k", -4000);
    s_int_ok ("0G", 0);
    //  The largest that still fit after scaling
    s_int_ok ("9223372036854775k", 9223372036854775000);
    s_int_ok ("9223372036G", 9223372036000000000);
    s_int_ok ("-9223372036854775k", -9223372036854775000);
    //  Suffixes are exact: one of them, once, in that case
    s_int_bad ("5K");
    s_int_bad ("5m");
    s_int_bad ("5g");
    s_int_bad ("5kk");
    s_int_bad ("5k0");
    s_int_bad ("k");
    s_int_bad ("5T");
}
END_TEST

START_TEST (test_parse_int_overflow)
{
    s_int_bad ("9223372036854775808");
    s_int_bad ("-9223372036854775809");
    s_int_bad ("99999999999999999999999");
    //  Fits before the suffix, not after
    s_int_bad ("9223372036854776k");
    s_int_bad ("9223372037G");
    s_int_bad ("-9223372037G");
    s_int_bad ("9223372036854775807k");
}
END_TEST

START_TEST (test_parse_int_junk)
{
    s_int_bad ("");
    s_int_bad ("12x");
    s_int_bad ("1.5");
    s_int_bad ("1e3");
    s_int_bad ("0x10");
    s_int_bad ("-");
    s_int_bad ("ten");
    s_int_bad ("12 ");
    s_int_bad ("1 2");
}
END_TEST

START_TEST (test_props_add_find_get)
{
    weir__props p;
    weir__props_init (&p);
    ck_assert_uint_eq (p.count, 0);
    ck_assert_int_eq (weir__props_add (&p, "count", "10", 6, 12), 0);
    ck_assert_int_eq (weir__props_add (&p, "path", "/tmp/x", 15, 20), 0);
    ck_assert_int_eq (weir__props_add (&p, "count", "20", 27, 33), 0);
    ck_assert_uint_eq (p.count, 3);

    //  Copies are kept: the caller's strings may go away
    char key[] = "rate", value[] = "5";
    ck_assert_int_eq (weir__props_add (&p, key, value, -1, -1), 0);
    key[0] = value[0] = 'X';
    ck_assert_str_eq (weir__props_get (&p, "rate", NULL), "5");

    //  Nothing used until asked for
    ck_assert_int_eq (p.items[0].used, 0);
    ck_assert_int_eq (p.items[1].used, 0);
    ck_assert_int_eq (p.items[2].used, 0);

    //  The last one wins, as on a command line, and only it is marked used
    weir__prop *c = weir__props_find (&p, "count");
    ck_assert_ptr_eq (c, &p.items[2]);
    ck_assert_str_eq (c->value, "20");
    ck_assert_int_eq (c->key_offset, 27);
    ck_assert_int_eq (c->value_offset, 33);
    ck_assert_int_eq (c->used, 1);
    ck_assert_int_eq (p.items[0].used, 0);

    ck_assert_str_eq (weir__props_get (&p, "path", "none"), "/tmp/x");
    ck_assert_int_eq (p.items[1].used, 1);

    //  Absent: NULL or the fallback, and nothing marked
    ck_assert_ptr_null (weir__props_find (&p, "missing"));
    ck_assert_str_eq (weir__props_get (&p, "missing", "fallback"), "fallback");
    ck_assert_ptr_null (weir__props_get (&p, "missing", NULL));
    //  Keys match whole and exactly
    ck_assert_ptr_null (weir__props_find (&p, "coun"));
    ck_assert_ptr_null (weir__props_find (&p, "Count"));

    weir__props_release (&p);
    ck_assert_uint_eq (p.count, 0);
    ck_assert_ptr_null (p.items);
    //  Releasing twice, or an empty list, is harmless
    weir__props_release (&p);
}
END_TEST

START_TEST (test_props_add_text)
{
    weir__props p;
    weir__props_init (&p);
    weir__err err;
    weir__err_init (&err);

    ck_assert_int_eq (weir__props_add_text (&p, "a=b", &err), 0);
    ck_assert_uint_eq (p.count, 1);
    ck_assert_str_eq (p.items[0].key, "a");
    ck_assert_str_eq (p.items[0].value, "b");
    //  Built in code, not from a description: nowhere to point
    ck_assert_int_eq (p.items[0].key_offset, -1);
    ck_assert_int_eq (p.items[0].value_offset, -1);

    //  Only the first '=' splits
    ck_assert_int_eq (weir__props_add_text (&p, "a==b", &err), 0);
    ck_assert_str_eq (p.items[1].key, "a");
    ck_assert_str_eq (p.items[1].value, "=b");
    ck_assert_int_eq (weir__props_add_text (&p, "url=http://h/?x=1", &err), 0);
    ck_assert_str_eq (p.items[2].key, "url");
    ck_assert_str_eq (p.items[2].value, "http://h/?x=1");

    //  An empty value is a value
    ck_assert_int_eq (weir__props_add_text (&p, "empty=", &err), 0);
    ck_assert_str_eq (p.items[3].value, "");
    ck_assert_int_eq (err.code, 0);

    ck_assert_int_eq (weir__props_add_text (&p, "=b", &err), WEIR_EPROPERTY);
    ck_assert_int_eq (err.code, WEIR_EPROPERTY);
    ck_assert_str_eq (err.msg, "property '=b' is not of the form key=value");

    weir__err_init (&err);
    ck_assert_int_eq (weir__props_add_text (&p, "ab", &err), WEIR_EPROPERTY);
    ck_assert_str_eq (err.msg, "property 'ab' is not of the form key=value");
    ck_assert_int_eq (err.offset, -1);

    ck_assert_int_eq (weir__props_add_text (&p, "", &err), WEIR_EPROPERTY);
    //  Refusals add nothing
    ck_assert_uint_eq (p.count, 4);
    weir__props_release (&p);
}
END_TEST

START_TEST (test_props_int)
{
    weir__props p;
    weir__props_init (&p);
    weir__err err;
    weir__err_init (&err);
    int64_t v = 0;

    //  Absent: the fallback, no error
    ck_assert_int_eq (weir__props_int (&p, "range", "count", 77, 0, 100, &v, &err), 0);
    ck_assert_int_eq (v, 77);
    ck_assert_int_eq (err.code, 0);

    ck_assert_int_eq (weir__props_add (&p, "count", "5k", 6, 12), 0);
    ck_assert_int_eq (weir__props_int (&p, "range", "count", 77, 0, INT64_MAX, &v, &err), 0);
    ck_assert_int_eq (v, 5000);
    ck_assert_int_eq (p.items[0].used, 1);

    //  The bounds are inclusive
    ck_assert_int_eq (weir__props_int (&p, "range", "count", 0, 5000, 5000, &v, &err), 0);
    ck_assert_int_eq (v, 5000);

    //  Out of range: names element, property, value and range; points at the value
    v = -1;
    ck_assert_int_eq (weir__props_int (&p, "range", "count", 0, 0, 100, &v, &err), WEIR_EPROPERTY);
    ck_assert_int_eq (err.code, WEIR_EPROPERTY);
    ck_assert_int_eq (err.offset, 12);
    ck_assert_str_eq (err.msg, "range: property 'count': 5000 is out of range [0, 100]");
    ck_assert_int_eq (v, -1);  //  nothing stored on error

    weir__err_init (&err);
    ck_assert_int_eq (weir__props_int (&p, "range", "count", 0, 5001, 9000, &v, &err), WEIR_EPROPERTY);
    ck_assert_str_eq (err.msg, "range: property 'count': 5000 is out of range [5001, 9000]");

    //  Not a number at all
    ck_assert_int_eq (weir__props_add (&p, "rate", "fast", 20, 25), 0);
    weir__err_init (&err);
    ck_assert_int_eq (weir__props_int (&p, "tail", "rate", 0, 0, 100, &v, &err), WEIR_EPROPERTY);
    ck_assert_int_eq (err.offset, 25);
    ck_assert_str_eq (err.msg, "tail: property 'rate': 'fast' is not an integer");

    //  Negative bounds print as such
    ck_assert_int_eq (weir__props_add (&p, "delta", "-20", 30, 36), 0);
    ck_assert_int_eq (weir__props_int (&p, "x", "delta", 0, -10, 10, &v, &err), WEIR_EPROPERTY);
    ck_assert_str_eq (err.msg, "x: property 'delta': -20 is out of range [-10, 10]");
    ck_assert_int_eq (err.offset, 36);
    weir__props_release (&p);
}
END_TEST

static const weir_property_info s_known[] = {
    {"count", "10", "records to make"},
    {"rate", "0", "records per second"},
    {NULL, NULL, NULL},
};

static const weir_property_info s_common[] = {
    {"threads", "1", "threads"},
    {"batch", "1000", "records per batch"},
    {NULL, NULL, NULL},
};

START_TEST (test_props_check)
{
    weir__props p;
    weir__props_init (&p);
    weir__err err;
    weir__err_init (&err);

    //  Nothing, then known and common names, are all fine
    ck_assert_int_eq (weir__props_check (&p, "range", s_known, s_common, &err), 0);
    ck_assert_int_eq (weir__props_add (&p, "count", "1", 6, 12), 0);
    ck_assert_int_eq (weir__props_add (&p, "threads", "2", 15, 23), 0);
    ck_assert_int_eq (weir__props_check (&p, "range", s_known, s_common, &err), 0);
    ck_assert_int_eq (err.code, 0);

    //  A typo is refused, pointing at its key
    ck_assert_int_eq (weir__props_add (&p, "cuont", "5", 25, 31), 0);
    ck_assert_int_eq (weir__props_check (&p, "range", s_known, s_common, &err), WEIR_EPROPERTY);
    ck_assert_int_eq (err.code, WEIR_EPROPERTY);
    ck_assert_int_eq (err.offset, 25);
    ck_assert_str_eq (
        err.msg,
        "range: unknown property 'cuont': did you mean 'count'? (known: count, rate, threads, batch)");
    //  A word far from every name gets no guess
    weir__props far;
    weir__props_init (&far);
    ck_assert_int_eq (weir__props_add (&far, "zebra", "5", 0, 6), 0);
    ck_assert_int_eq (weir__props_check (&far, "range", s_known, s_common, &err), WEIR_EPROPERTY);
    ck_assert_str_eq (err.msg, "range: unknown property 'zebra' (known: count, rate, threads, batch)");
    weir__props_release (&far);

    //  Either table may be missing
    weir__props q;
    weir__props_init (&q);
    ck_assert_int_eq (weir__props_add (&q, "batch", "5", 3, 9), 0);
    ck_assert_int_eq (weir__props_check (&q, "null", NULL, s_common, &err), 0);
    ck_assert_int_eq (weir__props_add (&q, "count", "5", 11, 17), 0);
    ck_assert_int_eq (weir__props_check (&q, "null", NULL, s_common, &err), WEIR_EPROPERTY);
    ck_assert_int_eq (err.offset, 11);
    ck_assert_str_eq (err.msg, "null: unknown property 'count' (known: threads, batch)");
    ck_assert_int_eq (weir__props_check (&q, "range", s_known, NULL, &err), WEIR_EPROPERTY);
    ck_assert_str_eq (err.msg, "range: unknown property 'batch' (known: count, rate)");

    weir__props_release (&q);
    weir__props_release (&p);
}
END_TEST

START_TEST (test_suggest)
{
    //  Swaps of neighbours count once: the commonest typo
    ck_assert_uint_eq (weir__suggest_distance ("idnetity", "identity"), 1);
    ck_assert_uint_eq (weir__suggest_distance ("lnies", "lines"), 1);
    ck_assert_uint_eq (weir__suggest_distance ("pth", "path"), 1);
    ck_assert_uint_eq (weir__suggest_distance ("", "abc"), 3);
    ck_assert_uint_eq (weir__suggest_distance ("kitten", "sitting"), 3);
    const char *best = NULL;
    size_t d = 0;
    const char *names[] = {"range", "lines", "msgpack", "leveldb"};
    for (size_t i = 0; i < 4; i++)
        weir__suggest_consider ("lnies", names[i], &best, &d);
    ck_assert_str_eq (best, "lines");
    //  Short words are too easy to confuse: no guess for a two-letter word
    best = NULL;
    for (size_t i = 0; i < 4; i++)
        weir__suggest_consider ("xy", names[i], &best, &d);
    ck_assert_ptr_null (best);
}
END_TEST

Suite *check_suite (void)
{
    Suite *s = suite_create ("props");
    TCase *tc = tcase_create ("parse_int");
    tcase_add_test (tc, test_parse_int_plain);
    tcase_add_test (tc, test_parse_int_suffixes);
    tcase_add_test (tc, test_parse_int_overflow);
    tcase_add_test (tc, test_parse_int_junk);
    suite_add_tcase (s, tc);

    tc = tcase_create ("props");
    tcase_add_test (tc, test_props_add_find_get);
    tcase_add_test (tc, test_props_add_text);
    tcase_add_test (tc, test_props_int);
    tcase_add_test (tc, test_props_check);
    tcase_add_test (tc, test_suggest);
    suite_add_tcase (s, tc);
    return s;
}

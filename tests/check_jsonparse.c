/*  tests/check_jsonparse.c - JSON into msgpack (lib/jsonparse.h) and where
    text that is not JSON goes wrong (lib/jsonwhere.h).  */
#include "config.h"

#include <msgpack.h>
#include <stdint.h>

#include "lib/jsonparse.h"
#include "lib/jsontext.h"
#include "lib/jsonwhere.h"
#include "testutil.h"

static weir__jsonparse *s_parser;

static void s_setup (void)
{
    s_parser = weir__jsonparse_new ();
    ck_assert_ptr_nonnull (s_parser);
}

static void s_teardown (void)
{
    weir__jsonparse_destroy (s_parser);
}

//  TEXT parsed: its msgpack bytes in OUT (from WEIR__BATCH_HEADER)
static void s_parse (const char *text, weir__batch *out)
{
    ck_assert_int_eq (weir__batch_init (out, 64), 0);
    size_t where;
    const char *problem = NULL;
    int rc = weir__jsonparse_pack (s_parser, text, strlen (text), out, &where, &problem);
    ck_assert_msg (rc == 0, "'%s' refused: %s", text, problem ? problem : "?");
}

//  TEXT parses into one msgpack object equal to what PACKED holds
static void s_expect_bytes (const char *text, const char *packed, size_t n)
{
    weir__batch out;
    s_parse (text, &out);
    ck_assert_uint_eq (weir__batch_payload (&out), n);
    ck_assert_mem_eq (out.data + WEIR__BATCH_HEADER, packed, n);
    weir__batch_release (&out);
}

//  TEXT parses, and its msgpack decodes to an object of TYPE
static msgpack_object s_expect_type (const char *text, msgpack_object_type type, msgpack_zone *zone)
{
    weir__batch out;
    s_parse (text, &out);
    msgpack_object o;
    size_t off = 0;
    //  The bytes outlive the batch in the zone's copy
    char *copy = msgpack_zone_malloc (zone, weir__batch_payload (&out));
    memcpy (copy, out.data + WEIR__BATCH_HEADER, weir__batch_payload (&out));
    ck_assert_int_eq (msgpack_unpack (copy, weir__batch_payload (&out), &off, zone, &o),
                      MSGPACK_UNPACK_SUCCESS);
    ck_assert_uint_eq (off, weir__batch_payload (&out));
    ck_assert_msg (o.type == type, "'%s' gave type %d, wanted %d", text, (int) o.type, (int) type);
    weir__batch_release (&out);
    return o;
}

//  TEXT is refused, the first wrong byte at column COLUMN (from 1), with
//  a problem that holds WORDS
static void s_expect_bad (const char *text, size_t n, size_t column, const char *words)
{
    weir__batch out;
    ck_assert_int_eq (weir__batch_init (&out, 64), 0);
    size_t where = 12345;
    const char *problem = NULL;
    ck_assert_msg (weir__jsonparse_pack (s_parser, text, n, &out, &where, &problem)
                       == WEIR__JSONPARSE_MALFORMED,
                   "'%.*s' was taken", (int) n, text);
    ck_assert_msg (where + 1 == column, "'%.*s': column %zu, wanted %zu (%s)", (int) n, text, where + 1,
                   column, problem);
    ck_assert_msg (strstr (problem, words), "'%.*s': '%s' does not say '%s'", (int) n, text, problem, words);
    //  Nothing of it is left in the batch
    ck_assert_uint_eq (weir__batch_payload (&out), 0);
    weir__batch_release (&out);
}

START_TEST (test_parse_scalars)
{
    s_expect_bytes ("null", "\xc0", 1);
    s_expect_bytes ("true", "\xc3", 1);
    s_expect_bytes ("false", "\xc2", 1);
    s_expect_bytes (" \t1\r", "\x01", 1);
    s_expect_bytes ("-1", "\xff", 1);
    s_expect_bytes ("\"\"", "\xa0", 1);
    s_expect_bytes ("\"ab\"",
                    "\xa2"
                    "ab",
                    3);
    //  -0 is the integer 0, -0.0 a float
    s_expect_bytes ("-0", "\x00", 1);
    s_expect_bytes ("-0.0", "\xcb\x80\0\0\0\0\0\0\0", 9);
    s_expect_bytes ("1.0", "\xcb\x3f\xf0\0\0\0\0\0\0", 9);
    s_expect_bytes ("1E0", "\xcb\x3f\xf0\0\0\0\0\0\0", 9);
}
END_TEST

//  Integers are msgpack integers over the whole int64 and uint64 range,
//  packed as msgpack-c packs them (the smallest form)
START_TEST (test_parse_integers)
{
    s_expect_bytes ("127", "\x7f", 1);
    s_expect_bytes ("128", "\xcc\x80", 2);
    s_expect_bytes ("-33", "\xd0\xdf", 2);
    s_expect_bytes ("65536", "\xce\x00\x01\x00\x00", 5);
    s_expect_bytes ("9223372036854775807", "\xcf\x7f\xff\xff\xff\xff\xff\xff\xff", 9);
    s_expect_bytes ("9223372036854775808", "\xcf\x80\0\0\0\0\0\0\0", 9);
    s_expect_bytes ("18446744073709551615", "\xcf\xff\xff\xff\xff\xff\xff\xff\xff", 9);
    s_expect_bytes ("-9223372036854775808", "\xd3\x80\0\0\0\0\0\0\0", 9);
    msgpack_zone zone;
    msgpack_zone_init (&zone, 4096);
    //  Beyond: the nearest double, as jq reads them
    msgpack_object o = s_expect_type ("18446744073709551616", MSGPACK_OBJECT_FLOAT64, &zone);
    ck_assert (o.via.f64 == 18446744073709551616.0);
    o = s_expect_type ("-9223372036854775809", MSGPACK_OBJECT_FLOAT64, &zone);
    ck_assert (o.via.f64 == -9223372036854775808.0);
    o = s_expect_type ("[123456789012345678901234567890,\"12345678901234567890123\",1]", MSGPACK_OBJECT_ARRAY,
                       &zone);
    ck_assert_int_eq (o.via.array.ptr[0].type, MSGPACK_OBJECT_FLOAT64);
    ck_assert (o.via.array.ptr[0].via.f64 == 123456789012345678901234567890.0);
    //  ... and a string of digits stays a string
    ck_assert_int_eq (o.via.array.ptr[1].type, MSGPACK_OBJECT_STR);
    ck_assert_int_eq (o.via.array.ptr[1].via.str.size, 23);
    ck_assert_int_eq (o.via.array.ptr[2].type, MSGPACK_OBJECT_POSITIVE_INTEGER);
    //  Doubles round correctly, underflow to 0 or a subnormal
    o = s_expect_type ("0.1", MSGPACK_OBJECT_FLOAT64, &zone);
    ck_assert (o.via.f64 == 0.1);
    o = s_expect_type ("1e-400", MSGPACK_OBJECT_FLOAT64, &zone);
    ck_assert (o.via.f64 == 0.0);
    o = s_expect_type ("4.9406564584124654e-324", MSGPACK_OBJECT_FLOAT64, &zone);
    ck_assert (o.via.f64 == 4.9406564584124654e-324);
    o = s_expect_type ("1.7976931348623157e308", MSGPACK_OBJECT_FLOAT64, &zone);
    ck_assert (o.via.f64 == 1.7976931348623157e308);
    msgpack_zone_destroy (&zone);
}
END_TEST

START_TEST (test_parse_containers)
{
    s_expect_bytes ("[]", "\x90", 1);
    s_expect_bytes ("{}", "\x80", 1);
    s_expect_bytes ("[1,[2],{\"a\":null}]",
                    "\x93\x01\x91\x02\x81\xa1"
                    "a\xc0",
                    8);
    //  Keys keep their order; a repeated one is kept twice
    s_expect_bytes ("{\"b\":1,\"a\":2,\"b\":3}",
                    "\x83\xa1"
                    "b\x01\xa1"
                    "a\x02\xa1"
                    "b\x03",
                    10);
    //  16 elements and more take the wider headers
    s_expect_bytes ("[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]", "\xdc\x00\x10\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 19);
}
END_TEST

START_TEST (test_parse_strings)
{
    //  Escapes, \u0000 included, and surrogate pairs into UTF-8
    s_expect_bytes ("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\xa8\"\\/\b\f\n\r\t", 9);
    s_expect_bytes ("\"a\\u0000b\"",
                    "\xa3"
                    "a\0b",
                    4);
    s_expect_bytes ("\"\\u00e9\\u20AC\\ud83d\\ude00\"", "\xa9\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 10);
    s_expect_bytes ("\"\xc3\xa9\xf0\x9f\x98\x80\"", "\xa6\xc3\xa9\xf0\x9f\x98\x80", 7);
    //  Long strings take str8 and wider
    char text[400], want[400];
    memset (text, 'x', sizeof text);
    text[0] = '"';
    text[301] = '"';
    text[302] = '\0';
    want[0] = (char) 0xda;
    want[1] = 1;
    want[2] = 44;
    memset (want + 3, 'x', 300);
    s_expect_bytes (text, want, 303);
}
END_TEST

//  What must be refused, with the column of the first wrong byte
START_TEST (test_parse_refused)
{
#define S_BAD(text, column, words) s_expect_bad (text, sizeof text - 1, column, words)
    S_BAD ("", 1, "ends where a value should be");
    S_BAD ("[1,]", 4, "expected a value");
    S_BAD ("{\"a\":1,}", 8, "expected a key");
    S_BAD ("{\"a\" 1}", 6, "expected ':'");
    S_BAD ("[1 2]", 4, "expected ',' or ']'");
    S_BAD ("{\"a\":1 \"b\":2}", 8, "expected ',' or '}'");
    S_BAD ("['a']", 2, "expected a value");
    S_BAD ("{a:1}", 2, "expected a key");
    S_BAD ("[01]", 2, "may not start with 0");
    S_BAD ("[+1]", 2, "expected a value");
    S_BAD ("[.5]", 2, "expected a value");
    S_BAD ("[1.]", 4, "a digit must follow the decimal point");
    S_BAD ("[1e]", 4, "a digit must follow the exponent");
    S_BAD ("[-]", 3, "a digit must follow the minus");
    S_BAD ("[NaN]", 2, "expected a value");
    S_BAD ("[-Infinity]", 3, "a digit must follow the minus");
    S_BAD ("[1e400]", 2, "beyond the range of a double");
    S_BAD ("-1e400", 1, "beyond the range of a double");
    S_BAD ("[\"abc", 2, "not closed");
    S_BAD ("[1,2", 5, "ends inside an array");
    S_BAD ("{\"a\":", 6, "ends where a value should be");
    S_BAD ("[\"\\x\"]", 3, "invalid escape");
    S_BAD ("[\"\\u12\"]", 3, "four hexadecimal digits");
    S_BAD ("[\"a\tb\"]", 4, "control character");
    S_BAD ("[\"a\nb\"]", 4, "control character");
    S_BAD ("[\"\xff\"]", 3, "invalid UTF-8");
    S_BAD ("[\"\xc0\x80\"]", 3, "invalid UTF-8");
    S_BAD ("[\"\xed\xa0\x80\"]", 3, "invalid UTF-8");
    S_BAD ("[\"\xf4\x90\x80\x80\"]", 3, "invalid UTF-8");
    S_BAD ("[\"\\ud800\"]", 3, "lone high surrogate");
    S_BAD ("[\"\\ud800\\u0041\"]", 3, "lone high surrogate");
    S_BAD ("[\"\\udc00\"]", 3, "lone low surrogate");
    S_BAD ("[1] x", 5, "unexpected text after the value");
    S_BAD ("1 2", 3, "unexpected text after the value");
    S_BAD ("[1] // c", 5, "unexpected text after the value");
    S_BAD ("[tru]", 2, "expected a value");
    S_BAD ("nul", 1, "expected a value");
    S_BAD ("[1,\0]", 4, "expected a value");
    S_BAD ("\xef\xbb\xbf[1]", 1, "byte order mark");
    S_BAD ("[1]\xff", 4, "unexpected text");
#undef S_BAD
}
END_TEST

//  Containers nest at most 32 deep, what msgpack-c decodes
START_TEST (test_parse_depth)
{
    char text[80];
    for (int depth = 31; depth <= 34; depth++) {
        memset (text, '[', (size_t) depth);
        memset (text + depth, ']', (size_t) depth);
        text[2 * depth] = '\0';
        weir__batch out;
        ck_assert_int_eq (weir__batch_init (&out, 64), 0);
        size_t where;
        const char *problem;
        int rc = weir__jsonparse_pack (s_parser, text, strlen (text), &out, &where, &problem);
        if (depth <= 32)
            ck_assert_msg (rc == 0, "depth %d refused", depth);
        else {
            ck_assert_int_eq (rc, WEIR__JSONPARSE_MALFORMED);
            ck_assert_uint_eq (where, 32);
            ck_assert_ptr_nonnull (strstr (problem, "nested too deep"));
        }
        weir__batch_release (&out);
    }
}
END_TEST

//  JSON -> msgpack -> JSON gives the same text for text in the canonical
//  form the renderer writes
START_TEST (test_parse_round_trip)
{
    static const char *texts[] = {
        "{\"ts\":\"2024-03-01T12:00:00Z\",\"n\":[1,-2,3.5,1e+300,-0.0,2.0],\"ok\":true,\"x\":null}",
        "[\"\\\"\\\\\\n\\t\\u0000\\u001f\\u007f\",\"\xc3\xa9\xf0\x9f\x98\x80/\"]",
        "[18446744073709551615,-9223372036854775808,0.30000000000000004,4.94065645841247e-324]",
        "{\"\":{\"\":[[[]]]}}",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        weir__batch out;
        s_parse (texts[i], &out);
        weir__buf b;
        weir__buf_init (&b);
        size_t used;
        ck_assert_int_eq (
            weir__jsontext_packed (&b, out.data + WEIR__BATCH_HEADER, weir__batch_payload (&out), &used), 0);
        ck_assert_uint_eq (used, weir__batch_payload (&out));
        ck_assert_msg (b.len == strlen (texts[i]) && memcmp (b.data, texts[i], b.len) == 0,
                       "'%s' came back as '%.*s'", texts[i], (int) b.len, b.data);
        weir__buf_release (&b);
        weir__batch_release (&out);
    }
}
END_TEST

//  A long text and then short ones: the parser's buffers grow and stay
START_TEST (test_parse_sizes)
{
    size_t n = 3 << 20;
    char *text = malloc (n + 1);
    text[0] = '[';
    for (size_t i = 1; i + 2 < n; i += 2)
        memcpy (text + i, "1,", 2);
    text[n - 2] = '1';
    text[n - 1] = ']';
    text[n] = '\0';
    weir__batch out;
    s_parse (text, &out);
    ck_assert_uint_eq ((unsigned char) out.data[WEIR__BATCH_HEADER], 0xdd);
    weir__batch_release (&out);
    free (text);
    s_expect_bytes ("[1]", "\x91\x01", 2);
}
END_TEST

//  The widening of integers beyond 64 bits, outside strings only
START_TEST (test_where_widen)
{
    weir__buf b;
    weir__buf_init (&b);
    const char *text =
        "[1,18446744073709551616,\"99999999999999999999999\",-9223372036854775809,1e99999999999999999999]";
    ck_assert_int_eq (weir__jsonwhere_widen (text, strlen (text), &b), 1);
    const char *want = "[1,18446744073709551616.0,\"99999999999999999999999\",-9223372036854775809.0,"
                       "1e99999999999999999999]";
    ck_assert_uint_eq (b.len, strlen (want));
    ck_assert_mem_eq (b.data, want, b.len);
    text = "[18446744073709551615,-9223372036854775808,\"\\\"1\"]";
    ck_assert_int_eq (weir__jsonwhere_widen (text, strlen (text), &b), 0);
    ck_assert_uint_eq (b.len, strlen (text));
    weir__buf_release (&b);
    //  JSON is JSON to the recognizer
    size_t where;
    const char *problem;
    text = " {\"a\":[1,2.5e-3,-0,true,false,null,\"\\u00e9\\ud83d\\ude00\"],\"b\":{}} ";
    ck_assert_int_eq (weir__jsonwhere (text, strlen (text), 32, &where, &problem), 0);
}
END_TEST

Suite *check_suite (void)
{
    Suite *s = suite_create ("jsonparse");
    TCase *tc = tcase_create ("parse");
    tcase_add_checked_fixture (tc, s_setup, s_teardown);
    tcase_add_test (tc, test_parse_scalars);
    tcase_add_test (tc, test_parse_integers);
    tcase_add_test (tc, test_parse_containers);
    tcase_add_test (tc, test_parse_strings);
    tcase_add_test (tc, test_parse_refused);
    tcase_add_test (tc, test_parse_depth);
    tcase_add_test (tc, test_parse_round_trip);
    tcase_add_test (tc, test_parse_sizes);
    tcase_add_test (tc, test_where_widen);
    suite_add_tcase (s, tc);
    return s;
}

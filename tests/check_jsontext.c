/*  tests/check_jsontext.c - msgpack objects as JSON text: one test per
    rule of the mapping, and every text read back by the JSON parser.  */
#include "config.h"

#include <math.h>
#include <msgpack.h>
#include <stdint.h>

#include "lib/jsonparse.h"
#include "lib/jsontext.h"
#include "testutil.h"

//  The text of OBJ, NUL-terminated; caller frees
static char *s_text_of (const msgpack_object *obj)
{
    weir__buf b;
    weir__buf_init (&b);
    ck_assert_int_eq (weir__jsontext_append (&b, obj), 0);
    //  Whatever it is, it is JSON: the parser takes it
    weir__jsonparse *parser = weir__jsonparse_new ();
    weir__batch out;
    ck_assert_int_eq (weir__batch_init (&out, 64), 0);
    size_t where;
    const char *problem = NULL;
    int rc = weir__jsonparse_pack (parser, b.data, b.len, &out, &where, &problem);
    ck_assert_msg (rc == 0, "'%.*s' is not JSON: %s", (int) b.len, b.data, problem ? problem : "?");
    weir__batch_release (&out);
    weir__jsonparse_destroy (parser);
    ck_assert_int_eq (weir__buf_putc (&b, '\0'), 0);
    return b.data;
}

//  The text of what SB holds, decoded by msgpack-c as the pipe decodes it
static char *s_text_of_packed (const msgpack_sbuffer *sb)
{
    msgpack_zone zone;
    ck_assert (msgpack_zone_init (&zone, 4096));
    msgpack_object obj;
    size_t off = 0;
    ck_assert_int_eq (msgpack_unpack (sb->data, sb->size, &off, &zone, &obj), MSGPACK_UNPACK_SUCCESS);
    char *text = s_text_of (&obj);
    msgpack_zone_destroy (&zone);
    return text;
}

//  A packer writing into a fresh buffer
typedef struct {
    msgpack_sbuffer sb;
    msgpack_packer pk;
} s_packed;

static void s_start (s_packed *p)
{
    msgpack_sbuffer_init (&p->sb);
    msgpack_packer_init (&p->pk, &p->sb, msgpack_sbuffer_write);
}

//  What P packed must read WANT; P is emptied for the next object
static void s_expect (s_packed *p, const char *want)
{
    char *text = s_text_of_packed (&p->sb);
    ck_assert_str_eq (text, want);
    free (text);
    msgpack_sbuffer_clear (&p->sb);
}

static void s_expect_str (s_packed *p, const char *s, size_t n, const char *want)
{
    msgpack_pack_str_with_body (&p->pk, s, n);
    s_expect (p, want);
}

START_TEST (test_text_scalars)
{
    s_packed p;
    s_start (&p);
    msgpack_pack_nil (&p.pk);
    s_expect (&p, "null");
    msgpack_pack_true (&p.pk);
    s_expect (&p, "true");
    msgpack_pack_false (&p.pk);
    s_expect (&p, "false");
    msgpack_sbuffer_destroy (&p.sb);
}
END_TEST

START_TEST (test_text_integers)
{
    s_packed p;
    s_start (&p);
    msgpack_pack_int (&p.pk, 0);
    s_expect (&p, "0");
    msgpack_pack_int (&p.pk, 42);
    s_expect (&p, "42");
    msgpack_pack_int (&p.pk, -1);
    s_expect (&p, "-1");
    msgpack_pack_int64 (&p.pk, INT64_MIN);
    s_expect (&p, "-9223372036854775808");
    msgpack_pack_int64 (&p.pk, INT64_MAX);
    s_expect (&p, "9223372036854775807");
    msgpack_pack_uint64 (&p.pk, UINT64_MAX);
    s_expect (&p, "18446744073709551615");
    //  The wire width does not show
    msgpack_pack_fix_int64 (&p.pk, 7);
    s_expect (&p, "7");
    msgpack_pack_fix_int8 (&p.pk, -128);
    s_expect (&p, "-128");
    msgpack_sbuffer_destroy (&p.sb);
}
END_TEST

START_TEST (test_text_floats)
{
    s_packed p;
    s_start (&p);
    //  The shortest text that reads back as the same double
    msgpack_pack_double (&p.pk, 0.1);
    s_expect (&p, "0.1");
    msgpack_pack_double (&p.pk, 1.5);
    s_expect (&p, "1.5");
    msgpack_pack_double (&p.pk, 1e300);
    s_expect (&p, "1e+300");
    msgpack_pack_double (&p.pk, 0.1 + 0.2);
    s_expect (&p, "0.30000000000000004");
    //  Integral values keep a point, so that they read back as floats
    msgpack_pack_double (&p.pk, -2.0);
    s_expect (&p, "-2.0");
    msgpack_pack_double (&p.pk, 0.0);
    s_expect (&p, "0.0");
    msgpack_pack_double (&p.pk, -0.0);
    s_expect (&p, "-0.0");
    msgpack_pack_double (&p.pk, 1e15);
    s_expect (&p, "1e+15");
    //  A float32 is the double it widens to
    msgpack_pack_float (&p.pk, 0.1f);
    s_expect (&p, "0.10000000149011612");
    msgpack_pack_float (&p.pk, 3.0f);
    s_expect (&p, "3.0");

    static const double values[] = {
        0.1, 1.0 / 3, -2.5e-300, 5e-324, 1.7976931348623157e308, 123456789.123456789, -0.0, 6.02214076e23};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        msgpack_pack_double (&p.pk, values[i]);
        char *text = s_text_of_packed (&p.sb);
        char *end;
        double back = strtod (text, &end);
        ck_assert_msg (*end == '\0' && memcmp (&back, &values[i], sizeof back) == 0, "%.17g printed as '%s'",
                       values[i], text);
        free (text);
        msgpack_sbuffer_clear (&p.sb);
    }
    msgpack_sbuffer_destroy (&p.sb);
}
END_TEST

//  JSON has no NaN nor infinity: null, lossy
START_TEST (test_text_non_finite)
{
    s_packed p;
    s_start (&p);
    msgpack_pack_double (&p.pk, NAN);
    s_expect (&p, "null");
    msgpack_pack_double (&p.pk, -NAN);
    s_expect (&p, "null");
    msgpack_pack_double (&p.pk, INFINITY);
    s_expect (&p, "null");
    msgpack_pack_double (&p.pk, -INFINITY);
    s_expect (&p, "null");
    msgpack_pack_float (&p.pk, -INFINITY);
    s_expect (&p, "null");
    msgpack_pack_array (&p.pk, 2);
    msgpack_pack_double (&p.pk, NAN);
    msgpack_pack_double (&p.pk, 1);
    s_expect (&p, "[null,1.0]");
    msgpack_sbuffer_destroy (&p.sb);
}
END_TEST

START_TEST (test_text_strings)
{
    s_packed p;
    s_start (&p);
    s_expect_str (&p, "", 0, "\"\"");
    s_expect_str (&p, "plain", 5, "\"plain\"");
    s_expect_str (&p, "say \"hi\"", 8, "\"say \\\"hi\\\"\"");
    s_expect_str (&p, "c:\\dir", 6, "\"c:\\\\dir\"");
    s_expect_str (&p, "a\nb\tc\rd", 7, "\"a\\nb\\tc\\rd\"");
    s_expect_str (&p, "\b\f", 2, "\"\\b\\f\"");
    //  Other controls and DEL as \u00XX, lower-case hex
    s_expect_str (&p, "\x01", 1, "\"\\u0001\"");
    s_expect_str (&p, "\x1f", 1, "\"\\u001f\"");
    s_expect_str (&p, "\x7f", 1, "\"\\u007f\"");
    //  A NUL inside is a byte like any other, not the end
    s_expect_str (&p, "a\0b", 3, "\"a\\u0000b\"");
    //  UTF-8 goes through untouched: é, €, 😀
    s_expect_str (&p, "\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 11,
                  "\"\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    //  Characters JSON need not escape are not escaped
    s_expect_str (&p, "/'<>&", 5, "\"/'<>&\"");
    msgpack_sbuffer_destroy (&p.sb);
}
END_TEST

//  JSON text is UTF-8: each byte outside a valid sequence is U+FFFD
START_TEST (test_text_invalid_utf8)
{
#define FFFD "\xef\xbf\xbd"
    s_packed p;
    s_start (&p);
    s_expect_str (&p, "\xff", 1, "\"" FFFD "\"");
    s_expect_str (&p,
                  "a\x80"
                  "b",
                  3, "\"a" FFFD "b\"");
    //  Cut short: the lead byte goes, what follows stays
    s_expect_str (&p, "a\xc3", 2, "\"a" FFFD "\"");
    s_expect_str (&p, "\xe2\x82x", 3, "\"" FFFD FFFD "x\"");
    //  Overlong forms, surrogates, and past U+10FFFF
    s_expect_str (&p, "\xc0\x80", 2, "\"" FFFD FFFD "\"");
    s_expect_str (&p, "\xe0\x80\x80", 3, "\"" FFFD FFFD FFFD "\"");
    s_expect_str (&p, "\xed\xa0\x80", 3, "\"" FFFD FFFD FFFD "\"");
    s_expect_str (&p, "\xf4\x90\x80\x80", 4, "\"" FFFD FFFD FFFD FFFD "\"");
    //  The edges of the valid
    s_expect_str (&p, "\xc2\x80\xed\x9f\xbf\xee\x80\x80\xf0\x90\x80\x80\xf4\x8f\xbf\xbf", 16,
                  "\"\xc2\x80\xed\x9f\xbf\xee\x80\x80\xf0\x90\x80\x80\xf4\x8f\xbf\xbf\"");
    //  In long strings too (past the short strings' one pass)
    {
        char big[5001];
        memset (big, 'y', sizeof big);
        memcpy (big + 4990, "\xff\t\xc3\xa9", 4);
        msgpack_pack_str_with_body (&p.pk, big, sizeof big);
        char *text = s_text_of_packed (&p.sb);
        ck_assert_uint_eq (strlen (text), 5001 + 2 + 2 + 1);
        ck_assert_mem_eq (text + 4991, FFFD "\\t\xc3\xa9y", 8);
        free (text);
        msgpack_sbuffer_clear (&p.sb);
    }
    //  In keys too
    msgpack_pack_map (&p.pk, 1);
    msgpack_pack_str_with_body (&p.pk, "k\xfe", 2);
    msgpack_pack_nil (&p.pk);
    s_expect (&p, "{\"k" FFFD "\":null}");
    msgpack_sbuffer_destroy (&p.sb);
#undef FFFD
}
END_TEST

//  A long string past any internal small buffer
START_TEST (test_text_long_string)
{
    enum { N = 100000 };
    char *s = malloc (N);
    for (size_t i = 0; i < N; i++)
        s[i] = i % 1000 == 999 ? '\n' : 'x';
    s_packed p;
    s_start (&p);
    msgpack_pack_str_with_body (&p.pk, s, N);
    char *text = s_text_of_packed (&p.sb);
    ck_assert_uint_eq (strlen (text), N + N / 1000 + 2);
    ck_assert_int_eq (text[0], '"');
    ck_assert_int_eq (text[1000], '\\');
    ck_assert_int_eq (text[1001], 'n');
    ck_assert_int_eq (text[N + N / 1000 + 1], '"');
    free (text);
    free (s);
    msgpack_sbuffer_destroy (&p.sb);
}
END_TEST

START_TEST (test_text_containers)
{
    s_packed p;
    s_start (&p);
    msgpack_pack_array (&p.pk, 0);
    s_expect (&p, "[]");
    msgpack_pack_map (&p.pk, 0);
    s_expect (&p, "{}");

    //  [1, [2, {"a": []}], {}, "x"]
    msgpack_pack_array (&p.pk, 4);
    msgpack_pack_int (&p.pk, 1);
    msgpack_pack_array (&p.pk, 2);
    msgpack_pack_int (&p.pk, 2);
    msgpack_pack_map (&p.pk, 1);
    msgpack_pack_str_with_body (&p.pk, "a", 1);
    msgpack_pack_array (&p.pk, 0);
    msgpack_pack_map (&p.pk, 0);
    msgpack_pack_str_with_body (&p.pk, "x", 1);
    s_expect (&p, "[1,[2,{\"a\":[]}],{},\"x\"]");

    //  {"k": {"n": null, "l": [true, false]}, "e": "\t"}
    msgpack_pack_map (&p.pk, 2);
    msgpack_pack_str_with_body (&p.pk, "k", 1);
    msgpack_pack_map (&p.pk, 2);
    msgpack_pack_str_with_body (&p.pk, "n", 1);
    msgpack_pack_nil (&p.pk);
    msgpack_pack_str_with_body (&p.pk, "l", 1);
    msgpack_pack_array (&p.pk, 2);
    msgpack_pack_true (&p.pk);
    msgpack_pack_false (&p.pk);
    msgpack_pack_str_with_body (&p.pk, "e", 1);
    msgpack_pack_str_with_body (&p.pk, "\t", 1);
    s_expect (&p, "{\"k\":{\"n\":null,\"l\":[true,false]},\"e\":\"\\t\"}");

    //  Keys keep their order, repeated ones included
    msgpack_pack_map (&p.pk, 2);
    msgpack_pack_str_with_body (&p.pk, "z", 1);
    msgpack_pack_int (&p.pk, 1);
    msgpack_pack_str_with_body (&p.pk, "z", 1);
    msgpack_pack_int (&p.pk, 2);
    s_expect (&p, "{\"z\":1,\"z\":2}");
    msgpack_sbuffer_destroy (&p.sb);
}
END_TEST

//  JSON keys are strings: other keys print as their own text, quoted
START_TEST (test_text_non_string_keys)
{
    s_packed p;
    s_start (&p);
    msgpack_pack_map (&p.pk, 1);
    msgpack_pack_int (&p.pk, 1);
    msgpack_pack_str_with_body (&p.pk, "a", 1);
    s_expect (&p, "{\"1\":\"a\"}");

    msgpack_pack_map (&p.pk, 4);
    msgpack_pack_int (&p.pk, -5);
    msgpack_pack_int (&p.pk, 0);
    msgpack_pack_nil (&p.pk);
    msgpack_pack_int (&p.pk, 1);
    msgpack_pack_true (&p.pk);
    msgpack_pack_int (&p.pk, 2);
    msgpack_pack_double (&p.pk, 1.5);
    msgpack_pack_int (&p.pk, 3);
    s_expect (&p, "{\"-5\":0,\"null\":1,\"true\":2,\"1.5\":3}");

    //  A container key is its JSON text
    msgpack_pack_map (&p.pk, 1);
    msgpack_pack_array (&p.pk, 2);
    msgpack_pack_int (&p.pk, 1);
    msgpack_pack_str_with_body (&p.pk, "b", 1);
    msgpack_pack_nil (&p.pk);
    s_expect (&p, "{\"[1,\\\"b\\\"]\":null}");
    //  ... and a container key inside it the hex of its msgpack bytes:
    //  quoting its text again would double it at each level
    msgpack_pack_map (&p.pk, 1);
    msgpack_pack_map (&p.pk, 1);
    msgpack_pack_array (&p.pk, 1);
    msgpack_pack_int (&p.pk, 1);
    msgpack_pack_int (&p.pk, 2);
    msgpack_pack_int (&p.pk, 3);
    s_expect (&p, "{\"{\\\"msgpack:9101\\\":2}\":3}");
    //  A bin key is its base64, an ext key its text
    msgpack_pack_map (&p.pk, 2);
    msgpack_pack_bin_with_body (&p.pk, "\x00\xff", 2);
    msgpack_pack_int (&p.pk, 1);
    msgpack_pack_ext_with_body (&p.pk, "\x01", 1, 3);
    msgpack_pack_int (&p.pk, 2);
    s_expect (&p, "{\"AP8=\":1,\"{\\\"ext\\\":3,\\\"base64\\\":\\\"AQ==\\\"}\":2}");
    //  A float key, NaN included, as its text
    msgpack_pack_map (&p.pk, 2);
    msgpack_pack_double (&p.pk, 2.0);
    msgpack_pack_int (&p.pk, 1);
    msgpack_pack_double (&p.pk, NAN);
    msgpack_pack_int (&p.pk, 2);
    s_expect (&p, "{\"2.0\":1,\"null\":2}");

    //  Keys within keys, 31 deep (within the depth limit): the text grows
    //  linearly with the record, not twice per level
    for (int i = 0; i < 31; i++)
        msgpack_pack_map (&p.pk, 1);
    msgpack_pack_str_with_body (&p.pk, "k\"", 2);
    for (int i = 0; i < 31; i++)
        msgpack_pack_nil (&p.pk);
    size_t size = p.sb.size;
    char *text = s_text_of_packed (&p.sb);
    ck_assert_uint_lt (strlen (text), 4 * size + 64);
    free (text);
    msgpack_sbuffer_destroy (&p.sb);
}
END_TEST

//  bin is a string of its bytes in base64 (RFC 4648, padded)
START_TEST (test_text_bin)
{
    s_packed p;
    s_start (&p);
    msgpack_pack_bin_with_body (&p.pk, "ab\"\x01\n", 5);
    s_expect (&p, "\"YWIiAQo=\"");
    msgpack_pack_bin_with_body (&p.pk, "", 0);
    s_expect (&p, "\"\"");
    //  RFC 4648's own test vectors
    static const char *vectors[][2] = {{"f", "\"Zg==\""},         {"fo", "\"Zm8=\""},
                                       {"foo", "\"Zm9v\""},       {"foob", "\"Zm9vYg==\""},
                                       {"fooba", "\"Zm9vYmE=\""}, {"foobar", "\"Zm9vYmFy\""}};
    for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
        msgpack_pack_bin_with_body (&p.pk, vectors[i][0], strlen (vectors[i][0]));
        s_expect (&p, vectors[i][1]);
    }
    //  Every byte value, and the last alphabet letters
    msgpack_pack_bin_with_body (&p.pk, "\xfb\xff\xbf", 3);
    s_expect (&p, "\"+/+/\"");
    msgpack_sbuffer_destroy (&p.sb);
}
END_TEST

//  ext is {"ext":TYPE,"base64":DATA}
START_TEST (test_text_ext)
{
    s_packed p;
    s_start (&p);
    msgpack_pack_ext_with_body (&p.pk, "\x01\x02", 2, 5);
    s_expect (&p, "{\"ext\":5,\"base64\":\"AQI=\"}");
    //  Negative types (reserved ones, such as the timestamp) and high bytes
    msgpack_pack_ext_with_body (&p.pk, "\x00\xab\xff", 3, -1);
    s_expect (&p, "{\"ext\":-1,\"base64\":\"AKv/\"}");
    msgpack_pack_ext_with_body (&p.pk, "", 0, 127);
    s_expect (&p, "{\"ext\":127,\"base64\":\"\"}");
    //  Every width: fixext 1, 2, 4, 8, 16 and ext 8
    static const size_t sizes[] = {1, 2, 4, 8, 16, 17};
    static const char *texts[] = {
        "AA==", "AAA=", "AAAAAA==", "AAAAAAAAAAA=", "AAAAAAAAAAAAAAAAAAAAAA==", "AAAAAAAAAAAAAAAAAAAAAAA="};
    for (size_t i = 0; i < 6; i++) {
        char want[64];
        msgpack_pack_ext_with_body (&p.pk, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", sizes[i], 9);
        snprintf (want, sizeof want, "{\"ext\":9,\"base64\":\"%s\"}", texts[i]);
        s_expect (&p, want);
    }
    //  Inside a container, like anything else
    msgpack_pack_array (&p.pk, 1);
    msgpack_pack_ext_with_body (&p.pk, "\x10", 1, 0);
    s_expect (&p, "[{\"ext\":0,\"base64\":\"EA==\"}]");
    msgpack_sbuffer_destroy (&p.sb);
}
END_TEST

//  Bytes that are no msgpack object are refused, never read past
START_TEST (test_text_malformed)
{
    static const struct {
        const char *bytes;
        size_t n;
    } bad[] = {
        {"\xc1", 1},
        {"\xa5"
         "abc",
         4},
        {"\x92\x01", 2},
        {"\xcd\x01", 2},
        {"\xd9\x05xy", 4},
        {"\x81\xa1k", 3},
        {"\xc7\x02\x01\x00", 4},
        {"\xcb\x00\x00", 3},
        {"", 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        weir__buf b;
        weir__buf_init (&b);
        size_t used;
        ck_assert_msg (weir__jsontext_packed (&b, bad[i].bytes, bad[i].n, &used) == -2, "case %zu", i);
        weir__buf_release (&b);
    }
    //  A well-formed object says how long it was, whatever follows
    weir__buf b;
    weir__buf_init (&b);
    size_t used;
    ck_assert_int_eq (weir__jsontext_packed (&b, "\x92\x01\xa1x\xc1\xc1", 6, &used), 0);
    ck_assert_uint_eq (used, 4);
    ck_assert_mem_eq (b.data, "[1,\"x\"]", 7);
    weir__buf_release (&b);
}
END_TEST

//  Text is appended, never replacing what the buffer already holds
START_TEST (test_text_appends)
{
    weir__buf b;
    weir__buf_init (&b);
    ck_assert_int_eq (weir__buf_append (&b, "x=", 2), 0);
    msgpack_object o = {.type = MSGPACK_OBJECT_POSITIVE_INTEGER, .via.u64 = 3};
    ck_assert_int_eq (weir__jsontext_append (&b, &o), 0);
    ck_assert_int_eq (weir__buf_putc (&b, ' '), 0);
    ck_assert_int_eq (weir__jsontext_string (&b, "q\"", 2), 0);
    ck_assert_uint_eq (b.len, 9);
    ck_assert_mem_eq (b.data, "x=3 \"q\\\"\"", 9);
    weir__buf_release (&b);
}
END_TEST

Suite *check_suite (void)
{
    Suite *s = suite_create ("jsontext");
    TCase *tc = tcase_create ("scalars");
    tcase_add_test (tc, test_text_scalars);
    tcase_add_test (tc, test_text_integers);
    tcase_add_test (tc, test_text_floats);
    tcase_add_test (tc, test_text_non_finite);
    tcase_add_test (tc, test_text_strings);
    tcase_add_test (tc, test_text_invalid_utf8);
    tcase_add_test (tc, test_text_long_string);
    tcase_add_test (tc, test_text_bin);
    tcase_add_test (tc, test_text_ext);
    tcase_add_test (tc, test_text_appends);
    tcase_add_test (tc, test_text_malformed);
    suite_add_tcase (s, tc);

    tc = tcase_create ("containers");
    tcase_add_test (tc, test_text_containers);
    tcase_add_test (tc, test_text_non_string_keys);
    suite_add_tcase (s, tc);
    return s;
}

/*  tests/check_text.c - msgpack objects as JSON-like text.  */
#include "config.h"

#include <math.h>
#include <msgpack.h>
#include <stdint.h>

#include "lib/text.h"
#include "testutil.h"

//  The text of OBJ, NUL-terminated; caller frees
static char *s_text_of (const msgpack_object *obj)
{
    weir__buf b;
    weir__buf_init (&b);
    ck_assert_int_eq (weir__text_append (&b, obj), 0);
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
    //  %.17g: enough digits that the text reads back as the same double
    msgpack_pack_double (&p.pk, 0.1);
    s_expect (&p, "0.10000000000000001");
    msgpack_pack_double (&p.pk, 1.5);
    s_expect (&p, "1.5");
    msgpack_pack_double (&p.pk, -2.0);
    s_expect (&p, "-2");
    msgpack_pack_double (&p.pk, 1e300);
    s_expect (&p, "1.0000000000000001e+300");
    //  A float32 prints the double it widens to
    msgpack_pack_float (&p.pk, 0.1f);
    s_expect (&p, "0.10000000149011612");

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

START_TEST (test_text_non_finite)
{
    s_packed p;
    s_start (&p);
    msgpack_pack_double (&p.pk, NAN);
    s_expect (&p, "nan");
    msgpack_pack_double (&p.pk, -NAN);
    s_expect (&p, "nan");
    msgpack_pack_double (&p.pk, INFINITY);
    s_expect (&p, "inf");
    msgpack_pack_double (&p.pk, -INFINITY);
    s_expect (&p, "-inf");
    msgpack_pack_float (&p.pk, -INFINITY);
    s_expect (&p, "-inf");
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

    //  A container key is the hex of its msgpack bytes: quoting its text
    //  would escape it again at each level of keys within keys
    msgpack_pack_map (&p.pk, 1);
    msgpack_pack_array (&p.pk, 2);
    msgpack_pack_int (&p.pk, 1);
    msgpack_pack_str_with_body (&p.pk, "b", 1);
    msgpack_pack_nil (&p.pk);
    s_expect (&p, "{\"msgpack:9201a162\":null}");

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

START_TEST (test_text_bin)
{
    s_packed p;
    s_start (&p);
    //  bin prints as a string of its bytes, escaped like one
    msgpack_pack_bin_with_body (&p.pk, "ab\"\x01\n", 5);
    s_expect (&p, "\"ab\\\"\\u0001\\n\"");
    msgpack_pack_bin_with_body (&p.pk, "", 0);
    s_expect (&p, "\"\"");
    msgpack_sbuffer_destroy (&p.sb);
}
END_TEST

START_TEST (test_text_ext)
{
    s_packed p;
    s_start (&p);
    msgpack_pack_ext_with_body (&p.pk, "\x01\x02", 2, 5);
    s_expect (&p, "{\"ext\":5,\"hex\":\"0102\"}");
    //  Negative types (reserved ones, such as the timestamp) and high bytes
    msgpack_pack_ext_with_body (&p.pk, "\x00\xab\xff", 3, -1);
    s_expect (&p, "{\"ext\":-1,\"hex\":\"00abff\"}");
    msgpack_pack_ext_with_body (&p.pk, "", 0, 127);
    s_expect (&p, "{\"ext\":127,\"hex\":\"\"}");
    //  Inside a container, like anything else
    msgpack_pack_array (&p.pk, 1);
    msgpack_pack_ext_with_body (&p.pk, "\x10", 1, 0);
    s_expect (&p, "[{\"ext\":0,\"hex\":\"10\"}]");
    msgpack_sbuffer_destroy (&p.sb);
}
END_TEST

//  Text is appended, never replacing what the buffer already holds
START_TEST (test_text_appends)
{
    weir__buf b;
    weir__buf_init (&b);
    ck_assert_int_eq (weir__buf_append (&b, "x=", 2), 0);
    msgpack_object o = {.type = MSGPACK_OBJECT_POSITIVE_INTEGER, .via.u64 = 3};
    ck_assert_int_eq (weir__text_append (&b, &o), 0);
    ck_assert_int_eq (weir__buf_putc (&b, ' '), 0);
    ck_assert_int_eq (weir__text_append_string (&b, "q\"", 2), 0);
    ck_assert_uint_eq (b.len, 9);
    ck_assert_mem_eq (b.data, "x=3 \"q\\\"\"", 9);
    weir__buf_release (&b);
}
END_TEST

Suite *check_suite (void)
{
    Suite *s = suite_create ("text");
    TCase *tc = tcase_create ("scalars");
    tcase_add_test (tc, test_text_scalars);
    tcase_add_test (tc, test_text_integers);
    tcase_add_test (tc, test_text_floats);
    tcase_add_test (tc, test_text_non_finite);
    tcase_add_test (tc, test_text_strings);
    tcase_add_test (tc, test_text_long_string);
    tcase_add_test (tc, test_text_bin);
    tcase_add_test (tc, test_text_ext);
    tcase_add_test (tc, test_text_appends);
    suite_add_tcase (s, tc);

    tc = tcase_create ("containers");
    tcase_add_test (tc, test_text_containers);
    tcase_add_test (tc, test_text_non_string_keys);
    suite_add_tcase (s, tc);
    return s;
}

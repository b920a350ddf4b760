/*  tests/check_expr.c - filter's expressions: parsing and its errors,
    every operator, missing fields, values of different kinds, regular
    expressions.  */
#include <inttypes.h>
#include <msgpack.h>

#include "lib/batch.h"
#include "lib/expr.h"
#include "lib/fieldpath.h"
#include "lib/jsonparse.h"
#include "tests/testutil.h"

//  Is EXPR true of the record written as JSON?  *MISMATCH (when not NULL)
//  the comparisons of values of different kinds it met.
static int s_true (const char *expr, const char *json, uint64_t *mismatch)
{
    weir__err err;
    weir__err_init (&err);
    weir__expr *e;
    ck_assert_msg (weir__expr_new (expr, &e, &err) == 0, "'%s' refused: %s", expr, err.msg);
    weir__jsonparse *jp = weir__jsonparse_new ();
    weir__batch b;
    ck_assert_int_eq (weir__batch_init (&b, 256), 0);
    size_t where;
    const char *problem;
    ck_assert_int_eq (weir__jsonparse_pack (jp, json, strlen (json), &b, &where, &problem), 0);
    msgpack_zone zone;
    msgpack_zone_init (&zone, 1024);
    msgpack_object rec;
    size_t off = 0;
    ck_assert_int_eq (msgpack_unpack (b.data + WEIR__BATCH_HEADER, b.len - WEIR__BATCH_HEADER, &off, &zone, &rec),
                      MSGPACK_UNPACK_SUCCESS);
    weir__expr_scratch scratch;
    ck_assert_int_eq (weir__expr_scratch_init (e, &scratch), 0);
    int yes = weir__expr_eval (e, &rec, &scratch);
    if (mismatch)
        *mismatch = scratch.mismatch;
    weir__expr_scratch_release (&scratch);
    msgpack_zone_destroy (&zone);
    weir__batch_release (&b);
    weir__jsonparse_destroy (jp);
    weir__expr_destroy (&e);
    return yes;
}

//  The record written as JSON, decoded into *REC in ZONE
static void s_record (const char *json, msgpack_zone *zone, msgpack_object *rec)
{
    weir__jsonparse *jp = weir__jsonparse_new ();
    weir__batch b;
    ck_assert_int_eq (weir__batch_init (&b, 256), 0);
    size_t where, off = 0;
    const char *problem;
    ck_assert_int_eq (weir__jsonparse_pack (jp, json, strlen (json), &b, &where, &problem), 0);
    //  The zone keeps the strings: copied out of the batch
    char *copy = msgpack_zone_malloc (zone, b.len - WEIR__BATCH_HEADER);
    memcpy (copy, b.data + WEIR__BATCH_HEADER, b.len - WEIR__BATCH_HEADER);
    ck_assert_int_eq (msgpack_unpack (copy, b.len - WEIR__BATCH_HEADER, &off, zone, rec), MSGPACK_UNPACK_SUCCESS);
    weir__batch_release (&b);
    weir__jsonparse_destroy (jp);
}

//  EXPR is refused with a message holding WHAT, at byte AT of it.
static void s_refused (const char *expr, const char *what, long at)
{
    weir__err err;
    weir__err_init (&err);
    weir__expr *e = NULL;
    ck_assert_msg (weir__expr_new (expr, &e, &err) == WEIR_ESYNTAX, "'%s' accepted", expr);
    ck_assert_ptr_null (e);
    ck_assert_msg (strstr (err.msg, what), "'%s': '%s' does not say '%s'", expr, err.msg, what);
    ck_assert_msg (err.offset == at, "'%s': error at %ld, wanted %ld (%s)", expr, err.offset, at, err.msg);
}

static const char *s_rec = "{\"level\": \"error\", \"n\": 5, \"x\": 2.5, \"neg\": -3, \"big\": 18446744073709551615,"
                           " \"ok\": true, \"no\": false, \"nil\": null, \"msg\": \"GET /index.html\","
                           " \"user\": {\"id\": 7, \"name\": \"ann\"}, \"tags\": [\"a\", \"b\"], \"a b\": 1,"
                           " \"utf\": \"caf\\u00e9\"}";

START_TEST (test_comparisons)
{
    ck_assert (s_true (".level == \"error\"", s_rec, NULL));
    ck_assert (!s_true (".level == 'info'", s_rec, NULL));
    ck_assert (s_true (".level != 'info'", s_rec, NULL));
    ck_assert (s_true (".n == 5 and .n >= 5 and .n <= 5 and .n > 4 and .n < 6", s_rec, NULL));
    ck_assert (!s_true (".n > 5 or .n < 5 or .n != 5", s_rec, NULL));
    //  Numbers compare across widths and kinds
    ck_assert (s_true (".x > 2 and .x < 3 and .x == 2.5", s_rec, NULL));
    ck_assert (s_true (".n == 5.0 and .neg < 0 and .neg == -3 and .neg < .n", s_rec, NULL));
    ck_assert (s_true (".big > .n and .big > -1 and .big == 18446744073709551615", s_rec, NULL));
    ck_assert (s_true (".neg < .big", s_rec, NULL));
    //  Text is compared bytewise
    ck_assert (s_true (".level < 'f' and .level > 'e' and .level >= 'error' and 'a' < 'ab'", s_rec, NULL));
    ck_assert (s_true (".utf == \"caf\xc3\xa9\"", s_rec, NULL));
    //  true, false and null equal only themselves
    ck_assert (s_true (".ok == true and .no == false and .nil == null and .ok != false", s_rec, NULL));
    //  Paths into maps and arrays, quoted keys, the whole record
    ck_assert (s_true (".user.id == 7 and .user.name == 'ann' and .tags[1] == 'b' and .\"a b\" == 1", s_rec, NULL));
    ck_assert (s_true ("[0] == 1", "[1, 2]", NULL));
    ck_assert (s_true (". == 42", "42", NULL));
    ck_assert (s_true (". =~ 'x'", "\"xyz\"", NULL));
}
END_TEST

START_TEST (test_logic)
{
    ck_assert (s_true ("not .level == 'info'", s_rec, NULL));
    ck_assert (s_true ("not (.n == 5 and .level == 'info')", s_rec, NULL));
    //  and binds tighter than or; not tighter than both
    ck_assert (s_true (".n == 1 and .n == 2 or .n == 5", s_rec, NULL));
    ck_assert (!s_true (".n == 1 and (.n == 2 or .n == 5)", s_rec, NULL));
    ck_assert (!s_true ("not .n == 5 or .n == 1", s_rec, NULL));
    ck_assert (s_true ("((.n == 5))", s_rec, NULL));
    //  An operand alone: there, and neither false nor null
    ck_assert (s_true (".ok and .n and .level and .user", s_rec, NULL));
    ck_assert (!s_true (".no", s_rec, NULL));
    ck_assert (!s_true (".nil", s_rec, NULL));
    ck_assert (!s_true (".missing", s_rec, NULL));
    ck_assert (s_true ("exists .nil and exists .no and exists .tags[1] and not exists .tags[2]", s_rec, NULL));
    ck_assert (!s_true ("exists .user.email", s_rec, NULL));
}
END_TEST

START_TEST (test_missing_is_false)
{
    uint64_t mismatch = 9;
    //  A field that is not there: false, never an error, not counted
    ck_assert (!s_true (".nope == 1", s_rec, &mismatch));
    ck_assert_uint_eq (mismatch, 0);
    //  s_true says each expression's own count: checked after each
    const char *missing[] = {".nope != 1", ".user.id.deeper == 1", ".tags[9] == 'a'", ".nope =~ 'a'"};
    for (size_t i = 0; i < sizeof missing / sizeof missing[0]; i++) {
        mismatch = 9;
        ck_assert_msg (!s_true (missing[i], s_rec, &mismatch), "%s", missing[i]);
        ck_assert_msg (mismatch == 0, "%s: %" PRIu64 " mismatches", missing[i], mismatch);
    }
    ck_assert (s_true ("not .nope == 1", s_rec, NULL));
    //  A record that is no map
    ck_assert (!s_true (".level == 'error'", "[1, 2]", &mismatch));
    ck_assert_uint_eq (mismatch, 0);
}
END_TEST

START_TEST (test_mismatch_is_false_and_counted)
{
    uint64_t mismatch = 0;
    ck_assert (!s_true (".n == 'five'", s_rec, &mismatch));
    ck_assert_uint_eq (mismatch, 1);
    ck_assert (!s_true (".n != 'five'", s_rec, &mismatch));
    ck_assert_uint_eq (mismatch, 1);
    ck_assert (!s_true (".ok < true", s_rec, &mismatch));
    ck_assert_uint_eq (mismatch, 1);
    ck_assert (!s_true (".user == 7", s_rec, &mismatch));
    ck_assert_uint_eq (mismatch, 1);
    ck_assert (!s_true (".n =~ '5'", s_rec, &mismatch));
    ck_assert_uint_eq (mismatch, 1);
    ck_assert (!s_true (".nil < 1", s_rec, &mismatch));
    ck_assert_uint_eq (mismatch, 1);
    //  Each comparison counts
    ck_assert (!s_true (".n == 'a' or .level == 1 or .ok == 0", s_rec, &mismatch));
    ck_assert_uint_eq (mismatch, 3);
}
END_TEST

START_TEST (test_regex)
{
    ck_assert (s_true (".msg =~ \"^GET \"", s_rec, NULL));
    ck_assert (!s_true (".msg =~ \"^POST \"", s_rec, NULL));
    ck_assert (s_true (".msg =~ '\\.html$'", s_rec, NULL));
    ck_assert (s_true (".utf =~ '^caf.$'", s_rec, NULL));  //  UTF-8: é is one character
    ck_assert (s_true (".level =~ '(?i)ERROR'", s_rec, NULL));
    //  Invalid UTF-8 in a record is matched as far as it is valid, never
    //  an error
    weir__err err;
    weir__err_init (&err);
    weir__expr *e;
    ck_assert_int_eq (weir__expr_new (". =~ 'ab'", &e, &err), 0);
    weir__expr_scratch scratch;
    ck_assert_int_eq (weir__expr_scratch_init (e, &scratch), 0);
    msgpack_object bad = {.type = MSGPACK_OBJECT_STR, .via.str = {.size = 4, .ptr = "\xff\xfe" "ab"}};
    ck_assert (weir__expr_eval (e, &bad, &scratch));
    bad.via.str.ptr = "\xff" "a" "\xfe" "b";
    ck_assert (!weir__expr_eval (e, &bad, &scratch));
    bad.type = MSGPACK_OBJECT_BIN;  //  bin is text too
    bad.via.bin.ptr = "xabx";
    ck_assert (weir__expr_eval (e, &bad, &scratch));
    ck_assert_uint_eq (scratch.mismatch, 0);
    weir__expr_scratch_release (&scratch);
    weir__expr_destroy (&e);
}
END_TEST

//  COUNT expression texts parsed into E
static void s_parse_all (const char *const *texts, size_t count, weir__expr **e)
{
    for (size_t i = 0; i < count; i++) {
        weir__err err;
        weir__err_init (&err);
        ck_assert_msg (weir__expr_new (texts[i], &e[i], &err) == 0, "'%s': %s", texts[i], err.msg);
    }
}

//  A switch says what evaluating its expressions in turn says: the first
//  true and the mismatches, over records of every kind of value
START_TEST (test_switch_agrees_with_evaluation)
{
    const char *texts[] = {".a.b == \"x\"", "\"y\" == .a.b", ".a.b == \"\"", ".a.b == \"x y\""};
    weir__expr *e[4];
    s_parse_all (texts, 4, e);
    weir__expr_switch *sw = weir__expr_switch_new ((const weir__expr *const *) e, 4);
    ck_assert_ptr_nonnull (sw);
    const char *recs[] = {
        "{\"a\": {\"b\": \"x\"}}", "{\"a\": {\"b\": \"y\"}}", "{\"a\": {\"b\": \"\"}}",
        "{\"a\": {\"b\": \"x y\"}}", "{\"a\": {\"b\": \"z\"}}", "{\"a\": {\"b\": 5}}",
        "{\"a\": {\"b\": null}}", "{\"a\": {\"b\": [1]}}", "{\"a\": {\"c\": \"x\"}}", "{\"a\": 1}",
        "[1, 2]", "\"x\"", "{\"a\": {\"b\": \"X\"}}",
    };
    weir__expr_scratch scratch;
    ck_assert_int_eq (weir__expr_scratch_init (e[0], &scratch), 0);
    for (size_t r = 0; r < sizeof recs / sizeof recs[0]; r++) {
        msgpack_zone zone;
        msgpack_zone_init (&zone, 1024);
        msgpack_object rec;
        s_record (recs[r], &zone, &rec);
        scratch.mismatch = 0;
        size_t want = 4;
        for (size_t i = 0; i < 4 && want == 4; i++)
            if (weir__expr_eval (e[i], &rec, &scratch))
                want = i;
        uint64_t mismatch = 0;
        ck_assert_msg (weir__expr_switch_eval (sw, &rec, &mismatch) == want, "record %s", recs[r]);
        ck_assert_msg (mismatch == scratch.mismatch, "record %s: %" PRIu64 " mismatches, evaluated %" PRIu64,
                       recs[r], mismatch, scratch.mismatch);
        msgpack_zone_destroy (&zone);
    }
    weir__expr_scratch_release (&scratch);
    weir__expr_switch_destroy (&sw);
    weir__expr_switch_destroy (&sw);
    for (size_t i = 0; i < 4; i++)
        weir__expr_destroy (&e[i]);
    //  Not every one an equality with text on one path: no switch
    const char *others[][2] = {
        {".a == \"x\"", ".b == \"y\""}, {".a == \"x\"", ".a != \"y\""}, {".a == \"x\"", ".a == 5"},
        {".a == \"x\"", ".a == \"x\" or .a == \"y\""}, {".a == \"x\"", ".a.b == \"y\""},
        {".a == \"x\"", ".a =~ \"y\""}, {".a[0] == \"x\"", ".a[1] == \"y\""}, {".a == .b", ".a == \"y\""},
    };
    for (size_t k = 0; k < sizeof others / sizeof others[0]; k++) {
        s_parse_all (others[k], 2, e);
        ck_assert_msg (weir__expr_switch_new ((const weir__expr *const *) e, 2) == NULL, "'%s' and '%s'",
                       others[k][0], others[k][1]);
        weir__expr_destroy (&e[0]);
        weir__expr_destroy (&e[1]);
    }
}
END_TEST

START_TEST (test_same_bytes_every_length)
{
    //  Keys and texts are compared by two overlapping loads at 4 to 8
    //  bytes, a byte at a time below, memcmp above: every length from 0 to
    //  20, equal, and unequal at each position in turn
    char a[21], b[21];
    for (size_t n = 0; n <= 20; n++) {
        for (size_t i = 0; i < n; i++)
            a[i] = b[i] = (char) ('a' + i);
        ck_assert_msg (weir__same_bytes (a, b, n), "%zu equal bytes are not the same", n);
        for (size_t i = 0; i < n; i++) {
            b[i] = 'Z';
            ck_assert_msg (!weir__same_bytes (a, b, n), "%zu bytes differing at %zu are the same", n, i);
            b[i] = a[i];
        }
    }
    //  Through an expression: keys and texts of 3, 5 and 11 bytes
    ck_assert (s_true (".abc == \"xyzzy\"", "{\"abc\": \"xyzzy\"}", NULL));
    ck_assert (!s_true (".abc == \"xyzzy\"", "{\"abd\": \"xyzzy\"}", NULL));
    ck_assert (!s_true (".abc == \"xyzzy\"", "{\"abc\": \"xyzzx\"}", NULL));
    ck_assert (s_true (".\"long key 1\" == \"a long text\"", "{\"long key 1\": \"a long text\"}", NULL));
    ck_assert (!s_true (".\"long key 1\" == \"a long text\"", "{\"long key 2\": \"a long text\"}", NULL));
}
END_TEST

START_TEST (test_refused)
{
    s_refused ("", "empty expression", 0);
    s_refused ("   ", "empty expression", 3);
    s_refused (".level ==", "ends too soon", 9);
    s_refused (".level == 'x' and", "ends too soon", 17);
    s_refused (".level = 'x'", "unexpected '='", 7);
    s_refused (".level == 'x' .n", "unexpected '.'", 14);
    s_refused ("(.n == 1", "never closed", 0);
    s_refused (".n == 1)", "unexpected ')'", 7);
    s_refused (".level == 'x", "unterminated single quote", 10);
    s_refused (".level == \"x", "unterminated double quote", 10);
    s_refused (".a.", "malformed path", 2);
    s_refused (".a[x]", "an index is [N]", 2);
    s_refused (".\"a", "unterminated quoted key", 0);
    s_refused (".n == 12ab", "malformed number", 6);
    s_refused (".n == 99999999999999999999999", "out of range", 6);
    s_refused ("exists 'a'", "'exists' takes a path", 7);
    s_refused (".msg =~ .other", "quoted regular expression", 8);
    s_refused (".msg =~ '('", "bad regular expression: missing closing parenthesis", 8);
    s_refused ("== 1", "expected a path", 0);
    s_refused ("level == 1", "expected a path", 0);
    char deep[400];
    memset (deep, '(', 300);
    strcpy (deep + 300, ".n == 1");
    s_refused (deep, "nests deeper than", 0 + 50);
}
END_TEST

Suite *check_suite (void)
{
    Suite *s = suite_create ("expr");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_comparisons);
    tcase_add_test (tc, test_logic);
    tcase_add_test (tc, test_missing_is_false);
    tcase_add_test (tc, test_mismatch_is_false_and_counted);
    tcase_add_test (tc, test_regex);
    tcase_add_test (tc, test_refused);
    tcase_add_test (tc, test_same_bytes_every_length);
    tcase_add_test (tc, test_switch_agrees_with_evaluation);
    suite_add_tcase (s, tc);
    return s;
}

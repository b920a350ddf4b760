/*  tests/check_parse.c - the pipeline description language: what it
    yields, and where its errors point.  */
#include "config.h"

#include "pipeline/parse.h"
#include "testutil.h"

//  Parse TEXT, which must succeed, into *SPEC
static void s_parse_ok (const char *text, weir__spec *spec)
{
    weir__err err;
    weir__err_init (&err);
    weir__spec_init (spec);
    int rc = weir__parse (text, spec, &err);
    ck_assert_msg (rc == 0, "'%s': %d %s", text, rc, err.msg);
}

//  TEXT must fail with WEIR_ESYNTAX, MSG and OFFSET.  Whatever the parse
//  built before failing is released (ASan and valgrind check that).
static void s_parse_bad (const char *text, long offset, const char *msg)
{
    weir__spec spec;
    weir__spec_init (&spec);
    weir__err err;
    weir__err_init (&err);
    int rc = weir__parse (text, &spec, &err);
    ck_assert_msg (rc == WEIR_ESYNTAX, "'%s': %d, not WEIR_ESYNTAX", text, rc);
    ck_assert_int_eq (err.code, WEIR_ESYNTAX);
    ck_assert_msg (err.offset == offset, "'%s': offset %ld, not %ld", text, err.offset, offset);
    ck_assert_str_eq (err.msg, msg);
    weir__spec_release (&spec);
}

//  Property I of element E: key, value and both offsets
static void s_prop_is (const weir__element_spec *e, size_t i, const char *key, const char *value,
                       long key_offset, long value_offset)
{
    ck_assert_uint_gt (e->props.count, i);
    const weir__prop *p = &e->props.items[i];
    ck_assert_str_eq (p->key, key);
    ck_assert_str_eq (p->value, value);
    ck_assert_int_eq (p->key_offset, key_offset);
    ck_assert_int_eq (p->value_offset, value_offset);
    ck_assert_int_eq (p->used, 0);
}

START_TEST (test_parse_simple)
{
    weir__spec spec;
    //            0         1
    //            0123456789012345678
    s_parse_ok ("range count=10 ! null", &spec);
    ck_assert_uint_eq (spec.count, 2);
    ck_assert_str_eq (spec.items[0].name, "range");
    ck_assert_int_eq (spec.items[0].name_offset, 0);
    ck_assert_uint_eq (spec.items[0].props.count, 1);
    s_prop_is (&spec.items[0], 0, "count", "10", 6, 12);
    ck_assert_str_eq (spec.items[1].name, "null");
    ck_assert_int_eq (spec.items[1].name_offset, 17);
    ck_assert_uint_eq (spec.items[1].props.count, 0);
    weir__spec_release (&spec);
    ck_assert_uint_eq (spec.count, 0);
    ck_assert_ptr_null (spec.items);
}
END_TEST

START_TEST (test_parse_blanks)
{
    weir__spec spec;
    //  Leading, trailing and repeated blanks of every kind; offsets still
    //  count from the first byte of the text
    s_parse_ok ("  \tfile\n path=/a   rate=5 \r\n!\f\vnull  ", &spec);
    ck_assert_uint_eq (spec.count, 2);
    ck_assert_str_eq (spec.items[0].name, "file");
    ck_assert_int_eq (spec.items[0].name_offset, 3);
    s_prop_is (&spec.items[0], 0, "path", "/a", 9, 14);
    s_prop_is (&spec.items[0], 1, "rate", "5", 19, 24);
    ck_assert_str_eq (spec.items[1].name, "null");
    ck_assert_int_eq (spec.items[1].name_offset, 31);
    weir__spec_release (&spec);

    //  A single element is a description too
    s_parse_ok ("null", &spec);
    ck_assert_uint_eq (spec.count, 1);
    weir__spec_release (&spec);
}
END_TEST

START_TEST (test_parse_bang_without_blanks)
{
    weir__spec spec;
    s_parse_ok ("a!b", &spec);
    ck_assert_uint_eq (spec.count, 2);
    ck_assert_str_eq (spec.items[0].name, "a");
    ck_assert_int_eq (spec.items[0].name_offset, 0);
    ck_assert_str_eq (spec.items[1].name, "b");
    ck_assert_int_eq (spec.items[1].name_offset, 2);
    weir__spec_release (&spec);

    //  A '!' ends a value too
    //            0123456789
    s_parse_ok ("a k=1!b x=2 !c", &spec);
    ck_assert_uint_eq (spec.count, 3);
    s_prop_is (&spec.items[0], 0, "k", "1", 2, 4);
    ck_assert_str_eq (spec.items[1].name, "b");
    ck_assert_int_eq (spec.items[1].name_offset, 6);
    s_prop_is (&spec.items[1], 0, "x", "2", 8, 10);
    ck_assert_str_eq (spec.items[2].name, "c");
    ck_assert_int_eq (spec.items[2].name_offset, 13);
    weir__spec_release (&spec);
}
END_TEST

START_TEST (test_parse_quotes)
{
    weir__spec spec;
    //  Single quotes hold blanks, '!' and '='; the value offset is that of
    //  the opening quote, just after the '='
    //            0         1         2
    //            012345678901234567890123456789
    s_parse_ok ("f a='x y ! k=v' b=\"p q\"", &spec);
    ck_assert_uint_eq (spec.count, 1);
    s_prop_is (&spec.items[0], 0, "a", "x y ! k=v", 2, 4);
    s_prop_is (&spec.items[0], 1, "b", "p q", 16, 18);
    weir__spec_release (&spec);

    //  In "...", \" and \\ are escapes; other backslashes are kept
    s_parse_ok ("f a=\"say \\\"hi\\\" \\\\ \\n\"", &spec);
    s_prop_is (&spec.items[0], 0, "a", "say \"hi\" \\ \\n", 2, 4);
    weir__spec_release (&spec);

    //  In '...', a backslash is a backslash, and a double quote is a character
    s_parse_ok ("f a='c:\\dir\\' b='say \"hi\"'", &spec);
    s_prop_is (&spec.items[0], 0, "a", "c:\\dir\\", 2, 4);
    s_prop_is (&spec.items[0], 1, "b", "say \"hi\"", 14, 16);
    weir__spec_release (&spec);

    //  Quotes may cover part of a value, and the value may be empty
    s_parse_ok ("f a=pre'fix suf'fix b='' c=", &spec);
    s_prop_is (&spec.items[0], 0, "a", "prefix suffix", 2, 4);
    s_prop_is (&spec.items[0], 1, "b", "", 20, 22);
    s_prop_is (&spec.items[0], 2, "c", "", 25, 27);
    weir__spec_release (&spec);

    //  A quoted element name
    s_parse_ok ("'my el' ! b", &spec);
    ck_assert_str_eq (spec.items[0].name, "my el");
    ck_assert_int_eq (spec.items[0].name_offset, 0);
    weir__spec_release (&spec);
}
END_TEST

//  Parsing appends: a second text adds elements to the same spec
START_TEST (test_parse_appends)
{
    weir__spec spec;
    s_parse_ok ("a ! b", &spec);
    weir__err err;
    weir__err_init (&err);
    ck_assert_int_eq (weir__parse ("c k=v", &spec, &err), 0);
    ck_assert_uint_eq (spec.count, 3);
    ck_assert_str_eq (spec.items[2].name, "c");
    ck_assert_int_eq (spec.items[2].name_offset, 0);  //  in its own text
    s_prop_is (&spec.items[2], 0, "k", "v", 2, 4);
    //  An empty second text is empty, whatever came before
    ck_assert_int_eq (weir__parse (" ", &spec, &err), WEIR_ESYNTAX);
    ck_assert_str_eq (err.msg, "empty pipeline description");
    weir__spec_release (&spec);
}
END_TEST

START_TEST (test_parse_errors_structure)
{
    s_parse_bad ("", 0, "empty pipeline description");
    //  Only blanks: the caret goes where the text ends
    s_parse_bad ("  \t ", 4, "empty pipeline description");
    s_parse_bad ("! null", 0, "expected an element before '!'");
    s_parse_bad ("a ! ! b", 4, "expected an element before '!'");
    s_parse_bad ("a !! b", 3, "expected an element before '!'");
    s_parse_bad ("a !", 3, "expected an element after '!'");
    s_parse_bad ("a k=1 !  ", 9, "expected an element after '!'");
    s_parse_bad ("!", 0, "expected an element before '!'");
}
END_TEST

START_TEST (test_parse_errors_words)
{
    s_parse_bad ("a =x", 2, "property without a name before '='");
    s_parse_bad ("a k=1 k=2", 6, "property 'k' given twice to 'a'");
    //  The same key on different elements is no repetition, so the error
    //  here is the later one
    s_parse_bad ("a k=1 ! b k=1 k=", 14, "property 'k' given twice to 'b'");
    s_parse_bad ("k=v ! b", 0, "expected an element name, not the property 'k=v'");
    s_parse_bad ("a ! k=v", 4, "expected an element name, not the property 'k=v'");
    //  A quoted '=' does not make a word a property; a quoted word after
    //  a property is no expression
    s_parse_bad ("a k=1 'k=v'", 6, "expected key=value or '!' after element 'a', not 'k=v'");
    s_parse_bad ("a k=1 \"x\"", 6, "expected key=value or '!' after element 'a', not 'x'");
}
END_TEST

START_TEST (test_parse_chains)
{
    //  A bare word after an element's properties starts a new chain, as
    //  in gst-launch: no link to it, and it knows what it follows (the
    //  builder refuses it when it names no element, as a key without its
    //  value)
    weir__spec spec;
    //            0         1         2
    //            0123456789012345678901234567
    s_parse_ok ("a k=1 ! b  c ! d k=2  e ! f", &spec);
    ck_assert_uint_eq (spec.count, 6);
    ck_assert_uint_eq (spec.nlinks, 3);
    const char *from[] = {"a", "c", "e"}, *to[] = {"b", "d", "f"};
    for (size_t i = 0; i < 3; i++) {
        ck_assert_str_eq (spec.items[spec.links[i].from.element].name, from[i]);
        ck_assert_str_eq (spec.items[spec.links[i].to.element].name, to[i]);
    }
    ck_assert_uint_eq (spec.items[0].follows, SIZE_MAX);
    ck_assert_uint_eq (spec.items[1].follows, SIZE_MAX);
    ck_assert_uint_eq (spec.items[2].follows, 1);
    ck_assert_int_eq (spec.items[2].name_offset, 11);
    ck_assert_uint_eq (spec.items[3].follows, SIZE_MAX);
    ck_assert_uint_eq (spec.items[4].follows, 3);
    s_prop_is (&spec.items[3], 0, "k", "2", 17, 19);
    weir__spec_release (&spec);
    //  Right after a name, and after a quoted expression
    s_parse_ok ("a b", &spec);
    ck_assert_uint_eq (spec.count, 2);
    ck_assert_uint_eq (spec.nlinks, 0);
    ck_assert_uint_eq (spec.items[1].follows, 0);
    weir__spec_release (&spec);
    s_parse_ok ("a ! f '.x' g ! h", &spec);
    ck_assert_uint_eq (spec.count, 4);
    ck_assert_uint_eq (spec.nlinks, 2);
    ck_assert_uint_eq (spec.items[2].follows, 1);
    weir__spec_release (&spec);
}
END_TEST

//  A quoted word right after an element's name is its expression, the
//  property expr (the builder refuses it for elements that take none)
START_TEST (test_parse_expression)
{
    weir__spec spec;
    weir__spec_init (&spec);
    weir__err err;
    weir__err_init (&err);
    ck_assert_int_eq (weir__parse ("a ! filter '.k == \"v w\"' threads=2 ! b", &spec, &err), 0);
    ck_assert_uint_eq (spec.count, 3);
    ck_assert_uint_eq (spec.items[1].props.count, 2);
    ck_assert_str_eq (spec.items[1].props.items[0].key, "expr");
    ck_assert_str_eq (spec.items[1].props.items[0].value, ".k == \"v w\"");
    ck_assert_int_eq (spec.items[1].props.items[0].value_offset, 11);
    ck_assert_int_eq (spec.items[1].props.items[0].quoted, 1);
    ck_assert_int_eq (spec.items[1].props.items[1].quoted, 0);
    weir__spec_release (&spec);
    weir__spec_init (&spec);
    ck_assert_int_eq (weir__parse ("a k=\"x y\" ! b", &spec, &err), 0);
    ck_assert_int_eq (spec.items[0].props.items[0].quoted, 1);
    weir__spec_release (&spec);
    s_parse_bad ("filter 'a' expr=b", 11, "property 'expr' given twice to 'filter'");
}
END_TEST

START_TEST (test_parse_errors_quotes)
{
    //            0123456789
    s_parse_bad ("a k='x y", 4, "unterminated single quote");
    s_parse_bad ("a k=\"x y", 4, "unterminated double quote");
    s_parse_bad ("a k=1 m=x'y", 9, "unterminated single quote");
    //  An escaped quote does not close
    s_parse_bad ("a k=\"x\\\"", 4, "unterminated double quote");
    s_parse_bad ("'abc", 0, "unterminated single quote");
    //  A single quote inside "..." opens nothing
    s_parse_bad ("a k=\"it's\" m='", 13, "unterminated single quote");
}
END_TEST

//  A failed parse leaves what it built in the spec, for the caller to
//  release (nothing may leak: ASan and valgrind check it)
START_TEST (test_parse_release_after_error)
{
    weir__spec spec;
    weir__spec_init (&spec);
    weir__err err;
    weir__err_init (&err);
    ck_assert_int_eq (weir__parse ("a x=1 y=2 ! b z=3 z=4", &spec, &err), WEIR_ESYNTAX);
    ck_assert_uint_eq (spec.count, 2);
    ck_assert_uint_eq (spec.items[1].props.count, 1);
    weir__spec_release (&spec);
    ck_assert_uint_eq (spec.count, 0);
    weir__spec_release (&spec);  //  twice is harmless
}
END_TEST

//  Random descriptions built from the characters that matter to the
//  grammar never crash the parser, and every error points inside the text.
START_TEST (test_parse_fuzz)
{
    static const char alphabet[] = "ab=!'\" \t\\k1";
    unsigned seed = 12345;
    for (int round = 0; round < 20000; round++) {
        char text[40];
        size_t n = (size_t) (rand_r (&seed) % (sizeof text - 1));
        for (size_t i = 0; i < n; i++)
            text[i] = alphabet[rand_r (&seed) % (sizeof alphabet - 1)];
        text[n] = '\0';
        weir__spec spec;
        weir__spec_init (&spec);
        weir__err err;
        weir__err_init (&err);
        int rc = weir__parse (text, &spec, &err);
        if (rc) {
            ck_assert_int_eq (rc, WEIR_ESYNTAX);
            ck_assert_int_ge (err.offset, 0);
            ck_assert_int_le (err.offset, (long) n);
            ck_assert (err.msg[0] != '\0');
        }
        else {
            ck_assert_uint_gt (spec.count, 0);
            for (size_t e = 0; e < spec.count; e++) {
                ck_assert (spec.items[e].name[0] != '\0');
                ck_assert_int_lt (spec.items[e].name_offset, (long) n);
            }
        }
        weir__spec_release (&spec);
    }
}
END_TEST

START_TEST (test_parse_sizes)
{
    //  1000 properties are fine, 1001 are refused at the one too many
    size_t size = 16 + 1001 * 16;
    char *text = malloc (size);
    size_t used = (size_t) snprintf (text, size, "e");
    long at1001 = 0;
    for (int i = 0; i < 1001; i++) {
        if (i == 1000)
            at1001 = (long) used + 1;
        used += (size_t) snprintf (text + used, size - used, " k%d=1", i);
    }
    weir__spec spec;
    weir__spec_init (&spec);
    weir__err err;
    weir__err_init (&err);
    ck_assert_int_eq (weir__parse (text, &spec, &err), WEIR_ESYNTAX);
    ck_assert_str_eq (err.msg, "'e' has more than 1000 properties");
    ck_assert_int_eq (err.offset, at1001);
    weir__spec_release (&spec);
    text[at1001 - 1] = '\0';
    ck_assert_int_eq (weir__parse (text, &spec, &err), 0);
    ck_assert_uint_eq (spec.items[0].props.count, 1000);
    weir__spec_release (&spec);
    free (text);

    //  A description of more than 1 MiB is refused before it is read
    text = malloc ((1 << 20) + 2);
    memset (text, 'a', (1 << 20) + 1);
    text[(1 << 20) + 1] = '\0';
    ck_assert_int_eq (weir__parse (text, &spec, &err), WEIR_ESYNTAX);
    ck_assert_str_eq (err.msg, "the description is longer than 1048576 bytes");
    weir__spec_release (&spec);
    free (text);
}
END_TEST

Suite *check_suite (void)
{
    Suite *s = suite_create ("parse");
    TCase *tc = tcase_create ("good");
    tcase_add_test (tc, test_parse_simple);
    tcase_add_test (tc, test_parse_blanks);
    tcase_add_test (tc, test_parse_bang_without_blanks);
    tcase_add_test (tc, test_parse_quotes);
    tcase_add_test (tc, test_parse_appends);
    suite_add_tcase (s, tc);

    tc = tcase_create ("errors");
    tcase_add_test (tc, test_parse_errors_structure);
    tcase_add_test (tc, test_parse_errors_words);
    tcase_add_test (tc, test_parse_chains);
    tcase_add_test (tc, test_parse_expression);
    tcase_add_test (tc, test_parse_errors_quotes);
    tcase_add_test (tc, test_parse_release_after_error);
    tcase_add_test (tc, test_parse_fuzz);
    tcase_add_test (tc, test_parse_sizes);
    suite_add_tcase (s, tc);
    return s;
}

/*  tests/check_libsvm_writer.c - the libsvm writer, driven directly: the
    four forms of features and scale=, every record it cannot write and
    its message, and a resumed writer cutting back to what was committed.
    The round trip through the reader is in tests/check_libsvm.c.  */
#include <math.h>

#include "tests/libsvmutil.h"
#include "tests/sparsebins.h"

START_TEST (test_writer_forms)
{
    char *dir = testutil_mkdtemp ();
    char path[4200];
    snprintf (path, sizeof path, "%s/out.txt", dir);
    weir__batch b;
    weir__batch_init (&b, 64);
    msgpack_packer *pk = &b.pk;
    //  A bin: dense bytes, zeros skipped
    msgpack_pack_array (pk, 2);
    msgpack_pack_int (pk, 1);
    msgpack_pack_bin_with_body (pk, "\x00\x05\x00\xff", 4);
    //  An array of numbers: dense, zeros skipped
    msgpack_pack_array (pk, 2);
    msgpack_pack_int (pk, -1);
    msgpack_pack_array (pk, 6);
    msgpack_pack_int (pk, 0);
    msgpack_pack_double (pk, 0.5);
    msgpack_pack_double (pk, -0.0);
    msgpack_pack_int (pk, 2);
    msgpack_pack_double (pk, -1.25);
    msgpack_pack_float (pk, 0.1f);
    //  A map, unsorted: written in index order, an explicit zero kept
    msgpack_pack_array (pk, 2);
    msgpack_pack_double (pk, 2.5);
    msgpack_pack_map (pk, 4);
    msgpack_pack_int (pk, 10);
    msgpack_pack_double (pk, 0);
    msgpack_pack_int (pk, 3);
    msgpack_pack_double (pk, 0.1 + 0.2);
    msgpack_pack_int (pk, 1);
    msgpack_pack_int (pk, -7);
    msgpack_pack_uint64 (pk, 9223372036854775807ull);
    msgpack_pack_double (pk, 1.0 / 3);
    //  No features at all, in each form
    msgpack_pack_array (pk, 2);
    msgpack_pack_int (pk, 0);
    msgpack_pack_map (pk, 0);
    msgpack_pack_array (pk, 2);
    msgpack_pack_float (pk, 0.1f);
    msgpack_pack_array (pk, 0);
    msgpack_pack_array (pk, 2);
    msgpack_pack_uint64 (pk, 18446744073709551615ull);
    msgpack_pack_bin (pk, 0);
    msgpack_pack_array (pk, 2);
    msgpack_pack_int64 (pk, INT64_MIN);
    msgpack_pack_array (pk, 1);
    msgpack_pack_double (pk, 1e-5);
    b.count = 7;
    libsvmutil_write_file (path, NULL, &b);
    size_t len;
    char *got = testutil_read (path, &len);
    ck_assert_str_eq (got, "1 2:5 4:255\n"
                           "-1 2:0.5 4:2 5:-1.25 6:0.1\n"
                           "2.5 1:-7 3:0.30000000000000004 10:0 9223372036854775807:0.3333333333333333\n"
                           "0\n"
                           "0.1\n"
                           "18446744073709551615\n"
                           "-9223372036854775808 1:1e-05\n");
    free (got);

    //  scale= for bins: a fraction gives each byte / 255 correctly rounded
    weir__batch_clear (&b);
    msgpack_pack_array (pk, 2);
    msgpack_pack_int (pk, 3);
    msgpack_pack_bin_with_body (pk, "\x00\x01\x80\xff", 4);
    b.count = 1;
    libsvmutil_write_file (path, "1/255", &b);
    got = testutil_read (path, &len);
    ck_assert_str_eq (got, "3 2:0.00392156862745098 3:0.5019607843137255 4:1\n");
    free (got);
    libsvmutil_write_file (path, "0.5", &b);
    got = testutil_read (path, &len);
    ck_assert_str_eq (got, "3 2:0.5 3:64 4:127.5\n");
    free (got);
    weir__err err;
    weir__err_init (&err);
    int rc;
    const char *bad_scales[] = {"0", "x", "1/0", "1/", "/2", "1e999", "nan"};
    for (size_t i = 0; i < sizeof bad_scales / sizeof bad_scales[0]; i++) {
        libsvmutil_writer_open (path, bad_scales[i], 1, NULL, &err, &rc);
        ck_assert_int_eq (rc, WEIR_EPROPERTY);
        ck_assert_msg (strstr (err.msg, "libsvm: property 'scale'"), "%s", err.msg);
    }
    libsvmutil_writer_open (NULL, NULL, 1, NULL, &err, &rc);
    ck_assert_int_eq (rc, WEIR_EPROPERTY);
    ck_assert_str_eq (err.msg, "libsvm: property 'path' is required");
    weir__batch_release (&b);
    testutil_rmdir (dir);
}
END_TEST

//  [LABEL, [indexes, values]] of N features, as the libsvm reader gives
//  them with features=bins
static void s_pack_bins (msgpack_packer *pk, int label, const uint32_t *index, const float *value, size_t n)
{
    msgpack_pack_array (pk, 2);
    msgpack_pack_int (pk, label);
    sparsebins_pack (pk, index, value, n);
}

//  Features [indexes, values]: written like a map, in index order, values
//  as float32; and every pair of bins that is not one, named
START_TEST (test_writer_bins)
{
    char *dir = testutil_mkdtemp ();
    char path[4200];
    snprintf (path, sizeof path, "%s/out.txt", dir);
    weir__batch b;
    weir__batch_init (&b, 64);
    s_pack_bins (&b.pk, 4, (const uint32_t[]){10, 3, 4294967295u}, (const float[]){0.1f, -2.5f, 0}, 3);
    s_pack_bins (&b.pk, 1, NULL, NULL, 0);
    s_pack_bins (&b.pk, 2, (const uint32_t[]){1, 2}, (const float[]){1e-30f, 3.4028235e38f}, 2);
    b.count = 3;
    libsvmutil_write_file (path, NULL, &b);
    size_t len;
    char *got = testutil_read (path, &len);
    ck_assert_str_eq (got, "4 3:-2.5 10:0.1 4294967295:0\n1\n2 1:1e-30 2:3.4028235e+38\n");
    free (got);

    const char *messages[] = {
        "the features [indexes, values] are a bin and a string, not two bins",
        "the features [indexes, values] have bins of 4 and 8 bytes, not as many uint32 indices as float32 "
        "values",
        "the features [indexes, values] have bins of 3 bytes, not a whole number of 4-byte indices and "
        "values",
        "index 0 (element 2 of the features' indexes) is not a positive index",
        "index 5 appears twice in the features",
        "the value of index 2 is a float, not a finite number",
    };
    for (size_t k = 0; k < sizeof messages / sizeof messages[0]; k++) {
        weir__batch_clear (&b);
        msgpack_packer *pk = &b.pk;
        s_pack_bins (pk, 1, (const uint32_t[]){1}, (const float[]){1}, 1);
        //  The first three are [1, [X, Y]] of other bins, packed by hand
        if (k <= 2) {
            msgpack_pack_array (pk, 2);
            msgpack_pack_int (pk, 1);
            msgpack_pack_array (pk, 2);
        }
        switch (k) {
        case 0:
            sparsebins_pack_words (pk, (const uint32_t[]){1}, 1);
            msgpack_pack_str_with_body (pk, "x", 1);
            break;
        case 1:
            sparsebins_pack_words (pk, (const uint32_t[]){1}, 1);
            sparsebins_pack_words (pk, (const uint32_t[]){0, 0}, 2);
            break;
        case 2:
            msgpack_pack_bin_with_body (pk, "abc", 3);
            msgpack_pack_bin_with_body (pk, "abc", 3);
            break;
        case 3: s_pack_bins (pk, 1, (const uint32_t[]){2, 0}, (const float[]){1, 1}, 2); break;
        case 4: s_pack_bins (pk, 1, (const uint32_t[]){5, 1, 5}, (const float[]){1, 1, 1}, 3); break;
        case 5: s_pack_bins (pk, 1, (const uint32_t[]){1, 2}, (const float[]){1, NAN}, 2); break;
        }
        b.count = 2;
        weir__err err;
        libsvmutil_write_refused (path, &b, &err);
        ck_assert_msg (strstr (err.msg, messages[k]), "case %zu: '%s', wanted '%s'", k, err.msg, messages[k]);
        ck_assert_msg (strstr (err.msg, "record 2 of a batch of 2"), "case %zu: '%s'", k, err.msg);
        got = testutil_read (path, &len);
        ck_assert_str_eq (got, "1 1:1\n");
        free (got);
    }
    weir__batch_release (&b);
    testutil_rmdir (dir);
}
END_TEST

//  Every record the writer cannot write: the message names the writer,
//  the file, the record in its batch and what is wrong; the good records
//  before it are written, and no half line.
START_TEST (test_writer_errors)
{
    char *dir = testutil_mkdtemp ();
    char path[4200];
    snprintf (path, sizeof path, "%s/out.txt", dir);
    const char *messages[] = {
        "record 2 of a batch of 2 (\"text\"): a record must be [label, features], not a string",
        "record 2 of a batch of 2 ([1]): a record must be [label, features], not an array of 1",
        "record 2 of a batch of 2 ([1,[],3]): a record must be [label, features], not an array of 3",
        "record 2 of a batch of 2 ([\"a\",[]]): the label is a string, not a finite number",
        "record 2 of a batch of 2 ([null,[]]): the label is a float, not a finite number",
        "record 2 of a batch of 2 ([true,[]]): the label is a boolean, not a finite number",
        "record 2 of a batch of 2 ([1,\"x\"]): the features are a string, not a bin, an array or a map",
        "record 2 of a batch of 2 ([1,null]): the features are nil, not a bin, an array or a map",
        "record 2 of a batch of 2 ([1,[1,\"x\"]]): element 2 of the features is a string, not a finite "
        "number",
        "record 2 of a batch of 2 ([1,[null]]): element 1 of the features is a float, not a finite number",
        "record 2 of a batch of 2 ([1,{\"0\":1}]): the key 0 of the features is not an index",
        "record 2 of a batch of 2 ([1,{\"-2\":1}]): the key -2 of the features is not an index",
        "record 2 of a batch of 2 ([1,{\"a\":1}]): the key \"a\" of the features is not an index",
        "record 2 of a batch of 2 ([1,{\"1.5\":1}]): the key 1.5 of the features is not an index",
        "record 2 of a batch of 2 ([1,{\"9223372036854775808\":1}]): the key 9223372036854775808 of the",
        "record 2 of a batch of 2 ([1,{\"2\":1,\"1\":2,\"2\":3}]): index 2 appears twice in the features",
        "record 2 of a batch of 2 ([1,{\"1\":\"x\"}]): the value of index 1 is a string, not a finite number",
        "record 2 of a batch of 2 ([1,{\"1\":null}]): the value of index 1 is a float, not a finite number",
    };
    for (size_t k = 0; k < sizeof messages / sizeof messages[0]; k++) {
        weir__batch b;
        weir__batch_init (&b, 64);
        msgpack_packer *pk = &b.pk;
        msgpack_pack_array (pk, 2);
        msgpack_pack_int (pk, 1);
        msgpack_pack_array (pk, 1);
        msgpack_pack_int (pk, 1);
        switch (k) {
        case 0: msgpack_pack_str_with_body (pk, "text", 4); break;
        case 1:
            msgpack_pack_array (pk, 1);
            msgpack_pack_int (pk, 1);
            break;
        case 2:
            msgpack_pack_array (pk, 3);
            msgpack_pack_int (pk, 1);
            msgpack_pack_array (pk, 0);
            msgpack_pack_int (pk, 3);
            break;
        default:
            msgpack_pack_array (pk, 2);
            if (k == 3)
                msgpack_pack_str_with_body (pk, "a", 1);
            else if (k == 4)
                msgpack_pack_double (pk, NAN);
            else if (k == 5)
                msgpack_pack_true (pk);
            else
                msgpack_pack_int (pk, 1);
            if (k <= 5)
                msgpack_pack_array (pk, 0);
            else if (k == 6)
                msgpack_pack_str_with_body (pk, "x", 1);
            else if (k == 7)
                msgpack_pack_nil (pk);
            else if (k == 8) {
                msgpack_pack_array (pk, 2);
                msgpack_pack_int (pk, 1);
                msgpack_pack_str_with_body (pk, "x", 1);
            }
            else if (k == 9) {
                msgpack_pack_array (pk, 1);
                msgpack_pack_double (pk, INFINITY);
            }
            else if (k == 15) {
                msgpack_pack_map (pk, 3);
                msgpack_pack_int (pk, 2);
                msgpack_pack_int (pk, 1);
                msgpack_pack_int (pk, 1);
                msgpack_pack_int (pk, 2);
                msgpack_pack_int (pk, 2);
                msgpack_pack_int (pk, 3);
            }
            else {
                msgpack_pack_map (pk, 1);
                switch (k) {
                case 10: msgpack_pack_int (pk, 0); break;
                case 11: msgpack_pack_int (pk, -2); break;
                case 12: msgpack_pack_str_with_body (pk, "a", 1); break;
                case 13: msgpack_pack_double (pk, 1.5); break;
                case 14: msgpack_pack_uint64 (pk, 9223372036854775808ull); break;
                default: msgpack_pack_int (pk, 1);
                }
                if (k == 16)
                    msgpack_pack_str_with_body (pk, "x", 1);
                else if (k == 17)
                    msgpack_pack_double (pk, NAN);
                else
                    msgpack_pack_int (pk, 1);
            }
        }
        b.count = 2;
        weir__err err;
        libsvmutil_write_refused (path, &b, &err);
        char want[4400];
        snprintf (want, sizeof want, "libsvm: '%s': %s", path, messages[k]);
        ck_assert_msg (strncmp (err.msg, want, strlen (want)) == 0, "case %zu: '%s', wanted '%s'", k, err.msg,
                       want);
        size_t len;
        char *got = testutil_read (path, &len);
        ck_assert_str_eq (got, "1 1:1\n");
        free (got);
        weir__batch_release (&b);
    }
    testutil_rmdir (dir);
}
END_TEST

START_TEST (test_writer_resume_truncates)
{
    char *dir = testutil_mkdtemp ();
    char path[4200];
    snprintf (path, sizeof path, "%s/out.txt", dir);
    weir__err err;
    weir__err_init (&err);
    int rc;
    void *w = libsvmutil_writer_open (path, NULL, 1, NULL, &err, &rc);
    ck_assert_int_eq (rc, 0);
    weir__batch b;
    weir__batch_init (&b, 64);
    msgpack_pack_array (&b.pk, 2);
    msgpack_pack_int (&b.pk, 1);
    msgpack_pack_bin_with_body (&b.pk, "\x02", 1);
    b.count = 1;
    ck_assert_int_eq (libsvmutil_write (w, &b, &err), 0);
    ck_assert_int_eq (weir__writer_libsvm.flush (w, 0, &err), 0);
    char committed[WEIR__WRITER_STATE_MAX];
    ck_assert_int_eq (weir__writer_libsvm.commit (w, committed, &err), 0);
    ck_assert_str_eq (committed, "6");
    ck_assert_int_eq (libsvmutil_write (w, &b, &err), 0);
    ck_assert_int_eq (weir__writer_libsvm.close (w, &err), 0);
    w = libsvmutil_writer_open (path, NULL, 2, committed, &err, &rc);
    ck_assert_int_eq (rc, 0);
    ck_assert_int_eq (weir__writer_libsvm.close (w, &err), 0);
    size_t len;
    char *got = testutil_read (path, &len);
    ck_assert_str_eq (got, "1 1:2\n");
    free (got);
    weir__batch_release (&b);
    testutil_rmdir (dir);
}
END_TEST

Suite *check_suite (void)
{
    Suite *s = suite_create ("libsvm_writer");
    TCase *tc = tcase_create ("core");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_writer_forms);
    tcase_add_test (tc, test_writer_errors);
    tcase_add_test (tc, test_writer_bins);
    tcase_add_test (tc, test_writer_resume_truncates);
    suite_add_tcase (s, tc);
    return s;
}

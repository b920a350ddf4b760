/*  tests/check_writers.c - the builtin writers, driven directly.  */
#include <pthread.h>

#include "lib/batch.h"
#include "writers/writer.h"
#include "tests/testutil.h"

static void *s_open (const weir__writer_class *cls, const char *path, unsigned threads, weir__err *err,
                     int *rc)
{
    weir__props props;
    weir__props_init (&props);
    if (path)
        weir__props_add (&props, "path", path, -1, -1);
    void *state = NULL;
    *rc = cls->open (&props, threads, NULL, 0, &state, err);
    weir__props_release (&props);
    return state;
}

START_TEST (test_lines_writer_formats)
{
    char *dir = testutil_mkdtemp ();
    char path[4200];
    snprintf (path, sizeof path, "%s/out.txt", dir);
    weir__err err;
    weir__err_init (&err);
    int rc;
    void *w = s_open (&weir__writer_lines, path, 1, &err, &rc);
    ck_assert_int_eq (rc, 0);

    weir__batch b;
    weir__batch_init (&b, 64);
    msgpack_pack_str_with_body (&b.pk, "hello", 5);
    msgpack_pack_bin_with_body (&b.pk, "by\ntes", 6);
    msgpack_pack_int64 (&b.pk, -17);
    msgpack_pack_uint64 (&b.pk, 42);
    msgpack_pack_array (&b.pk, 2);
    msgpack_pack_str_with_body (&b.pk, "a\"b", 3);
    msgpack_pack_double (&b.pk, 1.5);
    msgpack_pack_map (&b.pk, 1);
    msgpack_pack_str_with_body (&b.pk, "k", 1);
    msgpack_pack_nil (&b.pk);
    ck_assert_int_eq (
        weir__writer_lines.write (w, 0, b.data + WEIR__BATCH_HEADER, weir__batch_payload (&b), 6, &err), 0);
    ck_assert_int_eq (weir__writer_lines.close (w, &err), 0);
    size_t len;
    char *got = testutil_read (path, &len);
    ck_assert_str_eq (got, "hello\nby\ntes\n-17\n42\n[\"a\\\"b\",1.5]\n{\"k\":null}\n");
    free (got);
    weir__batch_release (&b);
    testutil_rmdir (dir);
}
END_TEST

typedef struct {
    void *w;
    const weir__writer_class *cls;
    unsigned thread;
    int rc;
} s_job;

static void *s_write_many (void *arg)
{
    s_job *job = arg;
    weir__batch b;
    weir__batch_init (&b, 64);
    weir__err err;
    weir__err_init (&err);
    for (int k = 0; k < 200 && job->rc == 0; k++) {
        weir__batch_clear (&b);
        for (int i = 0; i < 100; i++)
            msgpack_pack_int (&b.pk, (int) job->thread * 1000000 + k * 100 + i);
        job->rc = job->cls->write (job->w, job->thread, b.data + WEIR__BATCH_HEADER, weir__batch_payload (&b),
                                   100, &err);
    }
    weir__batch_release (&b);
    return NULL;
}

START_TEST (test_threads_share_one_file)
{
    //  Four threads write one file: every record once, no torn lines
    const weir__writer_class *classes[] = {&weir__writer_lines, &weir__writer_msgpack};
    for (size_t k = 0; k < 2; k++) {
        char *dir = testutil_mkdtemp ();
        char path[4200];
        snprintf (path, sizeof path, "%s/out", dir);
        weir__err err;
        weir__err_init (&err);
        int rc;
        void *w = s_open (classes[k], path, 4, &err, &rc);
        ck_assert_int_eq (rc, 0);
        s_job jobs[4];
        pthread_t t[4];
        for (unsigned i = 0; i < 4; i++) {
            jobs[i] = (s_job){w, classes[k], i, 0};
            pthread_create (&t[i], NULL, s_write_many, &jobs[i]);
        }
        for (unsigned i = 0; i < 4; i++) {
            pthread_join (t[i], NULL);
            ck_assert_int_eq (jobs[i].rc, 0);
        }
        ck_assert_int_eq (classes[k]->close (w, &err), 0);
        size_t len;
        char *got = testutil_read (path, &len);
        static unsigned char seen[4][20000];
        memset (seen, 0, sizeof seen);
        unsigned n = 0;
        if (classes[k] == &weir__writer_lines) {
            char *save, *line = strtok_r (got, "\n", &save);
            for (; line; line = strtok_r (NULL, "\n", &save), n++) {
                long v = atol (line);
                seen[v / 1000000][v % 1000000]++;
            }
        }
        else {
            weir__records it;
            weir__records_init (&it);
            weir__records_reset (&it, got, len);
            msgpack_object o;
            while (weir__records_next (&it, &o) == 1) {
                seen[o.via.i64 / 1000000][o.via.i64 % 1000000]++;
                n++;
            }
            weir__records_release (&it);
        }
        ck_assert_uint_eq (n, 80000);
        for (int i = 0; i < 4; i++)
            for (int v = 0; v < 20000; v++)
                ck_assert_uint_eq (seen[i][v], 1);
        free (got);
        testutil_rmdir (dir);
    }
}
END_TEST

START_TEST (test_full_disk_is_an_error)
{
    //  /dev/full fails every write with ENOSPC, as a full disk does
    ck_assert_int_eq (access ("/dev/full", W_OK), 0);
    weir__err err;
    weir__err_init (&err);
    int rc;
    void *w = s_open (&weir__writer_msgpack, "/dev/full", 1, &err, &rc);
    ck_assert_int_eq (rc, 0);
    weir__batch b;
    weir__batch_init (&b, 64);
    msgpack_pack_int (&b.pk, 1);
    //  A device is written through at each batch: the write reports it
    ck_assert_int_eq (
        weir__writer_msgpack.write (w, 0, b.data + WEIR__BATCH_HEADER, weir__batch_payload (&b), 1, &err),
        WEIR_EIO);
    ck_assert_msg (strstr (err.msg, "msgpack: cannot write '/dev/full' at byte 0: No space left on device"),
                   "%s", err.msg);
    weir__writer_msgpack.close (w, &err);
    weir__batch_release (&b);
}
END_TEST

START_TEST (test_open_errors)
{
    weir__err err;
    weir__err_init (&err);
    int rc;
    s_open (&weir__writer_lines, NULL, 1, &err, &rc);
    ck_assert_int_eq (rc, WEIR_EPROPERTY);
    ck_assert_str_eq (err.msg, "lines: property 'path' is required");
    s_open (&weir__writer_msgpack, "/nonexistent-dir/x", 1, &err, &rc);
    ck_assert_int_eq (rc, WEIR_EIO);
    ck_assert_str_eq (err.msg,
                      "msgpack: cannot open '/nonexistent-dir/x' for writing: No such file or directory");
    void *w = s_open (&weir__writer_null, NULL, 3, &err, &rc);
    ck_assert_int_eq (rc, 0);
    ck_assert_int_eq (weir__writer_null.write (w, 2, "", 0, 0, &err), 0);
    ck_assert_int_eq (weir__writer_null.close (w, &err), 0);
}
END_TEST

START_TEST (test_resume_truncates_to_the_committed_length)
{
    char *dir = testutil_mkdtemp ();
    char path[4200];
    snprintf (path, sizeof path, "%s/out.txt", dir);
    weir__err err;
    weir__err_init (&err);
    weir__props props;
    weir__props_init (&props);
    weir__props_add (&props, "path", path, -1, -1);
    void *w;
    ck_assert_int_eq (weir__writer_lines.open (&props, 1, NULL, 0, &w, &err), 0);
    weir__batch b;
    weir__batch_init (&b, 64);
    msgpack_pack_str_with_body (&b.pk, "kept", 4);
    ck_assert_int_eq (
        weir__writer_lines.write (w, 0, b.data + WEIR__BATCH_HEADER, weir__batch_payload (&b), 1, &err), 0);
    ck_assert_int_eq (weir__writer_lines.flush (w, 0, &err), 0);
    char committed[WEIR__WRITER_STATE_MAX];
    ck_assert_int_eq (weir__writer_lines.commit (w, committed, &err), 0);
    ck_assert_str_eq (committed, "5");
    //  Written after the commit: must go on resume
    ck_assert_int_eq (
        weir__writer_lines.write (w, 0, b.data + WEIR__BATCH_HEADER, weir__batch_payload (&b), 1, &err), 0);
    ck_assert_int_eq (weir__writer_lines.close (w, &err), 0);
    size_t len;
    char *got = testutil_read (path, &len);
    ck_assert_str_eq (got, "kept\nkept\n");
    free (got);

    ck_assert_int_eq (weir__writer_lines.open (&props, 2, committed, 0, &w, &err), 0);
    ck_assert_int_eq (
        weir__writer_lines.write (w, 1, b.data + WEIR__BATCH_HEADER, weir__batch_payload (&b), 1, &err), 0);
    ck_assert_int_eq (weir__writer_lines.commit (w, committed, &err), 0);
    ck_assert_int_eq (weir__writer_lines.close (w, &err), 0);
    got = testutil_read (path, &len);
    ck_assert_str_eq (got, "kept\nkept\n");
    free (got);

    //  A file shorter than its committed length was changed: refuse
    testutil_write (path, "k", 1);
    ck_assert_int_eq (weir__writer_lines.open (&props, 1, "5", 0, &w, &err), WEIR_ECORRUPT);
    ck_assert_msg (strstr (err.msg, "shorter than the 5 bytes the checkpoint committed"), "%s", err.msg);
    weir__batch_release (&b);
    weir__props_release (&props);
    testutil_rmdir (dir);
}
END_TEST

Suite *check_suite (void)
{
    Suite *s = suite_create ("writers");
    TCase *tc = tcase_create ("core");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_lines_writer_formats);
    tcase_add_test (tc, test_threads_share_one_file);
    tcase_add_test (tc, test_full_disk_is_an_error);
    tcase_add_test (tc, test_open_errors);
    tcase_add_test (tc, test_resume_truncates_to_the_committed_length);
    suite_add_tcase (s, tc);
    return s;
}

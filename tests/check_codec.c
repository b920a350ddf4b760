/*  tests/check_codec.c - lib/compress and lib/decompress: round trips,
    members one after another, and every way a compressed file can be
    damaged: cut at each length, a byte flipped at each place, bytes after
    the last member.  A damaged file must give an error naming the
    compressed offset, or its true bytes: never other bytes in silence.  */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include "lib/compress.h"
#include "lib/decompress.h"
#include "testutil.h"

static const weir__codec s_codecs[] = {WEIR__CODEC_GZIP, WEIR__CODEC_ZSTD};

//  N bytes of text-like data, the same for a SEED
static char *s_data (size_t n, unsigned seed)
{
    char *p = malloc (n ? n : 1);
    ck_assert_ptr_nonnull (p);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (seed >> 16) % 7 == 0 ? '\n' : (char) ('a' + (seed >> 16) % 13);
    }
    return p;
}

//  DATA compressed as CODEC in MEMBERS members (cut at even shares), with
//  a flush halfway through each when FLUSH
static weir__buf s_compress (weir__codec codec, const char *data, size_t n, unsigned members, int flush)
{
    int min, max, level;
    weir__compress_levels (codec, &min, &max, &level);
    weir__compress *z = weir__compress_new (codec, level);
    ck_assert_ptr_nonnull (z);
    weir__buf out;
    weir__buf_init (&out);
    size_t at = 0;
    for (unsigned m = 0; m < members; m++) {
        size_t end = n * (m + 1) / members, mid = at + (end - at) / 2;
        ck_assert_int_eq (weir__compress_add (z, data + at, mid - at, flush, &out), 0);
        ck_assert_int_eq (weir__compress_add (z, data + mid, end - mid, 0, &out), 0);
        ck_assert_int_eq (weir__compress_end (z, &out), 0);
        at = end;
    }
    weir__compress_destroy (&z);
    return out;
}

//  The LEN bytes at FILE decompressed as CODEC, reading WANT bytes a
//  call: 0 and *OUT, or the error's code with its message in ERR
static char *s_dir;  //  one per test, made by the first decompress

static int s_decompress (weir__codec codec, const char *file, size_t len, size_t want, weir__buf *out,
                         weir__err *err)
{
    if (!s_dir)
        s_dir = testutil_mkdtemp ();
    const char *dir = s_dir;
    char path[4200];
    snprintf (path, sizeof path, "%s/f", dir);
    testutil_write (path, file ? file : "", len);
    int fd = open (path, O_RDONLY);
    ck_assert_int_ge (fd, 0);
    weir__decompress *d = weir__decompress_new (codec, fd, "test", path);
    ck_assert_ptr_nonnull (d);
    weir__buf_init (out);
    char *chunk = malloc (want);
    int rc = 0;
    for (;;) {
        ssize_t got = weir__decompress_read (d, chunk, want, err);
        if (got < 0) {
            rc = err->code;
            ck_assert_int_ne (rc, 0);
            break;
        }
        if (got == 0)
            break;
        ck_assert_int_eq (weir__buf_append (out, chunk, (size_t) got), 0);
    }
    free (chunk);
    weir__decompress_destroy (&d);
    close (fd);
    unlink (path);
    return rc;
}

static void s_teardown (void)
{
    if (s_dir)
        testutil_rmdir (s_dir);
    s_dir = NULL;
}

START_TEST (test_codec_round_trip)
{
    weir__codec codec = s_codecs[_i % 2];
    static const size_t sizes[] = {0, 1, 1000, 300000};
    for (size_t s = 0; s < 4; s++)
        for (unsigned members = 1; members <= 3; members++)
            for (int flush = 0; flush <= 1; flush++) {
                char *data = s_data (sizes[s], (unsigned) s + members);
                weir__buf file = s_compress (codec, data, sizes[s], members, flush);
                static const size_t wants[] = {1, 7, 65536};
                for (size_t w = 0; w < 3; w++) {
                    if (wants[w] == 1 && sizes[s] > 1000)
                        continue;
                    weir__buf out;
                    weir__err err;
                    weir__err_init (&err);
                    ck_assert_msg (s_decompress (codec, file.data, file.len, wants[w], &out, &err) == 0,
                                   "%s, %zu bytes, %u members: %s", weir__codec_name (codec), sizes[s],
                                   members, err.msg);
                    ck_assert_uint_eq (out.len, sizes[s]);
                    ck_assert (out.len == 0 || memcmp (out.data, data, out.len) == 0);
                    weir__buf_release (&out);
                }
                weir__buf_release (&file);
                free (data);
            }
}
END_TEST

//  Cut at every length: the whole members before the cut read back
//  exactly, and a cut inside a member is an error naming where the file
//  ends; a cut between members is a whole, shorter file
START_TEST (test_codec_cut_short)
{
    weir__codec codec = s_codecs[_i % 2];
    size_t n = 3000;
    char *data = s_data (n, 7);
    weir__buf file = s_compress (codec, data, n, 2, 0);
    weir__buf first = s_compress (codec, data, n / 2, 1, 0);
    for (size_t cut = 1; cut < file.len; cut++) {
        weir__buf out;
        weir__err err;
        weir__err_init (&err);
        int rc = s_decompress (codec, file.data, cut, 4096, &out, &err);
        ck_assert (out.len <= n && memcmp (out.data ? out.data : "", data, out.len) == 0);
        if (cut == first.len) {
            ck_assert_msg (rc == 0, "cut between the members at %zu: %s", cut, err.msg);
            ck_assert_uint_eq (out.len, n / 2);
        }
        else {
            ck_assert_msg (rc == WEIR_ECORRUPT, "%s cut at %zu of %zu: %d, %zu bytes out",
                           weir__codec_name (codec), cut, file.len, rc, out.len);
            ck_assert_msg (strstr (err.msg, "compressed byte"), "no offset in: %s", err.msg);
        }
        weir__buf_release (&out);
    }
    weir__buf_release (&first);
    weir__buf_release (&file);
    free (data);
}
END_TEST

//  A byte flipped anywhere: an error, or (a flip the format does not
//  check, in gzip's header time or zstd's optional fields) the true bytes
START_TEST (test_codec_flipped)
{
    weir__codec codec = s_codecs[_i % 2];
    size_t n = 2000;
    char *data = s_data (n, 11);
    weir__buf file = s_compress (codec, data, n, 2, 0);
    size_t errors = 0;
    for (size_t at = 0; at < file.len; at++) {
        file.data[at] ^= 0x5a;
        weir__buf out;
        weir__err err;
        weir__err_init (&err);
        int rc = s_decompress (codec, file.data, file.len, 4096, &out, &err);
        if (rc) {
            ck_assert_int_eq (rc, WEIR_ECORRUPT);
            ck_assert_msg (strstr (err.msg, "compressed byte"), "no offset in: %s", err.msg);
            errors++;
        }
        else
            ck_assert_msg (out.len == n && memcmp (out.data, data, n) == 0,
                           "%s: a byte flipped at %zu gave other bytes in silence", weir__codec_name (codec),
                           at);
        weir__buf_release (&out);
        file.data[at] ^= 0x5a;
    }
    //  Most places are checked
    ck_assert_uint_gt (errors, file.len * 9 / 10);
    weir__buf_release (&file);
    free (data);
}
END_TEST

//  Bytes after the last member that are no member are an error naming
//  where they start
START_TEST (test_codec_trailing)
{
    weir__codec codec = s_codecs[_i % 2];
    char *data = s_data (500, 3);
    weir__buf file = s_compress (codec, data, 500, 1, 0);
    size_t whole = file.len;
    ck_assert_int_eq (weir__buf_append (&file, "junk\n", 5), 0);
    weir__buf out;
    weir__err err;
    weir__err_init (&err);
    ck_assert_int_eq (s_decompress (codec, file.data, file.len, 4096, &out, &err), WEIR_ECORRUPT);
    char where[64];
    snprintf (where, sizeof where, "compressed byte %zu", whole);
    ck_assert_msg (strstr (err.msg, where), "'%s' not in: %s", where, err.msg);
    ck_assert_uint_eq (out.len, 500);
    weir__buf_release (&out);
    weir__buf_release (&file);
    free (data);
}
END_TEST

//  weir__decompress_skip drops exactly COUNT bytes, and refuses to go
//  past the end
START_TEST (test_codec_skip)
{
    weir__codec codec = s_codecs[_i % 2];
    size_t n = 100000;
    char *data = s_data (n, 5);
    weir__buf file = s_compress (codec, data, n, 3, 0);
    char *dir = testutil_mkdtemp ();
    char path[4200];
    snprintf (path, sizeof path, "%s/f", dir);
    testutil_write (path, file.data, file.len);
    static const uint64_t skips[] = {0, 1, 33333, 99999, 100000, 100001};
    for (size_t k = 0; k < 6; k++) {
        int fd = open (path, O_RDONLY);
        weir__decompress *d = weir__decompress_new (codec, fd, "test", path);
        weir__err err;
        weir__err_init (&err);
        int rc = weir__decompress_skip (d, skips[k], &err);
        if (skips[k] > n) {
            ck_assert_int_eq (rc, -1);
            ck_assert_int_eq (err.code, WEIR_ECORRUPT);
            ck_assert_msg (strstr (err.msg, "fewer than the 100001"), "%s", err.msg);
        }
        else {
            ck_assert_int_eq (rc, 0);
            char c;
            ssize_t got = weir__decompress_read (d, &c, 1, &err);
            if (skips[k] == n)
                ck_assert_int_eq (got, 0);
            else {
                ck_assert_int_eq (got, 1);
                ck_assert_int_eq (c, data[skips[k]]);
            }
        }
        weir__decompress_destroy (&d);
        close (fd);
    }
    testutil_rmdir (dir);
    weir__buf_release (&file);
    free (data);
}
END_TEST

Suite *check_suite (void)
{
    Suite *s = suite_create ("codec");
    TCase *tc = tcase_create ("codec");
    tcase_set_timeout (tc, 120);
    tcase_add_checked_fixture (tc, NULL, s_teardown);
    tcase_add_loop_test (tc, test_codec_round_trip, 0, 2);
    tcase_add_loop_test (tc, test_codec_cut_short, 0, 2);
    tcase_add_loop_test (tc, test_codec_flipped, 0, 2);
    tcase_add_loop_test (tc, test_codec_trailing, 0, 2);
    tcase_add_loop_test (tc, test_codec_skip, 0, 2);
    suite_add_tcase (s, tc);
    return s;
}

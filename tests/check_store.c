/*  tests/check_store.c - checkpoints in LevelDB: round trips, retention,
    and refusal of anything incomplete or altered.  */
#include <dirent.h>
#include <fcntl.h>
#include <leveldb/c.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoint/copy.h"
#include "checkpoint/store.h"
#include "lib/hash.h"
#include "tests/testutil.h"

static weir__ckpt *s_sample (uint64_t epoch, size_t blob_size)
{
    weir__ckpt *ck = weir__ckpt_new (epoch);
    ck_assert_int_eq (weir__ckpt_put_u64 (ck, 'm', "epoch", epoch), 0);
    ck_assert_int_eq (weir__ckpt_put_text (ck, 'm', "description", "range count=10 ! null"), 0);
    ck_assert_int_eq (weir__ckpt_put_u64 (ck, 'o', "range:0:65536", 1234 + epoch), 0);
    ck_assert_int_eq (weir__ckpt_put_u64 (ck, 'w', "stage2", 99), 0);
    char *blob = malloc (blob_size + 1);
    for (size_t i = 0; i < blob_size; i++)
        blob[i] = (char) (i * 7 + epoch);
    ck_assert_int_eq (weir__ckpt_put (ck, 'b', "model/weights", blob, blob_size, 1), 0);
    ck_assert_int_eq (weir__ckpt_put (ck, 'b', "empty", "", 0, 1), 0);
    free (blob);
    return ck;
}

static void s_check_sample (const weir__ckpt *ck, uint64_t epoch, size_t blob_size)
{
    uint64_t v;
    ck_assert_uint_eq (weir__ckpt_epoch (ck), epoch);
    ck_assert_int_eq (weir__ckpt_get_u64 (ck, 'm', "epoch", &v), 0);
    ck_assert_uint_eq (v, epoch);
    ck_assert_int_eq (weir__ckpt_get_u64 (ck, 'o', "range:0:65536", &v), 0);
    ck_assert_uint_eq (v, 1234 + epoch);
    size_t len;
    const char *d = weir__ckpt_get (ck, 'm', "description", &len);
    ck_assert_uint_eq (len, strlen ("range count=10 ! null"));
    ck_assert (memcmp (d, "range count=10 ! null", len) == 0);
    const unsigned char *blob = weir__ckpt_get (ck, 'b', "model/weights", &len);
    ck_assert_ptr_nonnull (blob);
    ck_assert_uint_eq (len, blob_size);
    for (size_t i = 0; i < blob_size; i++)
        if (blob[i] != (unsigned char) (i * 7 + epoch))
            ck_abort_msg ("blob byte %zu differs", i);
    ck_assert_ptr_nonnull (weir__ckpt_get (ck, 'b', "empty", &len));
    ck_assert_uint_eq (len, 0);
    ck_assert_uint_eq (weir__ckpt_count (ck, 'b'), 2);
    ck_assert_uint_eq (weir__ckpt_count (ck, 'c'), 0);
}

START_TEST (test_round_trip_with_chunked_blob)
{
    char *dir = testutil_mkdtemp ();
    weir__err err;
    weir__err_init (&err);
    weir__store *store;
    ck_assert_int_eq (weir__store_open (dir, 1, &store, &err), 0);
    uint64_t latest;
    ck_assert_int_eq (weir__store_latest (store, &latest, &err), 1);
    //  Larger than 4 MiB: three chunks, the last one short
    size_t size = (9u << 20) + 123;
    weir__ckpt *ck = s_sample (3, size);
    ck_assert_int_eq (weir__store_write (store, ck, 0, &err), 0);
    weir__ckpt_destroy (&ck);
    ck_assert_int_eq (weir__store_latest (store, &latest, &err), 0);
    ck_assert_uint_eq (latest, 3);
    //  Survives closing and reopening
    weir__store_destroy (&store);
    ck_assert_int_eq (weir__store_open (dir, 0, &store, &err), 0);
    ck_assert_int_eq (weir__store_read (store, 3, &ck, &err), 0);
    s_check_sample (ck, 3, size);
    weir__ckpt_destroy (&ck);
    ck_assert_int_eq (weir__store_read (store, 4, &ck, &err), WEIR_ECORRUPT);
    ck_assert_msg (strstr (err.msg, "checkpoint 4 does not exist"), "%s", err.msg);
    weir__store_destroy (&store);
    testutil_rmdir (dir);
}
END_TEST

START_TEST (test_retention_keeps_the_newest)
{
    char *dir = testutil_mkdtemp ();
    weir__err err;
    weir__err_init (&err);
    weir__store *store;
    ck_assert_int_eq (weir__store_open (dir, 1, &store, &err), 0);
    for (uint64_t e = 0; e <= 6; e++) {
        weir__ckpt *ck = s_sample (e, 1000);
        ck_assert_int_eq (weir__store_write (store, ck, 3, &err), 0);
        weir__ckpt_destroy (&ck);
    }
    uint64_t *epochs;
    size_t n;
    ck_assert_int_eq (weir__store_epochs (store, &epochs, &n, &err), 0);
    ck_assert_uint_eq (n, 3);
    ck_assert_uint_eq (epochs[0], 4);
    ck_assert_uint_eq (epochs[2], 6);
    free (epochs);
    weir__ckpt *ck;
    ck_assert_int_eq (weir__store_read (store, 3, &ck, &err), WEIR_ECORRUPT);
    ck_assert_int_eq (weir__store_read (store, 5, &ck, &err), 0);
    s_check_sample (ck, 5, 1000);
    weir__ckpt_destroy (&ck);
    //  Without retention everything stays; rewriting an epoch replaces it
    ck = s_sample (7, 10);
    ck_assert_int_eq (weir__store_write (store, ck, 0, &err), 0);
    weir__ckpt_destroy (&ck);
    ck = s_sample (7, 20);
    ck_assert_int_eq (weir__store_write (store, ck, 0, &err), 0);
    weir__ckpt_destroy (&ck);
    ck_assert_int_eq (weir__store_read (store, 7, &ck, &err), 0);
    s_check_sample (ck, 7, 20);
    weir__ckpt_destroy (&ck);
    ck_assert_int_eq (weir__store_epochs (store, &epochs, &n, &err), 0);
    ck_assert_uint_eq (n, 4);
    free (epochs);
    weir__store_destroy (&store);
    testutil_rmdir (dir);
}
END_TEST

START_TEST (test_missing_or_altered_keys_are_refused)
{
    char *dir = testutil_mkdtemp ();
    weir__err err;
    weir__err_init (&err);
    weir__store *store;
    ck_assert_int_eq (weir__store_open (dir, 1, &store, &err), 0);
    weir__ckpt *ck = s_sample (1, 5u << 20);
    ck_assert_int_eq (weir__store_write (store, ck, 0, &err), 0);
    weir__ckpt_destroy (&ck);
    ck = s_sample (2, 100);
    ck_assert_int_eq (weir__store_write (store, ck, 0, &err), 0);
    weir__ckpt_destroy (&ck);
    weir__store_destroy (&store);

    //  Behind the store's back: drop one chunk of epoch 1, alter a value
    //  of epoch 2
    leveldb_options_t *options = leveldb_options_create ();
    char *msg = NULL;
    leveldb_t *db = leveldb_open (options, dir, &msg);
    ck_assert_ptr_null (msg);
    leveldb_writeoptions_t *wo = leveldb_writeoptions_create ();
    const char *chunk = "e/00000000000000000001/c/model/weights#00000001";
    leveldb_delete (db, wo, chunk, strlen (chunk), &msg);
    //  The offsets are packed under one key: change one byte of that value
    //  in place, keeping its length, so that only the checksum can tell
    const char *offsets = "e/00000000000000000002/o";
    leveldb_readoptions_t *ro = leveldb_readoptions_create ();
    size_t len = 0;
    char *value = leveldb_get (db, ro, offsets, strlen (offsets), &len, &msg);
    leveldb_readoptions_destroy (ro);
    ck_assert_ptr_null (msg);
    ck_assert_ptr_nonnull (value);
    ck_assert_uint_gt (len, 0);
    value[len - 1] ^= 0x01;
    leveldb_put (db, wo, offsets, strlen (offsets), value, len, &msg);
    leveldb_free (value);
    ck_assert_ptr_null (msg);
    leveldb_writeoptions_destroy (wo);
    leveldb_close (db);
    leveldb_options_destroy (options);

    ck_assert_int_eq (weir__store_open (dir, 0, &store, &err), 0);
    ck_assert_int_eq (weir__store_read (store, 1, &ck, &err), WEIR_ECORRUPT);
    ck_assert_msg (strstr (err.msg, "checkpoint 1 in") && strstr (err.msg, "is refused"), "%s", err.msg);
    ck_assert_ptr_null (ck);
    ck_assert_int_eq (weir__store_read (store, 2, &ck, &err), WEIR_ECORRUPT);
    ck_assert_msg (strstr (err.msg, "checkpoint 2 in") && strstr (err.msg, "checksum does not match"), "%s",
                   err.msg);
    weir__store_destroy (&store);
    testutil_rmdir (dir);
}
END_TEST

START_TEST (test_flipped_bytes_on_disk_are_refused)
{
    //  Corrupt the files LevelDB wrote: opening or reading must fail, and
    //  nothing may come back altered
    char *dir = testutil_mkdtemp ();
    weir__err err;
    weir__err_init (&err);
    weir__store *store;
    ck_assert_int_eq (weir__store_open (dir, 1, &store, &err), 0);
    weir__ckpt *ck = s_sample (1, 200000);
    ck_assert_int_eq (weir__store_write (store, ck, 0, &err), 0);
    weir__ckpt_destroy (&ck);
    weir__store_destroy (&store);

    DIR *d = opendir (dir);
    struct dirent *e;
    int flipped = 0;
    while ((e = readdir (d))) {
        size_t n = strlen (e->d_name);
        if (n < 4 || (strcmp (e->d_name + n - 4, ".log") && strcmp (e->d_name + n - 4, ".ldb")))
            continue;
        char path[4400];
        snprintf (path, sizeof path, "%s/%s", dir, e->d_name);
        size_t len;
        char *bytes = testutil_read (path, &len);
        if (len < 100000)
            continue;
        for (size_t i = len / 3; i < len / 3 + 16; i++)
            bytes[i] ^= 0x5a;
        testutil_write (path, bytes, len);
        free (bytes);
        flipped++;
    }
    closedir (d);
    ck_assert_int_ge (flipped, 1);
    int rc = weir__store_open (dir, 0, &store, &err);
    if (rc == 0) {
        rc = weir__store_read (store, 1, &ck, &err);
        weir__store_destroy (&store);
    }
    ck_assert_int_ne (rc, 0);
    testutil_rmdir (dir);
}
END_TEST

START_TEST (test_hash_sees_every_byte)
{
    char a[100] = {0}, b[100] = {0};
    uint64_t h = weir__hash64 (0, a, sizeof a);
    for (size_t i = 0; i < sizeof b; i++) {
        b[i] = 1;
        ck_assert_uint_ne (weir__hash64 (0, b, sizeof b), h);
        b[i] = 0;
    }
    ck_assert_uint_ne (weir__hash64 (0, a, 99), h);
}
END_TEST

//  A copy to read a store a job holds shares only the tables older than
//  the job's manifest: the copy's LevelDB writes its own under numbers
//  above its manifest's, which a table the job wrote since may have, and
//  a shared one would be emptied under the job (seen: a resume after
//  kills that cannot read checkpoint N, "Invalid argument").
START_TEST (test_copy_shares_only_old_tables)
{
    char *dir = testutil_mkdtemp ();
    char path[4200];
    snprintf (path, sizeof path, "%s/CURRENT", dir);
    testutil_write (path, "MANIFEST-000005\n", 16);
    snprintf (path, sizeof path, "%s/MANIFEST-000005", dir);
    testutil_write (path, "m", 1);
    snprintf (path, sizeof path, "%s/000003.ldb", dir);
    testutil_write (path, "old table", 9);
    snprintf (path, sizeof path, "%s/000009.ldb", dir);
    testutil_write (path, "new table", 9);
    weir__err err;
    weir__err_init (&err);
    char *copy = weir__copy_new (dir, &err);
    ck_assert_msg (copy != NULL, "%s", err.msg);
    struct stat a, b;
    snprintf (path, sizeof path, "%s/000003.ldb", dir);
    ck_assert_int_eq (stat (path, &a), 0);
    snprintf (path, sizeof path, "%s/000003.ldb", copy);
    ck_assert_int_eq (stat (path, &b), 0);
    ck_assert_msg (a.st_ino == b.st_ino, "a table older than the manifest is not shared");
    snprintf (path, sizeof path, "%s/000009.ldb", dir);
    ck_assert_int_eq (stat (path, &a), 0);
    snprintf (path, sizeof path, "%s/000009.ldb", copy);
    ck_assert_int_eq (stat (path, &b), 0);
    ck_assert_msg (a.st_ino != b.st_ino, "a table newer than the manifest is shared");
    ck_assert_int_eq (b.st_size, 9);
    //  What the copy's LevelDB would do to its own 000009.ldb leaves the
    //  store's whole
    ck_assert_int_eq (truncate (path, 0), 0);
    snprintf (path, sizeof path, "%s/000009.ldb", dir);
    ck_assert_int_eq (stat (path, &a), 0);
    ck_assert_int_eq (a.st_size, 9);
    weir__copy_destroy (&copy);
    testutil_rmdir (dir);
}
END_TEST

Suite *check_suite (void)
{
    Suite *s = suite_create ("store");
    TCase *tc = tcase_create ("core");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_round_trip_with_chunked_blob);
    tcase_add_test (tc, test_retention_keeps_the_newest);
    tcase_add_test (tc, test_missing_or_altered_keys_are_refused);
    tcase_add_test (tc, test_flipped_bytes_on_disk_are_refused);
    tcase_add_test (tc, test_hash_sees_every_byte);
    tcase_add_test (tc, test_copy_shares_only_old_tables);
    suite_add_tcase (s, tc);
    return s;
}

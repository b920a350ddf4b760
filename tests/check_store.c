/*  tests/check_store.c - checkpoints in LevelDB: round trips, retention,
    and refusal of anything incomplete or altered.  */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <leveldb/c.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoint/copy.h"
#include "checkpoint/keys.h"
#include "checkpoint/layout.h"
#include "checkpoint/resume.h"
#include "pipeline/change.h"
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

//  The checkpoint marked the best stays whatever the retention, until a
//  later one takes the mark (then retention may drop it) or a rollback
//  drops it (then the mark goes too); its blob's bytes stay readable
START_TEST (test_retention_keeps_the_best)
{
    char *dir = testutil_mkdtemp ();
    weir__err err;
    weir__err_init (&err);
    weir__store *store;
    ck_assert_int_eq (weir__store_open (dir, 1, &store, &err), 0);
    uint64_t best;
    ck_assert_int_eq (weir__store_best (store, &best, &err), 1);
    for (uint64_t e = 1; e <= 6; e++) {
        weir__ckpt *ck = s_sample (e, 1000);
        if (e == 2)
            ck_assert_int_eq (weir__ckpt_put_u64 (ck, 'm', "best", 1), 0);
        ck_assert_int_eq (weir__store_write (store, ck, 2, &err), 0);
        weir__ckpt_destroy (&ck);
    }
    uint64_t *epochs;
    size_t n;
    ck_assert_int_eq (weir__store_epochs (store, &epochs, &n, &err), 0);
    ck_assert_uint_eq (n, 3);
    ck_assert_uint_eq (epochs[0], 2);
    ck_assert_uint_eq (epochs[1], 5);
    ck_assert_uint_eq (epochs[2], 6);
    free (epochs);
    ck_assert_int_eq (weir__store_best (store, &best, &err), 0);
    ck_assert_uint_eq (best, 2);
    weir__ckpt *ck;
    ck_assert_int_eq (weir__store_read (store, 2, &ck, &err), 0);
    s_check_sample (ck, 2, 1000);
    weir__ckpt_destroy (&ck);
    //  Epoch 7 takes the mark: 2 goes with the retention
    ck = s_sample (7, 1000);
    ck_assert_int_eq (weir__ckpt_put_u64 (ck, 'm', "best", 1), 0);
    ck_assert_int_eq (weir__store_write (store, ck, 2, &err), 0);
    weir__ckpt_destroy (&ck);
    ck_assert_int_eq (weir__store_best (store, &best, &err), 0);
    ck_assert_uint_eq (best, 7);
    ck_assert_int_eq (weir__store_epochs (store, &epochs, &n, &err), 0);
    ck_assert_uint_eq (n, 2);
    ck_assert_uint_eq (epochs[0], 6);
    free (epochs);
    //  A rollback past the mark takes it away
    unsigned dropped;
    ck_assert_int_eq (weir__store_rollback (store, 6, &dropped, &err), 0);
    ck_assert_uint_eq (dropped, 1);
    ck_assert_int_eq (weir__store_best (store, &best, &err), 1);
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
    const char *chunk = "s/00000000000000000001/model/weights#00000001";
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
    ck_assert_msg (
        strstr (err.msg, "checkpoint 1 in") && strstr (err.msg, "is refused")
            && strstr (err.msg, "blob 'model/weights' misses chunk 1 of its bytes, which checkpoint 1 wrote"),
        "%s", err.msg);
    ck_assert_ptr_null (ck);
    ck_assert_int_eq (weir__store_read (store, 2, &ck, &err), WEIR_ECORRUPT);
    ck_assert_msg (strstr (err.msg, "checkpoint 2 in") && strstr (err.msg, "checksum does not match"), "%s",
                   err.msg);
    weir__store_destroy (&store);
    testutil_rmdir (dir);
}
END_TEST

//  The database in DIR, opened behind the store's back
typedef struct {
    leveldb_options_t *options;
    leveldb_t *db;
    leveldb_readoptions_t *ro;
    leveldb_writeoptions_t *wo;
} s_raw;

static void s_raw_open (s_raw *raw, const char *dir)
{
    char *msg = NULL;
    raw->options = leveldb_options_create ();
    raw->db = leveldb_open (raw->options, dir, &msg);
    ck_assert_ptr_null (msg);
    raw->ro = leveldb_readoptions_create ();
    raw->wo = leveldb_writeoptions_create ();
}

static void s_raw_close (s_raw *raw)
{
    leveldb_readoptions_destroy (raw->ro);
    leveldb_writeoptions_destroy (raw->wo);
    leveldb_close (raw->db);
    leveldb_options_destroy (raw->options);
}

//  The keys of DIR's database that start with PREFIX
static size_t s_keys (const char *dir, const char *prefix)
{
    s_raw raw;
    s_raw_open (&raw, dir);
    leveldb_iterator_t *it = leveldb_create_iterator (raw.db, raw.ro);
    size_t n = 0, plen = strlen (prefix);
    for (leveldb_iter_seek (it, prefix, plen); leveldb_iter_valid (it); leveldb_iter_next (it)) {
        size_t klen;
        const char *key = leveldb_iter_key (it, &klen);
        if (klen < plen || memcmp (key, prefix, plen))
            break;
        n++;
    }
    leveldb_iter_destroy (it);
    s_raw_close (&raw);
    return n;
}

//  A checkpoint of EPOCH with blobs "same" (the same bytes every time) and
//  "changes" (bytes of EPOCH), each of SIZE bytes
static weir__ckpt *s_two_blobs (uint64_t epoch, size_t size)
{
    weir__ckpt *ck = weir__ckpt_new (epoch);
    ck_assert_int_eq (weir__ckpt_put_u64 (ck, 'm', "epoch", epoch), 0);
    char *bytes = malloc (size);
    for (size_t i = 0; i < size; i++)
        bytes[i] = (char) (i * 13);
    ck_assert_int_eq (weir__ckpt_put (ck, 'b', "same", bytes, size, 1), 0);
    for (size_t i = 0; i < size; i++)
        bytes[i] = (char) (i * 13 + epoch);
    ck_assert_int_eq (weir__ckpt_put (ck, 'b', "changes", bytes, size, 1), 0);
    free (bytes);
    return ck;
}

static void s_check_two_blobs (weir__store *store, uint64_t epoch, size_t size)
{
    weir__err err;
    weir__err_init (&err);
    weir__ckpt *ck;
    ck_assert_msg (weir__store_read (store, epoch, &ck, &err) == 0, "%s", err.msg);
    size_t len;
    const unsigned char *same = weir__ckpt_get (ck, 'b', "same", &len);
    ck_assert_uint_eq (len, size);
    const unsigned char *changes = weir__ckpt_get (ck, 'b', "changes", &len);
    ck_assert_uint_eq (len, size);
    for (size_t i = 0; i < size; i++)
        if (same[i] != (unsigned char) (i * 13) || changes[i] != (unsigned char) (i * 13 + epoch))
            ck_abort_msg ("checkpoint %llu: blob byte %zu differs", (unsigned long long) epoch, i);
    weir__ckpt_destroy (&ck);
}

//  A blob that did not change is not written again, through retention,
//  a reopened store and a rollback; bytes no checkpoint needs are deleted
START_TEST (test_unchanged_blobs_are_written_once)
{
    char *dir = testutil_mkdtemp ();
    weir__err err;
    weir__err_init (&err);
    weir__store *store;
    size_t size = (5u << 20) + 7;  //  two chunks each
    ck_assert_int_eq (weir__store_open (dir, 1, &store, &err), 0);
    for (uint64_t e = 1; e <= 5; e++) {
        weir__ckpt *ck = s_two_blobs (e, size);
        ck_assert_int_eq (weir__store_write (store, ck, 2, &err), 0);
        weir__ckpt_destroy (&ck);
    }
    //  Epochs 4 and 5 kept; "same" written by epoch 1 only, "changes" by
    //  each: those of 1, 2 and 3 deleted with their checkpoints
    s_check_two_blobs (store, 5, size);
    s_check_two_blobs (store, 4, size);
    weir__store_destroy (&store);
    ck_assert_uint_eq (s_keys (dir, "s/00000000000000000001/same#"), 2);
    ck_assert_uint_eq (s_keys (dir, "s/00000000000000000001/changes#"), 0);
    ck_assert_uint_eq (s_keys (dir, "s/00000000000000000003/"), 0);
    ck_assert_uint_eq (s_keys (dir, "s/00000000000000000004/changes#"), 2);
    ck_assert_uint_eq (s_keys (dir, "s/00000000000000000005/"), 2);
    //  Reopened, the store knows what the latest checkpoint holds
    ck_assert_int_eq (weir__store_open (dir, 1, &store, &err), 0);
    weir__ckpt *ck = s_two_blobs (6, size);
    ck_assert_int_eq (weir__store_write (store, ck, 2, &err), 0);
    weir__ckpt_destroy (&ck);
    s_check_two_blobs (store, 6, size);
    weir__store_destroy (&store);
    ck_assert_uint_eq (s_keys (dir, "s/00000000000000000006/"), 2);
    ck_assert_uint_eq (s_keys (dir, "s/00000000000000000004/"), 0);
    ck_assert_int_eq (weir__store_open (dir, 1, &store, &err), 0);
    //  Rolled back to 5, then 6 again with "same" changed: 6's first bytes
    //  are gone, and the new 6 holds both its blobs
    unsigned dropped;
    ck_assert_int_eq (weir__store_rollback (store, 5, &dropped, &err), 0);
    ck_assert_uint_eq (dropped, 1);
    weir__store_destroy (&store);
    ck_assert_uint_eq (s_keys (dir, "s/00000000000000000006/"), 0);
    ck_assert_uint_eq (s_keys (dir, "s/00000000000000000001/same#"), 2);
    //  Rolled back and written again in one session: the store forgot
    //  the bytes the rollback deleted
    ck_assert_int_eq (weir__store_open (dir, 1, &store, &err), 0);
    ck = s_two_blobs (6, size);
    ck_assert_int_eq (weir__store_write (store, ck, 2, &err), 0);
    weir__ckpt_destroy (&ck);
    ck_assert_int_eq (weir__store_rollback (store, 5, &dropped, &err), 0);
    ck = s_two_blobs (6, size);
    char *other = calloc (1, 10);
    weir__ckpt_replace (ck, 'b', "same", other, 10);
    ck_assert_int_eq (weir__store_write (store, ck, 1, &err), 0);
    weir__ckpt_destroy (&ck);
    ck_assert_int_eq (weir__store_read (store, 6, &ck, &err), 0);
    size_t len;
    ck_assert_ptr_nonnull (weir__ckpt_get (ck, 'b', "same", &len));
    ck_assert_uint_eq (len, 10);
    weir__ckpt_destroy (&ck);
    weir__store_destroy (&store);
    ck_assert_uint_eq (s_keys (dir, "s/00000000000000000001/"), 0);
    ck_assert_uint_eq (s_keys (dir, "s/00000000000000000005/"), 0);
    ck_assert_uint_eq (s_keys (dir, "s/00000000000000000006/"), 3);
    //  A blob new at 7 and the same at 8, rolled back to 6 in one session,
    //  then written at 9: the bytes of 7 went with the rollback, so 9
    //  writes them again
    ck_assert_int_eq (weir__store_open (dir, 1, &store, &err), 0);
    for (uint64_t e = 7; e <= 9; e++) {
        if (e == 9)
            ck_assert_int_eq (weir__store_rollback (store, 6, &dropped, &err), 0);
        ck = s_two_blobs (e, size);
        char *marked = malloc (10);
        memset (marked, 0xab, 10);
        weir__ckpt_replace (ck, 'b', "same", marked, 10);
        ck_assert_int_eq (weir__store_write (store, ck, 3, &err), 0);
        weir__ckpt_destroy (&ck);
    }
    ck_assert_msg (weir__store_read (store, 9, &ck, &err) == 0, "%s", err.msg);
    weir__ckpt_destroy (&ck);
    weir__store_destroy (&store);
    testutil_rmdir (dir);
}
END_TEST

//  Bytes a later checkpoint needs, altered: refused, naming the write
START_TEST (test_held_bytes_altered_are_refused)
{
    char *dir = testutil_mkdtemp ();
    weir__err err;
    weir__err_init (&err);
    weir__store *store;
    ck_assert_int_eq (weir__store_open (dir, 1, &store, &err), 0);
    for (uint64_t e = 1; e <= 3; e++) {
        weir__ckpt *ck = s_two_blobs (e, 1000);
        ck_assert_int_eq (weir__store_write (store, ck, 0, &err), 0);
        weir__ckpt_destroy (&ck);
    }
    weir__store_destroy (&store);
    s_raw raw;
    s_raw_open (&raw, dir);
    const char *key = "s/00000000000000000001/same#00000000";
    char *msg = NULL;
    size_t len;
    char *value = leveldb_get (raw.db, raw.ro, key, strlen (key), &len, &msg);
    ck_assert_ptr_nonnull (value);
    value[500] ^= 0x20;
    leveldb_put (raw.db, raw.wo, key, strlen (key), value, len, &msg);
    ck_assert_ptr_null (msg);
    leveldb_free (value);
    s_raw_close (&raw);
    ck_assert_int_eq (weir__store_open (dir, 0, &store, &err), 0);
    weir__ckpt *ck;
    ck_assert_int_eq (weir__store_read (store, 3, &ck, &err), WEIR_ECORRUPT);
    ck_assert_msg (
        strstr (err.msg, "checkpoint 3 in")
            && strstr (err.msg,
                       "the bytes of blob 'same', which checkpoint 1 wrote, do not match their hash"),
        "%s", err.msg);
    weir__store_destroy (&store);
    testutil_rmdir (dir);
}
END_TEST

//  A store written before blobs were kept once (a key per blob, its size
//  alone, its bytes under the epoch's own 'c'): read as it was, and
//  retention deletes its chunks
START_TEST (test_stores_of_before_are_read)
{
    char *dir = testutil_mkdtemp ();
    weir__err err;
    weir__err_init (&err);
    weir__store *store;
    ck_assert_int_eq (weir__store_open (dir, 1, &store, &err), 0);
    weir__ckpt *ck = s_two_blobs (1, 1000);
    ck_assert_int_eq (weir__store_write (store, ck, 0, &err), 0);
    weir__ckpt_destroy (&ck);
    weir__store_destroy (&store);
    //  Rewritten in the old layout, its checksum made again
    s_raw raw;
    s_raw_open (&raw, dir);
    char *msg = NULL;
    const char *names[] = {"changes", "same"};
    for (int i = 0; i < 2; i++) {
        char key[128], chunk[128], size[16];
        snprintf (chunk, sizeof chunk, "s/00000000000000000001/%s#00000000", names[i]);
        size_t len;
        char *value = leveldb_get (raw.db, raw.ro, chunk, strlen (chunk), &len, &msg);
        ck_assert_ptr_nonnull (value);
        leveldb_delete (raw.db, raw.wo, chunk, strlen (chunk), &msg);
        snprintf (key, sizeof key, "e/00000000000000000001/c/%s#00000000", names[i]);
        leveldb_put (raw.db, raw.wo, key, strlen (key), value, len, &msg);
        leveldb_free (value);
        snprintf (key, sizeof key, "e/00000000000000000001/b/%s", names[i]);
        snprintf (size, sizeof size, "%zu", len);
        leveldb_put (raw.db, raw.wo, key, strlen (key), size, strlen (size), &msg);
    }
    const char *packed = "e/00000000000000000001/b";
    leveldb_delete (raw.db, raw.wo, packed, strlen (packed), &msg);
    leveldb_iterator_t *it = leveldb_create_iterator (raw.db, raw.ro);
    uint64_t h = 0;
    size_t count = 0;
    const char *prefix = "e/00000000000000000001/";
    for (leveldb_iter_seek (it, prefix, strlen (prefix)); leveldb_iter_valid (it); leveldb_iter_next (it)) {
        size_t klen, vlen;
        const char *key = leveldb_iter_key (it, &klen);
        const char *value = leveldb_iter_value (it, &vlen);
        if (klen < strlen (prefix) || memcmp (key, prefix, strlen (prefix)))
            break;
        if (klen > 4 && memcmp (key + klen - 4, "~sum", 4) == 0)
            continue;
        h = weir__layout_hash (h, key, klen, value, vlen);
        count++;
    }
    leveldb_iter_destroy (it);
    char sum[48];
    snprintf (sum, sizeof sum, "%zu %016" PRIx64, count, h);
    const char *sum_key = "e/00000000000000000001/~sum";
    leveldb_put (raw.db, raw.wo, sum_key, strlen (sum_key), sum, strlen (sum), &msg);
    ck_assert_ptr_null (msg);
    s_raw_close (&raw);
    ck_assert_uint_eq (s_keys (dir, "s/"), 0);

    ck_assert_int_eq (weir__store_open (dir, 1, &store, &err), 0);
    s_check_two_blobs (store, 1, 1000);
    //  The next checkpoint writes both blobs its way; retention deletes
    //  the old chunks
    ck = s_two_blobs (2, 1000);
    ck_assert_int_eq (weir__store_write (store, ck, 1, &err), 0);
    weir__ckpt_destroy (&ck);
    s_check_two_blobs (store, 2, 1000);
    weir__store_destroy (&store);
    ck_assert_uint_eq (s_keys (dir, "e/00000000000000000001/"), 0);
    ck_assert_uint_eq (s_keys (dir, "s/00000000000000000002/"), 2);
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

//  A checkpoint goes on in the pipeline of its shape, or of the older
//  form of it (where elements connect kept in, as weirs before wrote it)
static weir__resume *s_resume_of_shape (const char *stored, const weir__shapes *shapes, weir__err *err)
{
    weir__ckpt *ck = weir__ckpt_new (3);
    ck_assert_ptr_nonnull (ck);
    ck_assert_int_eq (weir__ckpt_put_text (ck, WEIR__SECTION_META, WEIR_META_SHAPE, stored), 0);
    ck_assert_int_eq (weir__ckpt_put_text (ck, WEIR__SECTION_META, WEIR_META_DESCRIPTION, "kafka x ! null"),
                      0);
    char *buf;
    size_t len;
    ck_assert_int_eq (weir__ckpt_pack (ck, &buf, &len), 0);
    weir__ckpt_destroy (&ck);
    weir__resume *r = NULL;
    weir__err_init (err);
    weir__resume_unpack (buf, len, shapes, "rank 0", &r, err);
    free (buf);
    return r;
}

START_TEST (test_older_shapes_are_accepted)
{
    const char *now = "kafka topic=t ! null";
    const char *older = "kafka brokers=h:1 topic=t ! null";
    weir__shapes both = {now, older}, only_now = {now, NULL};
    weir__err err;
    weir__resume *r = s_resume_of_shape (now, &both, &err);
    ck_assert_ptr_nonnull (r);
    size_t n;
    const char *shape = weir__resume_shape (r, &n);
    ck_assert_int_eq (weir__change_older_shape (shape, n), 0);
    weir__resume_destroy (&r);
    r = s_resume_of_shape (older, &both, &err);
    ck_assert_ptr_nonnull (r);
    shape = weir__resume_shape (r, &n);
    ck_assert_int_eq (weir__change_older_shape (shape, n), 1);
    size_t len;
    const char *was = weir__resume_description (r, &len);
    ck_assert_int_eq ((int) len, 14);
    ck_assert (memcmp (was, "kafka x ! null", len) == 0);
    ck_assert_int_eq (weir__resume_same (r, &only_now, &was, &len), 0);
    weir__resume_destroy (&r);
    //  The older form of another place, and no older form at all: refused
    r = s_resume_of_shape ("kafka brokers=h:2 topic=t ! null", &both, &err);
    ck_assert_ptr_null (r);
    ck_assert_int_eq (err.code, WEIR_ESTRUCTURE);
    ck_assert_ptr_nonnull (strstr (err.msg, "where elements connect (brokers=, conninfo=) may change"));
    r = s_resume_of_shape (older, &only_now, &err);
    ck_assert_ptr_null (r);
    r = s_resume_of_shape ("postgres conninfo=host=x table=t", &both, &err);
    ck_assert_ptr_null (r);
}
END_TEST

Suite *check_suite (void)
{
    Suite *s = suite_create ("store");
    TCase *tc = tcase_create ("core");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_round_trip_with_chunked_blob);
    tcase_add_test (tc, test_retention_keeps_the_newest);
    tcase_add_test (tc, test_retention_keeps_the_best);
    tcase_add_test (tc, test_missing_or_altered_keys_are_refused);
    tcase_add_test (tc, test_unchanged_blobs_are_written_once);
    tcase_add_test (tc, test_held_bytes_altered_are_refused);
    tcase_add_test (tc, test_stores_of_before_are_read);
    tcase_add_test (tc, test_flipped_bytes_on_disk_are_refused);
    tcase_add_test (tc, test_hash_sees_every_byte);
    tcase_add_test (tc, test_copy_shares_only_old_tables);
    tcase_add_test (tc, test_older_shapes_are_accepted);
    suite_add_tcase (s, tc);
    return s;
}

/*  tests/check_workspace.c - the job's blobs: zeroed, aligned, shared by
    name, restored whole, safe to create from many threads; regions
    reduced across ranks, each refusal told apart.  */
#include <pthread.h>
#include <stdint.h>

#include "lib/workspace.h"
#include "tests/testutil.h"

START_TEST (test_blob_is_zeroed_aligned_and_shared)
{
    weir__workspace *ws = weir__workspace_new ();
    ck_assert_ptr_nonnull (ws);
    weir__err err;
    weir__err_init (&err);
    unsigned char *a = weir__workspace_blob (ws, "model", 1000, &err);
    ck_assert_ptr_nonnull (a);
    ck_assert_uint_eq ((uintptr_t) a % 64, 0);
    for (size_t i = 0; i < 1000; i++)
        ck_assert_uint_eq (a[i], 0);
    a[7] = 42;
    //  The same name is the same memory, for every stage and thread
    ck_assert_ptr_eq (weir__workspace_blob (ws, "model", 1000, &err), a);
    size_t size = 0;
    ck_assert_ptr_eq (weir__workspace_find (ws, "model", &size), a);
    ck_assert_uint_eq (size, 1000);
    ck_assert_ptr_null (weir__workspace_find (ws, "other", &size));
    weir__workspace_destroy (&ws);
    ck_assert_ptr_null (ws);
    weir__workspace_destroy (&ws);
}
END_TEST

START_TEST (test_blob_of_another_size_is_refused)
{
    weir__workspace *ws = weir__workspace_new ();
    weir__err err;
    weir__err_init (&err);
    ck_assert_ptr_nonnull (weir__workspace_blob (ws, "w", 64, &err));
    ck_assert_ptr_null (weir__workspace_blob (ws, "w", 128, &err));
    ck_assert_int_eq (err.code, WEIR_EPROCESSOR);
    ck_assert_msg (strstr (err.msg, "blob 'w' is 64 bytes, not 128"), "%s", err.msg);
    weir__workspace_destroy (&ws);
}
END_TEST

START_TEST (test_restore_creates_replaces_and_resizes)
{
    weir__workspace *ws = weir__workspace_new ();
    weir__err err;
    weir__err_init (&err);
    //  A checkpoint's blob before any stage asked for it
    ck_assert_int_eq (weir__workspace_restore (ws, "step", "\1\2\3\4\5\6\7\10", 8), 0);
    uint64_t *step = weir__workspace_blob (ws, "step", 8, &err);
    ck_assert_ptr_nonnull (step);
    ck_assert_int_eq (memcmp (step, "\1\2\3\4\5\6\7\10", 8), 0);
    //  Over an existing one of the same size: the same memory, new bytes
    ck_assert_int_eq (weir__workspace_restore (ws, "step", "abcdefgh", 8), 0);
    ck_assert_ptr_eq (weir__workspace_blob (ws, "step", 8, &err), step);
    ck_assert_int_eq (memcmp (step, "abcdefgh", 8), 0);
    //  The checkpoint says what the blob is: another size replaces it
    ck_assert_int_eq (weir__workspace_restore (ws, "step", "xyz", 3), 0);
    size_t size;
    const char *now = weir__workspace_find (ws, "step", &size);
    ck_assert_uint_eq (size, 3);
    ck_assert_int_eq (memcmp (now, "xyz", 3), 0);
    //  An empty blob is a blob
    ck_assert_int_eq (weir__workspace_restore (ws, "empty", NULL, 0), 0);
    ck_assert_ptr_nonnull (weir__workspace_find (ws, "empty", &size));
    ck_assert_uint_eq (size, 0);
    weir__workspace_destroy (&ws);
}
END_TEST

START_TEST (test_items_in_creation_order)
{
    weir__workspace *ws = weir__workspace_new ();
    weir__err err;
    weir__err_init (&err);
    const char *names[] = {"zeta", "alpha", "mid"};
    for (size_t i = 0; i < 3; i++)
        ck_assert_ptr_nonnull (weir__workspace_blob (ws, names[i], 16 * (i + 1), &err));
    ck_assert_uint_eq (weir__workspace_count (ws), 3);
    for (size_t i = 0; i < 3; i++) {
        void *data;
        size_t size;
        ck_assert_str_eq (weir__workspace_item (ws, i, &data, &size), names[i]);
        ck_assert_uint_eq (size, 16 * (i + 1));
    }
    void *data;
    size_t size;
    ck_assert_ptr_null (weir__workspace_item (ws, 3, &data, &size));
    weir__workspace_destroy (&ws);
}
END_TEST

typedef struct {
    weir__workspace *ws;
    void *got[64];
} s_racer;

static void *s_race (void *arg)
{
    s_racer *r = arg;
    weir__err err;
    weir__err_init (&err);
    for (int i = 0; i < 64; i++) {
        char name[16];
        snprintf (name, sizeof name, "b%d", i);
        r->got[i] = weir__workspace_blob (r->ws, name, 256, &err);
    }
    return NULL;
}

START_TEST (test_threads_get_one_blob_per_name)
{
    //  Every thread of every stage opens its blobs at once: one blob each
    weir__workspace *ws = weir__workspace_new ();
    s_racer racers[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        racers[i].ws = ws;
        pthread_create (&t[i], NULL, s_race, &racers[i]);
    }
    for (int i = 0; i < 4; i++)
        pthread_join (t[i], NULL);
    ck_assert_uint_eq (weir__workspace_count (ws), 64);
    for (int k = 0; k < 64; k++) {
        ck_assert_ptr_nonnull (racers[0].got[k]);
        for (int i = 1; i < 4; i++)
            ck_assert_ptr_eq (racers[i].got[k], racers[0].got[k]);
    }
    weir__workspace_destroy (&ws);
}
END_TEST

START_TEST (test_reduce_refusals_are_told_apart)
{
    //  Each refusal has its own value, and none is a WEIR_E* code: "no
    //  such blob" was once -1, which is also WEIR_ENOMEM
    ck_assert_int_gt (WEIR__WORKSPACE_NO_BLOB, 0);
    ck_assert_int_gt (WEIR__WORKSPACE_OUTSIDE, 0);
    ck_assert_int_ne (WEIR__WORKSPACE_NO_BLOB, WEIR__WORKSPACE_OUTSIDE);
    weir__workspace *ws = weir__workspace_new ();
    weir__err err;
    weir__err_init (&err);
    ck_assert_ptr_nonnull (weir__workspace_blob (ws, "w", 64, &err));
    ck_assert_int_eq (weir__workspace_add_reduce (ws, "none", 0, 1, 8, 0, 0), WEIR__WORKSPACE_NO_BLOB);
    ck_assert_int_eq (weir__workspace_add_reduce (ws, "w", 0, 9, 8, 0, 0), WEIR__WORKSPACE_OUTSIDE);
    ck_assert_int_eq (weir__workspace_add_reduce (ws, "w", 4, 1, 8, 0, 0), WEIR__WORKSPACE_OUTSIDE);
    ck_assert_uint_eq (weir__workspace_reduce_count (ws), 0);
    ck_assert_int_eq (weir__workspace_add_reduce (ws, "w", 56, 1, 8, 0, 0), 0);
    ck_assert_uint_eq (weir__workspace_reduce_count (ws), 1);
    weir__workspace_destroy (&ws);
}
END_TEST

START_TEST (test_a_region_declared_again_alike_is_kept_once)
{
    //  A resume declares the checkpoint's regions, then open may declare
    //  them again: combined twice, a sum would count every change twice
    weir__workspace *ws = weir__workspace_new ();
    weir__err err;
    weir__err_init (&err);
    ck_assert_ptr_nonnull (weir__workspace_blob (ws, "w", 64, &err));
    ck_assert_int_eq (weir__workspace_add_reduce (ws, "w", 8, 2, 8, 2, 0), 0);
    ck_assert_int_eq (weir__workspace_add_reduce (ws, "w", 8, 2, 8, 2, 0), 0);
    ck_assert_uint_eq (weir__workspace_reduce_count (ws), 1);
    //  Another operation, count or place is another region
    ck_assert_int_eq (weir__workspace_add_reduce (ws, "w", 8, 2, 8, 2, 1), 0);
    ck_assert_int_eq (weir__workspace_add_reduce (ws, "w", 8, 3, 8, 2, 0), 0);
    ck_assert_int_eq (weir__workspace_add_reduce (ws, "w", 16, 2, 8, 2, 0), 0);
    ck_assert_uint_eq (weir__workspace_reduce_count (ws), 4);
    weir__workspace_region r;
    ck_assert_str_eq (weir__workspace_reduce (ws, 0, &r), "w");
    ck_assert_uint_eq (r.width, 8);
    ck_assert_uint_eq (r.offset, 8);
    weir__workspace_destroy (&ws);
}
END_TEST

Suite *check_suite (void)
{
    Suite *s = suite_create ("workspace");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_blob_is_zeroed_aligned_and_shared);
    tcase_add_test (tc, test_blob_of_another_size_is_refused);
    tcase_add_test (tc, test_restore_creates_replaces_and_resizes);
    tcase_add_test (tc, test_items_in_creation_order);
    tcase_add_test (tc, test_threads_get_one_blob_per_name);
    tcase_add_test (tc, test_reduce_refusals_are_told_apart);
    tcase_add_test (tc, test_a_region_declared_again_alike_is_kept_once);
    suite_add_tcase (s, tc);
    return s;
}

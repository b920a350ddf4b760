/*  tests/testutil.h - small helpers shared by the Check suites.  */
#ifndef WEIR_TESTUTIL_H_INCLUDED
#define WEIR_TESTUTIL_H_INCLUDED

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*  A fresh temporary directory for one test; removed by testutil_rmdir.  */
static inline char *testutil_mkdtemp (void)
{
    const char *base = getenv ("TMPDIR");
    char *path = malloc (4096);
    snprintf (path, 4096, "%s/weir-test-XXXXXX", base && *base ? base : "/tmp");
    ck_assert_ptr_nonnull (mkdtemp (path));
    return path;
}

static inline void testutil_rmdir (char *path)
{
    char cmd[4200];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", path);
    ck_assert_int_eq (system (cmd), 0);
    free (path);
}

/*  Write LEN bytes to PATH.  */
static inline void testutil_write (const char *path, const void *data, size_t len)
{
    FILE *f = fopen (path, "wb");
    ck_assert_ptr_nonnull (f);
    ck_assert_uint_eq (fwrite (data, 1, len, f), len);
    ck_assert_int_eq (fclose (f), 0);
}

/*  Read all of PATH; *LEN is its size.  Caller frees.  */
static inline char *testutil_read (const char *path, size_t *len)
{
    FILE *f = fopen (path, "rb");
    ck_assert_ptr_nonnull (f);
    size_t cap = 4096, n = 0;
    char *data = malloc (cap + 1);
    size_t got;
    while ((got = fread (data + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap)
            data = realloc (data, (cap *= 2) + 1);
    }
    fclose (f);
    data[n] = '\0';
    *len = n;
    return data;
}

/*  Every suite defines this; tests/runner.c runs it.  */
Suite *check_suite (void);

#endif

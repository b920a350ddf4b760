/*  tests/libsvmutil.h - the libsvm writer driven directly, for the two
    libsvm suites (the reader's round trip writes too).  */
#ifndef WEIR_LIBSVMUTIL_H_INCLUDED
#define WEIR_LIBSVMUTIL_H_INCLUDED

#include "lib/batch.h"
#include "writers/writer.h"
#include "tests/testutil.h"

/*  Open the writer on PATH with scale=SCALE (each unless NULL), THREADS
    threads, resuming from RESUME (or NULL); *RC is open's code.  */
static inline void *libsvmutil_writer_open (const char *path, const char *scale, unsigned threads,
                                            const char *resume, weir__err *err, int *rc)
{
    weir__props props;
    weir__props_init (&props);
    if (path)
        weir__props_add (&props, "path", path, -1, -1);
    if (scale)
        weir__props_add (&props, "scale", scale, -1, -1);
    void *state = NULL;
    *rc = weir__writer_libsvm.open (&props, threads, resume, 0, &state, err);
    weir__props_release (&props);
    return state;
}

/*  Write the records of B, from thread 0.  */
static inline int libsvmutil_write (void *w, const weir__batch *b, weir__err *err)
{
    return weir__writer_libsvm.write (w, 0, b->data + WEIR__BATCH_HEADER, weir__batch_payload (b), b->count,
                                      err);
}

/*  Write the records of B into PATH with a writer of one thread (and
    scale=SCALE unless NULL), every step of which must succeed.  */
static inline void libsvmutil_write_file (const char *path, const char *scale, const weir__batch *b)
{
    weir__err err;
    weir__err_init (&err);
    int rc;
    void *w = libsvmutil_writer_open (path, scale, 1, NULL, &err, &rc);
    ck_assert_msg (rc == 0, "%s", err.msg);
    ck_assert_msg (libsvmutil_write (w, b, &err) == 0, "%s", err.msg);
    ck_assert_int_eq (weir__writer_libsvm.close (w, &err), 0);
}

/*  Write the records of B into PATH, where the writer must refuse one:
    its message in *ERR; the writer is closed, keeping the lines of the
    records before it.  */
static inline void libsvmutil_write_refused (const char *path, const weir__batch *b, weir__err *err)
{
    int rc;
    weir__err_init (err);
    void *w = libsvmutil_writer_open (path, NULL, 1, NULL, err, &rc);
    ck_assert_msg (rc == 0, "%s", err->msg);
    ck_assert_int_eq (libsvmutil_write (w, b, err), WEIR_ECORRUPT);
    weir__err closing;
    weir__err_init (&closing);
    ck_assert_int_eq (weir__writer_libsvm.close (w, &closing), 0);
}

#endif

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

#endif

/*  writers/outfile.h - an output file shared by the threads of a writer,
    with per-thread buffers.

    Each thread appends to its own buffer without a lock; a buffer is
    written whole under the file's lock, so records from different threads
    never interleave.  Standard output, pipes and terminals are written
    through at each batch and never truncated nor sought.  Functions that
    can fail return 0 or a WEIR_E* code with ERR filled, naming the
    element and the file.  The dead letter of a stage is one too
    (pipeline/deadletter.c).  */
#ifndef WEIR_OUTFILE_H_INCLUDED
#define WEIR_OUTFILE_H_INCLUDED

#include <pthread.h>
#include <stdint.h>

#include "lib/buf.h"
#include "lib/error.h"
#include "writers/writer.h"

typedef struct weir__outfile {
    const char *element;
    char *path;
    int fd;
    int stream;      //  standard output, a pipe, a terminal: never truncated nor sought
    int named;       //  its directory entry was synced
    uint64_t bytes;  //  written so far (under lock)
    pthread_mutex_t lock;
    unsigned threads;
    weir__buf *pending;  //  per thread, written when large
} weir__outfile;

/*  Does PATH name an output that is written as a stream: standard output
    ('-', /dev/stdout), or an existing pipe, FIFO, terminal or device?  It
    is neither truncated nor sought, so a job cannot go back to a
    checkpoint's length in it.  */
int weir__outfile_is_stream (const char *path);

/*  RESUME as for a writer's open: NULL, or the committed length.  */
int weir__outfile_open (weir__outfile *of, const char *element, const char *path, unsigned threads,
                        const char *resume, weir__err *err);

/*  THREAD's buffer, to append to; then call weir__outfile_spill.  */
static inline weir__buf *weir__outfile_buf (weir__outfile *of, unsigned thread)
{
    return &of->pending[thread];
}

/*  Write THREAD's buffer out once it is large.  */
int weir__outfile_spill (weir__outfile *of, unsigned thread, weir__err *err);

/*  Write THREAD's buffer out now.  */
int weir__outfile_flush (weir__outfile *of, unsigned thread, weir__err *err);

/*  fsync, and the length written so far as text in OUT.  */
int weir__outfile_commit (weir__outfile *of, char *out, weir__err *err);

/*  Write every buffer, close, release; the first failure is returned.  */
int weir__outfile_close (weir__outfile *of, weir__err *err);

#endif

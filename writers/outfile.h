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
#include "lib/compress.h"
#include "lib/error.h"
#include "writers/writer.h"

typedef struct weir__outfile {
    const char *element;
    char *path;
    int fd;
    int stream;  //  standard output, a pipe, a terminal: never truncated nor sought
    int named;   //  its directory entry was synced
    //  WEIR__WRITER_REPLACE: the file written beside PATH, renamed over
    //  it at close unless the job failed (DISCARD); NULL when PATH itself
    //  is written
    char *temp;
    int discard;
    uint64_t bytes;  //  written so far (under lock)
    //  compress=: what is written goes through Z into ZOUT (under lock)
    weir__compress *z;
    weir__buf zout;
    pthread_mutex_t lock;
    unsigned threads;
    weir__buf *pending;  //  per thread, written when large
} weir__outfile;

/*  Does PATH name an output that is written as a stream: standard output
    ('-', /dev/stdout), or an existing pipe, FIFO, terminal or device?  It
    is neither truncated nor sought, so a job cannot go back to a
    checkpoint's length in it.  */
int weir__outfile_is_stream (const char *path);

/*  RESUME as for a writer's open: NULL, or the committed length.  FLAGS:
    WEIR__WRITER_REPLACE on a fresh start writes a new file beside a
    regular file PATH (hidden: .NAME.weir-PID-N), which close renames over
    PATH, or deletes after weir__outfile_discard.  A stream, or a folder
    that takes no new file, is written in place.  */
int weir__outfile_open (weir__outfile *of, const char *element, const char *path, unsigned threads,
                        const char *resume, unsigned flags, weir__err *err);

/*  What is written from now on is compressed as CODEC at LEVEL
    (lib/compress.h).  Each commit ends the gzip member or zstd frame open
    before it syncs, so the length it commits is a whole compressed file,
    and a resume cut back to it appends new members to a valid one; a
    stream is flushed at each write, for whoever reads it.  Called after
    open, before any write.  0 or WEIR_ENOMEM.  */
int weir__outfile_compress (weir__outfile *of, weir__codec codec, int level, weir__err *err);

/*  The job failed: close deletes what was written beside the file, and
    the file stays as it was (WEIR__WRITER_REPLACE).  */
void weir__outfile_discard (weir__outfile *of);

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

/*  Write every buffer, close (WEIR__WRITER_REPLACE: sync the new file and
    rename it over the old one, synced), release; the first failure is
    returned, and then the old file stays.  */
int weir__outfile_close (weir__outfile *of, weir__err *err);

#endif

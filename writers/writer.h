/*  writers/writer.h - what a builtin writer is.

    A writer takes whole batches.  Its write() is called by every writer
    thread, each passing its thread index so that per-thread buffers need no
    lock; what reaches a shared file goes through weir__outfile, which
    serialises whole buffers, so records from different threads never
    interleave inside a line.  */
#ifndef WEIR_WRITER_H_INCLUDED
#define WEIR_WRITER_H_INCLUDED

#include <pthread.h>
#include <stdint.h>
#include <weir/weir.h>

#include "lib/buf.h"
#include "lib/error.h"
#include "lib/props.h"

/*  The committed state of a writer (for a file, its length in bytes) as
    text, at most this long.  */
#define WEIR__WRITER_STATE_MAX 64

typedef struct weir__writer_class {
    const char *name;
    const char *description;
    const weir_property_info *props;
    /*  RESUME is NULL on a fresh start (files are created empty), else the
        committed state a checkpoint recorded: the writer goes back to it
        (a file is truncated to its committed length) and appends.  */
    int (*open) (weir__props *props, unsigned threads, const char *resume, void **state, weir__err *err);
    /*  PAYLOAD is COUNT well-formed records back to back.  */
    int (*write) (void *state, unsigned thread, const char *payload, size_t len, uint32_t count,
                  weir__err *err);
    /*  At an epoch barrier, from writer thread THREAD: hand everything the
        thread buffered to the output.  */
    int (*flush) (void *state, unsigned thread, weir__err *err);
    /*  With every thread flushed: make the output durable (fsync) and say
        what is committed, as text in OUT.  */
    int (*commit) (void *state, char *out, weir__err *err);
    /*  Flush and release everything; the first failure is returned.  STATE
        is freed even then.  */
    int (*close) (void *state, weir__err *err);
} weir__writer_class;

extern const weir__writer_class weir__writer_null;
extern const weir__writer_class weir__writer_lines;
extern const weir__writer_class weir__writer_msgpack;
extern const weir__writer_class weir__writer_leveldb;
extern const weir__writer_class weir__writer_libsvm;
extern const weir__writer_class weir__writer_json;

/*  An output file shared by the threads of a writer, with per-thread
    buffers (writers/outfile.c).  */
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

/*  THREAD's buffer, to append to; then call weir__outfile_commit.  */
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

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

typedef struct weir__writer_class {
    const char *name;
    const char *description;
    const weir_property_info *props;
    int (*open) (weir__props *props, unsigned threads, void **state, weir__err *err);
    /*  PAYLOAD is COUNT well-formed records back to back.  */
    int (*write) (void *state, unsigned thread, const char *payload, size_t len, uint32_t count,
                  weir__err *err);
    /*  Flush and release everything; the first failure is returned.  STATE
        is freed even then.  */
    int (*close) (void *state, weir__err *err);
} weir__writer_class;

extern const weir__writer_class weir__writer_null;
extern const weir__writer_class weir__writer_lines;
extern const weir__writer_class weir__writer_msgpack;

/*  An output file shared by the threads of a writer, with per-thread
    buffers (writers/outfile.c).  */
typedef struct weir__outfile {
    const char *element;
    char *path;
    int fd;
    uint64_t bytes;             //  written so far (under lock)
    pthread_mutex_t lock;
    unsigned threads;
    weir__buf *pending;         //  per thread, written when large
} weir__outfile;

int weir__outfile_open (weir__outfile *of, const char *element, const char *path, unsigned threads,
                        weir__err *err);

/*  THREAD's buffer, to append to; then call weir__outfile_commit.  */
static inline weir__buf *weir__outfile_buf (weir__outfile *of, unsigned thread)
{
    return &of->pending[thread];
}

/*  Write THREAD's buffer out once it is large.  */
int weir__outfile_commit (weir__outfile *of, unsigned thread, weir__err *err);

/*  Write every buffer, close, release; the first failure is returned.  */
int weir__outfile_close (weir__outfile *of, weir__err *err);

#endif

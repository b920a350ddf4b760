/*  writers/writer.h - what a builtin writer is.

    A writer takes whole batches.  Its write() is called by every writer
    thread, each passing its thread index so that per-thread buffers need no
    lock; what reaches a shared file goes through weir__outfile
    (writers/outfile.h), which serialises whole buffers, so records from
    different threads never interleave inside a line.  */
#ifndef WEIR_WRITER_H_INCLUDED
#define WEIR_WRITER_H_INCLUDED

#include <stdint.h>
#include <weir/weir.h>

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

#endif

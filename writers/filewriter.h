/*  writers/filewriter.h - the skeleton of the writers of a file.

    lines, json, msgpack and libsvm write one file shared by their threads
    (writers/outfile.h): path= opened (created empty, or on a resume cut
    back to the length the checkpoint committed; without a checkpoint, a
    new file beside it that replaces it when the job succeeds), each
    thread's bytes buffered and written whole, flushed at barriers, synced
    at commits, closed.  The skeleton does that once.  A writer of a file fills a
    weir__filewriter_class with only what differs: how a batch becomes
    bytes, and its own properties and state.  Its writer class
    (writers/writer.h) is WEIR__FILEWRITER_WRITER, whose open calls
    weir__filewriter_open with its filewriter class.  */
#ifndef WEIR_FILEWRITER_H_INCLUDED
#define WEIR_FILEWRITER_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "lib/props.h"
#include "writers/outfile.h"
#include "writers/writer.h"

/*  The row of path=, which every writer of a file takes, for its
    property table.  */
#define WEIR__FILEWRITER_PATH                                                                                \
    {                                                                                                        \
        "path", NULL, "the file to write (required; replaced if it exists)"                                  \
    }

/*  The rows of compress= and level=, which every writer of a file takes.  */
#define WEIR__FILEWRITER_COMPRESS                                                                            \
    {                                                                                                        \
        "compress", "none",                                                                                  \
            "gzip or zstd: write the file compressed, one gzip member or zstd frame per epoch, so that a"    \
            " file cut back to a checkpoint stays whole (none: as it is)"                                    \
    }
#define WEIR__FILEWRITER_LEVEL                                                                               \
    {                                                                                                        \
        "level", NULL,                                                                                       \
            "with compress=: gzip 1 (fast) to 9 (small), 6 by default; zstd 1 to 19, 3 by default"           \
    }

typedef struct weir__filewriter_class {
    //  Its writer class: the name its messages start with
    const weir__writer_class *writer;
    /*  Read its own properties into its own state *OWN, for THREADS
        threads: 0 or a WEIR_E* code with ERR filled.  Called once path=
        is read, before the file is opened.  NULL: it has none.  */
    int (*open) (weir__props *props, unsigned threads, void **own, weir__err *err);
    /*  Append the COUNT records of PAYLOAD (well-formed, back to back) to
        the buffer of THREAD in FILE (weir__outfile_buf): 0, or a WEIR_E*
        code with ERR filled (FILE's path is there for messages).  The
        skeleton writes the buffer out once it is large.  */
    int (*write) (void *own, weir__outfile *file, unsigned thread, const char *payload, size_t len,
                  uint32_t count, weir__err *err);
    //  Free OWN (NULL: nothing to free)
    void (*close) (void *own);
} weir__filewriter_class;

/*  The writer class's open: path= and KIND's own properties, then the
    file opened (RESUME as for weir__outfile_open).  */
int weir__filewriter_open (const weir__filewriter_class *kind, weir__props *props, unsigned threads,
                           const char *resume, unsigned flags, void **state, weir__err *err);

/*  The writer class's write, flush, commit, close and discard (writers/writer.h),
    for STATE from weir__filewriter_open.  */
int weir__filewriter_write (void *state, unsigned thread, const char *payload, size_t len, uint32_t count,
                            weir__err *err);
int weir__filewriter_flush (void *state, unsigned thread, weir__err *err);
int weir__filewriter_commit (void *state, char *out, weir__err *err);
int weir__filewriter_close (void *state, weir__err *err);
void weir__filewriter_discard (void *state);

/*  The writer class of a writer of a file: OPEN calls
    weir__filewriter_open with its filewriter class, and the rest is the
    skeleton's.  */
#define WEIR__FILEWRITER_WRITER(NAME, DESCRIPTION, PROPS, OPEN)                                              \
    {                                                                                                        \
        NAME, DESCRIPTION, PROPS, OPEN, weir__filewriter_write, weir__filewriter_flush,                      \
            weir__filewriter_commit, weir__filewriter_close, weir__filewriter_discard, NULL, NULL            \
    }

#endif

/*  readers/filereader.h - the skeleton of the readers of files.

    lines, json, libsvm and msgpack read files the same way: the files of
    a glob planned into shards (readers/files.h), each read through a
    window (readers/window.h), and with follow=1 watched as tail -F does
    (readers/follow.h).  The skeleton does all of that once, and reads the
    properties they share.  A reader of files fills a
    weir__filereader_class with only what differs: its own properties and
    state, and how it turns the bytes of a window into records.  Its
    reader class (readers/reader.h) is WEIR__FILEREADER_READER, whose open
    calls weir__filereader_open with its filereader class.

    The shared properties are declared once, here, as the rows of a
    reader's property table (what 'weir elements' prints and what the
    builder checks names against); the skeleton reads each with the
    default of its row, so a default is never written twice.  */
#ifndef WEIR_FILEREADER_H_INCLUDED
#define WEIR_FILEREADER_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "lib/props.h"
#include "readers/files.h"
#include "readers/reader.h"
#include "readers/shards.h"
#include "readers/window.h"

/*  The rows of the shared properties.  FILES says what the files are;
    NOTE follows the text of max-line (a reader with a smaller largest);
    GROW and THREAD complete the text of follow.  */
#define WEIR__FILEREADER_PATH(FILES)                                                                         \
    {                                                                                                        \
        "path", NULL, "file or glob of " FILES " (required), or - for standard input; each file is a shard"  \
    }
#define WEIR__FILEREADER_SPLIT                                                                               \
    {                                                                                                        \
        "split", "64M", "cut files larger than this many bytes into shards at line boundaries"               \
    }
#define WEIR__FILEREADER_SPLIT_RECORDS                                                                       \
    {                                                                                                        \
        "split", "8M",                                                                                       \
            "cut files larger than this many bytes into shards at record boundaries, found by reading each"  \
            " such file through once when the job starts"                                                    \
    }
#define WEIR__FILEREADER_MAX_LINE(NOTE)                                                                      \
    {                                                                                                        \
        "max-line", "64M", "refuse lines longer than this many bytes" NOTE                                   \
    }
#define WEIR__FILEREADER_MAX_RECORD                                                                          \
    {                                                                                                        \
        "max-record", "64M", "refuse records larger than this many bytes"                                    \
    }
#define WEIR__FILEREADER_FOLLOW(GROW, THREAD)                                                                \
    {                                                                                                        \
        "follow", "0",                                                                                       \
            "1: like tail -F, wait for the files to grow" GROW                                               \
            ", pick up new files, follow rotations and truncations, never read a rotated copy the path"      \
            " matches again (one thread" THREAD ")"                                                          \
    }
#define WEIR__FILEREADER_SNIFF                                                                               \
    {                                                                                                        \
        "sniff", "warn",                                                                                     \
            "look at each file's first bytes (a gzip or zstd file's decompressed): warn when they look"      \
            " like another format (text for msgpack, binary for a text reader) and refuse a bzip2 or xz"     \
            " file (warn); refuse both (fail); read every file as it is, a compressed one undecompressed"    \
            " (off)"                                                                                         \
    }
#define WEIR__FILEREADER_ROTATE_WAIT                                                                         \
    {                                                                                                        \
        "rotate-wait", "1000",                                                                               \
            "with follow=1: ms a rotated file must be quiet before it is left for the new one"               \
    }

typedef struct weir__filereader_class {
    //  Its reader class: the name its messages start with, and the
    //  property table whose rows give the defaults
    const weir__reader_class *reader;
    //  Records are lines: the files are cut at split=, and a record is at
    //  most max-line= bytes and its newline.  Else each file is one shard
    //  and a record at most max-record= bytes.
    int lines;
    //  follow= and rotate-wait= are among its properties
    int follows;
    //  Records that only a scan from a file's start tells apart: with
    //  SCAN (its reader's own state its argument), files larger than
    //  split= are cut at the boundaries it finds (readers/files.h); else,
    //  and when following, each file is one shard
    weir__files_scan_fn *scan;
    //  The largest max-line= or max-record= its parser takes (0: as large
    //  as a buffer may be, SIZE_MAX / 4)
    int64_t largest;
    /*  Read its own properties into its own state *OWN: 0 or a WEIR_E*
        code with ERR filled.  Called once the shared sizes are read,
        before follow=.  NULL: it has none.  */
    int (*open) (weir__props *props, void **own, weir__err *err);
    /*  Read records from the window W of SHARD into SINK, moving *OFFSET
        past each record the sink has; records are at most MAX bytes (the
        value of max-line= or max-record=).  0 at the end of the range,
        what the sink or the window returned (WEIR__WINDOW_IDLE,
        WEIR__WINDOW_DRY), or a WEIR_E* code with ERR filled.  The
        skeleton opened W and leaves it; called concurrently on different
        shards.  */
    int (*read) (void *own, size_t max, weir__shard *shard, weir__window *w, uint64_t *offset,
                 weir__sink *sink, weir__err *err);
    //  Free OWN (NULL: nothing to free)
    void (*close) (void *own);
} weir__filereader_class;

/*  The reader class's open: path=, the shared properties and KIND's own,
    then the shards of the files (or, following, of those there now).  */
int weir__filereader_open (const weir__filereader_class *kind, weir__props *props, void **state,
                           weir__shards *shards, weir__err *err);

/*  The reader class's read, close, discover and wait (readers/reader.h),
    for STATE from weir__filereader_open.  */
int weir__filereader_read (void *state, weir__shard *shard, uint64_t *offset, weir__sink *sink,
                           weir__err *err);
void weir__filereader_close (void *state);
int weir__filereader_discover (void *state, weir__shards *shards, weir__err *err);
int weir__filereader_wait (void *state, weir__sink *sink);

/*  The reader class of a reader of files: OPEN calls weir__filereader_open
    with its filereader class, and the rest is the skeleton's; RECORDS is
    how its records stand in its files.  Discover
    and wait do nothing for a reader that does not follow (the engine
    calls them only for followed shards, shards->follow).  */
#define WEIR__FILEREADER_READER(NAME, DESCRIPTION, PROPS, OPEN, RECORDS)                                     \
    {                                                                                                        \
        NAME, DESCRIPTION, PROPS, OPEN, weir__filereader_read, weir__filereader_close,                       \
            weir__filereader_discover, weir__filereader_wait, NULL, NULL, RECORDS                            \
    }

/*  Read KEY of READER's table as an integer in [MIN, MAX], the default
    that of its row: for a reader's own properties, as the skeleton reads
    the shared ones.  */
int weir__filereader_int (const weir__reader_class *reader, weir__props *props, const char *key, int64_t min,
                          int64_t max, int64_t *out, weir__err *err);

#endif

/*  readers/files.h - the files a reader of files reads: globs (of which
    '-' is standard input, readers/source.h), shards cut at line
    boundaries, lines counted.

    Every function that can fail returns 0 or a WEIR_E* code with ERR
    filled; its messages start with ELEMENT, the reader's name, and name
    the file.  */
#ifndef WEIR_FILES_H_INCLUDED
#define WEIR_FILES_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "readers/shards.h"

/*  Plan the shards of the files matching PATTERN, in the order of their
    sorted names.  With SPLIT, the files are of lines: each is one shard,
    or pieces of about SPLIT bytes when it is larger, each cut moved
    forward to just after a newline; a pipe or device is one shard read to
    its end.  With SPLIT 0 (WEIR__FILES_WHOLE) each file is one shard: its
    records' boundaries cannot be found from the middle of it.  An error
    names ELEMENT and the pattern when nothing matches, or the file.  */
#define WEIR__FILES_WHOLE 0
int weir__files_plan (const char *element, const char *pattern, uint64_t split, weir__shards *shards,
                      weir__err *err);

#endif

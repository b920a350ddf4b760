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

/*  Of the LEN bytes at BUF, the first record: 1 and its *SIZE bytes when
    they hold it whole, 0 when they hold too few bytes to tell, -1 when
    they start with no record (the file is malformed there, which reading
    it will say).  ARG as given to the plan.  */
typedef int (weir__files_scan_fn) (void *arg, const char *buf, size_t len, size_t *size);

/*  As weir__files_plan, for files of records whose boundaries only a scan
    from a file's start can tell (msgpack): a file no larger than SPLIT is
    one shard to its end, as with WEIR__FILES_WHOLE; a larger one is read
    through once, record by record with SCAN, and cut after the first
    record that ends at least SPLIT bytes past its shard's start.  Where a
    record is malformed, larger than MAX bytes or cut by the end of the
    file, no cut is made past it: the rest is the last shard, whose read
    says what is wrong.  */
int weir__files_plan_records (const char *element, const char *pattern, uint64_t split, size_t max,
                              weir__files_scan_fn *scan, void *arg, weir__shards *shards, weir__err *err);

#endif

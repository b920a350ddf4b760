/*  readers/files.h - the files a reader of files reads: globs, standard
    input, shards cut at line boundaries, lines counted.

    Every function that can fail returns 0 or a WEIR_E* code with ERR
    filled; its messages start with ELEMENT, the reader's name, and name
    the file.  */
#ifndef WEIR_FILES_H_INCLUDED
#define WEIR_FILES_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "readers/shards.h"

/*  '-' names standard input, as Unix tools have it: a glob of '-' is
    itself, weir__files_open gives a duplicate of descriptor 0 (read-only,
    close-on-exec) and weir__files_stat its status.  */
struct stat;
int weir__files_is_stdin (const char *path);
int weir__files_open (const char *path);
int weir__files_stat (const char *path, struct stat *st);

/*  The files matching PATTERN, sorted; an error names ELEMENT and the
    pattern when nothing matches.  Free with weir__files_free.  */
int weir__files_glob (const char *element, const char *pattern, char ***paths, size_t *count, weir__err *err);
void weir__files_free (char **paths, size_t count);

/*  Plan the shards of a line-oriented file: one, or pieces of about SPLIT
    bytes when it is larger, each cut moved forward to just after a
    newline; a pipe or device is one shard read to its end.  Errors name
    ELEMENT and PATH.  */
int weir__files_plan_lines (const char *element, const char *path, uint64_t split, weir__shards *shards,
                            weir__err *err);

/*  The newlines in the first END bytes of PATH: a shard that starts
    inside a file knows its byte offset but not its line number, so error
    messages count them, only when they need them.  */
int weir__files_count_lines (const char *element, const char *path, uint64_t end, uint64_t *lines,
                             weir__err *err);

#endif

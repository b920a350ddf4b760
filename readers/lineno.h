/*  readers/lineno.h - line numbers, counted only when a message needs one.

    A shard that starts inside a file knows its byte offset, not its line
    number: an error about a bad line counts the newlines before it, and a
    run that skips many bad lines goes on counting from the last one, so
    that the file is read once however many there are.  */
#ifndef WEIR_LINENO_H_INCLUDED
#define WEIR_LINENO_H_INCLUDED

#include <stdint.h>

#include "lib/error.h"

/*  A count that goes on: the first AT bytes of a file hold BEFORE
    newlines.  Zero it to start.  */
typedef struct weir__lineno {
    uint64_t at, before;
} weir__lineno;

/*  The newlines in the first END bytes of PATH into *LINES (ELEMENT
    names the reader in an error).  */
int weir__lineno_count (const char *element, const char *path, uint64_t end, uint64_t *lines, weir__err *err);

/*  The number (from 1) of the line LINES lines after byte FIRST of PATH,
    counted on from MEMO.  0 when it cannot be counted (standard input, a
    pipe, an unreadable file).  */
uint64_t weir__lineno_at (const char *path, weir__lineno *memo, uint64_t first, uint64_t lines);

#endif

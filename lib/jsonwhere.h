/*  lib/jsonwhere.h - where a line that is not JSON goes wrong, and the
    numbers the parser cannot take as they are.

    The parser (lib/jsonparse.h) says what kind of error a text has but
    not where.  When it refuses a line, this recognizer walks the line by
    JSON's grammar (RFC 8259) and stops at the first byte that breaks it,
    saying what is wrong in words.  It builds nothing and runs only on
    lines already refused, so the parser's speed is untouched.  */
#ifndef WEIR_JSONWHERE_H_INCLUDED
#define WEIR_JSONWHERE_H_INCLUDED

#include <stddef.h>

#include "lib/buf.h"

/*  Walk the N bytes at TEXT as one JSON value between blanks, containers
    nested at most MAX_DEPTH deep: 1 with *WHERE (the offset of the
    offending byte in TEXT) and *PROBLEM (static text) at the first
    error, or 0 when the text is JSON.  A number is an error when its
    value is beyond the range of a double (1e400); an integer beyond the
    64-bit range that fits a double is not.  */
int weir__jsonwhere (const char *text, size_t n, int max_depth, size_t *where, const char **problem);

/*  Copy the N bytes at TEXT into OUT, ".0" added to each integer beyond
    the int64 and uint64 range (outside strings), so that a parser that
    takes only 64-bit integers reads them as doubles.  1 when one was
    found, 0 when none was (OUT then holds TEXT as it is), -1 out of
    memory.  */
int weir__jsonwhere_widen (const char *text, size_t n, weir__buf *out);

#endif

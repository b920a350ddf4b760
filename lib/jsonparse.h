/*  lib/jsonparse.h - one JSON text into one msgpack object.

    The parser is simdjson (Debian's libsimdjson-dev), the fastest there
    is, behind this C interface (lib/jsonparse.cc is the one C++ file of
    weir).  The mapping: an object is a map with str keys, in the order of
    the text (a repeated key is kept twice); an array an array; a string a
    str (UTF-8, \u0000 included); true, false and null their msgpack
    selves; an integer (no point, no exponent) a msgpack integer when it
    fits int64 or uint64, else a float64, as is any other number.  -0 is
    the integer 0, -0.0 a float64.

    Refused: what RFC 8259 refuses (invalid UTF-8 and lone surrogates
    included), a number beyond the range of a double (1e400), containers
    nested deeper than 32 levels (what msgpack-c decodes), and text after
    the value.  */
#ifndef WEIR_JSONPARSE_H_INCLUDED
#define WEIR_JSONPARSE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "lib/batch.h"

#ifdef __cplusplus
extern "C" {
#endif

/*  A parser, for one thread at a time; it keeps buffers as large as the
    longest text it has parsed.  */
typedef struct weir__jsonparse weir__jsonparse;

/*  NULL when out of memory.  */
weir__jsonparse *weir__jsonparse_new (void);
void weir__jsonparse_destroy (weir__jsonparse *self);

#define WEIR__JSONPARSE_MALFORMED 1
/*  *WHERE when the place of an error is not known.  */
#define WEIR__JSONPARSE_NOWHERE SIZE_MAX

/*  Parse the N bytes at TEXT, one JSON value with blanks around it, and
    append it to B as one msgpack object (not counted: the caller does).
    0; WEIR__JSONPARSE_MALFORMED with *WHERE, the offset in TEXT of the
    first byte that is wrong, and *PROBLEM, what is wrong (valid until the
    next call), B as it was; or -1 when out of memory.  */
int weir__jsonparse_pack (weir__jsonparse *self, const char *text, size_t n, weir__batch *b, size_t *where,
                          const char **problem);

#ifdef __cplusplus
}
#endif

#endif

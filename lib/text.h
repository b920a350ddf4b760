/*  lib/text.h - msgpack objects as JSON-like text, for people.

    Maps, arrays, strings, numbers, booleans and nil print as JSON would
    print them.  What JSON cannot say is printed readably rather than
    refused: a map key that is not a string prints as a string of its text
    when it is a number, a boolean or nil, else as "msgpack:" and the hex
    of its msgpack bytes (linear in its size: no quoting within quoting),
    bin prints
    as a string of its bytes (escaped), ext as {"ext":TYPE,"hex":"..."},
    non-finite floats as nan / inf.  */
#ifndef WEIR_TEXT_H_INCLUDED
#define WEIR_TEXT_H_INCLUDED

#include <msgpack.h>

#include "lib/buf.h"

/*  Append OBJ's text to B.  0 or -1 (out of memory).  */
int weir__text_append (weir__buf *b, const msgpack_object *obj);

/*  Append bytes as a quoted, escaped JSON string.  */
int weir__text_append_string (weir__buf *b, const char *p, size_t n);

#endif

/*  lib/jsontext.h - msgpack objects as JSON text, always valid JSON in
    UTF-8.  The json writer writes each record so, and the lines writer
    each record that is not a str, a bin or an integer.

    nil, booleans, integers (the whole int64 and uint64 range), str,
    arrays and maps with str keys are JSON's own.  For the rest JSON has
    no word, and this is the mapping:

    - float64 as the shortest decimal that reads back as the same double,
      with ".0" when it would otherwise read as an integer (2.0, -0.0), so
      that it stays a float through the json reader; float32 as the
      float64 it widens to.  NaN and the infinities are null: lossy.
    - A str that is not valid UTF-8 has each byte that does not belong to
      a valid UTF-8 sequence replaced by U+FFFD: lossy, as JSON text must
      be UTF-8.  Surrogates encoded in UTF-8 (ED A0..BF xx) are invalid.
      Controls are escaped (\n, \t, ... or \u00XX), and so are DEL, '"'
      and '\\'; nothing else is.
    - bin as a string of its bytes in base64 (RFC 4648, with padding).
    - ext as {"ext":TYPE,"base64":"DATA"}.
    - A map key that is not a str as a string of its own JSON text: 8 as
      "8", true as "true", nil as "null", 1.5 as "1.5", [1,"a"] as
      "[1,\"a\"]"; a bin key as its base64.  A container key inside such a
      key is "msgpack:" and the hex of its msgpack bytes instead: quoting
      within quoting would double the size at each level of keys within
      keys.  Two keys may so become equal ("8" and 8).  */
#ifndef WEIR_JSONTEXT_H_INCLUDED
#define WEIR_JSONTEXT_H_INCLUDED

#include <msgpack.h>

#include "lib/buf.h"

/*  Append the JSON text of the msgpack object that starts at P, within N
    bytes, to B, and say in *USED how many bytes it took.  0; -1 out of
    memory; -2 when the bytes are no well-formed msgpack object (what was
    appended is then to be dropped).  */
int weir__jsontext_packed (weir__buf *b, const char *p, size_t n, size_t *used);

/*  The same for a decoded object: 0 or -1 (out of memory).  */
int weir__jsontext_append (weir__buf *b, const msgpack_object *obj);

/*  Append N bytes as a JSON string: quoted, escaped, invalid UTF-8
    replaced.  0 or -1.  */
int weir__jsontext_string (weir__buf *b, const char *p, size_t n);

/*  How many of the N bytes at P, from the first, are valid UTF-8 (N when
    all are): text that a JSON string carries unchanged.  */
size_t weir__jsontext_utf8 (const char *p, size_t n);

#endif

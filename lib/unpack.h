/*  lib/unpack.h - one msgpack object decoded into msgpack_object form.

    What msgpack_unpack does with a zone, for the records of batches:
    strings, binaries and extensions point into the bytes, containers are
    built in the zone.  msgpack-c's unpacker is a general state machine
    that calls back for every object; records are decoded once for every
    processor stage they pass, so this one is a plain descent with each
    container's elements allocated at once, about three times faster on
    a sparse example's map of hundreds of pairs.

    The result is what msgpack_unpack gives, type for type (a signed
    integer format holding a value >= 0 is a POSITIVE_INTEGER, float32
    is FLOAT32 with the value in via.f64), but for the pointers of empty
    things: an empty container's is NULL, and an empty bin's or ext's
    points where its bytes would be (msgpack-c's at its length).  Nesting is limited to WEIR__SCAN_MAX_DEPTH,
   as msgpack-c's is; a container that claims more elements than bytes follow is refused before anything is
   allocated for it.  */
#ifndef WEIR_UNPACK_H_INCLUDED
#define WEIR_UNPACK_H_INCLUDED

#include <msgpack.h>
#include <stddef.h>

/*  Decode the object at DATA[*OFF] (of LEN bytes) into *OBJ, its
    containers in ZONE, and move *OFF past it.  msgpack_unpack's results:
    MSGPACK_UNPACK_SUCCESS (the object ends the bytes), _EXTRA_BYTES
    (more follow), _CONTINUE (the bytes end inside the object),
    _PARSE_ERROR (0xc1, nesting too deep, a count past the bytes) or
    _NOMEM_ERROR; *OFF moves only on the first two.  */
msgpack_unpack_return weir__unpack (const char *data, size_t len, size_t *off, msgpack_zone *zone,
                                    msgpack_object *obj);

#endif

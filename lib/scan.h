/*  lib/scan.h - finding and checking one msgpack object in untrusted bytes
    without decoding it.

    msgpack-c's C API applies no limits: it allocates from declared counts
    and lengths and gives up on nesting deeper than 32.  Readers therefore
    scan every record from outside first: the scan walks the bytes, never
    allocates, and so costs one pass whatever a record declares.  A record
    that passes decodes safely, and its extent is known, so a reader can
    copy it into a batch as raw bytes.  */
#ifndef WEIR_SCAN_H_INCLUDED
#define WEIR_SCAN_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

/*  The deepest nesting of containers that msgpack-c's unpacker accepts.  */
#define WEIR__SCAN_MAX_DEPTH 32

typedef enum {
    WEIR__SCAN_OK = 0,         /*  one whole object: *size is its length  */
    WEIR__SCAN_INCOMPLETE = 1, /*  the bytes end inside the object  */
    WEIR__SCAN_INVALID = -1,   /*  byte 0xc1 (never used) at *where  */
    WEIR__SCAN_TOO_DEEP = -2,  /*  the container at *where nests too deep  */
    WEIR__SCAN_TOO_LARGE = -3, /*  more objects than allowed: the one at *where is one too many  */
} weir__scan_result;

weir__scan_result weir__scan (const void *buf, size_t len, size_t *size, size_t *where);

/*  The same, refusing an object made of more than MAX_ELEMENTS objects
    (itself and everything nested in it).  Decoded, every object costs
    msgpack-c about 24 bytes whatever its encoding: 60 M nils are 60 MB of
    msgpack and 1.4 GB of objects.  */
weir__scan_result weir__scan_limited (const void *buf, size_t len, uint64_t max_elements, size_t *size,
                                      size_t *where);

/*  A short English phrase for a result ("truncated record", ...).  */
const char *weir__scan_strerror (weir__scan_result r);

#endif

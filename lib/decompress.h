/*  lib/decompress.h - a compressed file read as the bytes it stands for.

    The readers of files read a gzip or zstd file (lib/codec.h) as its
    uncompressed bytes: their offsets count those bytes.  A compressed
    stream cannot be entered in the middle, so reading from an offset
    means decompressing the bytes before it and dropping them
    (weir__decompress_skip).  The compressed offset, where data went
    wrong, is kept for messages.  */
#ifndef WEIR_DECOMPRESS_H_INCLUDED
#define WEIR_DECOMPRESS_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/codec.h"
#include "lib/error.h"

typedef struct weir__decompress weir__decompress;

/*  A decompressor of CODEC reading FD from its current offset, the start
    of the compressed data, for messages naming ELEMENT and PATH (both
    borrowed).  NULL when out of memory.  */
weir__decompress *weir__decompress_new (weir__codec codec, int fd, const char *element, const char *path);
void weir__decompress_destroy (weir__decompress **self_p);

/*  Up to WANT uncompressed bytes into BUF: how many, 0 only at the end of
    the data (the file ends after a whole member or frame), or -1 with
    ERR: WEIR_EIO when the file cannot be read, WEIR_ECORRUPT when its
    bytes are not valid data or it ends inside a member or frame (cut
    short), naming the compressed offset; WEIR_ENOMEM.  */
ssize_t weir__decompress_read (weir__decompress *self, void *buf, size_t want, weir__err *err);

/*  Read and drop the next COUNT uncompressed bytes.  0, or -1 with ERR
    as for a read; the data ending before them is WEIR_ECORRUPT.  */
int weir__decompress_skip (weir__decompress *self, uint64_t count, weir__err *err);

/*  The compressed bytes taken so far.  */
uint64_t weir__decompress_taken (const weir__decompress *self);

#endif

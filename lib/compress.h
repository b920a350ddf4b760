/*  lib/compress.h - bytes compressed as gzip or zstd, member by member.

    A writer with compress= puts its bytes through one of these.  Each
    epoch's bytes end as a whole gzip member or zstd frame before the
    file is synced and its length committed, so that a file cut back to
    a committed length on a resume is still valid whole (lib/codec.h: a
    file of members one after another stands for their bytes).  Output is
    appended to a weir__buf for the caller to write.  */
#ifndef WEIR_COMPRESS_H_INCLUDED
#define WEIR_COMPRESS_H_INCLUDED

#include <stddef.h>

#include "lib/buf.h"
#include "lib/codec.h"

typedef struct weir__compress weir__compress;

/*  The levels CODEC takes, and its default.  */
void weir__compress_levels (weir__codec codec, int *min, int *max, int *fallback);

/*  A compressor of CODEC at LEVEL (within weir__compress_levels).  NULL
    when out of memory.  */
weir__compress *weir__compress_new (weir__codec codec, int level);
void weir__compress_destroy (weir__compress **self_p);

/*  LEN bytes at DATA compressed, what comes out appended to OUT; a
    member or frame begins if none is open.  With FLUSH, all of them can
    be read from OUT at once (a reader of a pipe waits for them), at some
    cost to the ratio.  0, or -1 when out of memory.  */
int weir__compress_add (weir__compress *self, const void *data, size_t len, int flush, weir__buf *out);

/*  End the member or frame open, if any, its last bytes appended to OUT.
    0, or -1 when out of memory.  */
int weir__compress_end (weir__compress *self, weir__buf *out);

#endif

/*  lib/codec.h - the compression formats weir reads and writes.

    gzip (RFC 1952, with zlib) and zstd (RFC 8878, with libzstd), each
    told by its first bytes.  A file may hold several gzip members or
    zstd frames one after another, as 'cat a.gz b.gz' makes and as the
    writers make, one per epoch: it stands for their bytes one after
    another, as zcat and zstdcat read it.  Reading is lib/decompress.h,
    writing lib/compress.h.  */
#ifndef WEIR_CODEC_H_INCLUDED
#define WEIR_CODEC_H_INCLUDED

#include <stddef.h>
#include <string.h>

typedef enum { WEIR__CODEC_NONE = 0, WEIR__CODEC_GZIP, WEIR__CODEC_ZSTD } weir__codec;

/*  How many first bytes tell a format.  */
#define WEIR__CODEC_MAGIC 4

/*  The format the N bytes at P start with, or WEIR__CODEC_NONE.  */
static inline weir__codec weir__codec_of (const void *p, size_t n)
{
    const unsigned char *b = p;
    //  gzip: 1f 8b, then deflate (8), the one method it defines
    if (n >= 3 && b[0] == 0x1f && b[1] == 0x8b && b[2] == 8)
        return WEIR__CODEC_GZIP;
    if (n >= 4 && !memcmp (b, "\x28\xb5\x2f\xfd", 4))
        return WEIR__CODEC_ZSTD;
    return WEIR__CODEC_NONE;
}

/*  "gzip", "zstd", or "none".  */
static inline const char *weir__codec_name (weir__codec codec)
{
    return codec == WEIR__CODEC_GZIP ? "gzip" : codec == WEIR__CODEC_ZSTD ? "zstd" : "none";
}

#endif

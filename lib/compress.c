/*  lib/compress.c - gzip members and zstd frames written.  */
#include "config.h"
#include "lib/compress.h"

#include <stdint.h>
#include <stdlib.h>
#include <zlib.h>
#include <zstd.h>

struct weir__compress {
    weir__codec codec;
    int open;  //  a member or frame begun and not ended
    z_stream z;
    ZSTD_CCtx *zstd;
};

void weir__compress_levels (weir__codec codec, int *min, int *max, int *fallback)
{
    if (codec == WEIR__CODEC_GZIP) {
        *min = 1, *max = 9, *fallback = 6;  //  gzip(1)'s
        return;
    }
    //  zstd(1)'s default, and its levels short of --ultra, which would
    //  need a window a reader may refuse
    *min = 1, *max = 19, *fallback = 3;
}

weir__compress *weir__compress_new (weir__codec codec, int level)
{
    weir__compress *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->codec = codec;
    int ok;
    if (codec == WEIR__CODEC_GZIP)
        //  16 + the largest window: a gzip header and trailer, not zlib's
        ok = deflateInit2 (&self->z, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK;
    else
        ok = (self->zstd = ZSTD_createCCtx ()) != NULL
             && !ZSTD_isError (ZSTD_CCtx_setParameter (self->zstd, ZSTD_c_compressionLevel, level))
             && !ZSTD_isError (ZSTD_CCtx_setParameter (self->zstd, ZSTD_c_checksumFlag, 1));
    if (!ok) {
        if (codec == WEIR__CODEC_ZSTD)
            ZSTD_freeCCtx (self->zstd);
        free (self);
        return NULL;
    }
    return self;
}

void weir__compress_destroy (weir__compress **self_p)
{
    weir__compress *self = *self_p;
    if (!self)
        return;
    if (self->codec == WEIR__CODEC_GZIP)
        deflateEnd (&self->z);
    else
        ZSTD_freeCCtx (self->zstd);
    free (self);
    *self_p = NULL;
}

//  LEN bytes at DATA through deflate with FLUSH (Z_NO_FLUSH,
//  Z_SYNC_FLUSH, Z_FINISH) until it has taken them all and, flushing,
//  given all out.  0 or -1.
static int s_deflate (weir__compress *self, const void *data, size_t len, int flush, weir__buf *out)
{
    self->z.next_in = (Bytef *) (uintptr_t) data;
    self->z.avail_in = (uInt) len;
    for (;;) {
        size_t room = deflateBound (&self->z, self->z.avail_in) + 64;
        if (weir__buf_reserve (out, room))
            return -1;
        self->z.next_out = (Bytef *) out->data + out->len;
        self->z.avail_out = (uInt) (out->cap - out->len > UINT32_MAX ? UINT32_MAX : out->cap - out->len);
        uInt before = self->z.avail_out;
        int rc = deflate (&self->z, flush);
        out->len += before - self->z.avail_out;
        if (rc == Z_STREAM_END)
            return 0;
        if (rc != Z_OK && rc != Z_BUF_ERROR)
            return -1;
        //  Taken all, and (flushing) room was left: all is out
        if (self->z.avail_in == 0 && (flush == Z_NO_FLUSH || self->z.avail_out > 0))
            return 0;
    }
}

//  The same through zstd with MODE (ZSTD_e_continue, _flush, _end).
static int s_zstd (weir__compress *self, const void *data, size_t len, ZSTD_EndDirective mode, weir__buf *out)
{
    ZSTD_inBuffer in = {data, len, 0};
    for (;;) {
        if (weir__buf_reserve (out, ZSTD_CStreamOutSize ()))
            return -1;
        ZSTD_outBuffer o = {out->data + out->len, out->cap - out->len, 0};
        size_t left = ZSTD_compressStream2 (self->zstd, &o, &in, mode);
        out->len += o.pos;
        if (ZSTD_isError (left))
            return -1;
        //  Continuing, done once all is taken; flushing or ending, once
        //  nothing is left to give out
        if (mode == ZSTD_e_continue ? in.pos == in.size : left == 0)
            return 0;
    }
}

int weir__compress_add (weir__compress *self, const void *data, size_t len, int flush, weir__buf *out)
{
    if (len == 0 && !flush)
        return 0;
    self->open = 1;
    if (self->codec == WEIR__CODEC_GZIP) {
        //  deflate takes at most 4 GiB a call
        while (len > UINT32_MAX / 2) {
            if (s_deflate (self, data, UINT32_MAX / 2, Z_NO_FLUSH, out))
                return -1;
            data = (const char *) data + UINT32_MAX / 2;
            len -= UINT32_MAX / 2;
        }
        return s_deflate (self, data, len, flush ? Z_SYNC_FLUSH : Z_NO_FLUSH, out);
    }
    return s_zstd (self, data, len, flush ? ZSTD_e_flush : ZSTD_e_continue, out);
}

int weir__compress_end (weir__compress *self, weir__buf *out)
{
    if (!self->open)
        return 0;
    int rc;
    if (self->codec == WEIR__CODEC_GZIP) {
        rc = s_deflate (self, NULL, 0, Z_FINISH, out);
        if (!rc && deflateReset (&self->z) != Z_OK)
            rc = -1;
    }
    else
        rc = s_zstd (self, NULL, 0, ZSTD_e_end, out);
    if (!rc)
        self->open = 0;
    return rc;
}

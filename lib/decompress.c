/*  lib/decompress.c - gzip members and zstd frames read back.  */
#include "config.h"
#include "lib/decompress.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

//  Compressed bytes read at a time
#define S_IN (256 * 1024)

struct weir__decompress {
    weir__codec codec;
    int fd;
    const char *element, *path;
    unsigned char *in;
    size_t pos, len;  //  unread compressed bytes are in[pos, len)
    uint64_t taken;   //  compressed bytes before in[0]
    int eof;          //  the file has no more
    int open;         //  a member or frame begun and not ended
    z_stream z;
    ZSTD_DStream *zstd;
};

weir__decompress *weir__decompress_new (weir__codec codec, int fd, const char *element, const char *path)
{
    weir__decompress *self = calloc (1, sizeof *self);
    if (!self || !(self->in = malloc (S_IN))) {
        free (self);
        return NULL;
    }
    self->codec = codec;
    self->fd = fd;
    self->element = element;
    self->path = path;
    int ok = codec == WEIR__CODEC_GZIP ? inflateInit2 (&self->z, 16 + MAX_WBITS) == Z_OK
                                       : (self->zstd = ZSTD_createDStream ()) != NULL;
    if (!ok) {
        free (self->in);
        free (self);
        return NULL;
    }
    return self;
}

void weir__decompress_destroy (weir__decompress **self_p)
{
    weir__decompress *self = *self_p;
    if (!self)
        return;
    if (self->codec == WEIR__CODEC_GZIP)
        inflateEnd (&self->z);
    else
        ZSTD_freeDStream (self->zstd);
    free (self->in);
    free (self);
    *self_p = NULL;
}

uint64_t weir__decompress_taken (const weir__decompress *self)
{
    return self->taken + self->pos;
}

//  More compressed bytes into IN (what was not taken moved to its
//  front).  0 (eof set when there are none), or -1 with ERR.
static int s_more (weir__decompress *self, weir__err *err)
{
    if (self->pos) {
        memmove (self->in, self->in + self->pos, self->len - self->pos);
        self->taken += self->pos;
        self->len -= self->pos;
        self->pos = 0;
    }
    ssize_t n;
    do
        n = read (self->fd, self->in + self->len, S_IN - self->len);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return weir__err_set (err, WEIR_EIO, "%s: cannot read '%s' at compressed byte %llu: %s",
                              self->element, self->path, (unsigned long long) (self->taken + self->len),
                              strerror (errno)),
               -1;
    if (n == 0)
        self->eof = 1;
    self->len += (size_t) n;
    return 0;
}

static ssize_t s_corrupt (weir__decompress *self, weir__err *err, const char *what)
{
    weir__err_set (err, WEIR_ECORRUPT, "%s: '%s' is not valid %s data at compressed byte %llu: %s",
                   self->element, self->path, weir__codec_name (self->codec),
                   (unsigned long long) weir__decompress_taken (self), what);
    return -1;
}

//  One step of gzip: into OUT from the compressed bytes in hand.  How
//  many bytes came out, or -1.
static ssize_t s_inflate (weir__decompress *self, unsigned char *out, size_t want, weir__err *err)
{
    if (!self->open) {
        //  Between members: another must begin here
        if (weir__codec_of (self->in + self->pos, self->len - self->pos) != WEIR__CODEC_GZIP)
            return s_corrupt (self, err, "what follows its last gzip member is not another one");
        self->open = 1;
    }
    self->z.next_in = self->in + self->pos;
    self->z.avail_in = (uInt) (self->len - self->pos);
    self->z.next_out = out;
    self->z.avail_out = (uInt) (want > UINT32_MAX ? UINT32_MAX : want);
    int rc = inflate (&self->z, Z_NO_FLUSH);
    self->pos = self->len - self->z.avail_in;
    ssize_t made = (ssize_t) ((size_t) (self->z.next_out - out));
    if (rc == Z_STREAM_END) {
        self->open = 0;
        inflateReset (&self->z);
    }
    else if (rc == Z_MEM_ERROR)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory"), -1;
    else if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT || rc == Z_STREAM_ERROR)
        return s_corrupt (self, err, self->z.msg ? self->z.msg : "a malformed stream");
    return made;
}

//  One step of zstd, as s_inflate.
static ssize_t s_zstd (weir__decompress *self, unsigned char *out, size_t want, weir__err *err)
{
    ZSTD_inBuffer in = {self->in, self->len, self->pos};
    ZSTD_outBuffer o = {out, want, 0};
    size_t rc = ZSTD_decompressStream (self->zstd, &o, &in);
    self->pos = in.pos;
    if (ZSTD_isError (rc)) {
        if (ZSTD_getErrorCode (rc) == ZSTD_error_memory_allocation)
            return weir__err_set (err, WEIR_ENOMEM, "out of memory"), -1;
        return s_corrupt (self, err, ZSTD_getErrorName (rc));
    }
    //  0: a frame ended, and all it held came out
    self->open = rc != 0;
    return (ssize_t) o.pos;
}

ssize_t weir__decompress_read (weir__decompress *self, void *buf, size_t want, weir__err *err)
{
    if (want == 0)
        return 0;
    for (;;) {
        size_t have = self->len - self->pos;
        //  Between members, the next one's first bytes tell whether there
        //  is one: wait for them as for any input
        if ((have == 0 || (!self->open && have < WEIR__CODEC_MAGIC)) && !self->eof) {
            if (s_more (self, err))
                return -1;
            continue;
        }
        if (have == 0) {
            if (!self->open)
                return 0;
            weir__err_set (err, WEIR_ECORRUPT,
                           "%s: '%s' ends at compressed byte %llu inside a %s %s: the file is cut short",
                           self->element, self->path, (unsigned long long) weir__decompress_taken (self),
                           weir__codec_name (self->codec),
                           self->codec == WEIR__CODEC_GZIP ? "member" : "frame");
            return -1;
        }
        size_t before = self->pos;
        ssize_t n = self->codec == WEIR__CODEC_GZIP ? s_inflate (self, buf, want, err)
                                                    : s_zstd (self, buf, want, err);
        if (n != 0)
            return n;
        //  Nothing came out: the step took what it could of the input in
        //  hand and needs more, or a member's end or header was all there was
        if (self->pos > before && self->pos < self->len)
            continue;
        if (self->pos == before && (self->eof || self->len - self->pos == S_IN))
            return s_corrupt (self, err, "the data goes no further");
        if (!self->eof && s_more (self, err))
            return -1;
    }
}

int weir__decompress_skip (weir__decompress *self, uint64_t count, weir__err *err)
{
    char scrap[65536];
    uint64_t done = 0;
    while (done < count) {
        size_t want = count - done < sizeof scrap ? (size_t) (count - done) : sizeof scrap;
        ssize_t n = weir__decompress_read (self, scrap, want, err);
        if (n < 0)
            return -1;
        if (n == 0)
            return weir__err_set (
                       err, WEIR_ECORRUPT,
                       "%s: '%s' holds %llu bytes decompressed, fewer than the %llu the checkpoint "
                       "goes on from: it is not the file the checkpoint was taken from",
                       self->element, self->path, (unsigned long long) done, (unsigned long long) count),
                   -1;
        done += (uint64_t) n;
    }
    return 0;
}

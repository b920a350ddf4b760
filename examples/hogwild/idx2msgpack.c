/*  examples/hogwild/idx2msgpack.c - converts IDX image and label files
    (MNIST, Fashion-MNIST) into a msgpack stream of [label, features].

        idx2msgpack [--limit N] [--features bin|array|map] IMAGES LABELS OUT

    IMAGES and LABELS may be gzip-compressed or plain (zlib reads both).
    Each record is [label, features], label the byte of the label file and
    features the image's rows*cols pixels, row by row, as:
      bin    a msgpack bin of the bytes (the default: the compact form the
             hogwild plugin reads fastest);
      array  an array of the byte values as integers;
      map    {index: value} for the nonzero pixels only, index 1-based (as
             in libsvm's text format).
    OUT may be '-' for stdout.  Integers take msgpack's shortest encoding.
    Bytes after the last image or label the headers announce are ignored.

    Exit status: 0 on success, 1 on a bad or unreadable input or a write
    error (a partial OUT file is removed), 2 on bad usage.  Messages are
    one line on stderr, "idx2msgpack: FILE: what", byte offsets counted in
    the uncompressed data.

    Build: cc -std=gnu11 -O2 idx2msgpack.c -lmsgpackc -lz  */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <msgpack.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define S_IMAGES_MAGIC 0x00000803u  //  unsigned bytes, 3 dimensions
#define S_LABELS_MAGIC 0x00000801u  //  unsigned bytes, 1 dimension

enum { S_BIN, S_ARRAY, S_MAP };

typedef struct {
    const char *path;
    gzFile gz;
    uint64_t offset;  //  bytes read so far (uncompressed)
} s_input;

//  The output, so that an error can remove a partial file
static const char *s_out_path;
static int s_out_regular;

//  The image being converted; file-level, so that an exit through s_fail
//  leaves nothing unreachable behind
static unsigned char *s_pixel;

static void s_fail (const char *path, const char *fmt, ...)
{
    va_list ap;
    fprintf (stderr, "idx2msgpack: %s: ", path);
    va_start (ap, fmt);
    vfprintf (stderr, fmt, ap);
    va_end (ap);
    fputc ('\n', stderr);
    //  Half a data set that looks whole is worse than none
    if (s_out_regular)
        unlink (s_out_path);
    free (s_pixel);
    exit (1);
}

static void s_usage (FILE *out)
{
    fprintf (out, "usage: idx2msgpack [--limit N] [--features bin|array|map] IMAGES LABELS OUT\n");
}

static void s_open (s_input *in, const char *path)
{
    in->path = path;
    in->offset = 0;
    errno = 0;
    in->gz = gzopen (path, "rb");
    if (!in->gz)
        s_fail (path, "cannot open: %s", errno ? strerror (errno) : "out of memory");
}

//  Read exactly N bytes of WHAT into BUF, or fail saying where and why
static void s_read (s_input *in, void *buf, size_t n, const char *what)
{
    size_t got = 0;
    while (got < n) {
        unsigned chunk = n - got > INT_MAX ? INT_MAX : (unsigned) (n - got);
        int rc = gzread (in->gz, (char *) buf + got, chunk);
        if (rc > 0) {
            got += (size_t) rc;
            continue;
        }
        int err;
        const char *msg = gzerror (in->gz, &err);
        //  zlib's messages start with the path, which ours already gives
        size_t len = strlen (in->path);
        if (!strncmp (msg, in->path, len) && !strncmp (msg + len, ": ", 2))
            msg += len + 2;
        const char *where = gzdirect (in->gz) ? "" : " of the uncompressed data";
        if (err == Z_ERRNO)
            s_fail (in->path, "read error at byte offset %" PRIu64 "%s: %s", in->offset + got, where,
                    strerror (errno));
        if (err != Z_OK && err != Z_BUF_ERROR)
            s_fail (in->path, "corrupt gzip data at byte offset %" PRIu64 "%s: %s", in->offset + got, where,
                    msg);
        //  Z_BUF_ERROR: a gzip stream cut short, a truncation too
        s_fail (in->path, "truncated at byte offset %" PRIu64 "%s: expected %zu byte%s (%s), got %zu%s",
                in->offset, where, n, n == 1 ? "" : "s", what, got,
                err == Z_BUF_ERROR ? " (the gzip stream is cut short)" : "");
    }
    in->offset += n;
}

static uint32_t s_be32 (const unsigned char *p)
{
    return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}

//  The header of an IDX file with MAGIC: DIMS big-endian sizes into SIZE
static void s_header (s_input *in, uint32_t magic, uint32_t *size, int dims, const char *kind)
{
    unsigned char h[16];
    s_read (in, h, 4, "the magic number");
    uint32_t got = s_be32 (h);
    if (got != magic) {
        const char *hint = got == S_IMAGES_MAGIC   ? " (an image file?)"
                           : got == S_LABELS_MAGIC ? " (a label file?)"
                                                   : "";
        s_fail (in->path, "not an IDX %s file: magic number 0x%08" PRIx32 ", expected 0x%08" PRIx32 "%s",
                kind, got, magic, hint);
    }
    s_read (in, h + 4, 4 * (size_t) dims, "the dimensions of the header");
    for (int i = 0; i < dims; i++)
        size[i] = s_be32 (h + 4 + 4 * i);
}

//  Where records go: a FILE, with the bytes counted
typedef struct {
    FILE *fp;
    uint64_t bytes;
} s_output;

static void s_write (s_output *out, const void *p, size_t n)
{
    if (fwrite (p, 1, n, out->fp) != n)
        s_fail (s_out_path, "write error: %s", strerror (errno));
    out->bytes += n;
}

static int s_parse_limit (const char *s, uint64_t *out)
{
    if (*s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull (s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

//  The options into *LIMIT and *FEATURES, the operands left at optind: -1
//  to go on, or the exit status (0 after --help, 2 for a wrong command
//  line)
static int s_parse_args (int argc, char **argv, uint64_t *limit, int *features)
{
    static const struct option longs[] = {
        {"limit", required_argument, NULL, 'n'},
        {"features", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int ch;
    while ((ch = getopt_long (argc, argv, "h", longs, NULL)) != -1) {
        switch (ch) {
        case 'n':
            if (s_parse_limit (optarg, limit)) {
                fprintf (stderr, "idx2msgpack: --limit: expected a count, got '%s'\n", optarg);
                s_usage (stderr);
                return 2;
            }
            break;
        case 'f':
            if (!strcmp (optarg, "bin"))
                *features = S_BIN;
            else if (!strcmp (optarg, "array"))
                *features = S_ARRAY;
            else if (!strcmp (optarg, "map"))
                *features = S_MAP;
            else {
                fprintf (stderr, "idx2msgpack: --features: expected bin, array or map, got '%s'\n", optarg);
                s_usage (stderr);
                return 2;
            }
            break;
        case 'h': s_usage (stdout); return 0;
        default: s_usage (stderr); return 2;
        }
    }
    if (argc - optind != 3) {
        fprintf (stderr, "idx2msgpack: expected IMAGES LABELS OUT, got %d argument%s\n", argc - optind,
                 argc - optind == 1 ? "" : "s");
        s_usage (stderr);
        return 2;
    }
    return -1;
}

//  OUT on PATH, or on stdout for '-'
static void s_open_output (s_output *out, const char *path)
{
    s_out_path = path;
    if (!strcmp (path, "-")) {
        out->fp = stdout;
        s_out_path = "stdout";
        return;
    }
    out->fp = fopen (path, "wb");
    if (!out->fp)
        s_fail (path, "cannot create: %s", strerror (errno));
    struct stat st;
    s_out_regular = fstat (fileno (out->fp), &st) == 0 && S_ISREG (st.st_mode);
}

static void s_close_output (s_output *out)
{
    if (fflush (out->fp) || ferror (out->fp))
        s_fail (s_out_path, "write error: %s", strerror (errno));
    if (out->fp != stdout && fclose (out->fp))
        s_fail (s_out_path, "write error: %s", strerror (errno));
}

//  The record [LABEL, features] of the PIXELS bytes of PIXEL, in the form
//  FEATURES, into PK: 0, or not when out of memory
static int s_pack (msgpack_packer *pk, unsigned char label, const unsigned char *pixel, uint64_t pixels,
                   int features)
{
    int rc = msgpack_pack_array (pk, 2) || msgpack_pack_uint8 (pk, label);
    if (features == S_BIN)
        rc = rc || msgpack_pack_bin (pk, (size_t) pixels)
             || msgpack_pack_bin_body (pk, pixel, (size_t) pixels);
    else if (features == S_ARRAY) {
        rc = rc || msgpack_pack_array (pk, (size_t) pixels);
        for (uint64_t j = 0; j < pixels && !rc; j++)
            rc = msgpack_pack_uint8 (pk, pixel[j]);
    }
    else {
        size_t nonzero = 0;
        for (uint64_t j = 0; j < pixels; j++)
            nonzero += pixel[j] != 0;
        rc = rc || msgpack_pack_map (pk, nonzero);
        for (uint64_t j = 0; j < pixels && !rc; j++)
            if (pixel[j])
                rc = msgpack_pack_uint32 (pk, (uint32_t) (j + 1)) || msgpack_pack_uint8 (pk, pixel[j]);
    }
    return rc;
}

//  The first COUNT records of IMAGES and LABELS (whose headers announce
//  ISIZE and LSIZE) into OUT, PIXELS bytes an image
static void s_convert (s_input *images, s_input *labels, const uint32_t *isize, const uint32_t *lsize,
                       uint64_t count, uint64_t pixels, int features, s_output *out)
{
    unsigned char *pixel = s_pixel = malloc (pixels ? pixels : 1);
    msgpack_sbuffer buf;
    msgpack_sbuffer_init (&buf);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &buf, msgpack_sbuffer_write);
    if (!pixel)
        s_fail (images->path, "out of memory");
    char what[64];
    for (uint64_t i = 0; i < count; i++) {
        unsigned char label;
        snprintf (what, sizeof what, "label %" PRIu64 " of %" PRIu32, i + 1, lsize[0]);
        s_read (labels, &label, 1, what);
        snprintf (what, sizeof what, "image %" PRIu64 " of %" PRIu32, i + 1, isize[0]);
        s_read (images, pixel, (size_t) pixels, what);

        //  A record is packed whole in memory, then written in one call:
        //  the packer would otherwise call the writer for every pixel
        msgpack_sbuffer_clear (&buf);
        if (s_pack (&pk, label, pixel, pixels, features))
            s_fail (s_out_path, "out of memory");
        s_write (out, buf.data, buf.size);
    }
    msgpack_sbuffer_destroy (&buf);
    free (pixel);
    s_pixel = NULL;
}

int main (int argc, char **argv)
{
    uint64_t limit = UINT64_MAX;
    int features = S_BIN;
    int status = s_parse_args (argc, argv, &limit, &features);
    if (status >= 0)
        return status;
    const char *images_path = argv[optind], *labels_path = argv[optind + 1], *out_path = argv[optind + 2];

    //  Both headers are checked before OUT is touched
    s_input images, labels;
    uint32_t isize[3], lsize[1];
    s_open (&images, images_path);
    s_header (&images, S_IMAGES_MAGIC, isize, 3, "image");
    s_open (&labels, labels_path);
    s_header (&labels, S_LABELS_MAGIC, lsize, 1, "label");
    if (isize[0] != lsize[0])
        s_fail (labels_path, "%" PRIu32 " labels, but %s holds %" PRIu32 " images", lsize[0], images_path,
                isize[0]);
    uint64_t pixels = (uint64_t) isize[1] * isize[2];
    if (pixels > UINT32_MAX)
        s_fail (images_path, "images of %" PRIu32 " x %" PRIu32 " pixels are too large for a msgpack record",
                isize[1], isize[2]);
    uint64_t count = isize[0] < limit ? isize[0] : limit;

    s_output out = {0};
    s_open_output (&out, out_path);
    s_convert (&images, &labels, isize, lsize, count, pixels, features, &out);
    s_close_output (&out);
    gzclose (images.gz);
    gzclose (labels.gz);
    fprintf (stderr, "idx2msgpack: wrote %" PRIu64 " examples (%" PRIu64 " bytes) to %s\n", count, out.bytes,
             s_out_path);
    return 0;
}

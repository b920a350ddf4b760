/*  writers/lines.c - one line of text per record.

    A str or bin record is written as its bytes, anything else as its JSON
    text (lib/jsontext.h: an integer is its decimal digits); each is
    followed by a newline.  So `lines ! ... ! lines` round-trips text
    files, and every line that is not a string record's own is valid
    JSON.  Records are rendered from their msgpack bytes, not decoded.
    The file is the skeleton's (writers/filewriter.h).  */
#include "config.h"

#include "lib/jsontext.h"
#include "writers/filewriter.h"

static const weir_property_info s_props[] = {
    WEIR__FILEWRITER_PATH,
    WEIR__FILEWRITER_COMPRESS,
    WEIR__FILEWRITER_LEVEL,
    {NULL, NULL, NULL},
};

//  The bytes of the str or bin record at P (N bytes left): 1 and *DATA,
//  *SIZE, *USED; 0 when it is another kind of record; -1 when truncated.
static int s_bytes (const unsigned char *p, size_t n, const char **data, size_t *size, size_t *used)
{
    unsigned c = p[0];
    size_t head, len;
    if (c >= 0xa0 && c <= 0xbf) {
        head = 1;
        len = c & 31;
    }
    else if ((c >= 0xd9 && c <= 0xdb) || (c >= 0xc4 && c <= 0xc6)) {
        int bytes = 1 << (c >= 0xd9 ? c - 0xd9 : c - 0xc4);
        if (n < 1 + (size_t) bytes)
            return -1;
        len = 0;
        for (int i = 1; i <= bytes; i++)
            len = len << 8 | p[i];
        head = 1 + (size_t) bytes;
    }
    else
        return 0;
    if (n - head < len)
        return -1;
    *data = (const char *) p + head;
    *size = len;
    *used = head + len;
    return 1;
}

static int s_write (void *own, weir__outfile *file, unsigned thread, const char *payload, size_t len,
                    uint32_t count, weir__err *err)
{
    weir__buf *b = weir__outfile_buf (file, thread);
    const char *p = payload, *end = payload + len;
    for (uint32_t i = 0; i < count; i++) {
        const char *data;
        size_t size, used;
        int rc = p < end ? s_bytes ((const unsigned char *) p, (size_t) (end - p), &data, &size, &used) : -1;
        if (rc == 1)
            rc = weir__buf_append (b, data, size);
        else if (rc == 0)
            rc = weir__jsontext_packed (b, p, (size_t) (end - p), &used);
        else
            rc = -2;
        if (rc == 0)
            rc = weir__buf_putc (b, '\n');
        if (rc == -2)
            return weir__err_set (err, WEIR_ECORRUPT, "lines: malformed record in a batch");
        if (rc)
            return weir__err_set (err, WEIR_ENOMEM, "lines: out of memory");
        p += used;
    }
    return 0;
}

static const weir__filewriter_class s_file = {
    .writer = &weir__writer_lines,
    .write = s_write,
};

static int s_open (weir__props *props, unsigned threads, const char *resume, unsigned flags, void **state,
                   weir__err *err)
{
    return weir__filewriter_open (&s_file, props, threads, resume, flags, state, err);
}

const weir__writer_class weir__writer_lines = WEIR__FILEWRITER_WRITER (
    "lines", "one line per record: strings and bins as their bytes, anything else as JSON", s_props, s_open);

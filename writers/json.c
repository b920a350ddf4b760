/*  writers/json.c - JSON Lines: every record as one line of JSON text.

    Each record is written as its JSON text (lib/jsontext.h, which says how
    what JSON lacks is mapped: bin as base64, ext as an object, non-string
    keys as their text, NaN and the infinities as null, invalid UTF-8
    replaced), then a newline.  The text of a record holds no newline (a
    newline in a string is escaped), so every line is one JSON value, and
    the json reader reads the file back.  Records are rendered from their
    msgpack bytes, not decoded.  The file is the skeleton's
    (writers/filewriter.h).  */
#include "config.h"

#include "lib/jsontext.h"
#include "writers/filewriter.h"

static const weir_property_info s_props[] = {
    WEIR__FILEWRITER_PATH,
    WEIR__FILEWRITER_COMPRESS,
    WEIR__FILEWRITER_LEVEL,
    {NULL, NULL, NULL},
};

static int s_write (void *own, weir__outfile *file, unsigned thread, const char *payload, size_t len,
                    uint32_t count, weir__err *err)
{
    weir__buf *b = weir__outfile_buf (file, thread);
    const char *p = payload, *end = payload + len;
    for (uint32_t i = 0; i < count; i++) {
        size_t used;
        int rc = weir__jsontext_packed (b, p, (size_t) (end - p), &used);
        if (!rc)
            rc = weir__buf_putc (b, '\n');
        if (rc == -2)
            return weir__err_set (err, WEIR_ECORRUPT, "json: malformed record in a batch");
        if (rc)
            return weir__err_set (err, WEIR_ENOMEM, "json: out of memory");
        p += used;
    }
    return 0;
}

static const weir__filewriter_class s_file = {
    .writer = &weir__writer_json,
    .write = s_write,
};

static int s_open (weir__props *props, unsigned threads, const char *resume, unsigned flags, void **state,
                   weir__err *err)
{
    return weir__filewriter_open (&s_file, props, threads, resume, flags, state, err);
}

const weir__writer_class weir__writer_json = WEIR__FILEWRITER_WRITER (
    "json", "JSON Lines: every record as one line of JSON (bin as base64, NaN and infinities as null)",
    s_props, s_open);

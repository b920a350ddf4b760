/*  writers/json.c - JSON Lines: every record as one line of JSON text.

    Each record is written as its JSON text (lib/jsontext.h, which says how
    what JSON lacks is mapped: bin as base64, ext as an object, non-string
    keys as their text, NaN and the infinities as null, invalid UTF-8
    replaced), then a newline.  The text of a record holds no newline (a
    newline in a string is escaped), so every line is one JSON value, and
    the json reader reads the file back.  Records are rendered from their
    msgpack bytes, not decoded.  */
#include "config.h"

#include <stdlib.h>

#include "lib/jsontext.h"
#include "writers/writer.h"

typedef struct {
    weir__outfile out;
} s_json;

static const weir_property_info s_props[] = {
    {"path", NULL, "the file to write (required; replaced if it exists)"},
    {NULL, NULL, NULL},
};

static int s_open (weir__props *props, unsigned threads, const char *resume, void **state, weir__err *err)
{
    const char *path = weir__props_get (props, "path", NULL);
    if (!path)
        return weir__err_set (err, WEIR_EPROPERTY, "json: property 'path' is required");
    s_json *self = calloc (1, sizeof *self);
    if (!self)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    int rc = weir__outfile_open (&self->out, "json", path, threads, resume, err);
    if (rc) {
        free (self);
        return rc;
    }
    *state = self;
    return 0;
}

static int s_write (void *state, unsigned thread, const char *payload, size_t len, uint32_t count,
                    weir__err *err)
{
    s_json *self = state;
    weir__buf *b = weir__outfile_buf (&self->out, thread);
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
    return weir__outfile_spill (&self->out, thread, err);
}

static int s_flush (void *state, unsigned thread, weir__err *err)
{
    return weir__outfile_flush (&((s_json *) state)->out, thread, err);
}

static int s_commit (void *state, char *out, weir__err *err)
{
    return weir__outfile_commit (&((s_json *) state)->out, out, err);
}

static int s_close (void *state, weir__err *err)
{
    s_json *self = state;
    int rc = weir__outfile_close (&self->out, err);
    free (self);
    return rc;
}

const weir__writer_class weir__writer_json = {
    "json",   "JSON Lines: every record as one line of JSON (bin as base64, NaN and infinities as null)",
    s_props,  s_open,
    s_write,  s_flush,
    s_commit, s_close,
};

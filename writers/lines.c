/*  writers/lines.c - one line of text per record.

    A str or bin record is written as its bytes, an integer as decimal
    text, anything else as JSON-like text (lib/text.h); each is followed by
    a newline.  So `lines ! ... ! lines` round-trips text files.  */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>

#include "lib/batch.h"
#include "lib/text.h"
#include "writers/writer.h"

typedef struct {
    weir__outfile out;
    weir__records *decoders;  //  per thread
    unsigned threads;
} s_lines;

static const weir_property_info s_props[] = {
    {"path", NULL, "the file to write (required; replaced if it exists)"},
    {NULL, NULL, NULL},
};

static int s_open (weir__props *props, unsigned threads, const char *resume, void **state, weir__err *err)
{
    const char *path = weir__props_get (props, "path", NULL);
    if (!path)
        return weir__err_set (err, WEIR_EPROPERTY, "lines: property 'path' is required");
    s_lines *self = calloc (1, sizeof *self);
    if (!self || !(self->decoders = calloc (threads, sizeof *self->decoders))) {
        free (self);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    self->threads = threads;
    for (unsigned t = 0; t < threads; t++)
        if (weir__records_init (&self->decoders[t])) {
            while (t-- > 0)
                weir__records_release (&self->decoders[t]);
            free (self->decoders);
            free (self);
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        }
    int rc = weir__outfile_open (&self->out, "lines", path, threads, resume, err);
    if (rc) {
        for (unsigned t = 0; t < threads; t++)
            weir__records_release (&self->decoders[t]);
        free (self->decoders);
        free (self);
        return rc;
    }
    *state = self;
    return 0;
}

//  Integers are the common non-string record; printf is several times
//  slower than this.
static int s_decimal (weir__buf *b, uint64_t v, int negative)
{
    char digits[21];
    char *p = digits + sizeof digits;
    do
        *--p = (char) ('0' + v % 10);
    while ((v /= 10) != 0);
    if (negative)
        *--p = '-';
    return weir__buf_append (b, p, (size_t) (digits + sizeof digits - p));
}

static int s_line (weir__buf *b, const msgpack_object *o)
{
    int rc;
    switch (o->type) {
    case MSGPACK_OBJECT_POSITIVE_INTEGER: rc = s_decimal (b, o->via.u64, 0); break;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER:
        //  The magnitude of INT64_MIN does not fit an int64
        rc = s_decimal (b, (uint64_t) 0 - (uint64_t) o->via.i64, 1);
        break;
    case MSGPACK_OBJECT_STR: rc = weir__buf_append (b, o->via.str.ptr, o->via.str.size); break;
    case MSGPACK_OBJECT_BIN: rc = weir__buf_append (b, o->via.bin.ptr, o->via.bin.size); break;
    default: rc = weir__text_append (b, o);
    }
    return rc ? rc : weir__buf_putc (b, '\n');
}

static int s_write (void *state, unsigned thread, const char *payload, size_t len, uint32_t count,
                    weir__err *err)
{
    s_lines *self = state;
    weir__records *it = &self->decoders[thread];
    weir__buf *b = weir__outfile_buf (&self->out, thread);
    msgpack_object o;
    int more;
    weir__records_reset (it, payload, len);
    while ((more = weir__records_next (it, &o)) == 1)
        if (s_line (b, &o))
            return weir__err_set (err, WEIR_ENOMEM, "lines: out of memory");
    if (more < 0)
        return weir__err_set (err, WEIR_ECORRUPT, "lines: malformed record in a batch");
    return weir__outfile_spill (&self->out, thread, err);
}

static int s_flush (void *state, unsigned thread, weir__err *err)
{
    return weir__outfile_flush (&((s_lines *) state)->out, thread, err);
}

static int s_commit (void *state, char *out, weir__err *err)
{
    return weir__outfile_commit (&((s_lines *) state)->out, out, err);
}

static int s_close (void *state, weir__err *err)
{
    s_lines *self = state;
    int rc = weir__outfile_close (&self->out, err);
    for (unsigned t = 0; t < self->threads; t++)
        weir__records_release (&self->decoders[t]);
    free (self->decoders);
    free (self);
    return rc;
}

const weir__writer_class weir__writer_lines = {
    "lines",  "one line per record: strings as their bytes, integers as decimals, the rest as JSON",
    s_props,  s_open,
    s_write,  s_flush,
    s_commit, s_close,
};

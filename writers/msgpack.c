/*  writers/msgpack.c - records as a msgpack stream file.

    A batch's payload already is records back to back, which is exactly a
    stream file: it is written without decoding anything.  */
#include "config.h"

#include <stdlib.h>

#include "writers/writer.h"

static const weir_property_info s_props[] = {
    {"path", NULL, "the file to write (required; replaced if it exists)"},
    {NULL, NULL, NULL},
};

static int s_open (weir__props *props, unsigned threads, const char *resume, void **state, weir__err *err)
{
    const char *path = weir__props_get (props, "path", NULL);
    if (!path)
        return weir__err_set (err, WEIR_EPROPERTY, "msgpack: property 'path' is required");
    weir__outfile *of = malloc (sizeof *of);
    if (!of)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    int rc = weir__outfile_open (of, "msgpack", path, threads, resume, err);
    if (rc) {
        free (of);
        return rc;
    }
    *state = of;
    return 0;
}

static int s_write (void *state, unsigned thread, const char *payload, size_t len, uint32_t count,
                    weir__err *err)
{
    weir__outfile *of = state;
    if (weir__buf_append (weir__outfile_buf (of, thread), payload, len))
        return weir__err_set (err, WEIR_ENOMEM, "msgpack: out of memory");
    return weir__outfile_spill (of, thread, err);
}

static int s_flush (void *state, unsigned thread, weir__err *err)
{
    return weir__outfile_flush (state, thread, err);
}

static int s_commit (void *state, char *out, weir__err *err)
{
    return weir__outfile_commit (state, out, err);
}

static int s_close (void *state, weir__err *err)
{
    int rc = weir__outfile_close (state, err);
    free (state);
    return rc;
}

const weir__writer_class weir__writer_msgpack = {
    "msgpack", "records as a msgpack stream file", s_props, s_open, s_write, s_flush, s_commit, s_close,
};

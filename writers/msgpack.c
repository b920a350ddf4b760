/*  writers/msgpack.c - records as a msgpack stream file.

    A batch's payload already is records back to back, which is exactly a
    stream file: it is written without decoding anything.  The file is the
    skeleton's (writers/filewriter.h).  */
#include "config.h"

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
    if (weir__buf_append (weir__outfile_buf (file, thread), payload, len))
        return weir__err_set (err, WEIR_ENOMEM, "msgpack: out of memory");
    return 0;
}

static const weir__filewriter_class s_file = {
    .writer = &weir__writer_msgpack,
    .write = s_write,
};

static int s_open (weir__props *props, unsigned threads, const char *resume, unsigned flags, void **state,
                   weir__err *err)
{
    return weir__filewriter_open (&s_file, props, threads, resume, flags, state, err);
}

const weir__writer_class weir__writer_msgpack =
    WEIR__FILEWRITER_WRITER ("msgpack", "records as a msgpack stream file", s_props, s_open);

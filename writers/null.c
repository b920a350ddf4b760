/*  writers/null.c - counts records and throws them away.  */
#include "config.h"

#include <stdio.h>

#include "writers/writer.h"

static const weir_property_info s_props[] = {{NULL, NULL, NULL}};

static int s_open (weir__props *props, unsigned threads, const char *resume, unsigned flags, void **state,
                   weir__err *err)
{
    *state = NULL;
    return 0;
}

static int s_write (void *state, unsigned thread, const char *payload, size_t len, uint32_t count,
                    weir__err *err)
{
    //  The stage counts the records; nothing else to do
    return 0;
}

static int s_flush (void *state, unsigned thread, weir__err *err)
{
    return 0;
}

static int s_commit (void *state, char *out, weir__err *err)
{
    //  Nothing is kept, so nothing is committed
    snprintf (out, WEIR__WRITER_STATE_MAX, "0");
    return 0;
}

static int s_close (void *state, weir__err *err)
{
    return 0;
}

const weir__writer_class weir__writer_null = {
    "null",   "counts records and discards them",
    s_props,  s_open,
    s_write,  s_flush,
    s_commit, s_close,
    NULL,     NULL,
    NULL,
};

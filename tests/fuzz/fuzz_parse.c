/*  tests/fuzz/fuzz_parse.c - the description parser on any text.

    Any text is parsed or refused with an error whose offset lies inside
    it; nothing else may happen.  */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/parse.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t len)
{
    char *text = malloc (len + 1);
    if (!text)
        return 0;
    memcpy (text, data, len);
    text[len] = '\0';
    weir__spec spec;
    weir__spec_init (&spec);
    weir__err err;
    weir__err_init (&err);
    if (weir__parse (text, &spec, &err))
        assert (err.msg[0] && err.offset <= (long) strlen (text));
    weir__spec_release (&spec);
    free (text);
    return 0;
}

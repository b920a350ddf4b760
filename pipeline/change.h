/*  pipeline/change.h - what changed between the pipeline a checkpoint was
    written by and the one asked to resume from it.

    A resume goes on only in the same pipeline: the same elements with the
    same properties, but for those that say how a stage runs (threads=,
    capacity=, batch=, linger=).  When they differ, the user needs the
    first difference, not the whole old description: both descriptions,
    each with a caret under it, and a sentence that names the stage and
    the property.  */
#ifndef WEIR_CHANGE_H_INCLUDED
#define WEIR_CHANGE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "pipeline/stage.h"

/*  Whether property KEY says how a stage runs, not what it computes:
    free to change on resume.  */
int weir__change_free (const char *key);

/*  Set ERR (WEIR_ESTRUCTURE) to say that checkpoint EPOCH of DIR was
    written by the description WAS (LEN bytes), not by NOW, whose resolved
    stages are STAGES: what differs first, and both descriptions with a
    caret under it.  Returns WEIR_ESTRUCTURE, or WEIR_ENOMEM.  */
int weir__change_explain (const char *was, size_t len, const char *now, const weir__stages *stages,
                          uint64_t epoch, const char *dir, weir__err *err);

#endif

/*  pipeline/change.h - what changed between the pipeline a checkpoint was
    written by and the one asked to resume from it.

    A resume goes on only in the same pipeline: the same elements with the
    same properties, but for those that say how a stage runs (threads=,
    capacity=, batch=, linger=) and where an element connects (brokers=,
    conninfo=).  When they differ, the user needs the
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

/*  Whether property KEY says where an element connects (brokers=,
    conninfo=): free to change on resume too, since brokers and database
    servers move, and said when it does (weir__change_moved).  */
int weir__change_place (const char *key);

/*  Whether SHAPE (LEN bytes, a checkpoint's) is of the older form
    (weir__build_shape_older): a place in it.  */
int weir__change_older_shape (const char *shape, size_t len);

/*  Into WHAT (of SIZE), the first place (weir__change_place) that differs
    between the description WAS (LEN bytes) and the resolved STAGES, as
    "kafka (stage 1): brokers= was 'A', is now 'B'": 1, or 0 when none
    does (or WAS no longer parses).  */
int weir__change_moved (const char *was, size_t len, const weir__stages *stages, char *what, size_t size);

/*  Set ERR (WEIR_ESTRUCTURE) to say that checkpoint EPOCH of DIR was
    written by the description WAS (LEN bytes), not by NOW, whose resolved
    stages are STAGES: what differs first, and both descriptions with a
    caret under it.  OLDER: the checkpoint's shape is of the older form
    (weir__build_shape_older), so where an element connects counts too.
    Returns WEIR_ESTRUCTURE, or WEIR_ENOMEM.  */
int weir__change_explain (const char *was, size_t len, const char *now, const weir__stages *stages,
                          uint64_t epoch, const char *dir, int older, weir__err *err);

#endif

/*  pipeline/build.h - the builder: from a description, or calls in code,
    to stages that know what they are.

    Parsing appends stages with their properties; resolving finds each
    stage's element (a builtin, or a plugin loaded by path or name), checks
    the place it stands in (a reader first, a writer last, processors
    between), refuses properties a builtin does not know, and reads the
    properties every stage takes.  Errors point into the description.  */
#ifndef WEIR_BUILD_H_INCLUDED
#define WEIR_BUILD_H_INCLUDED

#include <weir/plugin.h>

#include "lib/error.h"
#include "pipeline/stage.h"

/*  Append the stages of TEXT.  Stages added before keep no offsets (they
    pointed into another text).  WEIR_ESYNTAX with ERR's offset, or
    WEIR_ENOMEM.  */
int weir__build_parse (weir__stages *stages, const char *text, weir__err *err);

/*  Append builtin ELEMENT with PROPS ("key=value" strings, NULL-ended, or
    NULL).  */
int weir__build_add (weir__stages *stages, const char *element, const char *const *props, weir__err *err);

/*  Append a processor stage made of the callbacks PROC (borrowed).  */
int weir__build_add_processor (weir__stages *stages, const weir_processor *proc, void *user,
                               const char *const *props, weir__err *err);

/*  Find every stage's element and read the properties every stage takes.  */
int weir__build_resolve (weir__stages *stages, weir__err *err);

/*  The description with threads, capacity and batch left out, and where
    elements connect (pipeline/change.h), properties in key order: a job
    may resume with other values of those, and with nothing else
    changed.  NULL when out of memory.  */
char *weir__build_shape (const weir__stages *stages);

/*  The shape as weirs before 0.1's connection rule wrote it into their
    checkpoints: with where elements connect in it.  A checkpoint of one
    goes on when it names the same places.  NULL when out of memory.  */
char *weir__build_shape_older (const weir__stages *stages);

#endif

/*  pipeline/elements.h - the table of builtin elements.

    The one place that knows which readers, processors and writers exist;
    the pipe resolves names here and weir_elements() documents them.  */
#ifndef WEIR_ELEMENTS_H_INCLUDED
#define WEIR_ELEMENTS_H_INCLUDED

#include <weir/plugin.h>
#include <weir/weir.h>

#include "lib/error.h"
#include "lib/props.h"
#include "readers/reader.h"
#include "writers/writer.h"

typedef struct weir__element {
    const char *name;
    weir_element_kind kind;
    const weir__reader_class *reader;
    const weir__writer_class *writer;
    const weir_processor *processor;
    int passthrough;  //  forwards batches untouched (identity)
    //  Checks what the properties say beyond their names (filter's
    //  expression) when the description is checked, COMMON being those
    //  of every element of its kind; may be NULL
    int (*check) (weir__props *props, const char *element, const weir_property_info *common, weir__err *err);
    int fans_out;  //  may feed several stages, each every record (tee)
    //  Named outputs that follow from the checked properties (route's
    //  branches): their names, borrowed from PROPS, into NAMES (room for
    //  WEIR__MAX_PORTS); NULL for an element of one output.  Such an
    //  element takes properties of any name: check says which are wrong
    int (*ports) (const weir__props *props, const weir_property_info *common, const char **names, size_t *count);
} weir__element;

/*  The builtin element NAME of KIND (or of any kind when KIND < 0), or
    NULL.  lines and msgpack are both a reader and a writer: the place in
    the pipe says which.  */
const weir__element *weir__element_find (const char *name, int kind);

/*  The builtin of KIND (any when KIND < 0) whose name NAME most likely
    mistypes, or NULL.  */
const char *weir__element_suggest (const char *name, int kind);

/*  Names of the builtins of KIND, comma-separated, for error messages.  */
const char *weir__element_names (weir_element_kind kind);

/*  threads, capacity, batch, name; those plus passes, on-error and dead-letter
    for readers; plus on-error and dead-letter for processors.  */
extern const weir_property_info weir__common_props[];
extern const weir_property_info weir__reader_common_props[];
extern const weir_property_info weir__processor_common_props[];

#define WEIR__DEFAULT_BATCH 256
#define WEIR__DEFAULT_CAPACITY 16
#define WEIR__MAX_THREADS 256

#endif

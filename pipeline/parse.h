/*  pipeline/parse.h - the pipeline description language.

        ELEMENT [key=value ...] ! ELEMENT [key=value ...] ! ...

    Words are separated by blanks; '!' separates elements (with or without
    blanks around it).  A value may be quoted, '...' or "...", to hold blanks,
    '!' or '='; inside "..." a backslash escapes '"' and '\'.  Every name and
    property keeps its byte offset in the text, for error carets.  */
#ifndef WEIR_PARSE_H_INCLUDED
#define WEIR_PARSE_H_INCLUDED

#include "lib/error.h"
#include "lib/props.h"

typedef struct weir__element_spec {
    char *name;
    long name_offset;
    long glued;  //  the '!' before it stuck to a value, as in path=a!b: its offset, else -1
    weir__props props;
} weir__element_spec;

typedef struct weir__spec {
    weir__element_spec *items;
    size_t count;
} weir__spec;

void weir__spec_init (weir__spec *self);
void weir__spec_release (weir__spec *self);

/*  What a description may hold at most: far beyond any real pipe.  */
#define WEIR__MAX_DESCRIPTION (1 << 20)
#define WEIR__MAX_PROPERTIES 1000

/*  Parse TEXT into *SPEC (appending).  WEIR_ESYNTAX with ERR's offset
    pointing at the problem, or WEIR_ENOMEM.  */
int weir__parse (const char *text, weir__spec *spec, weir__err *err);

#endif

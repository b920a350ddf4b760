/*  pipeline/parse.h - the pipeline description language.

        ELEMENT [key=value ...] ! ELEMENT [key=value ...] ! ...

    Words are separated by blanks; '!' separates elements (with or without
    blanks around it).  A description is a graph made of branches, in the
    style of gst-launch: any element may take name=NAME, and a word NAME.
    (or NAME.PORT) is a reference to that element.  A reference after '!'
    ends the branch into the element's input (a merge); a reference that
    is not after '!' starts a new branch from its output (a tee's
    branches); an element or a reference right after a reference, with no
    '!' between, starts a new branch too.  Consecutive items of a branch
    are linked: each is a link of the graph.  A value may be quoted, '...' or "...", to hold blanks,
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
    //  It starts a new chain right after element FOLLOWS (an index in the
    //  spec's items), with no '!' between, as in 'a ! b  c ! d'; else
    //  SIZE_MAX.  Only the builder knows whether it names an element or
    //  is a property that lacks its '=' (pipeline/build.h)
    size_t follows;
    weir__props props;
} weir__element_spec;

/*  One end of a link: an element of the description, or a reference to
    one by its name= (resolved by the builder, which knows every name).  */
typedef struct weir__spec_end {
    size_t element;  //  index in the spec's items, or SIZE_MAX for a reference
    char *ref;       //  the NAME of NAME. or NAME.PORT, else NULL
    char *port;      //  the PORT, else NULL
    long offset;     //  of the reference in the text, else -1
} weir__spec_end;

/*  A link from an element's output to an element's input.  */
typedef struct weir__spec_link {
    weir__spec_end from, to;
    long bang;  //  the '!' between them
} weir__spec_link;

typedef struct weir__spec {
    weir__element_spec *items;
    size_t count;
    weir__spec_link *links;
    size_t nlinks;
    //  The first item of the text is an element that no '!' or reference
    //  comes before: what a builder appending it may link from
    int starts_with_element;
    //  The element the text ends with, or SIZE_MAX (it ends with a
    //  reference): where a builder appending more may link from
    size_t last;
} weir__spec;

void weir__spec_init (weir__spec *self);
void weir__spec_release (weir__spec *self);

/*  What a description may hold at most: far beyond any real pipe.  */
#define WEIR__MAX_DESCRIPTION (1 << 20)
#define WEIR__MAX_PROPERTIES 1000
/*  Named outputs of one element at most (route's branches, a plugin's
    ports).  */
#define WEIR__MAX_PORTS 64

/*  Whether WORD (a whole word, unquoted) is a reference: NAME. or
    NAME.PORT, each a letter or '_' then letters, digits, '_' or '-'.  A
    plugin named as a file, foo.so, is not one.  */
int weir__parse_is_ref (const char *word);

/*  Whether NAME may name an element (name=): a letter or '_' then
    letters, digits, '_' or '-'.  */
int weir__parse_is_name (const char *name);

/*  Parse TEXT into *SPEC (appending).  WEIR_ESYNTAX with ERR's offset
    pointing at the problem, or WEIR_ENOMEM.  */
int weir__parse (const char *text, weir__spec *spec, weir__err *err);

#endif

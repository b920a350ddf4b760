/*  pipeline/graph.h - the links between stages: which stage feeds which.

    A description, or a program adding stages in code, gives links: each
    end a stage by its place, or by its name= (a reference, NAME. in the
    language, which may come before the element it names).  Resolving
    turns them into each stage's outputs (weir__stage.outs) and a count of
    its inputs, and refuses what cannot run, with a caret under the
    culprit: an unknown or repeated name, a port of an input, a cycle.
    What a stage is then follows from its place: nothing feeds a reader, a
    writer feeds nothing, a processor sits between.  Once every stage has
    its element, the graph is checked again: only a stage that fans out
    (tee) or has named outputs (route's branches, a plugin's ports) may
    feed several, a port no element has is refused, and so is one that
    is linked twice or not at all; a graph has one reader for now.

    A straight line (each stage linked to the next, and nothing else) is
    what every pipe was before graphs: its shape (pipeline/build.h) is
    written as it always was, so its checkpoints resume.  */
#ifndef WEIR_GRAPH_H_INCLUDED
#define WEIR_GRAPH_H_INCLUDED

#include "lib/error.h"
#include "pipeline/parse.h"
#include "pipeline/stage.h"

/*  The links of SPEC, whose elements were just appended to STAGES as
    stages FIRST on.  A text that starts with an element goes on from
    where the stages before it ended (STAGES->tail).  0 or WEIR_ENOMEM.  */
int weir__graph_add_spec (weir__stages *stages, size_t first, const weir__spec *spec, weir__err *err);

/*  The stage just appended in code goes on from the tail, and becomes
    it.  0 or WEIR_ENOMEM.  */
int weir__graph_add_next (weir__stages *stages, weir__err *err);

/*  The next stage added in code starts a branch from the stage named
    FROM (its name=, "NAME" or "NAME."), or a new branch of its own when
    FROM is NULL.  0 or WEIR_ENOMEM.  */
int weir__graph_branch (weir__stages *stages, const char *from, weir__err *err);

/*  A link from the stage named FROM to the stage named TO.  0,
    WEIR_EINVAL for a name that cannot be one, or WEIR_ENOMEM.  */
int weir__graph_link (weir__stages *stages, const char *from, const char *to, weir__err *err);

/*  Names (name=) read, links resolved into each stage's outputs and
    inputs, and the structure checked.  WEIR_ESTRUCTURE or WEIR_ESYNTAX
    with ERR's offset, or WEIR_ENOMEM.  */
int weir__graph_resolve (weir__stages *stages, weir__err *err);

/*  What can only be checked once every stage has its element: a stage
    that feeds several must fan out or have named outputs (ports), each
    port of which starts exactly one link, those links put in port order.
    And each tee fed by one stage that feeds nothing else is given that
    stage as its host (weir__stage.host), in whose threads it runs.  */
int weir__graph_check (const weir__stages *stages, weir__err *err);

/*  Whether the stages are a straight line: each linked to the next and
    nothing else.  Resolved stages.  */
int weir__graph_is_line (const weir__stages *stages);

/*  The links in a shape (pipeline/build.h): "" for a line, else
    " ; links 0>1 1>2 ..." in order, into OUT of SIZE.  The length it
    needs.  */
size_t weir__graph_shape (const weir__stages *stages, char *out, size_t size);

#endif

/*  pipeline/route.h - the builtin processor route: each record down the
    branch of the first condition it meets.

        json path=app.jsonl ! route name=r errors='.level == "error"'
                                           slow='.ms > 500' default=rest
          r.errors ! json path=errors.jsonl
          r.slow ! json path=slow.jsonl
          r.rest ! json path=rest.jsonl

    Every property that is not one of a processor's (threads, name, ...)
    nor default= or unmatched= is a branch: its key names the branch, a
    named output of the stage (a port: r.errors), and its value is a
    condition in filter's language (lib/expr.h).  Conditions are tried in
    the order written; the first one true sends the record down its
    branch, and no other.  A record no condition is true of goes down the
    branch default= names; without one it is a bad record (the stage's
    on-error= says what then: fail the job, by default, or skip it into
    the dead letter), unless unmatched=drop, which drops it and counts it
    in the stage's metric 'unmatched'.  Nothing is lost without the user
    saying so.

    The branches are checked when the description is (a name that cannot
    be a port, a branch twice, a condition that does not parse, with a
    caret), and the graph then links each from its port
    (pipeline/graph.h).  */
#ifndef WEIR_ROUTE_H_INCLUDED
#define WEIR_ROUTE_H_INCLUDED

#include <stddef.h>
#include <weir/plugin.h>

#include "lib/error.h"
#include "lib/props.h"

extern const weir_processor weir__processor_route;

/*  Check ELEMENT's branches, default= and unmatched= in PROPS, COMMON
    being the properties of every processor: 0, or WEIR_EPROPERTY or
    WEIR_ESYNTAX with ERR's offset at the culprit.  */
int weir__route_check (weir__props *props, const char *element, const weir_property_info *common, weir__err *err);

/*  The branches of checked PROPS, in order, then the default's: their
    names, borrowed from PROPS, into NAMES (room for WEIR__MAX_PORTS).
    0.  */
int weir__route_ports (const weir__props *props, const weir_property_info *common, const char **names,
                       size_t *count);

#endif

/*  pipeline/filter.h - the builtin processor filter: keeps the records
    its expression (lib/expr.h) is true of.

        json path=app.jsonl ! filter '.level == "error"' ! json path=errors.jsonl

    The expression is the property expr, or the quoted word right after
    the element's name.  It is parsed when the description is checked, so
    that a mistake is refused, with a caret under it, before anything is
    opened; then once per run by the processor, which every thread
    evaluates with its own scratch.  A comparison of values of different
    kinds is false, and counted in the stage's metric 'mismatched'.  */
#ifndef WEIR_FILTER_H_INCLUDED
#define WEIR_FILTER_H_INCLUDED

#include <weir/plugin.h>

#include "lib/error.h"
#include "lib/expr.h"
#include "lib/props.h"

extern const weir_processor weir__processor_filter;

/*  Check ELEMENT's expression in PROPS (COMMON, the properties of every
    processor, is for route's check): 0, or WEIR_EPROPERTY (missing) or
    WEIR_ESYNTAX with ERR's offset at the culprit in the description.  */
int weir__filter_check (weir__props *props, const char *element, const weir_property_info *common, weir__err *err);

/*  Property P of ELEMENT parsed as an expression into *OUT (NULL on
    failure): 0, or WEIR_ESYNTAX with the message prefixed by ELEMENT and
    ERR's offset at the culprit in the description (WEIR_ENOMEM).  route's
    conditions are parsed so too.  */
int weir__filter_parse (const weir__prop *p, const char *element, weir__expr **out, weir__err *err);

#endif

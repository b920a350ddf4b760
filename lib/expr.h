/*  lib/expr.h - conditions on a record: filter's expressions.

        expr    := expr 'or' expr | expr 'and' expr | 'not' expr
                 | 'exists' PATH | operand OP operand | operand | '(' expr ')'
        OP      := '==' | '!=' | '<' | '<=' | '>' | '>=' | '=~'
        operand := PATH | number | "text" | 'text' | true | false | null

    'and' binds tighter than 'or'; 'not' tighter than both.  PATH is a
    path into the record (lib/fieldpath.h): '.level', '.a.b', '.tags[0]',
    '.' for the whole record.  Numbers compare as numbers whatever their
    msgpack width (an integer with a float, too); text compares bytewise
    (str and bin alike); true, false and null equal only themselves.
    '=~' matches a value against a regular expression, a quoted literal
    on its right compiled once with PCRE2 (its JIT where it has one).  An
    operand alone is true when it is there and neither false nor null.

    A record that lacks a field makes its comparison false, never an
    error.  A comparison of values of different kinds (a number with
    text, '<' on booleans, a map with anything) is false too, and
    counted: a filter reports how many it met.  An expression is parsed
    and its regular expressions compiled once, when the description is
    checked, and evaluated by any number of threads at once, each with
    its own weir__expr_scratch.  */
#ifndef WEIR_EXPR_H_INCLUDED
#define WEIR_EXPR_H_INCLUDED

#include <msgpack.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"

typedef struct weir__expr weir__expr;

/*  Parse TEXT (copied).  0, or WEIR_ESYNTAX with ERR's message saying
    what is wrong and ERR's offset the byte of TEXT it is at (WEIR_ENOMEM).  */
int weir__expr_new (const char *text, weir__expr **out, weir__err *err);
void weir__expr_destroy (weir__expr **self_p);

/*  What one thread needs to evaluate: PCRE2's match data.  */
typedef struct weir__expr_scratch {
    void *match;        //  pcre2_match_data, sized for the expression's patterns
    uint64_t mismatch;  //  comparisons of values of different kinds, so far
} weir__expr_scratch;

/*  0, or WEIR_ENOMEM.  */
int weir__expr_scratch_init (const weir__expr *self, weir__expr_scratch *scratch);
void weir__expr_scratch_release (weir__expr_scratch *scratch);

/*  Is the expression true of REC?  */
int weir__expr_eval (const weir__expr *self, const msgpack_object *rec, weir__expr_scratch *scratch);

#endif

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

/*  COUNT expressions tried in turn, the first true one wanted (route's
    branches), when each is PATH == "text" (either way round) on one and
    the same PATH: PATH is looked up once per record and its value
    compared with each text, with what evaluating them in turn gives, the
    mismatches too (a value of another kind is one per expression).
    NULL when they are not all so (or out of memory): evaluate them in
    turn.  The expressions must outlive it.  */
typedef struct weir__expr_switch weir__expr_switch;
weir__expr_switch *weir__expr_switch_new (const weir__expr *const *exprs, size_t count);
void weir__expr_switch_destroy (weir__expr_switch **self_p);

/*  The index of the first of the expressions true of REC, or COUNT when
    none is; mismatches added to *MISMATCH.  Any number of threads.  */
size_t weir__expr_switch_eval (const weir__expr_switch *self, const msgpack_object *rec, uint64_t *mismatch);

#endif

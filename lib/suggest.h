/*  lib/suggest.h - "did you mean": the known word nearest to a mistyped
    one, for error messages.  */
#ifndef WEIR_SUGGEST_H_INCLUDED
#define WEIR_SUGGEST_H_INCLUDED

#include <stddef.h>

/*  Edits from A to B: insertions, deletions, substitutions and swaps of
    two neighbours (so "idnetity" is one edit from "identity").  */
size_t weir__suggest_distance (const char *a, const char *b);

/*  Keep CANDIDATE as *BEST if it is nearer to WORD than *BEST, and near
    enough to be a likely typo: at most 2 edits, and fewer than half the
    letters.  Call it for every candidate, *BEST NULL and *DISTANCE 0 at
    first; *BEST is then the suggestion, or NULL.  */
void weir__suggest_consider (const char *word, const char *candidate, const char **best, size_t *distance);

#endif

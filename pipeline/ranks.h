/*  pipeline/ranks.h - a stage's share of a job of several ranks.

    mpirun -n N runs one pipe per rank.  The reader plans every shard on
    every rank (shards are cut the same way whatever runs them) and each
    rank reads shard i when i mod N is its rank.  Each rank writes its own
    outputs: "{rank}" in a writer's path= becomes the rank's number, and a
    path without it is refused when N > 1, since two ranks would write one
    file.  The checkpoint keeps a writer's committed state per rank's
    output ("slot"), and a resume with fewer ranks gives the outputs of
    ranks that are gone to the ranks that are left (slot s to rank s mod
    N), which take them back to their committed length and keep them.  */
#ifndef WEIR_RANKS_H_INCLUDED
#define WEIR_RANKS_H_INCLUDED

#include "lib/error.h"
#include "lib/props.h"
#include "pipeline/stage.h"

/*  Give STAGES their share for rank RANK of SIZE: the reader's shards, the
    writers' paths.  WEIR_ESTRUCTURE for what a job of SIZE ranks cannot
    do.  */
int weir__ranks_apply (weir__stages *stages, int rank, int size, weir__err *err);

/*  A copy of writer STAGE's properties with the path of rank SLOT's
    output, into OUT (released by the caller).  0 or WEIR_ENOMEM.  */
int weir__ranks_props (const weir__stage *stage, unsigned slot, weir__props *out);

#endif

/*  pipeline/reduce.h - the blobs of a job of several ranks that are one
    value for the job (weir_blob_reduce), combined at each epoch boundary.

    Each rank trains its own copy between boundaries (hogwild among its
    threads); at the boundary, with every rank's pipe quiescent, each
    declared region becomes the same on every rank:
      sum    the last combined value plus every rank's change since: a
             counter or a total counts what all ranks added, once
      mean   the mean of the ranks' values (periodic model averaging)
      min, max   element by element
    The regions must be the same on every rank that declared any; a rank
    that declared others is found and the job fails, naming what differs.
    A rank that declared none (a model made from its first record, and it
    had none) adopts the lowest declaring rank's regions and the blobs
    that hold them, sent through rank 0; at that boundary a mean counts
    only the ranks that declared, so an idle rank does not pull the
    model toward the copy it was just given.  */
#ifndef WEIR_REDUCE_H_INCLUDED
#define WEIR_REDUCE_H_INCLUDED

#include <stdint.h>

#include "cluster/cluster.h"
#include "lib/error.h"
#include "lib/workspace.h"

/*  Combine every declared region of WS across the ranks of CLUSTER at the
    end of EPOCH, waiting at most TIMEOUT seconds (0: no limit).  */
int weir__reduce_run (weir__workspace *ws, weir__cluster *cluster, uint64_t epoch, double timeout,
                      weir__err *err);

#endif

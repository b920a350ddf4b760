/*  checkpoint/load.h - taking the blobs of another job's checkpoint, as an
    evaluation job takes a trained model (caffe2's
    load_blobs_from_checkpoints).  */
#ifndef WEIR_LOAD_H_INCLUDED
#define WEIR_LOAD_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "lib/workspace.h"

/*  Put every blob of checkpoint EPOCH (-1: the latest, WEIR_LOAD_BEST: the
    one marked the best) of the store in DIR
    into WS.  0 with *COUNT blobs from checkpoint *LOADED, or an error
    naming DIR.  */
int weir__load_blobs (const char *dir, int64_t epoch, weir__workspace *ws, size_t *count, uint64_t *loaded,
                      weir__err *err);

#endif

/*  checkpoint/regions.h - the blob regions combined across ranks
    (weir_blob_reduce) as items of a checkpoint, with the blobs they are in.

    A checkpoint keeps region I as its meta item "reduce:I" (weir.h says
    the text).  A resume restores the blobs and declares the regions
    again, since a processor may have declared them in init, which a
    resume does not run; a rank that declared none by a boundary takes
    another rank's the same way, from a checkpoint made of them alone
    (pipeline/reduce.c).  */
#ifndef WEIR_REGIONS_H_INCLUDED
#define WEIR_REGIONS_H_INCLUDED

#include "checkpoint/ckpt.h"
#include "lib/error.h"
#include "lib/workspace.h"

/*  Every region WS declares, as meta items of CK: 0, or -1 when out of
    memory.  */
int weir__regions_put (weir__ckpt *ck, weir__workspace *ws);

/*  Every blob of CK into WS, then its regions declared in WS: 0, or an
    error whose message starts with WHAT.  */
int weir__regions_take (const weir__ckpt *ck, weir__workspace *ws, const char *what, weir__err *err);

#endif

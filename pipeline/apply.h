/*  pipeline/apply.h - a processor's callbacks applied to what reaches one
    of its workers: the thread's opening, each batch of records, each
    epoch's end, the thread's closing.

    A processor worker is driven either by its own thread, which receives
    batches and markers from its queue (pipeline/worker.c), or by the
    thread of the reader it is fused with, which hands it each batch as
    the reader fills it (pipeline/fuse.h).  Both apply the callbacks
    alike, here.  */
#ifndef WEIR_APPLY_H_INCLUDED
#define WEIR_APPLY_H_INCLUDED

#include <stddef.h>

#include "pipeline/stage.h"

/*  The worker's thread state: its key groups for a keyed stage, its
    processor's thread_open.  0, or -1 when it failed the job.  */
int weir__apply_open (weir__worker *w);

/*  Each record of a data batch (LEN bytes at PAYLOAD, its header HDR,
    whose origin names the records' place in a failure) through the
    processor's process callback, the bad ones to the stage's policy.  0,
    or -1 when it failed the job.  A job failed elsewhere leaves the batch
    at once (behind a slow callback, the rest of it could take long), and
    0 is returned: the worker's next receive or send hears of it.  */
int weir__apply_batch (weir__worker *w, const weir__batch_header *hdr, const char *payload, size_t len);

/*  The end of an epoch for the worker (a weir__epoch_end_fn): the
    processor's epoch_end, then the key groups that changed stored for the
    checkpoint.  0, or -1 when it failed the job.  */
int weir__apply_epoch_end (weir__worker *w);

/*  The processor's thread_close.  */
void weir__apply_close (weir__worker *w);

#endif

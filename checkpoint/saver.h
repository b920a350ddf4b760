/*  checkpoint/saver.h - writing a job's checkpoints: synchronously, or on
    a background thread, with the failure policy.

    Synchronous: each save snapshots the quiescent job and writes it before
    it returns.  Asynchronous (TensorFlow's asynchronous checkpoint): a save
    copies the blobs into staging buffers while the job is quiescent and
    hands the checkpoint to a background thread, so the pipe goes on at
    once; at most one write is in flight, so the next save first waits for
    it, and a failed write surfaces there, or at weir__saver_finish.

    A failed checkpoint is reported through the warning callback and the
    job goes on, as long as no more than FAILURES in a row failed; then it
    fails the job.  caffe2's JobRunner only logged such failures: here
    each is said, and too many end the job.  */
#ifndef WEIR_SAVER_H_INCLUDED
#define WEIR_SAVER_H_INCLUDED

#include <stdatomic.h>
#include <stdint.h>

#include "checkpoint/snapshot.h"
#include "checkpoint/store.h"
#include "lib/error.h"

typedef struct weir__saver weir__saver;

/*  MESSAGE is worth a person's attention (a checkpoint failed, within the
    allowance).  Called from the thread that saves.  */
typedef void (weir__warn_fn) (void *arg, const char *message);

/*  Save into STORE (borrowed; it must outlive the saver), keeping the
    newest KEEP checkpoints (0: all).  With ASYNC, blobs are staged for a
    background writer; the staging buffers for the blobs WS holds now are
    allocated here, before the pipe starts.  Every failed checkpoint
    counts in *FAILED (NULL: nowhere), within the allowance of FAILURES
    consecutive ones or not.  0 and *OUT, or an error.  */
int weir__saver_new (weir__store *store, unsigned keep, int async, unsigned failures,
                     _Atomic uint64_t *failed, weir__workspace *ws, weir__warn_fn *warn, void *arg,
                     weir__saver **out, weir__err *err);

/*  Wait for the write in flight and stop the background thread; a failure
    of that write is lost unless weir__saver_finish collected it.  */
void weir__saver_destroy (weir__saver **self_p);

/*  Save the checkpoint of S, synchronously whatever the mode, and fail on
    any error: the first checkpoint of a job, which every resume of it
    needs.  */
int weir__saver_save_first (weir__saver *self, const weir__snapshot *s, weir__err *err);

/*  Save the checkpoint of S.  0 when the job goes on: written, handed to
    the background writer, or failed within the allowance (and warned
    about); else the job must fail, with ERR saying which checkpoint and
    why.  */
int weir__saver_save (weir__saver *self, const weir__snapshot *s, weir__err *err);

/*  The epoch of the newest checkpoint written (synced) into *EPOCH: 0, or
    -1 when none was.  With ASYNC the one in flight is not, until its
    write returned.  What a writer made ready for a checkpoint becomes
    final once that checkpoint is (writers/writer.h, settle).  */
int weir__saver_durable (weir__saver *self, uint64_t *epoch);

/*  Wait for the write in flight.  Its failure is the job's: never
    swallowed, whatever the allowance.  */
int weir__saver_finish (weir__saver *self, weir__err *err);

#endif

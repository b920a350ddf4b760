/*  pipeline/controller.h - the epoch controller: barriers, quiescence, and
    the decision what comes after each epoch.

    At the end of an epoch every reader thread sends a barrier behind its
    data; each thread of each stage passes it on once it has one from every
    producer, then arrives here and waits.  When every thread waits, the
    pipe is quiescent: no record is in flight, no callback runs.  The
    controller then calls the boundary callback (the runtime commits the
    writers and saves the checkpoint there) and releases the threads into
    the next epoch, or tells them to stop.  Waiting on the controller's
    lock is also what orders a processor's writes to a blob before the
    checkpoint's copy of it, and that copy before the next epoch's writes.

    The controller knows threads, epochs and passes, nothing of stages or
    checkpoints, so it can be driven by plain threads in a test.  */
#ifndef WEIR_CONTROLLER_H_INCLUDED
#define WEIR_CONTROLLER_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "pipeline/budget.h"
#include "pipeline/job.h"

/*  What a thread waiting at a barrier is told.  */
enum { WEIR__GO = 0, WEIR__STOP = 1, WEIR__ABORT = 2 };

/*  How epochs end and how many there are.  */
typedef struct weir__epoch_rules {
    uint64_t records;     //  --epoch-records (0: no limit)
    double seconds;       //  --epoch-seconds (0: no limit)
    uint64_t last;        //  --epochs: pause after this epoch (0: no limit)
    unsigned passes;      //  passes over the input (at least 1; or as weir__controller_start says)
    double stop_timeout;  //  a stop that takes longer aborts the job (0: never)
} weir__epoch_rules;

/*  The end of an epoch, as the boundary callback sees it.  */
typedef struct weir__boundary {
    uint64_t epoch;  //  the epoch that ended
    unsigned pass;   //  the pass the next epoch is in
    int finished;    //  the input is exhausted on its last pass: the job is done
    int new_pass;    //  the next epoch starts a new pass over the input
    int over;        //  no epoch follows: finished, stopped, or --epochs reached
} weir__boundary;

/*  With the pipe quiescent: 0 to go on, else the callback failed the job.  */
typedef int (weir__boundary_fn) (void *arg, const weir__boundary *b);

/*  With the pipe quiescent at the end of EPOCH, before the decision: the ranks of a job agree
    whether all their inputs are exhausted (*EXHAUSTED, in: this rank's)
    and whether any was asked to stop (*STOPPING), so that every rank
    decides the same.  0, else the callback failed the job.  */
typedef int (weir__agree_fn) (void *arg, uint64_t epoch, int *exhausted, int *stopping);

/*  Called every tick while the controller waits (the progress line).  */
typedef void (weir__tick_fn) (void *arg);

typedef struct weir__controller weir__controller;

/*  NULL when out of memory.  */
weir__controller *weir__controller_new (weir__job *job, const weir__epoch_rules *rules);
void weir__controller_destroy (weir__controller **self_p);

/*  Before the threads start: the job goes on with epoch FIRST (1 for a
    fresh job) in pass PASS of PASSES (0: as the rules said); THREADS
    threads arrive at every barrier, READERS of them reader threads.  Opens
    the first epoch's budget.  */
void weir__controller_start (weir__controller *self, uint64_t first, unsigned pass, unsigned passes,
                             unsigned threads, unsigned readers);

/*  Before the threads start: the threads of reader I meet before each of
    their barriers (weir__controller_meet) when SIZES[I] (its threads) is
    not 0, for I below N.  0 or WEIR_ENOMEM.  */
int weir__controller_set_meetings (weir__controller *self, const unsigned *sizes, size_t n);

/*  A thread of reader MEETING at the end of its epoch (EXHAUSTED: with
    no more input) waits until every thread of that reader has come: 1
    when every one of them ran out of input, 0 when some did not, -1 when
    the job aborted.  A processor fused with a reader (pipeline/fuse.h)
    hears of the end of the input from its reader thread alone; the
    meeting tells it, as a processor of its own hears it from the
    barriers of every thread of its reader.  */
int weir__controller_meet (weir__controller *self, size_t meeting, int exhausted);

/*  The budget reader threads claim from.  */
weir__budget *weir__controller_budget (weir__controller *self);

/*  Epochs of SECONDS when neither records nor seconds were asked for (an
    input that never ends).  Before weir__controller_start.  */
void weir__controller_default_seconds (weir__controller *self, double seconds);

/*  A thread reached the barrier of the current epoch (EXHAUSTED: a reader
    with no more input): wait for the controller.  WEIR__GO, STOP or ABORT.
    *NEW_PASS, when given, is set when the next epoch starts a new pass.  */
int weir__controller_arrive (weir__controller *self, int exhausted, int *new_pass);

/*  Run epochs until the job ends: wait for every thread at each barrier,
    call BOUNDARY, release.  TICK, when given, runs every TICK_MS while the
    controller waits.  */
void weir__controller_run (weir__controller *self, weir__boundary_fn *boundary, void *arg,
                           weir__tick_fn *tick, void *tick_arg, unsigned tick_ms);

/*  Before weir__controller_run: AGREE runs at every boundary.  */
void weir__controller_set_agree (weir__controller *self, weir__agree_fn *agree, void *arg);

/*  Whether the job has failed, failing it first when it was asked to
    abort, or when a stop has outlasted the stop timeout before the ranks
    agreed on it (while they agree, or in the boundary of an epoch they
    agreed to go on from): what a thread that waits outside the
    controller (for the other ranks) asks, since the controller's own
    watch does not run meanwhile.  Any thread not holding the controller.  */
int weir__controller_gave_up (weir__controller *self);

/*  Wake everything that waits on the controller, for good.  Any thread.  */
void weir__controller_abort (weir__controller *self);

/*  The epoch running now.  Stable for a runtime thread between two
    barriers, and for the boundary callback.  */
uint64_t weir__controller_epoch (const weir__controller *self);

/*  Whether the epoch running now is in the last pass over the input.  Same
    stability as the epoch.  */
int weir__controller_last_pass (const weir__controller *self);

/*  The last epoch completed.  Any thread.  */
uint64_t weir__controller_done (const weir__controller *self);

/*  The pauses at epoch ends (from the last thread's arrival to the
    release): how many, their total and the longest, in seconds.  Any
    thread.  */
void weir__controller_pauses (const weir__controller *self, uint64_t *count, double *total, double *longest);

/*  The pauses by length, in WEIR__PAUSE_BUCKETS buckets: up to N of
    them, each bucket's upper bound in seconds into BOUNDS (the last
    infinite) and its pauses into COUNTS (either may be NULL; SELF NULL
    counts none).  Returns WEIR__PAUSE_BUCKETS.  Any thread.  */
#define WEIR__PAUSE_BUCKETS 15
size_t weir__controller_pause_buckets (const weir__controller *self, size_t n, double *bounds,
                                       uint64_t *counts);

#endif

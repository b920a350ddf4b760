/*  lib/killpoint.h - named points of the checkpoint path where a test
    build can kill the process.

    In the library and the command that are installed, WEIR_KILL_POINT
    is nothing at all.  The fault-injection suite builds the same sources
    once more with -DWEIR_KILL_POINTS (tests/faults/weir-kp); there,
    WEIR_KILL_AT=POINT:N in the environment sends SIGKILL to the process
    at the N-th time any thread passes POINT.  With WEIR_KILL_SIGNAL=STOP
    the process stops itself there instead (SIGSTOP; SIGCONT goes on), so
    that a test can freeze one rank at an exact place of an epoch's end.
    A name that is no point below is refused when the program starts
    (exit 2), so that a typo cannot make a sweep pass without killing
    anything.

    The points, in the order an epoch's end passes them:

      readers-stopped       a reader thread sent its barrier and waits
                            (the pipe downstream may still hold data)
      pipe-drained          every thread waits at the barrier: quiescent
      writers-synced        every writer committed (flushed and fsynced)
      blobs-copied          --async-checkpoint: the blobs were copied to
                            staging, the write is not yet handed over
      ranks-prepared        a job of several ranks: every rank committed
                            its writers and sent its part to rank 0,
                            which has not written the checkpoint (rank 0)
      before-leveldb-write  the checkpoint's batch is built, not written
      after-leveldb-write   the synced LevelDB write returned
      readers-resumed       the threads were released into the next epoch

    And at the end of a job without a checkpoint, where a file written
    beside an output replaces it (writers/outfile.h):

      output-synced         the new file is synced, not yet renamed
      output-renamed        renamed over the old file, the folder not
                            yet synced

    And on the way into a keyed stage (lib/shuffle.h):

      shuffle-part-sent     a producer sent one part of a batch it split
                            by key; the other parts are not sent yet

    And in a postgres writer's two-phase commit (writers/postgres.c):

      postgres-prepared     every writer thread prepared its transaction
                            of the epoch; no checkpoint records it yet
      postgres-settling     the checkpoint that records them is written;
                            none of them is committed yet
      keyed-epoch-ended     a thread of a keyed stage had every
                            producer's barrier and ended its epoch (its
                            key groups stored), and has not passed the
                            barrier on
 */
#ifndef WEIR_KILLPOINT_H_INCLUDED
#define WEIR_KILLPOINT_H_INCLUDED

#ifdef WEIR_KILL_POINTS
void weir__kill_point (const char *name);
#define WEIR_KILL_POINT(name) weir__kill_point (name)
#else
#define WEIR_KILL_POINT(name) ((void) 0)
#endif

#endif

/*  pipeline/pipe.h - the insides of a pipe, shared by the files that run
    it: pipe.c (building, statistics), runtime.c (threads and queues) and
    stage.c (the processor-facing functions).  */
#ifndef WEIR_PIPE_H_INCLUDED
#define WEIR_PIPE_H_INCLUDED

#include <pthread.h>
#include <stdatomic.h>
#include <weir/weir.h>

#include "lib/batch.h"
#include "lib/error.h"
#include "lib/props.h"
#include "lib/queue.h"
#include "checkpoint/store.h"
#include "lib/workspace.h"
#include "pipeline/elements.h"
#include "readers/reader.h"
#include "writers/writer.h"

typedef struct weir__stage weir__stage;

/*  One runtime thread of a stage: the handle its callbacks get.  */
struct weir_stage {
    weir__stage *stage;
    unsigned index;
    pthread_t thread;
    int started;                //  the thread was created (to be joined)
    weir__sink sink;            //  outgoing batch (sink.batch), for every kind
    size_t packed_from;         //  where the record being packed began
    void *tstate;               //  processor thread state
    weir__records decoder;      //  incoming records
    int decoder_ready;
    int inputs_done;            //  every producer's barrier said: input exhausted
    int last_epoch;             //  what weir_last_epoch says in epoch_end
    _Atomic uint64_t start_ns, end_ns, wait_ns;
};

struct weir__stage {
    weir_pipe *pipe;
    size_t index;
    char *name;
    long name_offset;
    weir_element_kind kind;
    weir__props props;
    unsigned threads, capacity, batch;

    const weir__reader_class *reader;
    void *reader_state;
    weir__shards shards;
    uint64_t *offsets;          //  per shard: where reading goes on (owned by the thread holding it)
    atomic_size_t next_shard;
    unsigned passes;            //  passes=P over the input
    //  The epoch's record budget (see epoch.c): guarded by claim_lock
    pthread_mutex_t claim_lock;
    pthread_cond_t claim_cond;
    uint64_t remaining;         //  records not yet claimed this epoch
    unsigned holders;           //  threads holding an unused claim
    uint64_t deadline_ns;       //  --epoch-seconds: claims end then (0: never)

    const weir__writer_class *writer;
    void *writer_state;
    char committed[WEIR__WRITER_STATE_MAX];  //  at the last checkpoint

    const weir_processor *proc;
    weir_plugin *plugin;        //  where proc came from, if a shared object
    void *proc_state;
    void *user;
    int passthrough;
    int proc_opened;
    int proc_opened_once;       //  its properties had a chance to be read

    weir__queue *in;            //  feeds this stage; NULL for the reader
    weir__queue *out;           //  the next stage's in; NULL for the writer
    weir_stage *handles;        //  [threads]

    _Atomic uint64_t records_in, records_out, batches_in;
    uint64_t base_records_in, base_records_out;     //  from the resumed checkpoint
};

/*  What the epoch controller tells a thread waiting at a barrier.  */
enum { WEIR__GO = 0, WEIR__STOP = 1, WEIR__ABORT = 2 };

struct weir_pipe {
    weir__stage **stages;
    size_t count;
    char *description;          //  text of the last weir_pipe_parse
    size_t description_base;    //  stages before it came from elsewhere

    pthread_mutex_t lock;       //  guards err
    weir__err err;
    atomic_int failed;
    atomic_int stop;
    int ran;

    void *zmq_ctx;
    _Atomic uint64_t start_ns, end_ns;

    char **warnings;
    size_t warning_count;

    //  Job options
    uint64_t epoch_records;     //  0: no limit
    double epoch_seconds;       //  0: no limit
    uint64_t max_epochs;        //  stop after this epoch (0: no limit)
    char *checkpoint_dir;
    unsigned keep;
    int async_checkpoint;
    unsigned checkpoint_failures;   //  consecutive failures allowed
    int resume_mode;
    uint64_t resume_epoch;
    char *load_blobs_dir;
    int64_t load_blobs_epoch;   //  -1: latest
    weir_log_fn *log;
    void *log_arg;

    //  Epoch controller (epoch.c); guarded by epoch_lock
    pthread_mutex_t epoch_lock;
    pthread_cond_t arrived_cond;    //  the controller waits on it
    pthread_cond_t release_cond;    //  threads at a barrier wait on it
    uint64_t epoch;             //  the epoch running now
    uint64_t first_epoch;       //  the first epoch of this run
    _Atomic uint64_t done_epoch;    //  the last epoch completed
    unsigned pass;              //  0-based pass over the input
    unsigned arrived, exhausted, total_threads, reader_threads;
    unsigned generation;
    int release;                //  WEIR__GO / STOP / ABORT for the waiting threads
    int fresh;                  //  not resumed: init runs, checkpoint 0 is written
    weir__workspace *workspace;
    weir__store *store;
    char *shape;                //  the description without threads/capacity/batch
    struct weir__saver *saver;  //  writes the checkpoints
    struct weir__resume *resume;    //  being resumed from, until the stages opened
    int finished_before;        //  it says the job had finished
    _Atomic uint64_t pauses, pause_ns, pause_max_ns;
    double base_wall;           //  wall seconds of the job before this run

    weir_progress_fn *progress;
    void *progress_arg;
    unsigned progress_ms;
};

/*  Record the first failure of the job and tear the pipe down: stop the
    readers, wake blocked producers, shut the ZeroMQ context down so that
    blocked receivers return.  Any thread.  */
void weir__pipe_fail (weir_pipe *pipe, const weir__err *err);

/*  Run (runtime.c).  */
int weir__pipe_run (weir_pipe *pipe);

/*  ---------------------------------------------------------------------
    The epoch controller (epoch.c).  */

/*  Before the threads start: open the checkpoint store, restore a resumed
    checkpoint (blobs, offsets, writer states) or refuse; load blobs from
    another job.  Sets pipe->fresh.  */
int weir__epoch_prepare (weir_pipe *pipe, weir__err *err);

/*  After the stages opened (and init ran on a fresh start): write
    checkpoint 0.  */
int weir__epoch_begin (weir_pipe *pipe, weir__err *err);

/*  Run epochs until the job ends: wait for every thread at each barrier,
    commit writers, checkpoint, release.  Calls the progress callback while
    it waits.  */
void weir__epoch_control (weir_pipe *pipe);

/*  Finish background work; release the store.  */
void weir__epoch_end (weir_pipe *pipe);

/*  A reader thread claims up to WANT records of the epoch's budget; 0 when
    the epoch is full (or the job stops).  */
uint64_t weir__epoch_claim (weir__stage *stage, uint64_t want);

/*  The same, for a thread that used up its previous claim.  */
uint64_t weir__epoch_reclaim (weir__stage *stage, uint64_t want);

/*  Reader offsets (and their check against the resumed checkpoint) once
    the reader opened; the committed state a writer resumes from, NULL on
    a fresh start, (const char *) -1 with ERR on a bad checkpoint.  */
int weir__epoch_resume_stage (weir__stage *stage, weir__err *err);
const char *weir__epoch_writer_resume (weir__stage *stage, weir__err *err);

/*  A reader thread that ran out of input gives back UNUSED records.  */
void weir__epoch_unclaim (weir__stage *stage, uint64_t unused);

/*  A thread reached the barrier of the current epoch (EXHAUSTED: a reader
    with no more input): wait for the controller.  WEIR__GO, STOP or ABORT.
    *NEW_PASS is set when the next epoch starts a new pass.  */
int weir__epoch_arrive (weir_stage *h, int exhausted, int *new_pass);

/*  Wake everything that waits on the controller (abort).  */
void weir__epoch_abort (weir_pipe *pipe);

/*  Log a message through the pipe's log callback.  */
void weir__pipe_log (weir_pipe *pipe, int level, const char *fmt, ...) WEIR_PRINTF (3, 4);

/*  Send the thread's outgoing batch on, if it holds records (stage.c).
    0, or WEIR__SINK_ABORT when the job is being torn down.  */
int weir__stage_flush (weir_stage *h);

#endif

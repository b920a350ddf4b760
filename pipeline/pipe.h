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
    atomic_size_t next_shard;

    const weir__writer_class *writer;
    void *writer_state;

    const weir_processor *proc;
    weir_plugin *plugin;        //  where proc came from, if a shared object
    void *proc_state;
    void *user;
    int passthrough;
    int proc_opened;
    int proc_opened_once;       //  its properties had a chance to be read
    int live;                   //  its threads have been started

    weir__queue *in;            //  feeds this stage; NULL for the reader
    weir__queue *out;           //  the next stage's in; NULL for the writer
    weir_stage *handles;        //  [threads]

    _Atomic uint64_t records_in, records_out, batches_in;
};

struct weir_pipe {
    weir__stage **stages;
    size_t count;
    char *description;          //  text of the last weir_pipe_parse
    size_t description_base;    //  stages before it came from elsewhere

    pthread_mutex_t lock;       //  guards err and running
    weir__err err;
    atomic_int failed;
    atomic_int stop;
    int ran;

    void *zmq_ctx;
    _Atomic uint64_t start_ns, end_ns;
    unsigned running;           //  threads not yet finished
    pthread_cond_t finished;

    char **warnings;
    size_t warning_count;

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

/*  Send the thread's outgoing batch on, if it holds records (stage.c).
    0, or WEIR__SINK_ABORT when the job is being torn down.  */
int weir__stage_flush (weir_stage *h);

#define WEIR__SINK_ABORT 2

#endif

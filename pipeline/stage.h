/*  pipeline/stage.h - a stage of a pipe and its workers.

    A stage is one element of the description (a reader, a processor or a
    writer) with its properties and threads.  A worker is one runtime
    thread of a stage.  The handle a processor's callbacks get, the public
    weir_stage, is its worker: internal code calls it weir__worker and
    keeps "stage" for the stage itself.

    The builder (build.c) fills in what a stage is; the runtime
    (runtime.c) fills in where it runs: the job, the controller, the
    queues around it, its workers.  */
#ifndef WEIR_STAGE_H_INCLUDED
#define WEIR_STAGE_H_INCLUDED

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <weir/plugin.h>
#include <weir/weir.h>

#include "lib/batch.h"
#include "lib/metrics.h"
#include "lib/props.h"
#include "lib/queue.h"
#include "lib/workspace.h"
#include "pipeline/job.h"
#include "readers/reader.h"
#include "writers/writer.h"

struct weir__controller;
typedef struct weir__stage weir__stage;
typedef struct weir_stage weir__worker;

/*  One runtime thread of a stage.  */
struct weir_stage {
    weir__stage *stage;
    unsigned index;  //  0 .. threads-1
    pthread_t thread;
    int started;             //  the thread was created (to be joined)
    weir__sink sink;         //  the outgoing batch (sink.batch), for every kind
    const uint64_t *offset;  //  a reader's offset in the shard in hand, or NULL
    uint64_t seen;           //  its value when last counted into the stage's input_done
    size_t packed_from;      //  where the record being packed began
    void *tstate;            //  a processor's thread state
    int rejecting;           //  weir_reject was called for the record in process
    char reject_reason[256];
    weir__records decoder;  //  incoming records
    int decoder_ready;
    unsigned eos;       //  end-of-stream markers received, one per producer
    unsigned barriers;  //  barriers received in this epoch
    int inputs_done;    //  every producer's barrier said: input exhausted
    int last_epoch;     //  what weir_last_epoch says in epoch_end
    _Atomic uint64_t start_ns, end_ns, wait_ns;
};

struct weir__stage {
    size_t index;      //  in the pipe, from 0 (the reader)
    char *name;        //  the element, as written
    long name_offset;  //  in the description, -1 when added in code
    long glued;        //  the '!' before it stuck to a value (parse.h), or -1
    weir_element_kind kind;
    weir__props props;
    unsigned threads, capacity, batch;
    unsigned linger_ms;  //  how long a partial batch waits for more when the input is idle

    //  What it is (the builder)
    const weir__reader_class *reader;
    const weir__writer_class *writer;
    const weir_processor *proc;
    weir_processor proc_table;  //  a table added in code, as this weir reads it
    weir_plugin *plugin;        //  where proc came from, if a shared object
    void *user;                 //  weir_pipe_add_processor's argument
    int passthrough;            //  forwards batches untouched (identity)
    unsigned passes;            //  a reader's passes over its input

    //  Its state while it runs
    void *reader_state;
    weir__shards shards;  //  a reader's input
    uint64_t *offsets;    //  per shard: where reading goes on (owned by the thread holding it)
    atomic_size_t next_shard;
    uint64_t input_total;         //  sum of the shards' sizes times the passes, 0 if unknown
    _Atomic uint64_t input_done;  //  of it, read so far
    void *writer_state;
    char committed[WEIR__WRITER_STATE_MAX];  //  a writer's state at the last commit
    void *proc_state;
    int proc_opened;
    int proc_opened_once;  //  its properties had a chance to be read

    //  Bad records (on-error=, dead-letter=): readers and processors
    int skip;                                     //  on-error=skip
    const char *dead_path;                        //  dead-letter=, or NULL
    struct weir__deadletter *dead;                //  open while it runs
    char dead_committed[WEIR__WRITER_STATE_MAX];  //  its state at the last commit
    _Atomic uint64_t rejected;                    //  skipped in this run
    _Atomic uint64_t truncations;                 //  followed files found truncated in place
    uint64_t base_rejected;                       //  from the resumed checkpoint

    //  Its share of a job of several ranks (pipeline/ranks.h)
    unsigned rank, ranks;     //  a reader reads shard i when i % ranks == rank
    char *path_template;      //  a writer's path= with "{rank}", or NULL
    uint64_t job_records[3];  //  in, out, rejected over every rank, once the run ended
    int job_known;
    unsigned slots;  //  a writer's outputs: one per rank that ever wrote
    //  [slots] the committed state of each output this rank holds (slot s
    //  with s % ranks == rank): its own, and those of ranks gone since the
    //  checkpoint it resumed from
    char (*slot_committed)[WEIR__WRITER_STATE_MAX];

    //  Where it runs (the runtime)
    weir__job *job;
    struct weir__controller *controller;
    weir__workspace *workspace;
    weir__queue *in;        //  feeds this stage; NULL for the reader
    weir__queue *out;       //  the next stage's in; NULL for the writer
    unsigned producers;     //  threads of the stage before
    weir__worker *workers;  //  [threads]

    weir__metrics metrics;  //  what its processor publishes

    _Atomic uint64_t records_in, records_out, batches_in;
    uint64_t base_records_in, base_records_out;  //  from the resumed checkpoint
};

/*  The stages of a pipe, in order.  */
typedef struct weir__stages {
    weir__stage **items;
    size_t count;
} weir__stages;

void weir__stages_init (weir__stages *self);
void weir__stages_release (weir__stages *self);

/*  Append a stage for element NAME (OFFSET in the description, or -1).
    NULL when out of memory.  */
weir__stage *weir__stages_append (weir__stages *self, const char *name, long offset);

/*  The stage's workers, with their outgoing batches and decoders.  0 or
    WEIR_ENOMEM.  */
int weir__stage_workers_new (weir__stage *self, weir__err *err);

/*  Release the workers' batches and decoders once their threads are
    joined; the workers stay, for the statistics.  */
void weir__stage_workers_release (weir__stage *self);

/*  "reader", "processor" or "writer".  */
const char *weir__stage_kind_name (weir_element_kind kind);

/*  A reader whose shards are planned and offsets set, in pass PASS of
    its passes: the size of its input and how far it is.  */
void weir__stage_input_plan (weir__stage *self, unsigned pass);

/*  Count how far reader worker W went in its shard since it last did.
    The worker's own thread.  */
void weir__stage_input_count (weir__worker *w);

/*  Its statistics, as weir_pipe_stats gives them.  Any thread.  */
void weir__stage_stats (weir__stage *self, weir_stage_stats *stats);

#endif

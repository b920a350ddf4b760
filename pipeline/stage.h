/*  pipeline/stage.h - a stage of a pipe: one element of the description
    (a reader, a processor or a writer) with its properties and threads.

    What every stage has is here: its name and place in the description,
    its properties, its threads and batches, the queues around it, its
    workers and its record counts.  What only one kind of stage has is a
    role part, owned by the file of that concept and reached through its
    functions: a reader's input (pipeline/input.h), a writer's output
    (pipeline/output.h), a processor's callbacks (pipeline/callbacks.h),
    and the bad-record policy of readers and processors
    (pipeline/rejects.h).  The builder (build.c) makes a stage and its
    role; the runtime (runtime.c) gives it its place in the running pipe.

    A worker is one runtime thread of a stage.  The handle a processor's
    callbacks get, the public weir_stage, is its worker: internal code
    calls it weir__worker and keeps "stage" for the stage itself.  */
#ifndef WEIR_STAGE_H_INCLUDED
#define WEIR_STAGE_H_INCLUDED

#include <pthread.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <weir/plugin.h>
#include <weir/weir.h>

#include "lib/batch.h"
#include "lib/key.h"
#include "lib/metrics.h"
#include "lib/props.h"
#include "lib/queue.h"
#include "lib/shuffle.h"
#include "lib/workspace.h"
#include "pipeline/callbacks.h"
#include "pipeline/input.h"
#include "pipeline/job.h"
#include "pipeline/output.h"
#include "pipeline/rejects.h"

struct weir__controller;
typedef struct weir__stage weir__stage;
typedef struct weir_stage weir__worker;

/*  One runtime thread of a stage.  */
struct weir_stage {
    weir__stage *stage;
    unsigned index;  //  0 .. threads-1
    pthread_t thread;
    int started;      //  the thread was created (to be joined)
    weir__sink sink;  //  the outgoing batch (sink.batch), for every kind
    //  A stage with named outputs (weir__stage.ports): the batches of
    //  ports 1 on (port 0's is sink.batch)
    weir__batch *port_batches;
    //  Where its batches and markers go (the runtime): its stage's links,
    //  or, when its one link leads into a tee that runs in its threads,
    //  that tee's (weir__stage.host)
    weir__queue_target *targets;
    size_t ntargets;
    //  A reader's: the worker of the processor fused with its stage
    //  (weir__stage.runs_in), to which it hands each batch it fills, or
    //  NULL.  That worker's: the time it took in the reader's thread
    //  (its waits on queues included), of which its busy time is the
    //  part not in wait_ns
    struct weir_stage *fused;
    _Atomic uint64_t fused_ns;
    //  [link]: its batches split by key, for a link into a keyed stage
    //  (lib/shuffle.h), made when first needed
    weir__shuffle **shuffles;
    //  Whether what it packs for port 0 may be folded as it is emitted
    //  (weir__path_fold): 0 not yet known, 1 yes, -1 no; with what it
    //  takes (the link's shuffle, where it sends); and the records so
    //  folded not yet in the counts
    int fold_port0;
    weir__shuffle_to fold_to;
    const weir__combiner *fold_combiner;
    uint32_t folded;
    //  A keyed stage's thread: the state of its key groups
    //  (pipeline/keyed.h), made when the thread starts; and the record
    //  its processor is given, whose key weir_key_state reads
    struct weir__keyed *keyed;
    const msgpack_object *record;
    int processing;      //  in process or process_bytes: a failure names the record's place
    size_t shard;        //  a reader's shard in hand, or SIZE_MAX
    uint64_t seen;       //  its offset when last counted into the input's progress
    size_t packed_from;  //  where the record being packed began
    void *tstate;        //  a processor's thread state
    int rejecting;       //  weir_reject was called for the record in process
    //  A processor's: the header of the batch being applied, whose origin
    //  names its records' place in a failure (pipeline/origin.h), or NULL
    const weir__batch_header *origin;
    char reject_reason[256];
    weir__records decoder;  //  incoming records
    int decoder_ready;
    unsigned eos;       //  producers whose end-of-stream marker came (a marker may stand for several)
    unsigned barriers;  //  producers whose barrier came in this epoch
    int inputs_done;    //  every producer's barrier said: input exhausted
    int last_epoch;     //  what weir_last_epoch says in epoch_end
    _Atomic uint64_t start_ns, end_ns, wait_ns;
};

/*  What a keyed stage that aggregates (pipeline/aggregate.h) gives its
    producers to fold records with before they cross the link
    (lib/shuffle.h), and how it folds what they folded into its state.  */
typedef struct weir__combine {
    weir__combiner combiner;
    //  Fold the COUNT partial aggregates of a batch of kind
    //  WEIR__BATCH_COMBINED (LEN bytes at PAYLOAD, as the combiner packed
    //  them) into worker W's state (TSTATE), *RECORDS the records they
    //  stand for: 0, or -1 when it failed the job
    int (*merge) (weir__worker *w, void *tstate, const char *payload, size_t len, uint32_t count,
                  uint64_t *records);
} weir__combine;

/*  What every stage of a running pipe shares (the runtime fills it).  */
typedef struct weir__shared {
    weir__job *job;
    struct weir__controller *controller;
    weir__workspace *workspace;
    unsigned key_groups;  //  of the job (lib/key.h): fixed when it was created
    //  Keyed state goes into the workspace at each epoch's end: the job
    //  checkpoints (and on several ranks, each sends rank 0 the groups it
    //  owns from there).  Else nothing reads it there, and a copy of every
    //  key would double the memory of a keyed stage.
    int keeps_keys;
    unsigned rank, ranks;  //  this process's, and the job's
    //  Every stage, by index: whose records a batch's origin names
    weir__stage *const *stages;
    size_t nstages;
} weir__shared;

/*  A link from a stage's output to another stage's input.  The stage
    whose output it is owns it (weir__stage.outs).  */
typedef struct weir__edge {
    weir__stage *to;
    long offset;  //  where the description makes it (its '!' or reference), or -1
    //  The output it starts from: the port a reference named ("r.errors"),
    //  borrowed from the link, or NULL; and its index in the stage's
    //  ports once checked (0 for a stage without ports)
    const char *port;
    unsigned port_index;
    //  Where it runs (the runtime): TO's input queue, fed by every edge
    //  into TO, and this stage's first producer number in it
    weir__queue *queue;
    unsigned base;
    _Atomic uint64_t records;  //  sent along it
    //  A keyed link in a job of several ranks (RANKS > 1) has a producer
    //  number in TO's queue for each thread of every rank, rank r's
    //  from FIRST + r x threads (BASE is this rank's), and sends to the
    //  threads of the other ranks down link XLINK of EXCHANGE
    //  (lib/exchange.h); else RANKS is 1, FIRST is BASE, EXCHANGE NULL
    unsigned first, ranks;
    struct weir__exchange *exchange;
    unsigned xlink;
} weir__edge;

/*  A stage's records: counted by its threads as they go (any thread
    reads them), those of the runs before (from the checkpoint resumed),
    and, in a job of several ranks, every rank's once the run ended.  */
typedef struct weir__counts {
    _Atomic uint64_t in, out, batches;
    uint64_t base_in, base_out;
    uint64_t job_in, job_out, job_rejected;
    int job_known;
} weir__counts;

struct weir__stage {
    size_t index;  //  in the pipe, from 0, in the order of the description
    char *name;    //  the element, as written
    char *label;   //  its name= (pipeline/graph.h), or NULL
    long label_offset;
    long name_offset;            //  in the description, -1 when added in code
    long glued;                  //  the '!' before it stuck to a value (parse.h), or -1
    const weir__stage *follows;  //  it starts a chain right after that stage, no '!' between (parse.h)
    weir_element_kind kind;
    weir__props props;
    unsigned threads, capacity, batch;
    unsigned linger_ms;  //  how long a partial batch waits for more when the input is idle
    //  key=: its input is partitioned by key, each key group to one of its
    //  threads (lib/key.h; the producers split their batches,
    //  lib/shuffle.h), else NULL
    weir__key *key;
    int keyed_outs;  //  some of its links lead into keyed stages (the runtime)
    //  Set by its processor while it is open when it aggregates by key:
    //  its producers then fold their records before sending them
    const weir__combine *combine;

    //  Its role (the builder): the one of its kind, the others NULL
    weir__input *input;
    weir__output *output;
    weir__callbacks *callbacks;
    weir__rejects *rejects;  //  readers and processors
    int fans_out;            //  may have several outputs, each sent every record (tee)
    //  A tee fed by one stage that feeds nothing else runs in that
    //  stage's threads (pipeline/graph.h): that stage, else NULL.  It
    //  has no queue and no threads of its own; its host's workers send
    //  each batch down its links and count what crossed it
    weir__stage *host;
    //  fuse=: 1 to run in the threads of the reader that feeds it, 0 not
    //  to, -1 (auto) when their threads together outnumber the CPUs.  A
    //  processor that does (pipeline/graph.h) has that reader here, and
    //  no queue and no threads of its own: each reader thread hands it
    //  every batch it fills (pipeline/fuse.h)
    int fuse;
    weir__stage *runs_in;
    //  Named outputs (route's branches, a plugin's ports), or none: a
    //  processor's records then go to its one output.  A stage with
    //  ports has one link from each, in port order (outs[i] is port i)
    char **ports;
    size_t nports;

    //  Its place in the graph (pipeline/graph.h): the stages it feeds and
    //  how many links feed it
    weir__edge *outs;
    size_t nouts, nins;

    //  Where it runs (the runtime)
    const weir__shared *run;
    weir__queue *in;        //  feeds this stage, from every link into it; NULL for a reader
    unsigned producers;     //  threads of the stages that feed it, one per link
    weir__worker *workers;  //  [threads]

    weir__metrics metrics;  //  what its processor publishes
    weir__counts counts;
};

/*  A link as the description or the code gave it: each end a stage by
    its index, or by its name= (a reference, resolved once every stage is
    known), with the port a reference named.  */
typedef struct weir__link {
    size_t from, to;  //  SIZE_MAX: by name
    char *from_name, *from_port, *to_name, *to_port;
    long from_offset, to_offset, bang;  //  the references, the '!'; -1 when unknown
} weir__link;

/*  The stages of a pipe, in the order they were given, and the links
    between them.  */
typedef struct weir__stages {
    weir__stage **items;
    size_t count;
    weir__link *links;
    size_t nlinks;
    //  The stage the next one added in code is linked from (the end of
    //  the branch being written), or SIZE_MAX
    size_t tail;
} weir__stages;

void weir__stages_init (weir__stages *self);
void weir__stages_release (weir__stages *self);

/*  The reader of resolved stages: the one nothing feeds
    (pipeline/graph.h).  */
weir__stage *weir__stages_reader (const weir__stages *self);

/*  How many readers the resolved stages have.  */
size_t weir__stages_readers (const weir__stages *self);

/*  Append a stage for element NAME (OFFSET in the description, or -1).
    NULL when out of memory.  */
weir__stage *weir__stages_append (weir__stages *self, const char *name, long offset);

/*  The stage's named outputs: a copy of the COUNT NAMES (none: one
    output without a name).  0 or WEIR_ENOMEM.  */
int weir__stage_set_ports (weir__stage *self, const char *const *names, size_t count);

/*  The stage's workers, with their outgoing batches and decoders; a
    reader's sinks are copies of SINK's callbacks, with the stage's
    linger and its bad-record policy.  0 or WEIR_ENOMEM.  */
int weir__stage_workers_new (weir__stage *self, const weir__sink *sink, weir__err *err);

/*  Release the workers' batches and decoders once their threads are
    joined; the workers stay, for the statistics.  */
void weir__stage_workers_release (weir__stage *self);

/*  A reader worker W counts how far it went in its shard since it last
    did.  The worker's own thread.  */
void weir__stage_input_count (weir__worker *w);

/*  How the stage is named in messages and statistics: its name=, or
    its element.  */
const char *weir__stage_title (const weir__stage *self);

/*  "reader", "processor" or "writer".  */
const char *weir__stage_kind_name (weir_element_kind kind);

/*  An error about the stage (printf-style): CODE and the message into
    ERR, pointing at OFFSET in the description, or at the element's name
    when OFFSET is -1.  Returns CODE.  */
int weir__stage_error (const weir__stage *self, weir__err *err, int code, long offset, const char *fmt, ...)
    WEIR_PRINTF (5, 6);

/*  Its statistics, as weir_pipe_stats gives them.  Any thread.  */
void weir__stage_stats (const weir__stage *self, weir_stage_stats *stats);

/*  The stage's property KEY (the last given), or NULL, not marked read:
    for what the engine checks, apart from what the element reads.  */
weir__prop *weir__stage_prop (const weir__stage *self, const char *key);

/*  The stage's records over the job's life (this rank's): what it took
    in (a reader: what it read) and sent on, and the bad records it
    skipped.  Any thread.  */
void weir__stage_records (const weir__stage *self, uint64_t *in, uint64_t *out, uint64_t *rejected);

/*  The worker whose sink SINK is (a reader's sink callbacks get the sink).  */
static inline weir__worker *weir__sink_worker (weir__sink *sink)
{
    return (weir__worker *) ((char *) sink - offsetof (weir__worker, sink));
}

#endif

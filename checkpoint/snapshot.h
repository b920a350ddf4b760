/*  checkpoint/snapshot.h - the state of a quiescent job, as the engine
    hands it over at an epoch boundary, and the checkpoint made of it.

    The engine describes what it has (counts, offsets, writer states, the
    workspace) in a weir__snapshot; this file turns it into the items of
    checkpoint/keys.h.  The engine never names a key.  */
#ifndef WEIR_SNAPSHOT_H_INCLUDED
#define WEIR_SNAPSHOT_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "checkpoint/ckpt.h"
#include "lib/workspace.h"
#include "readers/shards.h"

typedef struct weir__snapshot_stage {
    const char *element;  //  as written in the description
    uint64_t records_in;  //  over the job's life, resumed runs included
    uint64_t records_out;
    const char *writer_state;  //  a writer's committed state; NULL for the others
    uint64_t rejected;         //  bad records skipped over the job's life
    const char *dead_state;    //  its dead letter's committed state, or NULL
    //  A writer of a job of several ranks: the committed state of each
    //  rank's output (slot 0 is writer_state's; NULL for a slot left
    //  out), NULL when nslots <= 1
    const char *const *slot_states;
    size_t nslots;
} weir__snapshot_stage;

typedef struct weir__snapshot_input {
    const char *element;  //  the reader's, as written
    const char *prefix;
    const weir__shards *shards;
    const uint64_t *offsets;
} weir__snapshot_input;

typedef struct weir__snapshot {
    uint64_t epoch;       //  the epoch that just ended (0: after init)
    int finished;         //  the job read all its input
    int best;             //  a processor marked it the best so far (weir_checkpoint_best)
    unsigned pass;        //  the pass the next epoch is in
    double wall_seconds;  //  the job's, over all its runs
    const char *description;
    const char *shape;  //  what a resumed job must match
    const weir__snapshot_stage *stages;
    size_t nstages;
    //  Every reader's input: the shards, where reading goes on in each,
    //  and the prefix of their keys (checkpoint/keys.h)
    const weir__snapshot_input *inputs;
    size_t ninputs;
    weir__workspace *workspace;  //  NULL: no blobs (a rank's part of a checkpoint)
    unsigned ranks;              //  of the run that takes it (0 is taken as 1)
    uint64_t generation;         //  the runs of the job so far
    unsigned key_groups;         //  of the job (lib/key.h)
} weir__snapshot;

/*  Copies of the blobs, kept from one checkpoint to the next: the pages of
    a fresh buffer would be faulted in on every copy, which costs more than
    the copy itself.  */
typedef struct weir__staging weir__staging;

weir__staging *weir__staging_new (void);
void weir__staging_destroy (weir__staging **self_p);

/*  Allocate and touch a copy of every blob WS holds now, before the pipe
    starts, rather than during the first pause.  0 or WEIR_ENOMEM.  */
int weir__staging_prefault (weir__staging *self, weir__workspace *ws);

/*  The checkpoint of S; NULL when out of memory.  Blobs are borrowed from
    the workspace, so the pipe must stay quiescent until the checkpoint is
    written, or, with STAGING, copied into it, so that the pipe may go on
    (the staging must then outlive the checkpoint).  */
weir__ckpt *weir__snapshot_take (const weir__snapshot *s, weir__staging *staging);

#endif

/*  checkpoint/resume.h - where a job starts: fresh, or from a checkpoint.

    weir__resume_open applies the resume policy (WEIR_RESUME_* of
    <weir/weir.h>) to a store and, when the job goes on from a checkpoint,
    loads it verified; weir__resume_same says whether it was written by
    the same pipeline (pipeline/change.h says what changed if not).
    The engine then takes what it needs, stage by stage, as it opens them:
    blobs, each reader's offsets, each writer's committed state.  Every
    check that the state still fits (the same shards, a state for every
    writer) is made here, with a message that names what changed.  */
#ifndef WEIR_RESUME_H_INCLUDED
#define WEIR_RESUME_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "checkpoint/replan.h"
#include "checkpoint/store.h"
#include "lib/error.h"
#include "lib/workspace.h"
#include "readers/shards.h"

typedef struct weir__resume weir__resume;

/*  With MODE WEIR_RESUME_NONE, a store that holds checkpoints is refused
    (WEIR_ESTATE); WEIR_RESUME_LATEST goes on from the latest checkpoint,
    if any; WEIR_RESUME_EPOCH from checkpoint EPOCH.  0 and *OUT, NULL
    when the job starts fresh.  The caller checks weir__resume_same: it
    is the one that can say what changed.  */
int weir__resume_open (weir__store *store, int mode, uint64_t epoch, weir__resume **out, weir__err *err);
void weir__resume_destroy (weir__resume **self_p);

/*  The shapes a checkpoint of a pipeline may have (weir__build_shape):
    its own, and the older form weirs wrote before where elements connect
    was let change on resume (NULL: none to accept).  */
typedef struct weir__shapes {
    const char *shape, *older;
} weir__shapes;

/*  1 if the checkpoint was written by the pipeline of SHAPES; else 0, and
    *WAS and *LEN the description it was written by (not
    NUL-terminated).  */
int weir__resume_same (const weir__resume *self, const weir__shapes *shapes, const char **was, size_t *len);

/*  The description and the shape the checkpoint was written by, LEN
    bytes (not NUL-terminated; "" in a checkpoint that has none).  */
const char *weir__resume_description (const weir__resume *self, size_t *len);
const char *weir__resume_shape (const weir__resume *self, size_t *len);

/*  The checkpoint's epoch; the job goes on with the next one.  */
uint64_t weir__resume_epoch (const weir__resume *self);

/*  Whether the job had read all its input, the pass the next epoch is in,
    the job's wall time so far.  */
int weir__resume_finished (const weir__resume *self);
unsigned weir__resume_pass (const weir__resume *self);
double weir__resume_wall_seconds (const weir__resume *self);

/*  Stage STAGE's record counts so far (0 when it has none).  */
void weir__resume_records (const weir__resume *self, size_t stage, uint64_t *in, uint64_t *out,
                           uint64_t *rejected);

/*  Put every blob of the checkpoint into WS, and declare again the
    regions it combines across ranks (weir_blob_reduce).  0, WEIR_ENOMEM,
    or WEIR_ECORRUPT for a region the checkpoint cannot hold.  */
int weir__resume_blobs (const weir__resume *self, weir__workspace *ws, weir__err *err);

/*  Where reading goes on in each of SHARDS, into OFFSETS: reader ELEMENT,
    whose keys start with PREFIX (checkpoint/keys.h).  WEIR_ECORRUPT,
    naming ELEMENT, when the shards planned now are not those checkpointed
    (the input changed: resuming would lose or repeat records).  */
int weir__resume_offsets (const weir__resume *self, const char *element, const char *prefix,
                          const weir__shards *shards, uint64_t *offsets, weir__err *err);

/*  A reader that does not follow its files: SHARDS, as planned now, made
    to go on from the checkpoint, what was appended to its files and the
    files new to its glob read on top (checkpoint/replan.h).  */
int weir__resume_files (const weir__resume *self, weir__replan *how, weir__shards *shards, weir__err *err);

/*  A reader that follows its files: add to SHARDS the files the
    checkpoint followed that are not among them now (rotated away,
    deleted), and give each shard the identity of the file its offset is
    in, to be checked when it is opened.  WEIR_ECORRUPT for a malformed
    identity.  */
int weir__resume_follow (const weir__resume *self, const char *element, const char *prefix,
                         weir__shards *shards, weir__err *err);

/*  Then the offsets of those of SHARDS the checkpoint knew (the others,
    new files, keep theirs: their start).  How many it did not know.  */
size_t weir__resume_follow_offsets (const weir__resume *self, const char *prefix, const weir__shards *shards,
                                    uint64_t *offsets);

/*  The committed state of writer stage STAGE, into STATE (SIZE bytes).
    WEIR_ECORRUPT when the checkpoint has none.  */
int weir__resume_writer (const weir__resume *self, size_t stage, const char *element, char *state,
                         size_t size, weir__err *err);

/*  The committed state of rank SLOT's output of writer stage STAGE (a job
    of several ranks): 0, 1 when the checkpoint has none (that rank never
    wrote: its output starts empty), or WEIR_ECORRUPT.  */
int weir__resume_writer_slot (const weir__resume *self, size_t stage, const char *element, unsigned slot,
                              char *state, size_t size, weir__err *err);

/*  How many ranks' outputs writer stage STAGE has (1 for a job that always
    ran on one rank).  */
unsigned weir__resume_slots (const weir__resume *self, size_t stage, const char *element);

/*  The generation (runs so far) of the checkpoint, 0 before there were.  */
uint64_t weir__resume_generation (const weir__resume *self);

/*  The key groups of the job, 0 in a checkpoint from before there were.  */
uint64_t weir__resume_key_groups (const weir__resume *self);

/*  The checkpoint, packed to go to another rank of the job; and a resume
    made of it there, refused if SHAPES are not the same (weir__resume_same), WHO naming the rank
    that sent it in messages.  */
int weir__resume_pack (const weir__resume *self, char **buf, size_t *len, weir__err *err);
int weir__resume_unpack (const char *buf, size_t len, const weir__shapes *shapes, const char *who,
                         weir__resume **out, weir__err *err);

/*  The same for the dead letter of stage STAGE.  */
int weir__resume_dead_letter (const weir__resume *self, size_t stage, const char *element, char *state,
                              size_t size, weir__err *err);

#endif

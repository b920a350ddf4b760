/*  pipeline/rejects.h - what a reader or processor stage does with a bad
    record.

    on-error=fail (the default) fails the job naming the record;
    on-error=skip counts it, says the first one in the job's warnings and
    goes on; dead-letter=PATH implies skip and keeps every skipped record
    in a file (pipeline/deadletter.h), an output committed with the
    writers at each epoch.  A stage's rejects are its policy, its count
    and its dead letter: the runtime opens and closes them, the recovery
    commits them and hands back their checkpointed state, the path gives
    them bad records.  Bad records are rare: nothing here is on the path
    of a good one.  */
#ifndef WEIR_REJECTS_H_INCLUDED
#define WEIR_REJECTS_H_INCLUDED

#include <msgpack.h>
#include <stdint.h>

#include "lib/error.h"
#include "lib/props.h"
#include "pipeline/job.h"
#include "readers/reader.h"

typedef struct weir__rejects weir__rejects;

/*  The policy ELEMENT's properties on-error= and dead-letter= say (both
    marked read).  0 and *OUT, WEIR_EPROPERTY pointing at the culprit in
    the description, or WEIR_ENOMEM.  ELEMENT and PROPS must outlive it.  */
int weir__rejects_new (const char *element, weir__props *props, weir__rejects **out, weir__err *err);

/*  Free it, closing its dead letter if it is still open.  */
void weir__rejects_destroy (weir__rejects **self_p);

/*  on-error=skip, or a dead letter: bad records are skipped.  */
int weir__rejects_skip (const weir__rejects *self);

/*  dead-letter=, or NULL.  */
const char *weir__rejects_path (const weir__rejects *self);

/*  Open the dead letter, if there is one.  RESUME as for a writer's open:
    NULL on a fresh start, else the committed state (copied) it goes back
    to.  */
int weir__rejects_open (weir__rejects *self, const char *resume, weir__err *err);

/*  A bad record of the input, met in EPOCH: counted (the first of the run
    said in JOB's warnings) and kept in the dead letter.  0, or an error in
    ERR.  Any reader thread.  */
int weir__rejects_input (weir__rejects *self, weir__job *job, uint64_t epoch, const weir__bad *bad,
                         weir__err *err);

/*  A record a processor rejected in EPOCH for REASON: without skip,
    WEIR_EPROCESSOR naming it, and its place in the input when WHERE
    (weir__origin_where's text, or "") says it; else counted and kept as
    above.  */
int weir__rejects_record (weir__rejects *self, weir__job *job, uint64_t epoch, const msgpack_object *record,
                          const char *reason, const char *where, weir__err *err);

/*  With the pipe quiescent: make the dead letter durable and keep what
    it committed.  */
int weir__rejects_commit (weir__rejects *self, weir__err *err);

/*  The dead letter's state at the last commit, or NULL without one.  */
const char *weir__rejects_committed (const weir__rejects *self);

/*  Write what is pending and close the dead letter; the first failure is
    returned.  */
int weir__rejects_close (weir__rejects *self, weir__err *err);

/*  Bad records skipped: in this run; and over the job's life, counting
    BASE, what a resumed checkpoint said (weir__rejects_resumed).  */
uint64_t weir__rejects_count (const weir__rejects *self);
uint64_t weir__rejects_total (const weir__rejects *self);
void weir__rejects_resumed (weir__rejects *self, uint64_t base);

#endif

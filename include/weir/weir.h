/*  weir/weir.h - the public C API of weir.

    A pipe is a graph of stages: readers, processors and writers, a
    straight chain or branches linked by name (weir_pipe_link).  Stages
    exchange batches of msgpack records over bounded ZeroMQ in-process
    queues; every stage runs threads=N runtime threads.

        weir_pipe *pipe;
        if (weir_pipe_new (&pipe))
            return WEIR_ENOMEM;
        int rc = weir_pipe_parse (pipe, "range count=1000000 ! null");
        if (rc == 0)
            rc = weir_pipe_run (pipe);
        if (rc)
            fprintf (stderr, "%s\n", weir_pipe_error (pipe));
        weir_pipe_destroy (&pipe);

    Conventions:
    - a function that can fail returns 0 or a negative WEIR_E* code.  The
      human message (element, file, byte offset) is weir_pipe_error () for
      a function of a pipe; a function without a pipe takes a last
      argument char **error that receives it (the caller's to free with
      weir_free; pass NULL to ignore it);
    - a pipe is described and set up, then run once: weir_pipe_parse,
      weir_pipe_add* and every weir_pipe_set_* return WEIR_ESTATE once
      weir_pipe_run was called (from within the run too, as from a
      progress callback), so that nothing the run uses changes or is
      freed under it; a refusal during the run leaves the pipe's error,
      the run's first failure, as it is;
    - _new / _destroy (&p) pairs: every _new returns 0 or a code, and the
      object through its out argument (NULL on failure); destroy nulls
      the caller's pointer and does nothing on NULL;
    - const char * results are borrowed, char * results are the caller's;
      whatever the library allocates for the caller (messages, arrays) is
      freed with weir_free, not free: the library and the program may not
      share an allocator;
    - this header grows only by appending: codes and constants never change
      meaning, structs the library fills carry their size.

    This header needs no msgpack: a program that only runs pipes includes
    it alone.  Processors (callbacks in C) need <weir/plugin.h> as well,
    which brings <msgpack.h>.
*/
#ifndef WEIR_WEIR_H_INCLUDED
#define WEIR_WEIR_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <weir/version.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(WEIR_BUILDING) && defined(__GNUC__)
#define WEIR_EXPORT __attribute__ ((visibility ("default")))
#else
#define WEIR_EXPORT
#endif

#if defined(__GNUC__)
#define WEIR_PRINTF(f, a) __attribute__ ((format (printf, f, a)))
#else
#define WEIR_PRINTF(f, a)
#endif

struct weir_processor;

/*  Error codes.  Values never change meaning; new ones are appended.  */
#define WEIR_OK 0
#define WEIR_ENOMEM -1     /*  out of memory  */
#define WEIR_ESYNTAX -2    /*  malformed pipeline description  */
#define WEIR_EUNKNOWN -3   /*  unknown element  */
#define WEIR_EPROPERTY -4  /*  unknown or invalid property  */
#define WEIR_ESTRUCTURE -5 /*  stages in an impossible order  */
#define WEIR_EIO -6        /*  an input or output failed  */
#define WEIR_ECORRUPT -7   /*  input that is not what it claims  */
#define WEIR_EPROCESSOR -8 /*  a processor callback failed  */
#define WEIR_ESYSTEM -9    /*  threads, ZeroMQ or another system facility failed  */
#define WEIR_ESTATE -10    /*  call not allowed now (the pipe started, or already ran)  */
#define WEIR_EPLUGIN -11   /*  a plugin cannot be loaded or is not a weir processor  */
#define WEIR_EINVAL -12    /*  a bad argument (a stats struct without its size, no such index)  */
#define WEIR_EABORTED -13  /*  ended at once, without a new checkpoint (weir_pipe_abort, the stop timeout)  */

/*  A static string describing CODE.  */
WEIR_EXPORT const char *weir_strerror (int code);

/*  True for the codes that mean the user's description was wrong (the
    command exits 2 for these, 1 for the rest).  */
WEIR_EXPORT int weir_is_usage_error (int code);

/*  The name of CODE's macro ("WEIR_EIO"), or "WEIR_E?" for an unknown
    code: for logs and machine-readable reports.  */
WEIR_EXPORT const char *weir_error_name (int code);

/*  The library's version, "MAJOR.MINOR.PATCH".  */
WEIR_EXPORT const char *weir_version (void);

/*  Parse an integer as weir's properties and options take them: decimal,
    with an optional k, M or G suffix (thousand, million, billion), and
    nothing else (no blanks).  0 and *OUT, or WEIR_ESYNTAX.  */
WEIR_EXPORT int weir_number_parse (const char *text, int64_t *out);

/*  ---------------------------------------------------------------------
    Elements and their properties, for documentation and validation.  */

typedef enum { WEIR_ELEMENT_READER, WEIR_ELEMENT_PROCESSOR, WEIR_ELEMENT_WRITER } weir_element_kind;

typedef struct weir_property_info {
    const char *name;
    const char *fallback; /*  default value as text, NULL if required, "" if optional without one  */
    const char *description;
} weir_property_info;

typedef struct weir_element_info {
    const char *name;
    weir_element_kind kind;
    const char *description;
    const weir_property_info *props; /*  terminated by a NULL name  */
} weir_element_info;

/*  The builtin elements, terminated by a NULL name.  */
WEIR_EXPORT const weir_element_info *weir_elements (void);

/*  Properties every element takes (threads, capacity, batch), terminated by
    a NULL name.  */
WEIR_EXPORT const weir_property_info *weir_common_properties (void);

/*  Properties every element of KIND takes: the common ones, plus passes,
    on-error and dead-letter for readers, on-error and dead-letter for
    processors.  Terminated by a NULL name.  */
WEIR_EXPORT const weir_property_info *weir_kind_properties (weir_element_kind kind);

/*  ---------------------------------------------------------------------
    The pipe.  */

typedef struct weir_pipe weir_pipe;

/*  A new pipe, without stages, into *OUT.  0, or WEIR_ENOMEM with *OUT
    NULL.  */
WEIR_EXPORT int weir_pipe_new (weir_pipe **out);
WEIR_EXPORT void weir_pipe_destroy (weir_pipe **self_p);

/*  Append the stages of a textual description:
        ELEMENT [key=value ...] ! ELEMENT [key=value ...] ! ...
    Values may be quoted with '...' or "..." to hold spaces or '!'.  On a
    syntax or property error, weir_pipe_error_offset() is the byte offset
    in DESCRIPTION of the offending text.  */
WEIR_EXPORT int weir_pipe_parse (weir_pipe *self, const char *description);

/*  Append one builtin element.  PROPS is a NULL-terminated array of
    "key=value" strings, or NULL.  */
WEIR_EXPORT int weir_pipe_add (weir_pipe *self, const char *element, const char *const *props);

/*  Append a processor stage made of plain C callbacks.  PROC must outlive
    the pipe; USER is returned by weir_user().  PROPS as above; every key is
    accepted (the processor reads its own with weir_prop()).  */
WEIR_EXPORT int weir_pipe_add_processor (weir_pipe *self, const struct weir_processor *proc, void *user,
                                         const char *const *props);

/*  ---------------------------------------------------------------------
    Epochs and checkpoints.  Set before weir_pipe_run: each setter
    returns 0, or WEIR_ESTATE once it was called.

    An epoch ends after exactly N records read by all reader threads
    together (the last may be shorter), after T seconds, at the end of each
    pass over the input (readers take passes=P), or when a processor calls
    weir_stop.  At its end the pipe is quiescent: every thread waits at
    the barrier, writers have synced, and the checkpoint is written.  */
WEIR_EXPORT int weir_pipe_set_epoch_records (weir_pipe *self, uint64_t records);
WEIR_EXPORT int weir_pipe_set_epoch_seconds (weir_pipe *self, double seconds);
/*  Stop after epoch N (0: run to the end of the input).  */
WEIR_EXPORT int weir_pipe_set_epochs (weir_pipe *self, uint64_t last_epoch);

/*  Checkpoint into the LevelDB at DIR after init (checkpoint 0) and after
    every epoch.  A writer's file is then written in place, so that a
    failed run goes on from the last checkpoint.  Without a checkpoint, a
    run over an input that ends writes each file beside it and renames it
    over the file only if the run does not fail: a failed run leaves the
    old file as it was.  */
WEIR_EXPORT int weir_pipe_set_checkpoint (weir_pipe *self, const char *dir);
/*  Keep the newest K checkpoints (0: all).  */
WEIR_EXPORT int weir_pipe_set_keep (weir_pipe *self, unsigned keep);
/*  Copy the blobs while quiescent and write them on a background thread.  */
WEIR_EXPORT int weir_pipe_set_async_checkpoint (weir_pipe *self, int on);
/*  Allow N consecutive failed checkpoints before the job fails.  */
WEIR_EXPORT int weir_pipe_set_checkpoint_failures (weir_pipe *self, unsigned failures);

#define WEIR_RESUME_NONE 0   /*  refuse a directory that holds checkpoints  */
#define WEIR_RESUME_LATEST 1 /*  go on from the latest checkpoint, or start fresh  */
#define WEIR_RESUME_EPOCH 2  /*  go on from checkpoint EPOCH  */
WEIR_EXPORT int weir_pipe_set_resume (weir_pipe *self, int mode, uint64_t epoch);

/*  Before init, load the blobs of checkpoint EPOCH (-1: the latest,
    WEIR_LOAD_BEST: the one a processor last marked the best) of another
    job's checkpoint directory.  */
#define WEIR_LOAD_BEST (-2)
WEIR_EXPORT int weir_pipe_set_load_blobs (weir_pipe *self, const char *dir, int64_t epoch);

/*  Messages worth a person's attention while the job runs, from the thread
    in weir_pipe_run: LEVEL 0 for news (resuming from epoch 7), 1 for
    warnings (a checkpoint failed, within --checkpoint-failures).  */
#define WEIR_LOG_INFO 0
#define WEIR_LOG_WARNING 1
typedef void (weir_log_fn) (weir_pipe *pipe, void *arg, int level, const char *message);
WEIR_EXPORT int weir_pipe_set_log (weir_pipe *self, weir_log_fn *fn, void *arg);

/*  After weir_pipe_stop, allow the pipe SECONDS to drain and write its
    checkpoint; past that it is aborted (0: wait as long as it takes).  */
WEIR_EXPORT int weir_pipe_set_stop_timeout (weir_pipe *self, double seconds);

/*  ---------------------------------------------------------------------
    Running the pipe.  */

/*  Run the pipe to the end of its input.  A pipe runs once.  */
WEIR_EXPORT int weir_pipe_run (weir_pipe *self);

/*  Ask a running pipe to stop as weir_stop() does (safe from any thread,
    including a signal-handling thread).  */
WEIR_EXPORT void weir_pipe_stop (weir_pipe *self);

/*  End a running pipe at once, without a new checkpoint: the last one
    stays valid and --resume goes on from it.  weir_pipe_run returns
    WEIR_EABORTED.  Async-signal-safe, like weir_pipe_stop: a second
    Ctrl-C.  */
WEIR_EXPORT void weir_pipe_abort (weir_pipe *self);

/*  ---------------------------------------------------------------------
    The pipe's errors and warnings.  */

/*  The message of the first failure, "" if none.  */
WEIR_EXPORT const char *weir_pipe_error (const weir_pipe *self);

/*  Byte offset into the last parsed description that the failure points
    at, or -1 when it does not point into a description.  */
WEIR_EXPORT long weir_pipe_error_offset (const weir_pipe *self);

/*  Warnings of the last run (properties no callback read, which are
    likely typos): COUNT of them, and each by index.  */
WEIR_EXPORT size_t weir_pipe_warning_count (const weir_pipe *self);
WEIR_EXPORT const char *weir_pipe_warning (const weir_pipe *self, size_t index);

/*  ---------------------------------------------------------------------
    Progress and statistics.  */

/*  Set SIZE to sizeof (weir_stage_stats) before the call, as
    WEIR_STAGE_STATS_INIT does: fields appended by a later weir are then
    left alone for a program built against this one.  */
typedef struct weir_stage_stats {
    size_t size;      /*  sizeof (weir_stage_stats), set by the caller  */
    const char *name; /*  element name  */
    weir_element_kind kind;
    unsigned threads;
    uint64_t records_in;  /*  records taken from the input or the queue  */
    uint64_t records_out; /*  records passed on (written, for a writer)  */
    uint64_t batches_in;
    double busy_seconds;     /*  summed over threads: time not spent waiting on a queue  */
    unsigned queue_fill;     /*  batches in the queue feeding this stage  */
    unsigned queue_capacity; /*  its bound: capacity= for each link into it (0 for a reader)  */
    /*  A reader's way through its input, over every pass and run so far,
        and all of it, in one unit (bytes of files, integers of a range);
        the total is 0 when it is not known (a pipe, standard input) and
        for the other stages.  */
    uint64_t input_done;
    uint64_t input_total;
    /*  Bad records skipped (on-error=skip): malformed input for a reader,
        records weir_reject refused for a processor.  This run's, like the
        other counts.  */
    uint64_t records_rejected;
    /*  A reader with follow=1: files found truncated in place
        (copytruncate) and read again from their start.  */
    uint64_t files_truncated;
    /*  A job of several ranks, once it ended well: records_in,
        records_out and records_rejected summed over every rank (rank 0
        shows them).  Until then, and in a job of one rank, this rank's.  */
    uint64_t job_records_in;
    uint64_t job_records_out;
    uint64_t job_records_rejected;
    /*  Since the job began, over every run that went on from a checkpoint:
        what the checkpoint it resumed from counted, plus job_records_*.
        The same as job_records_* on a fresh start; in a job of several
        ranks rank 0's are the job's (the others count only their own).  */
    uint64_t total_records_in;
    uint64_t total_records_out;
    uint64_t total_records_rejected;
    /*  Its name= in a graph (what NAME. refers to), or NULL.  */
    const char *label;
    /*  A reader with follow=1: the bytes its files hold past where
        reading got, as last seen (every few reads, and at each file's end
        for now): how far it is behind the writers.  0 for other stages.  */
    uint64_t input_behind;
    /*  A reader with cache=: the bytes it keeps in memory for the passes
        after the first, and the records it gave from them instead of
        reading its input again.  0 for other stages.  */
    uint64_t cache_bytes;
    uint64_t records_replayed;
    /*  A processor fused with the reader that feeds it (fuse=), which
        runs in that reader's threads: the reader's stage index.  -1 for
        every other stage.  */
    long fused_with;
} weir_stage_stats;

/*  Every field, so that compilers warn about none missing; it grows with
    the struct.  */
#define WEIR_STAGE_STATS_INIT                                                                                \
    {                                                                                                        \
        sizeof (weir_stage_stats), NULL, WEIR_ELEMENT_READER, 0, 0, 0, 0, 0.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, \
            0, 0, NULL, 0, 0, 0, -1                                                                          \
    }

WEIR_EXPORT size_t weir_pipe_stage_count (const weir_pipe *self);

/*  Fill *STATS for stage INDEX, as far as STATS->size says.  Safe while
    the pipe runs (from the progress callback) and after.  WEIR_EINVAL for
    no such stage, or when the size is missing.  */
WEIR_EXPORT int weir_pipe_stats (const weir_pipe *self, size_t index, weir_stage_stats *stats);

/*  The metrics processors published (weir_metric_set, weir_metric_add):
    how many, and each by INDEX: the index of its *STAGE, its *NAME
    (borrowed) and its *VALUE now.  WEIR_EINVAL past the last one.  Safe
    while the pipe runs and after.  */
WEIR_EXPORT size_t weir_pipe_metric_count (const weir_pipe *self);
WEIR_EXPORT int weir_pipe_metric (const weir_pipe *self, size_t index, size_t *stage, const char **name,
                                  double *value);

/*  Wall time of the run so far (or of the whole run once it ended).  */
WEIR_EXPORT double weir_pipe_wall_seconds (const weir_pipe *self);

/*  The pauses of the pipe at epoch ends (from the last thread reaching
    the barrier to the release into the next epoch: writer syncs and the
    checkpoint, or with --async-checkpoint its staging copy): how many,
    their total and the longest, in seconds.  */
WEIR_EXPORT void weir_pipe_pauses (const weir_pipe *self, uint64_t *count, double *total, double *longest);

/*  The last epoch completed (and checkpointed, when checkpointing).  */
WEIR_EXPORT uint64_t weir_pipe_epoch (const weir_pipe *self);

/*  Call FN (from the thread inside weir_pipe_run) every INTERVAL_MS while
    the pipe runs, and once more when it ends.  */
typedef void (weir_progress_fn) (weir_pipe *pipe, void *arg, int final);
WEIR_EXPORT int weir_pipe_set_progress (weir_pipe *self, weir_progress_fn *fn, void *arg,
                                        unsigned interval_ms);

/*  ---------------------------------------------------------------------
    Ranks.  */

/*  Jobs of several ranks.  Started by mpirun (or srun) in a weir built
    with MPI, each process runs rank R of N: it reads the shards i with
    i mod N == R, writes its own outputs ("{rank}" in a writer's path= is
    R), and meets the other ranks at every epoch boundary, where rank 0
    writes the one checkpoint of the job.  This process's rank, and the
    job's ranks into *RANKS (may be NULL): known for sure once the pipe
    runs (from the progress callback on); before, what the launcher's
    environment says (SELF may then be NULL).  A process started otherwise
    is rank 0 of 1.  */
WEIR_EXPORT int weir_pipe_rank (const weir_pipe *self, int *ranks);

/*  A job of several ranks: how long a rank waits at an epoch boundary for
    the others (SECONDS; 0, the default, waits for ever).  Past it the job
    is aborted on every rank, rank 0 naming the ranks that did not come
    (stopped, hung, or cut off).  */
WEIR_EXPORT int weir_pipe_set_epoch_timeout (weir_pipe *self, double seconds);

/*  How many seconds ago the running pipe began to end without a new
    checkpoint (weir_pipe_abort, the stop timeout, a failure), or -1 while
    it has not.  Safe from any thread while weir_pipe_run runs: for a
    watchdog, because a processor stuck in its own code, or a write
    blocked in the kernel, keeps weir_pipe_run from returning, and no
    bound of weir's reaches into it.  What remains after an abort is
    joining the threads and releasing what they held: a process that gives
    up on it may exit at once, and the last checkpoint stays valid.  */
WEIR_EXPORT double weir_pipe_failed_for (const weir_pipe *self);

/*  ---------------------------------------------------------------------
    Reading checkpoints: list them, inspect one, take its blobs.  */

typedef struct weir_checkpoint weir_checkpoint;

/*  The epochs in DIR, ascending (the caller frees *EPOCHS with
    weir_free), and the latest (the newest complete one).  0, or a WEIR_E*
    code with *ERROR (the caller's to free with weir_free).  */
WEIR_EXPORT int weir_checkpoint_list (const char *dir, uint64_t **epochs, size_t *count, char **error);

/*  Load checkpoint EPOCH of DIR (-1: the latest), verified whole, into
    *OUT.  WEIR_ECORRUPT with *ERROR (the caller's to free with weir_free)
    when it is missing, incomplete or corrupt.  */
WEIR_EXPORT int weir_checkpoint_new (const char *dir, int64_t epoch, weir_checkpoint **out, char **error);
WEIR_EXPORT void weir_checkpoint_destroy (weir_checkpoint **self_p);
WEIR_EXPORT uint64_t weir_checkpoint_epoch (const weir_checkpoint *self);

/*  The checkpoints of DIR, opened once to read many of them: each call of
    weir_checkpoint_list and weir_checkpoint_new opens DIR anew (a private
    copy of it, its log replayed), which listing a thousand checkpoints
    would repeat a thousand times.  The epochs and loads answer as those
    two do, from what DIR held when it was opened.  */
typedef struct weir_checkpoints weir_checkpoints;
WEIR_EXPORT int weir_checkpoints_new (const char *dir, weir_checkpoints **out, char **error);
WEIR_EXPORT void weir_checkpoints_destroy (weir_checkpoints **self_p);
WEIR_EXPORT int weir_checkpoints_epochs (weir_checkpoints *self, uint64_t **epochs, size_t *count,
                                         char **error);
/*  EPOCH -1 loads the latest, WEIR_LOAD_BEST the one marked the best.  */
WEIR_EXPORT int weir_checkpoints_load (weir_checkpoints *self, int64_t epoch, weir_checkpoint **out,
                                       char **error);

/*  The sections of a checkpoint.  Items come in name order.  */
typedef enum weir_checkpoint_section {
    WEIR_CHECKPOINT_META = 'm',    /*  metadata, decimal or text values named WEIR_META_*  */
    WEIR_CHECKPOINT_OFFSETS = 'o', /*  where reading goes on, per shard of the input  */
    WEIR_CHECKPOINT_WRITERS = 'w', /*  each writer's committed state ("INDEX:ELEMENT"), and each
                                      dead letter's ("INDEX:ELEMENT:dead-letter")  */
    WEIR_CHECKPOINT_BLOBS = 'b',   /*  the workspace blobs, raw bytes  */
    WEIR_CHECKPOINT_FILES = 'f'    /*  which file each path's offsets are in ("PATH":
                                      "DEVICE INODE FINGERPRINT_BYTES FINGERPRINT GONE", and for
                                      a file read in batch " PLANNED_SIZE END_HASH": a resume
                                      reads what was appended past that size)  */
} weir_checkpoint_section;

/*  Metadata items.  Record counts are per stage: the name is followed by
    the stage's index, as in "records_out:0" for the records read.  */
#define WEIR_META_EPOCH "epoch"               /*  the epoch this checkpoint ends  */
#define WEIR_META_FINISHED "finished"         /*  1 when the job had read all its input  */
#define WEIR_META_PASS "pass"                 /*  the pass over the input the next epoch is in  */
#define WEIR_META_TIME "time"                 /*  seconds since 1970 when it was taken  */
#define WEIR_META_WALL_SECONDS "wall_seconds" /*  the job's wall time, over all its runs  */
#define WEIR_META_DESCRIPTION "description"   /*  the pipe's description  */
#define WEIR_META_SHAPE "shape"               /*  the description without threads, capacity, batch  */
#define WEIR_META_VERSION "version"           /*  the weir that wrote it  */
#define WEIR_META_RECORDS_IN "records_in:"
#define WEIR_META_RECORDS_OUT "records_out:"
#define WEIR_META_REJECTED "rejected:"    /*  bad records skipped, per stage, over all runs  */
#define WEIR_META_RANKS "ranks"           /*  the ranks of the run that wrote it (mpirun -n)  */
#define WEIR_META_GENERATION "generation" /*  the runs of the job so far, counting the one that wrote it  */
/*  "reduce:I": region I of a blob combined across ranks (weir_blob_reduce),
    "OFFSET COUNT WIDTH TYPE OP NAME" (TYPE and OP as weir_reduce_type and
    weir_reduce_op count them, NAME the rest of the value)  */
#define WEIR_META_REDUCE "reduce:"
/*  "read:I": follow=1, a file read to its end and left for the new file
    under its name, which the glob must not read again under the name a
    rotation gave it (as WEIR_CHECKPOINT_FILES: "DEVICE INODE
    FINGERPRINT_BYTES FINGERPRINT 1").  In a graph of several readers,
    "read:STAGE|I", STAGE the reader's index, as its offsets and files  */
#define WEIR_META_READ "read:"
/*  The key groups of the job (weir_pipe_set_key_groups), fixed when it
    was created.  */
#define WEIR_META_KEY_GROUPS "key_groups"
/*  1 when a processor marked this checkpoint the best so far
    (weir_checkpoint_best)  */
#define WEIR_META_BEST "best"

WEIR_EXPORT size_t weir_checkpoint_count (const weir_checkpoint *self, weir_checkpoint_section section);
WEIR_EXPORT const char *weir_checkpoint_item (const weir_checkpoint *self, weir_checkpoint_section section,
                                              size_t index, const void **data, size_t *size);
WEIR_EXPORT const void *weir_checkpoint_get (const weir_checkpoint *self, weir_checkpoint_section section,
                                             const char *name, size_t *size);

/*  ---------------------------------------------------------------------
    Plugins: processors in shared objects.

    An element name that contains '/' or ends in ".so" is a plugin path; a
    bare name that is no builtin is looked up as NAME.so in each folder of
    $WEIR_PLUGIN_PATH (colon-separated), then in the installed plugin
    folder.  The object must export weir_plugin_processor() (see
    <weir/plugin.h>); its ABI is checked before anything else is called.  */
typedef struct weir_plugin weir_plugin;

/*  Load NAME (a path or a bare name) into *OUT.  WEIR_EPLUGIN, or
    WEIR_EUNKNOWN when a bare NAME is found nowhere, with *ERROR (the
    caller's to free with weir_free).  */
WEIR_EXPORT int weir_plugin_new (const char *name, weir_plugin **out, char **error);
WEIR_EXPORT void weir_plugin_destroy (weir_plugin **self_p);

/*  Its processor table, as this weir reads it: callbacks that the plugin's
    (older) revision of the table lacks are NULL.  */
WEIR_EXPORT const struct weir_processor *weir_plugin_table (const weir_plugin *self);
WEIR_EXPORT const char *weir_plugin_path (const weir_plugin *self);

/*  The folder searched after $WEIR_PLUGIN_PATH.  */
WEIR_EXPORT const char *weir_plugin_dir (void);

/*  ---------------------------------------------------------------------
    Graphs.  A description may be a graph of branches (see weir_pipe_parse
    and the README): name=NAME names an element, NAME. refers to it.  In
    code, each stage added goes on from the one added before it, as in a
    line; these start a branch elsewhere and join branches.  */

/*  The next stage added goes on from the stage named FROM ("NAME" or
    "NAME."), as "NAME. ! ..." does in a description: a tee's next branch.
    FROM NULL: the next stage starts a branch of its own.  WEIR_EINVAL for
    a FROM that cannot be a name; a name no stage has is refused when the
    pipe is checked or run.  */
WEIR_EXPORT int weir_pipe_branch (weir_pipe *self, const char *from);

/*  A link from the stage named FROM to the stage named TO (a merge: "...
    ! TO." in a description).  WEIR_EINVAL as above.  */
WEIR_EXPORT int weir_pipe_link (weir_pipe *self, const char *from, const char *to);

/*  Resolve the pipe without running it: every element found, every
    property and link checked, with the error and its offset as
    weir_pipe_run would give them.  Then weir_pipe_stats says each stage's
    kind, and the links are known; nothing more may be added (WEIR_ESTATE,
    the pipe's error left as it was), and the pipe may still run.  0 or
    the error.  */
WEIR_EXPORT int weir_pipe_check (weir_pipe *self);

/*  The links of a checked (or run) pipe, in the order of the stages they
    leave: LINK goes from stage *FROM to stage *TO, and *RECORDS crossed it
    so far (safe while the pipe runs).  WEIR_EINVAL for no such link.  */
WEIR_EXPORT size_t weir_pipe_link_count (const weir_pipe *self);
WEIR_EXPORT int weir_pipe_link_info (const weir_pipe *self, size_t link, size_t *from, size_t *to,
                                     uint64_t *records);

/*  Property INDEX of stage STAGE as it was given (name= included), into
    *KEY and *VALUE, valid as long as the pipe.  WEIR_EINVAL past the
    last.  */
WEIR_EXPORT int weir_pipe_stage_property (const weir_pipe *self, size_t stage, size_t index, const char **key,
                                          const char **value);

/*  The named output (port) link LINK of a checked pipe starts from, as
    "errors" for a branch started with r.errors (route's branches, a
    plugin's ports), valid as long as the pipe; NULL for the one output of
    a stage without ports, or for no such link.  */
WEIR_EXPORT const char *weir_pipe_link_port (const weir_pipe *self, size_t link);

/*  ---------------------------------------------------------------------
    Keys.  */

/*  The number of key groups of the job (1 to 65536; 128 when never set).
    A stage given key=PATH gets every record of one key in the same
    thread: a key hashes to one of the job's key groups, and each thread
    of the stage owns a contiguous run of groups, whose state it keeps.
    The number is fixed when a job is created, so that a resume with
    other thread counts hands whole groups to their new owners: a resume
    takes the checkpoint's number, and one that asks for another is
    refused.  WEIR_EINVAL out of range.  */
WEIR_EXPORT int weir_pipe_set_key_groups (weir_pipe *self, unsigned groups);

/*  ---------------------------------------------------------------------
    Memory.  */

/*  Free P, which the library allocated for the caller: a message of a
    char **error argument, the epochs of weir_checkpoint_list.  free ()
    would do only where the library and the program share one allocator,
    which a library linked with its own C runtime, or a program that
    replaces malloc, does not.  NULL does nothing.  */
WEIR_EXPORT void weir_free (void *p);

/*  ---------------------------------------------------------------------
    More progress and statistics (appended).  */

/*  The pauses of weir_pipe_pauses by length: the number of buckets, and
    of the first N of them each upper bound in seconds into BOUNDS[i]
    (the last is INFINITY) and the pauses that took at most that, and
    more than the bound before, into COUNTS[i] (either may be NULL).  A
    Prometheus histogram counts the same pauses cumulatively.  Safe from
    any thread.  */
WEIR_EXPORT size_t weir_pipe_pause_buckets (const weir_pipe *self, size_t n, double *bounds,
                                            uint64_t *counts);

/*  How many checkpoints of this run failed, whether the job went on
    through them (--checkpoint-failures) or not.  Safe from any thread.  */
WEIR_EXPORT uint64_t weir_pipe_checkpoint_failures (const weir_pipe *self);

#ifdef __cplusplus
}
#endif

#endif

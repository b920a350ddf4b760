/*  lib/workspace.h - named memory blobs shared by every thread of a job:
    the model.  The engine allocates them, copies them into every
    checkpoint while the pipe is quiescent, and restores them on resume.

    Blob memory is 64-byte aligned and zeroed when new.  Threads update it
    as they see fit (hogwild style with relaxed atomics, or per-thread
    shards); only creation and lookup take the workspace's lock.  */
#ifndef WEIR_WORKSPACE_H_INCLUDED
#define WEIR_WORKSPACE_H_INCLUDED

#include <stddef.h>

#include "lib/error.h"

typedef struct weir__workspace weir__workspace;

weir__workspace *weir__workspace_new (void);
void weir__workspace_destroy (weir__workspace **self_p);

/*  The blob NAME of SIZE bytes, created zeroed if new.  NULL with ERR
    (WEIR_EPROCESSOR) when it exists with another size, or WEIR_ENOMEM.  */
void *weir__workspace_blob (weir__workspace *self, const char *name, size_t size, weir__err *err);

/*  Blob NAME and its *SIZE, or NULL.  */
void *weir__workspace_find (weir__workspace *self, const char *name, size_t *size);

/*  Create or overwrite blob NAME with a copy of DATA (resume, loading).  */
int weir__workspace_restore (weir__workspace *self, const char *name, const void *data, size_t size);

/*  COUNT elements of WIDTH bytes at byte OFFSET of blob NAME are one value
    across the ranks of a job, combined at every epoch boundary by OP over
    elements of TYPE (numbers the workspace only keeps; the engine gives
    them meaning).  Its value now is kept as the last one combined.  A
    region declared again alike (open on resume, after the checkpoint
    gave it back) is kept once.  0,
    WEIR__WORKSPACE_NO_BLOB when there is no such blob,
    WEIR__WORKSPACE_OUTSIDE when the region is not inside it (or OFFSET not
    a multiple of WIDTH), or WEIR_ENOMEM.  The refusals are positive so
    that none reads as a WEIR_E* code: a "no such blob" of -1 was once
    taken for WEIR_ENOMEM's -1, and the other way round.  */
#define WEIR__WORKSPACE_NO_BLOB 1
#define WEIR__WORKSPACE_OUTSIDE 2
int weir__workspace_add_reduce (weir__workspace *self, const char *name, size_t offset, size_t count,
                                size_t width, int type, int op);

/*  The regions declared, and each by INDEX: its blob's name, and in *OUT
    where it is now (data NULL when the blob no longer holds it), what it
    is, and its last combined value (LAST, COUNT elements, to update).  */
typedef struct weir__workspace_region {
    void *data;
    size_t offset, count, width;
    int type, op;
    void *last;
} weir__workspace_region;
size_t weir__workspace_reduce_count (weir__workspace *self);

/*  Every region's value now becomes its last combined one (when the run
    starts, after init set the blobs).  */
void weir__workspace_reduce_rebase (weir__workspace *self);
const char *weir__workspace_reduce (weir__workspace *self, size_t index, weir__workspace_region *out);

/*  Whether blob INDEX was written whole by weir__workspace_restore since
    the last weir__workspace_untouch (with weir__workspace_untouch): how a
    rank of a job finds the key groups its threads stored in an epoch, to
    send them to rank 0 for the checkpoint.  */
int weir__workspace_touched (weir__workspace *self, size_t index);
void weir__workspace_untouch (weir__workspace *self);

size_t weir__workspace_count (weir__workspace *self);
/*  Blob INDEX (in creation order): its name, memory and size.  */
const char *weir__workspace_item (weir__workspace *self, size_t index, void **data, size_t *size);

#endif

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

size_t weir__workspace_count (weir__workspace *self);
/*  Blob INDEX (in creation order): its name, memory and size.  */
const char *weir__workspace_item (weir__workspace *self, size_t index, void **data, size_t *size);

#endif

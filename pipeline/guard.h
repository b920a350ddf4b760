/*  pipeline/guard.h - refusing a pipe that would destroy what it reads, or
    that cannot be resumed as its options promise.

    Checked once the reader has planned its input and before any writer
    opens its output, so that a refused job has written nothing.  */
#ifndef WEIR_GUARD_H_INCLUDED
#define WEIR_GUARD_H_INCLUDED

#include "lib/error.h"
#include "pipeline/options.h"
#include "pipeline/stage.h"

/*  WEIR_ESTRUCTURE, pointing at the writer's path in the description, when
    the writer's output is one of the reader's inputs (the same file by
    device and inode, or the same resolved path when it does not exist
    yet), or when a checkpointed job writes to standard output, a pipe, a
    terminal or a device, which cannot go back to a checkpoint.  */
int weir__guard_check (const weir__stages *stages, const weir__options *options, weir__err *err);

#endif

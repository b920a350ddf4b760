/*  pipeline/options.h - a job's options, as the weir_pipe_set_* functions
    leave them for the run.  Plain data, owned by the pipe.  */
#ifndef WEIR_OPTIONS_H_INCLUDED
#define WEIR_OPTIONS_H_INCLUDED

#include <stdint.h>

typedef struct weir__options {
    uint64_t epoch_records;  //  0: no limit
    double epoch_seconds;    //  0: no limit
    double stop_timeout;     //  after a stop, abort past this (0: never)
    uint64_t max_epochs;     //  pause after this epoch (0: no limit)
    char *checkpoint_dir;    //  NULL: no checkpoints
    unsigned keep;           //  newest checkpoints kept (0: all)
    int async_checkpoint;
    unsigned checkpoint_failures;  //  consecutive failures allowed
    int resume_mode;               //  WEIR_RESUME_*
    uint64_t resume_epoch;
    char *load_blobs_dir;      //  NULL: none
    int64_t load_blobs_epoch;  //  -1: the latest
    double epoch_timeout;      //  a job of several ranks: the longest wait for the others (0: no limit)
    unsigned key_groups;       //  0: the checkpoint's, or WEIR__KEY_GROUPS for a new job
} weir__options;

#endif

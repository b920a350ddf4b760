/*  pipeline/runtime.h - running a built pipe: queues, stage threads,
    epochs, teardown.

    The thread inside weir_pipe_run builds everything (the ZeroMQ context,
    every queue and socket, every stage's state), starts the runtime
    threads, runs the epoch controller while they work, joins them and
    tears everything down.  Each socket is used by exactly one runtime
    thread between its start and its join; creating and closing them around
    that window is what lets shutdown never hang: when every thread is
    joined, every message has been received, so sockets close with no
    linger and the context terminates at once.  A failure anywhere fails
    the job, which wakes everything blocked (see weir__job_fail).  */
#ifndef WEIR_RUNTIME_H_INCLUDED
#define WEIR_RUNTIME_H_INCLUDED

#include "pipeline/controller.h"
#include "pipeline/job.h"
#include "pipeline/options.h"
#include "pipeline/ranks.h"
#include "pipeline/stage.h"

/*  What a run needs, all borrowed from the pipe.  */
typedef struct weir__run {
    weir__job *job;
    weir__stages *stages;  //  resolved (pipeline/build.h)
    const weir__options *options;
    const char *description;
    const char *shape, *older_shape;  //  weir__build_shape, weir__build_shape_older
    weir__controller *controller;  //  made for these stages' passes and the options
    weir__ranks *ranks;            //  the ranks of the job, the stages given their share
    weir__tick_fn *tick;           //  progress, or NULL
    void *tick_arg;
    unsigned tick_ms;
} weir__run;

/*  Run to the end of the input (or the stop, or the failure).  0 or the
    job's error code; the message is the job's.  */
int weir__runtime_run (const weir__run *run);

#endif

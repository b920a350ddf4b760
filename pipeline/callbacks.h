/*  pipeline/callbacks.h - a processor stage's callbacks: its table (a
    builtin's, a plugin's or one added in code), where it came from, and
    the state its open callback made.

    The runtime opens them (open, and init on a fresh start) before the
    threads start and closes them after they are joined; each processor
    thread calls the per-thread callbacks of the table itself, on the path
    of every record.  */
#ifndef WEIR_CALLBACKS_H_INCLUDED
#define WEIR_CALLBACKS_H_INCLUDED

#include <weir/plugin.h>
#include <weir/weir.h>

#include "lib/error.h"
#include "lib/props.h"
#include "pipeline/job.h"

typedef struct weir__callbacks weir__callbacks;

/*  The callbacks of TABLE, checked already, copied as this weir reads it.
    *PLUGIN, when given, is the shared object TABLE lives in: taken (the
    pointer nulled), it stays loaded as long as the callbacks.  USER is
    what weir_user gives; PASSTHROUGH, that whole batches are forwarded
    undecoded (identity).  NULL when out of memory (*PLUGIN then left).  */
weir__callbacks *weir__callbacks_new (const weir_processor *table, weir_plugin **plugin, void *user,
                                      int passthrough);

/*  Free them, and unload the plugin last.  Close them first.  */
void weir__callbacks_destroy (weir__callbacks **self_p);

const weir_processor *weir__callbacks_table (const weir__callbacks *self);
void *weir__callbacks_user (const weir__callbacks *self);
int weir__callbacks_passthrough (const weir__callbacks *self);

/*  What open made: every thread's state starts as it.  */
void *weir__callbacks_state (const weir__callbacks *self);

/*  Call open with W (the stage's first worker), then init when FRESH (a
    job that does not resume: init sets up what a checkpoint restores).
    A callback's failure is the job's error when it said one (weir_fail),
    else one naming ELEMENT and the callback; its code is returned.  */
int weir__callbacks_open (weir__callbacks *self, weir_stage *w, int fresh, weir__job *job,
                          const char *element, weir__err *err);

/*  Call close, if open succeeded.  */
void weir__callbacks_close (weir__callbacks *self, weir_stage *w);

/*  Warn in JOB of the properties of PROPS (ELEMENT's) that no callback
    read: most likely typos.  Only for a processor that was opened on a
    fresh start (init ran) and is not a passthrough, which reads none.  */
void weir__callbacks_warn_unread (const weir__callbacks *self, const weir__props *props, const char *element,
                                  weir__job *job);

#endif

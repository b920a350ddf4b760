/*  pipeline/callbacks.c - a processor stage's table and state.  */
#include "config.h"
#include "pipeline/callbacks.h"

#include <stdlib.h>
#include <string.h>

#include "pipeline/elements.h"

struct weir__callbacks {
    weir_processor table;  //  as this weir reads it
    weir_plugin *plugin;   //  where the table's code is, if a shared object
    void *user;
    int passthrough;
    void *state;      //  what open made
    int opened;       //  open succeeded and close is due
    int opened_once;  //  its properties had a chance to be read
    int fresh;        //  init ran: every property had its chance
};

weir__callbacks *weir__callbacks_new (const weir_processor *table, weir_plugin **plugin, void *user,
                                      int passthrough)
{
    weir__callbacks *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->table = *table;
    if (plugin) {
        self->plugin = *plugin;
        *plugin = NULL;
    }
    self->user = user;
    self->passthrough = passthrough;
    return self;
}

void weir__callbacks_destroy (weir__callbacks **self_p)
{
    weir__callbacks *self = *self_p;
    if (!self)
        return;
    //  Last: the plugin's code goes away with it
    weir_plugin_destroy (&self->plugin);
    free (self);
    *self_p = NULL;
}

const weir_processor *weir__callbacks_table (const weir__callbacks *self)
{
    return &self->table;
}

void *weir__callbacks_user (const weir__callbacks *self)
{
    return self->user;
}

int weir__callbacks_passthrough (const weir__callbacks *self)
{
    return self->passthrough;
}

void *weir__callbacks_state (const weir__callbacks *self)
{
    return self->state;
}

//  CALLBACK returned an error: its weir_fail message if it gave one (the
//  job's first error), else one naming the callback.
static int s_failed (weir__job *job, const char *element, const char *callback, weir__err *err)
{
    if (weir__job_failed (job))
        weir__job_error (job, err);
    else
        weir__err_set (err, WEIR_EPROCESSOR, "%s: %s returned an error without a message", element, callback);
    return err->code;
}

int weir__callbacks_open (weir__callbacks *self, weir_stage *w, int fresh, weir__job *job,
                          const char *element, weir__err *err)
{
    const weir_processor *t = &self->table;
    if (t->open && t->open (w, &self->state))
        return s_failed (job, element, "open", err);
    self->opened = 1;
    self->opened_once = 1;
    self->fresh = fresh;
    if (fresh && t->init && t->init (w, self->state))
        return s_failed (job, element, "init", err);
    return 0;
}

void weir__callbacks_close (weir__callbacks *self, weir_stage *w)
{
    if (!self->opened)
        return;
    if (self->table.close)
        self->table.close (w, self->state);
    self->opened = 0;
}

void weir__callbacks_warn_unread (const weir__callbacks *self, const weir__props *props, const char *element,
                                  weir__job *job)
{
    //  On resume init does not run, and what only init reads would look
    //  unread
    if (self->passthrough || !self->opened_once || !self->fresh)
        return;
    for (size_t k = 0; k < props->count; k++) {
        weir__prop *p = &props->items[k];
        int common = 0;
        for (const weir_property_info *c = weir__processor_common_props; c->name; c++)
            common |= strcmp (c->name, p->key) == 0;
        if (!common && !atomic_load (&p->used))
            weir__job_warn (job, "%s: property '%s' was never read by the processor (a typo?)", element,
                            p->key);
    }
}

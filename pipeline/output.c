/*  pipeline/output.c - a writer stage's output.  */
#include "config.h"
#include "pipeline/output.h"

#include <stdio.h>
#include <stdlib.h>

//  A committed state saved in a checkpoint, not yet settled.  At most
//  two: with --async-checkpoint one checkpoint is being written while
//  the next epoch's state is saved.
typedef struct {
    int used;
    uint64_t epoch;
    char state[WEIR__WRITER_STATE_MAX];
} s_saved;

struct weir__output {
    const weir__writer_class *cls;
    void *state;                             //  the writer's, while open
    char committed[WEIR__WRITER_STATE_MAX];  //  its state at the last commit
    s_saved saved[2];                        //  oldest first
};

weir__output *weir__output_new (const weir__writer_class *cls)
{
    weir__output *self = calloc (1, sizeof *self);
    if (self)
        self->cls = cls;
    return self;
}

void weir__output_destroy (weir__output **self_p)
{
    weir__output *self = *self_p;
    if (!self)
        return;
    weir__err err;
    weir__output_close (self, &err);
    free (self);
    *self_p = NULL;
}

const weir__writer_class *weir__output_class (const weir__output *self)
{
    return self->cls;
}

int weir__output_open (weir__output *self, weir__props *props, unsigned threads, const char *resume,
                       unsigned flags, weir__err *err)
{
    if (resume && resume != self->committed)
        snprintf (self->committed, sizeof self->committed, "%s", resume);
    return self->cls->open (props, threads, resume ? self->committed : NULL, flags, &self->state, err);
}

int weir__output_write (weir__output *self, unsigned thread, const char *payload, size_t len, uint32_t count,
                        weir__err *err)
{
    return self->cls->write (self->state, thread, payload, len, count, err);
}

int weir__output_flush (weir__output *self, unsigned thread, weir__err *err)
{
    return self->cls->flush (self->state, thread, err);
}

int weir__output_commit (weir__output *self, weir__err *err)
{
    return self->cls->commit (self->state, self->committed, err);
}

const char *weir__output_committed (const weir__output *self)
{
    return self->committed;
}

void weir__output_saving (weir__output *self, uint64_t epoch)
{
    if (!self->cls->settle)
        return;
    //  A checkpoint that failed is never written: the newer one counts
    if (self->saved[1].used)
        self->saved[0] = self->saved[1];
    s_saved *to = self->saved[0].used ? &self->saved[1] : &self->saved[0];
    to->used = 1;
    to->epoch = epoch;
    snprintf (to->state, sizeof to->state, "%s", self->committed);
}

int weir__output_settle (weir__output *self, uint64_t durable, weir__err *err)
{
    if (!self->cls->settle || !self->state)
        return 0;
    const char *state = NULL;
    char copy[WEIR__WRITER_STATE_MAX];
    for (int i = 0; i < 2; i++)
        if (self->saved[i].used && self->saved[i].epoch <= durable) {
            snprintf (copy, sizeof copy, "%s", self->saved[i].state);
            state = copy;
            self->saved[i].used = 0;
        }
    if (!self->saved[0].used && self->saved[1].used) {
        self->saved[0] = self->saved[1];
        self->saved[1].used = 0;
    }
    return state ? self->cls->settle (self->state, state, err) : 0;
}

void weir__output_rejecting (weir__output *self, weir__writer_reject_fn *reject, void *arg)
{
    if (self->state && self->cls->rejecting)
        self->cls->rejecting (self->state, reject, arg);
}

void weir__output_discard (weir__output *self)
{
    if (self->state && self->cls->discard)
        self->cls->discard (self->state);
}

int weir__output_close (weir__output *self, weir__err *err)
{
    if (!self->state)
        return 0;
    int rc = self->cls->close (self->state, err);
    self->state = NULL;
    return rc;
}

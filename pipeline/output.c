/*  pipeline/output.c - a writer stage's output.  */
#include "config.h"
#include "pipeline/output.h"

#include <stdio.h>
#include <stdlib.h>

struct weir__output {
    const weir__writer_class *cls;
    void *state;                             //  the writer's, while open
    char committed[WEIR__WRITER_STATE_MAX];  //  its state at the last commit
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

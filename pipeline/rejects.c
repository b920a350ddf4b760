/*  pipeline/rejects.c - a stage's bad-record policy, count and dead letter.  */
#include "config.h"
#include "pipeline/rejects.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/jsontext.h"
#include "pipeline/deadletter.h"
#include "writers/writer.h"

struct weir__rejects {
    const char *element;
    int skip;
    const char *path;  //  dead-letter=, or NULL
    weir__deadletter *dead;
    char committed[WEIR__WRITER_STATE_MAX];  //  the dead letter's state at the last commit
    _Atomic uint64_t count;                  //  skipped in this run
    uint64_t base;                           //  from the resumed checkpoint
};

int weir__rejects_new (const char *element, weir__props *props, weir__rejects **out, weir__err *err)
{
    *out = NULL;
    weir__rejects *self = calloc (1, sizeof *self);
    if (!self)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    self->element = element;
    atomic_init (&self->count, 0);
    *out = self;
    weir__prop *on_error = weir__props_find (props, "on-error");
    weir__prop *dead = weir__props_find (props, "dead-letter");
    if (on_error && strcmp (on_error->value, "fail") && strcmp (on_error->value, "skip"))
        return weir__err_at (err, WEIR_EPROPERTY, on_error->value_offset,
                             "%s: on-error wants fail or skip, not '%s'", element, on_error->value);
    if (dead && !*dead->value)
        return weir__err_at (err, WEIR_EPROPERTY, dead->value_offset, "%s: dead-letter wants a file path",
                             element);
    if (dead && on_error && !strcmp (on_error->value, "fail"))
        return weir__err_at (err, WEIR_EPROPERTY, dead->key_offset,
                             "%s: dead-letter= keeps skipped records, but on-error=fail skips none; use "
                             "on-error=skip, or drop one of them",
                             element);
    self->skip = dead || (on_error && !strcmp (on_error->value, "skip"));
    self->path = dead ? dead->value : NULL;
    return 0;
}

void weir__rejects_destroy (weir__rejects **self_p)
{
    weir__rejects *self = *self_p;
    if (!self)
        return;
    //  Closed by now when the run went its way; after a failure to open
    //  the others, what it wrote no longer matters
    weir__err err;
    weir__deadletter_close (&self->dead, &err);
    free (self);
    *self_p = NULL;
}

int weir__rejects_skip (const weir__rejects *self)
{
    return self->skip;
}

const char *weir__rejects_path (const weir__rejects *self)
{
    return self->path;
}

int weir__rejects_open (weir__rejects *self, const char *resume, weir__err *err)
{
    if (!self->path)
        return 0;
    if (resume)
        snprintf (self->committed, sizeof self->committed, "%s", resume);
    return weir__deadletter_open (self->element, self->path, resume ? self->committed : NULL, &self->dead,
                                  err);
}

//  Count a bad record; the first of the run is said (WHAT names it), as
//  it may well be the first of many.
static void s_count (weir__rejects *self, weir__job *job, const char *what, const char *reason)
{
    if (atomic_fetch_add_explicit (&self->count, 1, memory_order_relaxed) != 0)
        return;
    if (self->path)
        weir__job_warn (job, "%s: skipped %s: %s (kept with any others in '%s')", self->element, what, reason,
                        self->path);
    else
        weir__job_warn (job, "%s: skipped %s: %s (dead-letter=PATH would keep it)", self->element, what,
                        reason);
}

int weir__rejects_input (weir__rejects *self, weir__job *job, uint64_t epoch, const weir__bad *bad,
                         weir__err *err)
{
    char what[256];
    if (bad->line)
        snprintf (what, sizeof what, "a bad record of '%s' line %" PRIu64 " (byte %" PRIu64 ")",
                  bad->path ? bad->path : "", bad->line, bad->offset);
    else
        snprintf (what, sizeof what, "a bad record of '%s' at byte %" PRIu64, bad->path ? bad->path : "",
                  bad->offset);
    s_count (self, job, what, bad->reason);
    return self->dead ? weir__deadletter_input (self->dead, epoch, bad, err) : 0;
}

int weir__rejects_record (weir__rejects *self, weir__job *job, uint64_t epoch, const msgpack_object *record,
                          const char *reason, const char *where, weir__err *err)
{
    if (!self->skip) {
        //  The record itself, as JSON, so that the message names it even
        //  where its place in the input is not known
        weir__buf text;
        weir__buf_init (&text);
        int shown = weir__jsontext_append (&text, record) == 0;
        int cut = shown && text.len > 160;
        weir__err_set (err, WEIR_EPROCESSOR,
                       "%s: a bad record%s%.*s%s: %s (epoch %" PRIu64 "%s; on-error=skip would skip it)",
                       self->element, shown ? " " : "", shown ? (int) (cut ? 160 : text.len) : 0,
                       shown ? text.data : "", cut ? "..." : "", reason, epoch, where);
        weir__buf_release (&text);
        return err->code;
    }
    s_count (self, job, "a record it rejected", reason);
    return self->dead ? weir__deadletter_record (self->dead, epoch, record, reason, err) : 0;
}

int weir__rejects_commit (weir__rejects *self, weir__err *err)
{
    return self->dead ? weir__deadletter_commit (self->dead, self->committed, err) : 0;
}

const char *weir__rejects_committed (const weir__rejects *self)
{
    return self->dead ? self->committed : NULL;
}

int weir__rejects_close (weir__rejects *self, weir__err *err)
{
    return weir__deadletter_close (&self->dead, err);
}

uint64_t weir__rejects_count (const weir__rejects *self)
{
    return atomic_load_explicit (&((weir__rejects *) self)->count, memory_order_relaxed);
}

uint64_t weir__rejects_total (const weir__rejects *self)
{
    return self->base + weir__rejects_count (self);
}

void weir__rejects_resumed (weir__rejects *self, uint64_t base)
{
    self->base = base;
}

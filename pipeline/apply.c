/*  pipeline/apply.c - a processor's callbacks applied to what reaches one
    of its workers.  */
#include "config.h"
#include "pipeline/apply.h"

#include <inttypes.h>
#include <string.h>

#include "pipeline/controller.h"
#include "pipeline/keyed.h"
#include "pipeline/origin.h"
#include "pipeline/path.h"

/*  A callback returned -1: fail the job, with the callback's own
    weir_fail message if it gave one (the job's first error wins), else
    with one naming CALLBACK, the epoch and, in process, the record's
    place in the input when it is known.  */
static void s_failed (weir__worker *w, const char *callback)
{
    weir__stage *stage = w->stage;
    weir__err err;
    char where[WEIR__ORIGIN_WHERE] = "";
    if (!weir__job_failed (stage->run->job) && !strncmp (callback, "process", 7))
        weir__origin_where (w, where, sizeof where);
    weir__err_set (&err, WEIR_EPROCESSOR, "%s: %s returned an error without a message (epoch %" PRIu64 "%s)",
                   stage->name, callback, weir__controller_epoch (stage->run->controller), where);
    weir__job_fail (stage->run->job, &err);
}

int weir__apply_open (weir__worker *w)
{
    weir__stage *stage = w->stage;
    const weir_processor *proc = weir__callbacks_table (stage->callbacks);
    void *state = weir__callbacks_state (stage->callbacks);
    w->tstate = state;
    if (stage->key && !(w->keyed = weir__keyed_new (w))) {
        weir__err err;
        weir__err_set (&err, WEIR_ENOMEM, "%s: out of memory", stage->name);
        weir__job_fail (stage->run->job, &err);
        return -1;
    }
    if (proc->thread_open && proc->thread_open (w, state, &w->tstate)) {
        s_failed (w, "thread_open");
        return -1;
    }
    return 0;
}

//  The batch could not be read on: fail the job, saying why
static int s_malformed (weir__worker *w, int more, size_t len)
{
    weir__err err;
    if (more == WEIR__RECORDS_NOMEM)
        weir__err_set (&err, WEIR_ENOMEM, "%s: out of memory decoding a record of a batch of %zu bytes",
                       w->stage->name, len);
    else
        weir__err_set (&err, WEIR_ESYSTEM, "%s: malformed record in a batch", w->stage->name);
    weir__job_fail (w->stage->run->job, &err);
    return -1;
}

static int s_batch (weir__worker *w, const char *payload, size_t len)
{
    weir__stage *stage = w->stage;
    const weir_processor *proc = weir__callbacks_table (stage->callbacks);
    weir__records_reset (&w->decoder, payload, len);
    //  A processor that parses its records itself gets their bytes, and
    //  only a rejected one is decoded, for its dead letter; a keyed stage
    //  finds the record's state from its decoded key
    int bytes = proc->process_bytes && !w->keyed;
    msgpack_object obj;
    const char *data = NULL;
    size_t size = 0;
    int more;
    //  A failed (or aborted) job leaves the batch at once: behind a slow
    //  callback, the rest of it could take long
    while ((more = bytes ? weir__records_next_bytes (&w->decoder, &data, &size)
                         : weir__records_next (&w->decoder, &obj))
           == 1) {
        w->record = bytes ? NULL : &obj;
        w->processing = 1;
        int rc = bytes ? proc->process_bytes (w, w->tstate, data, size) : proc->process (w, w->tstate, &obj);
        w->processing = 0;
        w->record = NULL;
        if (rc == WEIR_REJECTED && w->rejecting) {
            w->rejecting = 0;
            int bad = bytes ? weir__records_decode (&w->decoder, data, size, &obj) : 0;
            if (bad)
                return s_malformed (w, bad, len);
            rc = weir__path_reject (w, &obj, w->reject_reason, 1);
        }
        if (rc) {
            s_failed (w, bytes ? "process_bytes" : "process");
            return -1;
        }
        if (weir__job_failed (stage->run->job))
            return 0;
    }
    return more < 0 ? s_malformed (w, more, len) : 0;
}

int weir__apply_batch (weir__worker *w, const weir__batch_header *hdr, const char *payload, size_t len)
{
    //  The caller's header while its records go through: a failure finds
    //  the record's place from it and the decoder's offset, and nothing
    //  is noted record by record (pipeline/origin.h)
    w->origin = hdr;
    int rc = s_batch (w, payload, len);
    w->origin = NULL;
    return rc;
}

int weir__apply_epoch_end (weir__worker *w)
{
    const weir_processor *proc = weir__callbacks_table (w->stage->callbacks);
    if (proc->epoch_end
        && proc->epoch_end (w, w->tstate, weir__controller_epoch (w->stage->run->controller))) {
        s_failed (w, "epoch_end");
        return -1;
    }
    //  The key groups that changed, stored for the checkpoint this epoch
    //  ends in
    weir__err err;
    weir__err_init (&err);
    if (w->keyed && weir__keyed_store (w->keyed, w->stage->run->keeps_keys, &err)) {
        weir__err named;
        weir__err_set (&named, err.code, "%s: %s", w->stage->name, err.msg);
        weir__job_fail (w->stage->run->job, &named);
        return -1;
    }
    return 0;
}

void weir__apply_close (weir__worker *w)
{
    const weir_processor *proc = weir__callbacks_table (w->stage->callbacks);
    if (proc->thread_close)
        proc->thread_close (w, w->tstate);
}

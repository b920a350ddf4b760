/*  pipeline/ranks.c - the shares, the meetings and the one checkpoint of
    a job of several ranks.  */
#include "config.h"
#include "pipeline/ranks.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cluster.h"
#include "lib/hostaddr.h"
#include "lib/key.h"
#include "lib/killpoint.h"
#include "pipeline/keyed.h"
#include "pipeline/reduce.h"

#define S_RANK "{rank}"

//  How long a rank waits to hear from every other on its keyed links, at
//  most (--epoch-timeout when shorter)
#define S_GREET_SECONDS 30.0

//  A writer's outputs, one per rank that ever wrote ("slots").
typedef struct {
    char *template;  //  path= with "{rank}" as written, or NULL
    unsigned slots;
    unsigned known;  //  the slots the checkpoint gone on from knew
    //  [slots] the committed state of the outputs this rank holds (slot s
    //  with s mod N == rank: its own, and those of ranks gone since the
    //  checkpoint it resumed from); on rank 0, once merged, of every slot
    char (*states)[WEIR__WRITER_STATE_MAX];
    const char **held;  //  [slots] states[s] if held, else NULL: a snapshot's slot states
} s_output;

struct weir__ranks {
    weir__cluster *cluster;
    int rank, size;
    double timeout;
    int64_t durable;  //  rank 0's newest checkpoint written, as this rank last heard; -1: none
    weir__job *job;
    weir__stages *stages;
    s_output *outputs;  //  per stage; slots 0 for stages that do not write
    //  Rank 0's merge of every rank's part, and the snapshot made of it
    weir__snapshot_stage *items;
    uint64_t *offsets;             //  of every input's shards, one after the other
    weir__snapshot_input *inputs;  //  every reader's, with the merged offsets
    size_t ninputs;
};

//  TEMPLATE with every "{rank}" replaced by SLOT; NULL when out of memory.
static char *s_expand (const char *template, unsigned slot)
{
    char number[16];
    int n = snprintf (number, sizeof number, "%u", slot);
    size_t len = strlen (template), marks = 0;
    for (const char *p = strstr (template, S_RANK); p; p = strstr (p + 1, S_RANK))
        marks++;
    char *out = malloc (len + marks * (size_t) n + 1), *o = out;
    if (!out)
        return NULL;
    for (const char *p = template; *p;) {
        if (strncmp (p, S_RANK, strlen (S_RANK)) == 0) {
            memcpy (o, number, (size_t) n), o += n;
            p += strlen (S_RANK);
        }
        else
            *o++ = *p++;
    }
    *o = '\0';
    return out;
}

//  STAGE's share of the job: a reader's shards, a writer's path.
static int s_share (weir__ranks *self, weir__stage *stage, weir__err *err)
{
    if (self->size > 1 && stage->rejects && weir__rejects_path (stage->rejects))
        return weir__stage_error (stage, err, WEIR_ESTRUCTURE, -1,
                                  "%s (stage %zu): dead-letter= is not supported yet in a job of several "
                                  "ranks (%d)",
                                  stage->name, stage->index + 1, self->size);
    if (stage->input)
        weir__input_share (stage->input, (unsigned) self->rank, (unsigned) self->size);
    if (!stage->output)
        return 0;
    weir__prop *path = weir__stage_prop (stage, "path");
    if (path && strstr (path->value, S_RANK)) {
        char *mine = s_expand (path->value, (unsigned) self->rank);
        if (!mine)
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        self->outputs[stage->index].template = path->value;
        path->value = mine;
    }
    else if (path && self->size > 1 && strcmp (path->value, "-") != 0)
        return weir__stage_error (stage, err, WEIR_ESTRUCTURE, path->value_offset,
                                  "%s (stage %zu): path=%s in a job of %d ranks: every rank would write "
                                  "that one file; put {rank} in the path (each rank's number), as in "
                                  "path=out-{rank}.txt",
                                  stage->name, stage->index + 1, path->value, self->size);
    return 0;
}

int weir__ranks_new (weir__stages *stages, weir__job *job, double timeout, weir__ranks **out, weir__err *err)
{
    *out = NULL;
    weir__ranks *self = calloc (1, sizeof *self);
    if (!self || !(self->outputs = calloc (stages->count, sizeof *self->outputs))) {
        free (self);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    self->job = job;
    self->stages = stages;
    self->timeout = timeout;
    self->durable = -1;
    *out = self;
    int rc = weir__cluster_get (&self->cluster, err);
    if (rc)
        return rc;
    self->rank = weir__cluster_rank (self->cluster);
    self->size = weir__cluster_size (self->cluster);
    for (size_t i = 0; i < stages->count && !rc; i++)
        rc = s_share (self, stages->items[i], err);
    return rc;
}

void weir__ranks_destroy (weir__ranks **self_p)
{
    weir__ranks *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < self->stages->count; i++) {
        free (self->outputs[i].template);
        free (self->outputs[i].states);
        free (self->outputs[i].held);
    }
    free (self->outputs);
    free (self->items);
    free (self->offsets);
    free (self->inputs);
    free (self);
    *self_p = NULL;
}

void weir__ranks_watch (weir__ranks *self, weir__cluster_quit_fn *quit, void *arg)
{
    weir__cluster_watch (self->cluster, quit, arg);
}

void weir__ranks_ended (weir__ranks *self, int agreed)
{
    weir__cluster_ended (self->cluster, agreed);
}

int weir__ranks_launched (int *rank)
{
    return weir__cluster_launched (rank);
}

int weir__ranks_rank (const weir__ranks *self)
{
    return self->rank;
}

int weir__ranks_size (const weir__ranks *self)
{
    return self->size;
}

int weir__ranks_hand_out (weir__ranks *self, weir__resume **resume, const weir__shapes *shapes,
                          weir__err *err)
{
    if (self->size <= 1)
        return 0;
    char *buf = NULL;
    size_t len = 0;
    int rc = 0;
    if (self->rank == 0 && *resume && (rc = weir__resume_pack (*resume, &buf, &len, err)))
        return rc;
    rc = weir__cluster_bcast (self->cluster, &buf, &len, self->timeout,
                              "handing out the checkpoint to go on from", err);
    if (!rc && self->rank != 0 && len)
        rc = weir__resume_unpack (buf, len, shapes, "rank 0", resume, err);
    free (buf);
    return rc;
}

//  A copy of writer STAGE's properties with the path of rank SLOT's
//  output, into OUT (released by the caller).
static int s_slot_props (const weir__ranks *self, const weir__stage *stage, unsigned slot, weir__props *out)
{
    const char *template = self->outputs[stage->index].template;
    weir__props_init (out);
    for (size_t i = 0; i < stage->props.count; i++) {
        const weir__prop *p = &stage->props.items[i];
        char *value = NULL;
        if (template && strcmp (p->key, "path") == 0 && !(value = s_expand (template, slot)))
            goto oom;
        int rc = weir__props_add (out, p->key, value ? value : p->value, p->key_offset, p->value_offset);
        free (value);
        if (rc)
            goto oom;
    }
    return 0;
oom:
    weir__props_release (out);
    return WEIR_ENOMEM;
}

//  The output of rank SLOT, gone since the checkpoint, is this rank's to
//  keep: back to its committed STATE (a file truncated to its length),
//  then closed, its state kept.
static int s_adopt (weir__ranks *self, weir__stage *stage, unsigned slot, const char *state, weir__err *err)
{
    weir__props props;
    weir__output *output = weir__output_new (weir__output_class (stage->output));
    if (!output || s_slot_props (self, stage, slot, &props)) {
        weir__output_destroy (&output);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    int rc = weir__output_open (output, &props, 1, state, 0, err);
    if (!rc) {
        rc = weir__output_commit (output, err);
        weir__err other;
        weir__err_init (&other);
        int closed = weir__output_close (output, rc ? &other : err);
        rc = rc ? rc : closed;
    }
    if (!rc)
        snprintf (self->outputs[stage->index].states[slot], WEIR__WRITER_STATE_MAX, "%s",
                  weir__output_committed (output));
    weir__output_destroy (&output);
    weir__props_release (&props);
    if (rc)
        weir__err_prefix (err, "rank %d, taking back the output of rank %u: ", self->rank, slot);
    else
        weir__job_log (self->job, WEIR_LOG_INFO, "%s (stage %zu): rank %d keeps the output of rank %u, gone",
                       stage->name, stage->index + 1, self->rank, slot);
    return rc;
}

int weir__ranks_adopt (weir__ranks *self, weir__stage *stage, const weir__resume *resume, weir__err *err)
{
    s_output *o = &self->outputs[stage->index];
    unsigned size = (unsigned) self->size;
    unsigned old = resume ? weir__resume_slots (resume, stage->index, stage->name) : 1;
    o->slots = old > size ? old : size;
    o->known = resume ? old : o->slots;
    o->states = calloc (o->slots, sizeof *o->states);
    o->held = calloc (o->slots, sizeof *o->held);
    if (!o->states || !o->held)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    for (unsigned slot = size; slot < old; slot++) {
        if (slot % size != (unsigned) self->rank)
            continue;
        char state[WEIR__WRITER_STATE_MAX];
        int rc = weir__resume_writer_slot (resume, stage->index, stage->name, slot, state, sizeof state, err);
        if (rc || (rc = s_adopt (self, stage, slot, state, err)))
            return rc;
    }
    return 0;
}

int weir__ranks_grew (const weir__ranks *self)
{
    for (size_t i = 0; i < self->stages->count; i++)
        if (self->outputs[i].slots > self->outputs[i].known)
            return 1;
    return 0;
}

int weir__ranks_agree (void *arg, uint64_t epoch, int *exhausted, int *stopping)
{
    weir__ranks *self = arg;
    if (self->size <= 1)
        return 0;
    weir__err err;
    weir__err_init (&err);
    char what[96];
    snprintf (what, sizeof what, "the end of epoch %" PRIu64, epoch);
    //  Who has not come is named here; then one all-reduce: the inputs are
    //  exhausted when all are, the job stops when any rank stops, and
    //  every rank hears which checkpoint rank 0 has written
    int64_t flags[3] = {*exhausted ? 1 : 0, *stopping ? 0 : 1, self->rank == 0 ? self->durable : INT64_MAX};
    if (weir__cluster_barrier (self->cluster, self->timeout, what, &err)
        || weir__cluster_allreduce (self->cluster, flags, 3, WEIR__REDUCE_I64, WEIR__REDUCE_MIN,
                                    self->timeout, what, &err)) {
        weir__job_fail (self->job, &err);
        return 1;
    }
    *exhausted = flags[0] != 0;
    *stopping = flags[1] == 0;
    self->durable = flags[2];
    return 0;
}

void weir__ranks_set_durable (weir__ranks *self, uint64_t epoch)
{
    self->durable = (int64_t) epoch;
}

int weir__ranks_durable (const weir__ranks *self, uint64_t *epoch)
{
    if (self->durable < 0)
        return -1;
    *epoch = (uint64_t) self->durable;
    return 0;
}

int weir__ranks_share_durable (weir__ranks *self, weir__err *err)
{
    if (self->size <= 1)
        return 0;
    int64_t durable = self->rank == 0 ? self->durable : INT64_MAX;
    int rc = weir__cluster_allreduce (self->cluster, &durable, 1, WEIR__REDUCE_I64, WEIR__REDUCE_MIN,
                                      self->timeout, "hearing which checkpoint rank 0 wrote last", err);
    if (!rc)
        self->durable = durable;
    return rc;
}

//  Every rank's LEN bytes at BUF to every rank: *ALL (malloc'ed) holds
//  them back to back, LENS[r] (the caller's array of size ranks) rank
//  r's length.  Rank 0 gathers them and broadcasts the lengths, then the
//  bytes.
static int s_allgather (weir__ranks *self, const void *buf, size_t len, char **all, size_t *lens,
                        const char *what, weir__err *err)
{
    *all = NULL;
    int rc = weir__cluster_gather (self->cluster, buf, len, all, lens, self->timeout, what, err);
    char *sizes = self->rank == 0 ? (char *) lens : NULL;
    size_t n = (size_t) self->size * sizeof *lens, total = 0;
    if (!rc && !(rc = weir__cluster_bcast (self->cluster, &sizes, &n, self->timeout, what, err))
        && self->rank != 0) {
        memcpy (lens, sizes, (size_t) self->size * sizeof *lens);
        free (sizes);
    }
    for (int r = 0; r < self->size && !rc; r++)
        total += lens[r];
    if (!rc)
        rc = weir__cluster_bcast (self->cluster, all, &total, self->timeout, what, err);
    return rc;
}

int weir__ranks_exchange (weir__ranks *self, unsigned links, const uint64_t *shapes, unsigned capacity,
                          weir__exchange **out, weir__err *err)
{
    *out = NULL;
    if (self->size <= 1 || !links)
        return 0;
    const char *net = getenv ("WEIR_EXCHANGE_NET");
    net = net && *net ? net : NULL;
    //  Each rank's card (lib/hostaddr.h), to every rank, then the port of
    //  each link's socket, bound where the others will reach it
    char card[WEIR__HOSTADDR_CARD], host[64], *all = NULL, *ports = NULL;
    size_t *lens = calloc ((size_t) self->size, sizeof *lens),
           *plens = calloc ((size_t) self->size, sizeof *lens);
    const char **cards = calloc ((size_t) self->size, sizeof *cards);
    unsigned *mine = calloc (links, sizeof *mine);
    int rc = !lens || !plens || !cards || !mine ? weir__err_set (err, WEIR_ENOMEM, "out of memory")
                                                : weir__hostaddr_card (card, sizeof card, err);
    if (!rc)
        rc = s_allgather (self, card, strlen (card) + 1, &all, lens, "sharing the ranks' addresses", err);
    for (size_t r = 0, at = 0; !rc && r < (size_t) self->size; at += lens[r], r++) {
        cards[r] = all + at;
        if (!lens[r] || all[at + lens[r] - 1])
            rc = weir__err_set (err, WEIR_ECORRUPT, "rank %zu sent no card of its host", r);
    }
    if (!rc)
        rc = weir__hostaddr_listen (card, cards, (size_t) self->size, net, host, sizeof host, err);
    if (!rc
        && !(*out = weir__exchange_new (links, (unsigned) self->rank, (unsigned) self->size, capacity, err)))
        rc = err->code;
    if (!rc)
        rc = weir__exchange_bind (*out, host, mine, err);
    if (!rc)
        rc = s_allgather (self, mine, links * sizeof *mine, &ports, plens, "sharing the ranks' ports", err);
    for (int r = 0; r < self->size && !rc; r++) {
        char to[64], endpoint[96];
        if (r == self->rank)
            continue;
        if (plens[r] != links * sizeof *mine)
            rc = weir__err_set (err, WEIR_ECORRUPT, "rank %d has %zu keyed links, and rank %d %u", r,
                                plens[r] / sizeof *mine, self->rank, links);
        else if ((rc = weir__hostaddr_pick (card, cards[r], net, to, sizeof to, err)))
            //  The connect's messages name both ranks; the pick's does not
            weir__err_prefix (err, "rank %d, connecting to rank %d: ", self->rank, r);
        for (unsigned l = 0; l < links && !rc; l++) {
            unsigned port;
            memcpy (&port, ports + (size_t) r * links * sizeof port + l * sizeof port, sizeof port);
            snprintf (endpoint, sizeof endpoint, "tcp://%s:%u", to, port);
            rc = weir__exchange_connect (*out, l, (unsigned) r, endpoint, err);
        }
    }
    //  Every rank reaches every other (a connection libzmq cannot make
    //  is silent), then none sends a record before all know it: the
    //  greetings are the first thing each link carries
    double seconds = self->timeout > 0 && self->timeout < S_GREET_SECONDS ? self->timeout : S_GREET_SECONDS;
    if (!rc)
        rc = weir__exchange_greet (*out, shapes, (int) (seconds * 1000), err);
    if (!rc)
        rc = weir__cluster_barrier (self->cluster, self->timeout, "connecting the ranks' keyed links", err);
    free (all);
    free (ports);
    free (lens);
    free (plens);
    free (cards);
    free (mine);
    if (rc)
        weir__exchange_destroy (out);
    return rc;
}

int weir__ranks_reduce (weir__ranks *self, weir__workspace *ws, uint64_t epoch, weir__err *err)
{
    return weir__reduce_run (ws, self->cluster, epoch, self->timeout, err);
}

//  The states of the slots this rank holds into a copy of S's stages:
//  its own output's (what S says) and those it adopted.
static void s_slots (weir__ranks *self, weir__snapshot *s)
{
    memcpy (self->items, s->stages, s->nstages * sizeof *self->items);
    for (size_t i = 0; i < s->nstages; i++) {
        s_output *o = &self->outputs[i];
        if (!o->slots || !self->items[i].writer_state)
            continue;
        snprintf (o->states[self->rank], WEIR__WRITER_STATE_MAX, "%s", self->items[i].writer_state);
        for (unsigned slot = 0; slot < o->slots; slot++)
            o->held[slot] = slot % (unsigned) self->size == (unsigned) self->rank ? o->states[slot] : NULL;
        self->items[i].slot_states = o->held;
        self->items[i].nslots = o->slots;
    }
    s->stages = self->items;
}

//  Rank R's PART (a packed checkpoint) into the job's S: its counts
//  added, the states of the slots it holds and the offsets of the shards
//  it reads taken.
static int s_merge (weir__ranks *self, weir__snapshot *s, int r, const char *part, size_t len, weir__err *err)
{
    char who[32];
    snprintf (who, sizeof who, "rank %d", r);
    weir__resume *from = NULL;
    //  A part of this run: of the shape of now
    weir__shapes shapes = {s->shape, NULL};
    int rc = weir__resume_unpack (part, len, &shapes, who, &from, err);
    //  The key groups its threads own and changed
    if (!rc && r != 0 && s->workspace)
        rc = weir__resume_blobs (from, s->workspace, err);
    for (size_t i = 0; i < s->nstages && !rc; i++) {
        weir__snapshot_stage *item = &self->items[i];
        uint64_t in, out, rejected;
        weir__resume_records (from, i, &in, &out, &rejected);
        item->records_in += in;
        item->records_out += out;
        item->rejected += rejected;
        s_output *o = &self->outputs[i];
        for (unsigned slot = (unsigned) r; slot < o->slots && !rc; slot += (unsigned) self->size)
            rc = weir__resume_writer_slot (from, i, item->element, slot, o->states[slot],
                                           WEIR__WRITER_STATE_MAX, err)
                 < 0;
        for (unsigned slot = 0; slot < o->slots; slot++)
            o->held[slot] = o->states[slot];
    }
    //  Rank R reads shards R, R + size, ... of every reader
    uint64_t *at = self->offsets;
    for (size_t k = 0; k < self->ninputs && !rc; at += s->inputs[k].shards->count, k++) {
        const weir__snapshot_input *in = &s->inputs[k];
        size_t n = in->shards->count;
        uint64_t *offsets = calloc (n ? n : 1, sizeof *offsets);
        rc = offsets ? weir__resume_offsets (from, in->element, in->prefix, in->shards, offsets, err)
                     : weir__err_set (err, WEIR_ENOMEM, "out of memory");
        for (size_t i = (size_t) r; i < n && !rc; i += (size_t) self->size)
            at[i] = offsets[i];
        free (offsets);
    }
    weir__resume_destroy (&from);
    return rc ? err->code : 0;
}

//  Whether this rank owns group GROUP of the keyed stage of index STAGE
//  among GROUPS: its threads of every rank share them rank by rank
//  (lib/shuffle.h)
static int s_owns (const weir__ranks *self, size_t stage, unsigned group, unsigned groups)
{
    if (stage >= self->stages->count || !self->stages->items[stage]->key || group >= groups)
        return 0;
    unsigned threads = self->stages->items[stage]->threads;
    return weir__key_owner (group, groups, threads * (unsigned) self->size) / threads
           == (unsigned) self->rank;
}

//  The key groups this rank owns and its threads stored since the last
//  gather (those that changed), copied into a workspace of their own, or
//  NULL: rank 0 holds them in its own.  A rank's workspace holds every
//  group of the checkpoint it resumed from, but only the owner's copy of
//  a group is the group's state.
static weir__workspace *s_groups (const weir__ranks *self, weir__workspace *ws, unsigned groups_of_job,
                                  int *oom)
{
    weir__workspace *groups = NULL;
    *oom = 0;
    size_t n = self->rank && ws ? weir__workspace_count (ws) : 0;
    for (size_t i = 0; i < n && !*oom; i++) {
        void *data;
        size_t size, stage;
        unsigned group;
        const char *name = weir__workspace_item (ws, i, &data, &size);
        if (!weir__workspace_touched (ws, i) || !weir__keyed_blob_group (name, &stage, &group)
            || !s_owns (self, stage, group, groups_of_job))
            continue;
        if ((!groups && !(groups = weir__workspace_new ()))
            || weir__workspace_restore (groups, name, data, size))
            *oom = 1;
    }
    if (ws)
        weir__workspace_untouch (ws);
    return groups;
}

//  Every rank's part of S, packed as a checkpoint, to rank 0, which
//  merges them into S.
static int s_gather (weir__ranks *self, weir__snapshot *s, weir__err *err)
{
    weir__snapshot part = *s;
    //  The blobs are the same on every rank, or rank 0's, but for the key
    //  groups of a keyed stage, each of which one rank owns: those that
    //  changed go to rank 0 with the rank's part
    int oom;
    weir__workspace *groups = s_groups (self, s->workspace, s->key_groups, &oom);
    part.workspace = groups;
    weir__ckpt *ck = oom ? NULL : weir__snapshot_take (&part, NULL);
    char *buf = NULL, *all = NULL;
    size_t len = 0, *lens = calloc ((size_t) self->size, sizeof *lens);
    char what[96];
    snprintf (what, sizeof what, "gathering the checkpoint of epoch %" PRIu64, s->epoch);
    int rc = !ck || !lens || weir__ckpt_pack (ck, &buf, &len)
                 ? weir__err_set (err, WEIR_ENOMEM, "out of memory")
                 : weir__cluster_gather (self->cluster, buf, len, &all, lens, self->timeout, what, err);
    weir__ckpt_destroy (&ck);
    weir__workspace_destroy (&groups);
    free (buf);
    if (!rc && self->rank == 0) {
        for (size_t i = 0; i < s->nstages; i++) {
            self->items[i].records_in = self->items[i].records_out = self->items[i].rejected = 0;
            self->items[i].writer_state = self->outputs[i].slots ? self->outputs[i].states[0] : NULL;
        }
        size_t at = 0;
        for (int r = 0; r < self->size && !rc; at += lens[r], r++)
            rc = s_merge (self, s, r, all + at, lens[r], err);
        uint64_t *merged = self->offsets;
        for (size_t k = 0; k < s->ninputs; merged += s->inputs[k].shards->count, k++) {
            self->inputs[k] = s->inputs[k];
            self->inputs[k].offsets = merged;
        }
        s->inputs = self->inputs;
    }
    free (all);
    free (lens);
    return rc;
}

int weir__ranks_snapshot (weir__ranks *self, weir__snapshot *s, weir__err *err)
{
    //  One rank that writes only its own outputs: nothing to add
    int more = self->size > 1;
    for (size_t i = 0; i < s->nstages; i++)
        more |= self->outputs[i].slots > 1;
    if (!more)
        return 0;
    size_t n = 0;
    for (size_t k = 0; k < s->ninputs; k++)
        n += s->inputs[k].shards->count;
    free (self->items);
    free (self->offsets);
    free (self->inputs);
    self->items = calloc (s->nstages ? s->nstages : 1, sizeof *self->items);
    self->offsets = calloc (n ? n : 1, sizeof *self->offsets);
    self->inputs = calloc (s->ninputs ? s->ninputs : 1, sizeof *self->inputs);
    self->ninputs = s->ninputs;
    if (!self->items || !self->offsets || !self->inputs)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    s_slots (self, s);
    if (self->size <= 1)
        return 0;
    int rc = s_gather (self, s, err);
    if (!rc && self->rank == 0)
        WEIR_KILL_POINT ("ranks-prepared");
    return rc;
}

int weir__ranks_totals (weir__ranks *self, weir__stages *stages, weir__err *err)
{
    if (self->size <= 1)
        return 0;
    int64_t *v = calloc (stages->count * 3, sizeof *v);
    if (!v)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    for (size_t i = 0; i < stages->count; i++) {
        weir_stage_stats st = WEIR_STAGE_STATS_INIT;
        weir__stage_stats (stages->items[i], &st);
        v[3 * i] = (int64_t) st.records_in;
        v[3 * i + 1] = (int64_t) st.records_out;
        v[3 * i + 2] = (int64_t) st.records_rejected;
    }
    int rc = weir__cluster_allreduce (self->cluster, v, stages->count * 3, WEIR__REDUCE_I64, WEIR__REDUCE_SUM,
                                      self->timeout, "summing the ranks' record counts", err);
    for (size_t i = 0; i < stages->count && !rc; i++) {
        weir__counts *c = &stages->items[i]->counts;
        c->job_in = (uint64_t) v[3 * i];
        c->job_out = (uint64_t) v[3 * i + 1];
        c->job_rejected = (uint64_t) v[3 * i + 2];
        c->job_known = 1;
    }
    free (v);
    return rc;
}

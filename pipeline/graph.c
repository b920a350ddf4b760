/*  pipeline/graph.c - links between stages, resolved and checked.  */
#include "config.h"
#include "pipeline/graph.h"

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/suggest.h"

//  The end of a link weir__graph_branch made: the next stage added
#define S_NEXT (SIZE_MAX - 1)

static char *s_dup (const char *text)
{
    return text ? strdup (text) : NULL;
}

//  Append a link; its names are copied.  0 or WEIR_ENOMEM.
static int s_append (weir__stages *self, const weir__link *link, weir__err *err)
{
    weir__link *links = realloc (self->links, (self->nlinks + 1) * sizeof *links);
    if (!links)
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    self->links = links;
    weir__link *l = &links[self->nlinks];
    *l = *link;
    l->from_name = s_dup (link->from_name);
    l->from_port = s_dup (link->from_port);
    l->to_name = s_dup (link->to_name);
    l->to_port = s_dup (link->to_port);
    if ((link->from_name && !l->from_name) || (link->from_port && !l->from_port)
        || (link->to_name && !l->to_name) || (link->to_port && !l->to_port)) {
        free (l->from_name);
        free (l->from_port);
        free (l->to_name);
        free (l->to_port);
        return weir__err_set (err, WEIR_ENOMEM, "out of memory");
    }
    self->nlinks++;
    return 0;
}

//  Stage TO, the first of what is added now, goes on from where the
//  stages before it ended: the tail, or the branch weir__graph_branch
//  started
static int s_go_on (weir__stages *stages, size_t to, weir__err *err)
{
    if (stages->tail != SIZE_MAX) {
        weir__link l = {stages->tail, to, NULL, NULL, NULL, NULL, -1, -1, -1};
        return s_append (stages, &l, err);
    }
    if (stages->nlinks && stages->links[stages->nlinks - 1].to == S_NEXT)
        stages->links[stages->nlinks - 1].to = to;
    return 0;
}

int weir__graph_add_spec (weir__stages *stages, size_t first, const weir__spec *spec, weir__err *err)
{
    int rc = spec->starts_with_element && spec->count > 0 ? s_go_on (stages, first, err) : 0;
    for (size_t i = 0; i < spec->nlinks && !rc; i++) {
        const weir__spec_link *s = &spec->links[i];
        weir__link l = {
            s->from.ref ? SIZE_MAX : first + s->from.element,
            s->to.ref ? SIZE_MAX : first + s->to.element,
            s->from.ref,
            s->from.port,
            s->to.ref,
            s->to.port,
            s->from.offset,
            s->to.offset,
            s->bang,
        };
        rc = s_append (stages, &l, err);
    }
    stages->tail = spec->last == SIZE_MAX ? SIZE_MAX : first + spec->last;
    return rc;
}

int weir__graph_add_next (weir__stages *stages, weir__err *err)
{
    size_t now = stages->count - 1;
    int rc = s_go_on (stages, now, err);
    stages->tail = now;
    return rc;
}

//  NAME, NAME. or NAME.PORT into its name and port (either may be empty)
static int s_split (const char *text, char **name, char **port)
{
    const char *dot = strchr (text, '.');
    size_t n = dot ? (size_t) (dot - text) : strlen (text);
    *name = strndup (text, n);
    *port = dot && dot[1] ? strdup (dot + 1) : NULL;
    return !*name || (dot && dot[1] && !*port) ? -1 : 0;
}

//  A name or reference given in code: NAME, NAME. or NAME.PORT
static int s_code_ref (const char *text, const char *what, weir__err *err)
{
    if (!weir__parse_is_name (text) && !weir__parse_is_ref (text))
        return weir__err_set (err, WEIR_EINVAL,
                              "%s '%.100s' is not the name of an element (a letter or '_' then letters, "
                              "digits, '_' or '-'), with '.PORT' or not",
                              what, text);
    return 0;
}

int weir__graph_branch (weir__stages *stages, const char *from, weir__err *err)
{
    stages->tail = SIZE_MAX;
    if (!from)
        return 0;
    int rc = s_code_ref (from, "branch from", err);
    if (rc)
        return rc;
    weir__link l = {SIZE_MAX, S_NEXT, NULL, NULL, NULL, NULL, -1, -1, -1};
    if (s_split (from, &l.from_name, &l.from_port))
        rc = weir__err_set (err, WEIR_ENOMEM, "out of memory");
    else
        rc = s_append (stages, &l, err);
    free (l.from_name);
    free (l.from_port);
    return rc;
}

int weir__graph_link (weir__stages *stages, const char *from, const char *to, weir__err *err)
{
    int rc = s_code_ref (from, "link from", err);
    if (rc || (rc = s_code_ref (to, "link to", err)))
        return rc;
    weir__link l = {SIZE_MAX, SIZE_MAX, NULL, NULL, NULL, NULL, -1, -1, -1};
    if (s_split (from, &l.from_name, &l.from_port) || s_split (to, &l.to_name, &l.to_port))
        rc = weir__err_set (err, WEIR_ENOMEM, "out of memory");
    else
        rc = s_append (stages, &l, err);
    free (l.from_name);
    free (l.from_port);
    free (l.to_name);
    free (l.to_port);
    return rc;
}

//  Every stage's name=, checked and unique
static int s_labels (weir__stages *stages, weir__err *err)
{
    for (size_t i = 0; i < stages->count; i++) {
        weir__stage *stage = stages->items[i];
        weir__prop *p = weir__stage_prop (stage, "name");
        free (stage->label);
        stage->label = NULL;
        if (!p)
            continue;
        atomic_store (&p->used, 1);
        if (!weir__parse_is_name (p->value))
            return weir__stage_error (stage, err, WEIR_ESYNTAX, p->value_offset,
                                      "%s: name='%s' cannot name an element: a name is a letter or '_' then "
                                      "letters, digits, '_' or '-'",
                                      stage->name, p->value);
        for (size_t k = 0; k < i; k++)
            if (stages->items[k]->label && strcmp (stages->items[k]->label, p->value) == 0)
                return weir__stage_error (stage, err, WEIR_ESTRUCTURE, p->value_offset,
                                          "name '%s' is given twice: to '%s' (stage %zu) and to '%s' (stage %zu)",
                                          p->value, stages->items[k]->name, k + 1, stage->name, i + 1);
        if (!(stage->label = strdup (p->value)))
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        stage->label_offset = p->value_offset;
    }
    return 0;
}

//  The stage named NAME, referred to at OFFSET, into *INDEX
static int s_find (const weir__stages *stages, const char *name, long offset, size_t *index, weir__err *err)
{
    const char *best = NULL;
    size_t distance = 0;
    for (size_t i = 0; i < stages->count; i++) {
        const char *label = stages->items[i]->label;
        if (!label)
            continue;
        if (strcmp (label, name) == 0) {
            *index = i;
            return 0;
        }
        weir__suggest_consider (name, label, &best, &distance);
    }
    char hint[200] = "";
    if (best)
        snprintf (hint, sizeof hint, ": did you mean '%s.'?", best);
    else
        snprintf (hint, sizeof hint, ": give it to an element as name=%.100s", name);
    weir__err_set (err, WEIR_ESTRUCTURE, "'%s.' refers to no element: no element has name=%s%s", name, name,
                   hint);
    err->offset = offset;
    return err->code;
}

//  The offset of link L for messages: its '!', else where it is written
static long s_where (const weir__link *l)
{
    return l->bang >= 0 ? l->bang : l->to_offset >= 0 ? l->to_offset : l->from_offset;
}

//  Link L's ends, resolved; a port of its output is checked once the
//  stage's element is known (weir__graph_check), one of its input is
//  refused: an element has one input
static int s_ends (const weir__stages *stages, const weir__link *l, size_t *from, size_t *to, weir__err *err)
{
    int rc = 0;
    if (l->to == S_NEXT) {
        weir__err_set (err, WEIR_ESTRUCTURE, "the branch from '%s.' has no element: add one after it", l->from_name);
        err->offset = l->from_offset;
        return err->code;
    }
    *from = l->from;
    *to = l->to;
    if ((l->from == SIZE_MAX && (rc = s_find (stages, l->from_name, l->from_offset, from, err)))
        || (l->to == SIZE_MAX && (rc = s_find (stages, l->to_name, l->to_offset, to, err))))
        return rc;
    if (l->to_port) {
        weir__err_set (err, WEIR_ESTRUCTURE,
                       "'%s.%s': an element has one input, and ports name outputs; end the branch in '%s.'",
                       l->to_name, l->to_port, l->to_name);
        err->offset = l->to_offset;
        return err->code;
    }
    if (*from == *to) {
        weir__err_set (err, WEIR_ESTRUCTURE, "a cycle: '%s' feeds itself; records flow one way, from readers "
                       "to writers", weir__stage_title (stages->items[*from]));
        err->offset = s_where (l);
        return err->code;
    }
    return 0;
}

//  Depth-first from stage I: 1 on the way, 2 done.  A stage met again on
//  the way closes a cycle, said from there round to it.
static int s_visit (const weir__stages *stages, size_t i, unsigned char *mark, size_t *path, size_t depth,
                    weir__err *err)
{
    mark[i] = 1;
    path[depth] = i;
    const weir__stage *stage = stages->items[i];
    for (size_t e = 0; e < stage->nouts; e++) {
        size_t j = stage->outs[e].to->index;
        if (mark[j] == 1) {
            char text[400];
            size_t used = 0, start = depth;
            while (path[start] != j)
                start--;
            for (size_t k = start; k <= depth && used < sizeof text; k++)
                used += (size_t) snprintf (text + used, sizeof text - used, "%s -> ",
                                           weir__stage_title (stages->items[path[k]]));
            if (used < sizeof text)
                snprintf (text + used, sizeof text - used, "%s", weir__stage_title (stages->items[j]));
            weir__err_set (err, WEIR_ESTRUCTURE, "a cycle: %s; records flow one way, from readers to writers",
                           text);
            err->offset = stage->outs[e].offset;
            return err->code;
        }
        int rc = mark[j] ? 0 : s_visit (stages, j, mark, path, depth + 1, err);
        if (rc)
            return rc;
    }
    mark[i] = 2;
    return 0;
}

static int s_acyclic (const weir__stages *stages, weir__err *err)
{
    unsigned char *mark = calloc (stages->count, 1);
    size_t *path = calloc (stages->count, sizeof *path);
    int rc = !mark || !path ? weir__err_set (err, WEIR_ENOMEM, "out of memory") : 0;
    for (size_t i = 0; i < stages->count && !rc; i++)
        if (!mark[i])
            rc = s_visit (stages, i, mark, path, 0, err);
    free (mark);
    free (path);
    return rc;
}

int weir__graph_resolve (weir__stages *stages, weir__err *err)
{
    int rc = s_labels (stages, err);
    for (size_t i = 0; i < stages->count; i++) {
        weir__stage *stage = stages->items[i];
        free (stage->outs);
        stage->outs = NULL;
        stage->nouts = stage->nins = 0;
    }
    for (size_t k = 0; k < stages->nlinks && !rc; k++) {
        const weir__link *l = &stages->links[k];
        size_t from, to;
        if ((rc = s_ends (stages, l, &from, &to, err)))
            break;
        weir__stage *a = stages->items[from], *b = stages->items[to];
        weir__edge *outs = realloc (a->outs, (a->nouts + 1) * sizeof *outs);
        if (!outs)
            return weir__err_set (err, WEIR_ENOMEM, "out of memory");
        a->outs = outs;
        memset (&outs[a->nouts], 0, sizeof outs[0]);
        outs[a->nouts].to = b;
        outs[a->nouts].offset = s_where (l);
        outs[a->nouts].port = l->from_port;
        a->nouts++;
        b->nins++;
    }
    return rc ? rc : s_acyclic (stages, err);
}

//  The ports of STAGE, comma-separated, into OUT
static void s_port_list (const weir__stage *stage, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t p = 0; p < stage->nports && used < size; p++)
        used += (size_t) snprintf (out + used, size - used, "%s%s.%s", p ? ", " : "", weir__stage_title (stage),
                                   stage->ports[p]);
}

//  Edge E of STAGE names no port its element has
static int s_no_such_port (const weir__stage *stage, const weir__edge *e, weir__err *err)
{
    const char *title = weir__stage_title (stage);
    if (!stage->nports)
        return weir__stage_error (stage, err, WEIR_ESTRUCTURE, e->offset,
                                  "'%s.%s': '%s' (%s) has no output named '%s'; its branches start from '%s.'",
                                  title, e->port, title, stage->name, e->port, title);
    const char *best = NULL;
    size_t distance = 0;
    for (size_t p = 0; p < stage->nports; p++)
        weir__suggest_consider (e->port, stage->ports[p], &best, &distance);
    char list[600], hint[200] = "";
    s_port_list (stage, list, sizeof list);
    if (best)
        snprintf (hint, sizeof hint, "did you mean '%s.%s'? ", title, best);
    return weir__stage_error (stage, err, WEIR_ESTRUCTURE, e->offset,
                              "'%s.%s': '%s' (%s) has no output named '%s'; %sits outputs: %s", title, e->port,
                              title, stage->name, e->port, hint, list);
}

//  A stage with named outputs: each of its links starts from one of its
//  ports (given by name), each port has exactly one, and its links go in
//  port order.  A stage without: no link names a port.
static int s_check_ports (weir__stage *stage, weir__err *err)
{
    const char *title = weir__stage_title (stage);
    for (size_t k = 0; k < stage->nouts; k++) {
        weir__edge *e = &stage->outs[k];
        e->port_index = 0;
        if (!e->port && stage->nports) {
            char list[600];
            s_port_list (stage, list, sizeof list);
            return weir__stage_error (stage, err, WEIR_ESTRUCTURE, e->offset,
                                      "'%s' (%s) sends to named outputs, and this link names none: start "
                                      "each branch from one, as in '%s.%s ! ...' (its outputs: %s)",
                                      title, stage->name, title, stage->ports[0], list);
        }
        if (!e->port)
            continue;
        size_t p = 0;
        while (p < stage->nports && strcmp (stage->ports[p], e->port))
            p++;
        if (p == stage->nports)
            return s_no_such_port (stage, e, err);
        for (size_t j = 0; j < k; j++)
            if (stage->outs[j].port_index == p)
                return weir__stage_error (
                    stage, err, WEIR_ESTRUCTURE, e->offset,
                    "'%s.%s' starts 2 branches, and an output feeds one; to send its records down each, "
                    "put a tee after it: '%s.%s ! tee name=t  t. ! ...  t. ! ...'",
                    title, e->port, title, e->port);
        e->port_index = (unsigned) p;
    }
    if (stage->nports && stage->nouts < stage->nports)
        for (size_t p = 0; p < stage->nports; p++) {
            size_t k = 0;
            while (k < stage->nouts && stage->outs[k].port_index != p)
                k++;
            if (k == stage->nouts)
                return weir__stage_error (stage, err, WEIR_ESTRUCTURE, stage->label_offset,
                                          "'%s.%s' goes nowhere: '%s' (%s) sends records there; link it, as in "
                                          "'%s.%s ! null' to drop them",
                                          title, stage->ports[p], title, stage->name, title, stage->ports[p]);
        }
    //  In port order, so that a worker's batch for port i goes down outs[i]
    for (size_t a = 1; a < stage->nouts; a++)
        for (size_t b = a; b > 0 && stage->outs[b - 1].port_index > stage->outs[b].port_index; b--) {
            weir__edge t = stage->outs[b];
            stage->outs[b] = stage->outs[b - 1];
            stage->outs[b - 1] = t;
        }
    return 0;
}

//  A tee whose one input is the one output of a stage without ports runs
//  in that stage's threads: a thread and a queue fewer, every batch sent
//  straight down the tee's links (its buffer shared).  Anything else
//  keeps its tee: one fed by several links (a merge) needs its queue to
//  count their barriers.
static void s_host_tees (const weir__stages *stages)
{
    for (size_t i = 0; i < stages->count; i++)
        stages->items[i]->host = NULL;
    for (size_t i = 0; i < stages->count; i++) {
        weir__stage *from = stages->items[i];
        weir__stage *to = from->nouts == 1 ? from->outs[0].to : NULL;
        //  Not when a link from the tee is keyed: its records are split by
        //  key, which the host's send does not do (lib/shuffle.h)
        int keyed = 0;
        for (size_t k = 0; to && k < to->nouts; k++)
            keyed |= to->outs[k].to->key != NULL;
        if (to && to->fans_out && !to->nports && to->nins == 1 && !from->fans_out && !from->nports && !keyed)
            to->host = from;
    }
}

//  The CPUs this process may run on (its affinity: taskset, a cgroup's
//  cpuset), or those online
static unsigned s_cpus (void)
{
    cpu_set_t set;
    if (sched_getaffinity (0, sizeof set, &set) == 0 && CPU_COUNT (&set) > 0)
        return (unsigned) CPU_COUNT (&set);
    long n = sysconf (_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned) n : 1;
}

//  Why processor TO cannot run in the threads of FROM, the stage feeding
//  it, or NULL when it can: the reader's threads hand it their batches as
//  they fill them, so it must have their number of threads (a reader
//  feeds one stage: weir__graph_check); it must not need a queue
//  (several inputs, a key, a tee's or identity's forwarding of whole
//  batches)
static const char *s_unfusable (const weir__stage *from, const weir__stage *to)
{
    if (to->nins != 1)
        return "it has several inputs";
    if (from->kind != WEIR_ELEMENT_READER)
        return "the stage feeding it is not a reader";
    if (to->key)
        return "its input is partitioned by key= (each key to one of its threads)";
    if (to->fans_out)
        return "a tee forwards whole batches";
    if (to->callbacks && weir__callbacks_passthrough (to->callbacks))
        return "it forwards whole batches";
    if (to->threads != from->threads)
        return "its threads= differs from its reader's";
    return NULL;
}

//  Each processor with fuse=1, or fuse=auto when its reader's threads and
//  its own outnumber the CPUs (two threads would then take turns on a
//  core, handing batches over for nothing), runs in its reader's threads
//  (pipeline/fuse.h).  fuse=1 where it cannot is refused, saying why.
static int s_fuse (const weir__stages *stages, weir__err *err)
{
    unsigned cpus = 0;
    for (size_t i = 0; i < stages->count; i++)
        stages->items[i]->runs_in = NULL;
    for (size_t i = 0; i < stages->count; i++) {
        weir__stage *from = stages->items[i];
        for (size_t k = 0; k < from->nouts; k++) {
            weir__stage *to = from->outs[k].to;
            if (to->kind != WEIR_ELEMENT_PROCESSOR || to->fuse == 0)
                continue;
            const char *why = s_unfusable (from, to);
            if (why && to->fuse == 1) {
                weir__prop *fuse = weir__stage_prop (to, "fuse");
                return weir__stage_error (to, err, WEIR_EPROPERTY, fuse ? fuse->key_offset : -1,
                                          "%s: fuse=1: it cannot run in the threads of '%s': %s",
                                          weir__stage_title (to), weir__stage_title (from), why);
            }
            if (why)
                continue;
            if (to->fuse < 0 && !cpus)
                cpus = s_cpus ();
            if (to->fuse == 1 || from->threads + to->threads > cpus)
                to->runs_in = from;
        }
    }
    return 0;
}

int weir__graph_check (const weir__stages *stages, weir__err *err)
{
    s_host_tees (stages);
    for (size_t i = 0; i < stages->count; i++) {
        weir__stage *stage = stages->items[i];
        int rc = s_check_ports (stage, err);
        if (rc)
            return rc;
        if (stage->nouts > 1 && !stage->fans_out && !stage->nports) {
            const char *title = weir__stage_title (stage);
            return weir__stage_error (
                stage, err, WEIR_ESTRUCTURE, stage->outs[1].offset,
                "'%s' sends its records on to one element, and %zu branches start from it; to send every "
                "record down each, put a tee after it: '%s ! tee name=t  t. ! ...  t. ! ...'",
                title, stage->nouts, stage->name);
        }
    }
    return s_fuse (stages, err);
}

int weir__graph_is_line (const weir__stages *stages)
{
    for (size_t i = 0; i < stages->count; i++) {
        const weir__stage *stage = stages->items[i];
        size_t want = i + 1 < stages->count;
        if (stage->nouts != want || (want && (stage->outs[0].to != stages->items[i + 1] || stage->outs[0].port)))
            return 0;
    }
    return 1;
}

size_t weir__graph_shape (const weir__stages *stages, char *out, size_t size)
{
    size_t used = 0;
    if (size)
        out[0] = '\0';
    if (weir__graph_is_line (stages))
        return 0;
    used += (size_t) snprintf (out, size, " ; links");
    for (size_t i = 0; i < stages->count; i++) {
        const weir__stage *stage = stages->items[i];
        for (size_t e = 0; e < stage->nouts; e++)
            used += (size_t) snprintf (used < size ? out + used : NULL, used < size ? size - used : 0,
                                       " %zu%s%s>%zu", i, stage->outs[e].port ? "." : "",
                                       stage->outs[e].port ? stage->outs[e].port : "", stage->outs[e].to->index);
    }
    return used;
}

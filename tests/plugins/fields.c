/*  tests/plugins/fields.c - weir_field and weir_emit_edited, as a plugin
    author uses them.

    get=PATH emits the value at PATH of each record (and drops a record
    that has none, counting it in the metric "absent"); otherwise the
    record, a map, is emitted with set=KEY=VALUE (a str value) set and
    remove=KEY removed, and with copy=PATH its value at PATH set as the
    field "copied" too.  */
#include <stdlib.h>
#include <string.h>
#include <weir/plugin.h>

typedef struct {
    const char *get, *copy, *remove;
    char *set_key;
    msgpack_object set_value;
} fields_state;

static int fields_open (weir_stage *st, void **state)
{
    fields_state *self = calloc (1, sizeof *self);
    if (!self)
        return weir_fail (st, "out of memory");
    self->get = weir_prop (st, "get", NULL);
    self->copy = weir_prop (st, "copy", NULL);
    self->remove = weir_prop (st, "remove", NULL);
    const char *set = weir_prop (st, "set", NULL);
    const msgpack_object *ignored;
    msgpack_object nil = {.type = MSGPACK_OBJECT_NIL};
    //  A malformed path is refused before any record
    if ((self->get && weir_field (&nil, self->get, &ignored) == WEIR_EINVAL)
        || (self->copy && weir_field (&nil, self->copy, &ignored) == WEIR_EINVAL)) {
        free (self);
        return weir_fail (st, "a path is malformed");
    }
    if (set) {
        const char *eq = strchr (set, '=');
        if (!eq || !(self->set_key = strndup (set, (size_t) (eq - set)))) {
            free (self);
            return weir_fail (st, "set= takes KEY=VALUE");
        }
        self->set_value.type = MSGPACK_OBJECT_STR;
        self->set_value.via.str.ptr = eq + 1;
        self->set_value.via.str.size = (uint32_t) strlen (eq + 1);
    }
    *state = self;
    return 0;
}

static void fields_close (weir_stage *st, void *state)
{
    (void) st;
    fields_state *self = state;
    free (self->set_key);
    free (self);
}

static int fields_process (weir_stage *st, void *tstate, const msgpack_object *rec)
{
    const fields_state *self = tstate;
    const msgpack_object *v;
    if (self->get) {
        if (weir_field (rec, self->get, &v) == 0)
            return weir_emit (st, v);
        weir_metric_add (st, "absent", 1);
        return 0;
    }
    weir_field_edit edits[3];
    size_t n = 0;
    if (self->set_key)
        edits[n++] = (weir_field_edit) {self->set_key, &self->set_value};
    if (self->remove)
        edits[n++] = (weir_field_edit) {self->remove, NULL};
    if (self->copy && weir_field (rec, self->copy, &v) == 0)
        edits[n++] = (weir_field_edit) {"copied", v};
    return weir_emit_edited (st, rec, edits, n);
}

static const weir_property_info fields_props[] = {
    {"get", "", "emit the value at this path of each record"},
    {"set", "", "KEY=VALUE: set the str field KEY"},
    {"remove", "", "remove the field KEY"},
    {"copy", "", "set the field 'copied' to the value at this path"},
    {NULL, NULL, NULL},
};

static const weir_processor fields = {
    WEIR_PROCESSOR_INIT,
    .name = "fields",
    .description = "gets, sets, removes and copies fields of map records",
    .open = fields_open,
    .process = fields_process,
    .close = fields_close,
    .props = fields_props,
};

const weir_processor *weir_plugin_processor (void)
{
    return &fields;
}

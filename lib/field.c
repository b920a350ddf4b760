/*  lib/field.c - values inside a record, by path: weir_field of
    <weir/plugin.h>.

    The path is walked as it is read, one step at a time: no compiled
    form, as a plugin's path is a few bytes and the record's maps are
    small.  The whole path is checked even when the value is found absent
    early, so that a malformed path is an error on every record, not only
    on those that reach the bad step.  */
#include "config.h"

#include <string.h>
#include <weir/plugin.h>

#include "lib/fieldpath.h"

int weir_field (const msgpack_object *rec, const char *path, const msgpack_object **out)
{
    *out = NULL;
    if (!rec || !path || !*path)
        return WEIR_EINVAL;
    const char *p = path;
    if (p[0] == '.' && p[1] == '\0') {
        *out = rec;
        return 0;
    }
    const msgpack_object *at = rec;
    while (*p) {
        weir__step s;
        if (weir__step_read (&p, &s))
            return WEIR_EINVAL;
        if (at)  //  absent already: the rest is only checked
            at = weir__step_take (&s, at);
    }
    if (!at)
        return 1;
    *out = at;
    return 0;
}

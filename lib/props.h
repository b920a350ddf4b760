/*  lib/props.h - an element's key=value properties.

    Each property remembers where it stood in the description, so that an
    error about it can point there with a caret, and whether anything read
    it, so that a property nobody reads (a typo) can be reported.  */
#ifndef WEIR_PROPS_H_INCLUDED
#define WEIR_PROPS_H_INCLUDED

#include <stdatomic.h>
#include <stdint.h>

#include "lib/error.h"
#include "lib/number.h"

typedef struct weir__prop {
    char *key;
    char *value;
    long key_offset;  //  in the description, -1 when built in code
    long value_offset;
    int quoted;       //  the value was written in quotes: its text starts a byte after value_offset
    atomic_int used;  //  read by someone (atomic: processor threads mark it)
} weir__prop;

typedef struct weir__props {
    weir__prop *items;
    size_t count;
} weir__props;

void weir__props_init (weir__props *self);
void weir__props_release (weir__props *self);

/*  Append a copy of KEY and VALUE.  0 or WEIR_ENOMEM.  */
int weir__props_add (weir__props *self, const char *key, const char *value, long key_offset,
                     long value_offset);

/*  Append "key=value" text; WEIR_EPROPERTY when it has no '=' or no key.  */
int weir__props_add_text (weir__props *self, const char *text, weir__err *err);

/*  The property KEY or NULL; marks it used.  */
weir__prop *weir__props_find (weir__props *self, const char *key);

/*  Its value or FALLBACK; marks it used.  */
const char *weir__props_get (weir__props *self, const char *key, const char *fallback);

/*  Read KEY as an integer in [MIN, MAX] (FALLBACK when absent).  Accepts a
    k, M or G suffix (thousand, million, billion).  An error names the
    element, the property and the value, and points at the value.  */
int weir__props_int (weir__props *self, const char *element, const char *key, int64_t fallback, int64_t min,
                     int64_t max, int64_t *out, weir__err *err);

/*  Refuse a property that is in neither of the NULL-terminated tables
    KNOWN and COMMON: WEIR_EPROPERTY naming it, the element, and the known
    names.  */
int weir__props_check (const weir__props *self, const char *element, const weir_property_info *known,
                       const weir_property_info *common, weir__err *err);

#endif

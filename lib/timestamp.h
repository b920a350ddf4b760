/*  lib/timestamp.h - instants and durations as people write them, in
    milliseconds since 1970-01-01T00:00:00Z: event times of RFC 3339
    ("2026-11-27T17:55:55.250+01:00") or epoch seconds, and durations
    such as 60s, 5m or 250ms (window=, lateness=).

    Milliseconds, signed 64 bits, cover every year an RFC 3339 date can
    name; finer digits of a fraction are dropped (rounded down), as a
    window needs no more.  */
#ifndef WEIR_TIMESTAMP_H_INCLUDED
#define WEIR_TIMESTAMP_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

/*  The instant an RFC 3339 date-time of LEN bytes at TEXT names: 0 and
    *MS, or -1 when it is not one (a date alone, no offset, a field out
    of range such as month 13 or 25:00).  Lower-case t and z, and a
    blank for the T, are taken, as RFC 3339 allows.  */
int weir__timestamp_parse (const char *text, size_t len, int64_t *ms);

/*  The instant of SECONDS since the epoch (a float's fraction rounded
    to the microsecond, then down to the millisecond): 0 and *MS, or -1
    when it is NaN or out of range.  */
int weir__timestamp_of_seconds (double seconds, int64_t *ms);

/*  MS as RFC 3339 in UTC, "2026-11-27T17:55:00Z", with ".250" before
    the Z when it is not a whole second, into OUT of SIZE bytes (32 are
    always enough).  The length written.  */
size_t weir__timestamp_format (int64_t ms, char *out, size_t size);

/*  A duration: a positive number and a unit, ms, s, m, h or d ("60s",
    "1.5h", "250ms"), into *MS: 0, or -1 when it is no duration or not a
    whole positive number of milliseconds below 1000 years.  */
int weir__duration_parse (const char *text, int64_t *ms);

#endif

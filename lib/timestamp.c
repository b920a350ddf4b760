/*  lib/timestamp.c - RFC 3339 instants, epoch seconds and durations.  */
#include "config.h"
#include "lib/timestamp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_DAY_MS 86400000LL

//  Days from 1970-01-01 to year Y, month M (1..12), day D of the
//  proleptic Gregorian calendar.  Counted in eras of 400 years (146,097
//  days), which repeat exactly, from a year that starts in March so that
//  the leap day is the last of its year
static int64_t s_days_from_civil (int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;                                    //  0..399
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;  //  0..365
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;            //  0..146096
    return era * 146097 + doe - 719468;
}

//  The other way round: the year, month and day of day Z since 1970
static void s_civil_from_days (int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int) (doy - (153 * mp + 2) / 5 + 1);
    *m = (int) (mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static int s_leap (int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

//  N decimal digits at *P into *OUT, moving *P past them; -1 when fewer
static int s_digits (const char **p, const char *end, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++, (*p)++) {
        if (*p >= end || **p < '0' || **p > '9')
            return -1;
        v = v * 10 + (**p - '0');
    }
    *out = v;
    return 0;
}

static int s_expect (const char **p, const char *end, const char *one_of)
{
    if (*p >= end || !strchr (one_of, **p) || !**p)
        return -1;
    (*p)++;
    return 0;
}

int weir__timestamp_parse (const char *text, size_t len, int64_t *ms)
{
    static const int days_in[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const char *p = text, *end = text + len;
    int year, month, day, hour, minute, second;
    if (s_digits (&p, end, 4, &year) || s_expect (&p, end, "-") || s_digits (&p, end, 2, &month)
        || s_expect (&p, end, "-") || s_digits (&p, end, 2, &day) || s_expect (&p, end, "Tt ")
        || s_digits (&p, end, 2, &hour) || s_expect (&p, end, ":") || s_digits (&p, end, 2, &minute)
        || s_expect (&p, end, ":") || s_digits (&p, end, 2, &second))
        return -1;
    if (month < 1 || month > 12 || day < 1 || day > days_in[month - 1] + (month == 2 && s_leap (year))
        || hour > 23 || minute > 59 || second > 60)  //  60: a leap second, taken as the next one's start
        return -1;
    int64_t frac = 0;
    if (p < end && *p == '.') {
        p++;
        const char *digits = p;
        for (int scale = 100; p < end && *p >= '0' && *p <= '9'; p++, scale /= 10)
            frac += (*p - '0') * scale;
        if (p == digits)
            return -1;
    }
    int64_t offset = 0;
    if (p < end && (*p == 'Z' || *p == 'z'))
        p++;
    else if (p < end && (*p == '+' || *p == '-')) {
        int sign = *p++ == '-' ? -1 : 1, oh, om;
        if (s_digits (&p, end, 2, &oh) || s_expect (&p, end, ":") || s_digits (&p, end, 2, &om) || oh > 23
            || om > 59)
            return -1;
        offset = sign * (oh * 60 + om) * 60000LL;
    }
    else
        return -1;
    if (p != end)
        return -1;
    *ms = s_days_from_civil (year, month, day) * S_DAY_MS + ((hour * 60 + minute) * 60 + second) * 1000LL
          + frac - offset;
    return 0;
}

int weir__timestamp_of_seconds (double seconds, int64_t *ms)
{
    //  Years 0000 to 9999, what RFC 3339 can name, and a margin
    if (isnan (seconds) || fabs (seconds) > 4e11)
        return -1;
    //  To the microsecond first: 1795802400.123 is a hair below its
    //  decimal as a double, and is meant as 123 ms, not 122
    int64_t us = llround (seconds * 1e6);
    *ms = us >= 0 ? us / 1000 : -((-us + 999) / 1000);
    return 0;
}

size_t weir__timestamp_format (int64_t ms, char *out, size_t size)
{
    int64_t days = ms >= 0 ? ms / S_DAY_MS : -((-ms + S_DAY_MS - 1) / S_DAY_MS);
    int64_t in_day = ms - days * S_DAY_MS, y;
    int m, d;
    s_civil_from_days (days, &y, &m, &d);
    int64_t s = in_day / 1000;
    int n = snprintf (out, size, "%04lld-%02d-%02dT%02d:%02d:%02d", (long long) y, m, d, (int) (s / 3600),
                      (int) (s / 60 % 60), (int) (s % 60));
    if (n >= 0 && (size_t) n < size && in_day % 1000)
        n += snprintf (out + n, size - (size_t) n, ".%03d", (int) (in_day % 1000));
    if (n >= 0 && (size_t) n < size)
        n += snprintf (out + n, size - (size_t) n, "Z");
    return n < 0 ? 0 : (size_t) n < size ? (size_t) n : size - 1;
}

int weir__duration_parse (const char *text, int64_t *ms)
{
    char *unit;
    if (!text || !(*text >= '0' && *text <= '9'))
        return -1;
    double v = strtod (text, &unit);
    static const struct {
        const char *name;
        double ms;
    } units[] = {{"ms", 1}, {"s", 1e3}, {"m", 6e4}, {"h", 3.6e6}, {"d", 8.64e7}};
    for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
        if (strcmp (unit, units[i].name))
            continue;
        double total = v * units[i].ms;
        if (!(total >= 1 && total < 3.2e13) || total != floor (total))
            return -1;
        *ms = (int64_t) total;
        return 0;
    }
    return -1;
}

/*  lib/error.c - the error table and message helpers.  */
#include "config.h"
#include "lib/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const struct {
    int code;
    const char *text;
} s_errors[] = {
    {WEIR_OK, "success"},
    {WEIR_ENOMEM, "out of memory"},
    {WEIR_ESYNTAX, "malformed pipeline description"},
    {WEIR_EUNKNOWN, "unknown element"},
    {WEIR_EPROPERTY, "unknown or invalid property"},
    {WEIR_ESTRUCTURE, "stages in an impossible order"},
    {WEIR_EIO, "input/output error"},
    {WEIR_ECORRUPT, "corrupt input"},
    {WEIR_EPROCESSOR, "processor failed"},
    {WEIR_ESYSTEM, "system failure"},
    {WEIR_ESTATE, "call not allowed in this state"},
    {WEIR_EPLUGIN, "plugin cannot be loaded"},
};

const char *weir_strerror (int code)
{
    for (size_t i = 0; i < sizeof s_errors / sizeof s_errors[0]; i++)
        if (s_errors[i].code == code)
            return s_errors[i].text;
    return "unknown error code";
}

int weir_is_usage_error (int code)
{
    return code == WEIR_ESYNTAX || code == WEIR_EUNKNOWN || code == WEIR_EPROPERTY
           || code == WEIR_ESTRUCTURE;
}

const char *weir_version (void)
{
    return WEIR_VERSION_STRING;
}

void weir__err_init (weir__err *e)
{
    e->code = 0;
    e->offset = -1;
    e->msg[0] = '\0';
}

int weir__err_set (weir__err *e, int code, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (e->msg, sizeof e->msg, fmt, ap);
    va_end (ap);
    e->code = code;
    e->offset = -1;
    return code;
}

int weir__err_at (weir__err *e, int code, long offset, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (e->msg, sizeof e->msg, fmt, ap);
    va_end (ap);
    e->code = code;
    e->offset = offset;
    return code;
}

void weir__err_prefix (weir__err *e, const char *fmt, ...)
{
    char head[512], rest[sizeof e->msg];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (head, sizeof head, fmt, ap);
    va_end (ap);
    memcpy (rest, e->msg, sizeof rest);
    //  Truncate explicitly: a long message loses its tail, never its head
    size_t n = strlen (head), m = strlen (rest);
    if (n > sizeof e->msg - 1)
        n = sizeof e->msg - 1;
    if (m > sizeof e->msg - 1 - n)
        m = sizeof e->msg - 1 - n;
    memcpy (e->msg, head, n);
    memcpy (e->msg + n, rest, m);
    e->msg[n + m] = '\0';
}

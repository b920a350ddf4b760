/*  lib/error.c - the error table and message helpers.  */
#include "config.h"
#include "lib/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

//  The one table of error codes: each with its name and its words
#define S_ERROR(code, text)                                                                                  \
    {                                                                                                        \
        code, #code, text                                                                                    \
    }
static const struct {
    int code;
    const char *name;
    const char *text;
} s_errors[] = {
    S_ERROR (WEIR_OK, "success"),
    S_ERROR (WEIR_ENOMEM, "out of memory"),
    S_ERROR (WEIR_ESYNTAX, "malformed pipeline description"),
    S_ERROR (WEIR_EUNKNOWN, "unknown element"),
    S_ERROR (WEIR_EPROPERTY, "unknown or invalid property"),
    S_ERROR (WEIR_ESTRUCTURE, "stages in an impossible order"),
    S_ERROR (WEIR_EIO, "input/output error"),
    S_ERROR (WEIR_ECORRUPT, "corrupt input"),
    S_ERROR (WEIR_EPROCESSOR, "processor failed"),
    S_ERROR (WEIR_ESYSTEM, "system failure"),
    S_ERROR (WEIR_ESTATE, "call not allowed in this state"),
    S_ERROR (WEIR_EPLUGIN, "plugin cannot be loaded"),
    S_ERROR (WEIR_EINVAL, "invalid argument"),
    S_ERROR (WEIR_EABORTED, "aborted without a new checkpoint"),
};

const char *weir_strerror (int code)
{
    for (size_t i = 0; i < sizeof s_errors / sizeof s_errors[0]; i++)
        if (s_errors[i].code == code)
            return s_errors[i].text;
    return "unknown error code";
}

const char *weir_error_name (int code)
{
    for (size_t i = 0; i < sizeof s_errors / sizeof s_errors[0]; i++)
        if (s_errors[i].code == code)
            return s_errors[i].name;
    return "WEIR_E?";
}

int weir_is_usage_error (int code)
{
    return code == WEIR_ESYNTAX || code == WEIR_EUNKNOWN || code == WEIR_EPROPERTY || code == WEIR_ESTRUCTURE;
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

int weir__err_vset (weir__err *e, int code, const char *fmt, va_list ap)
{
    vsnprintf (e->msg, sizeof e->msg, fmt, ap);
    e->code = code;
    e->offset = -1;
    return code;
}

int weir__err_set (weir__err *e, int code, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    weir__err_vset (e, code, fmt, ap);
    va_end (ap);
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

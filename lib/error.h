/*  lib/error.h - carrying an error code and its human message out of the
    library.  Library code never prints: it fills a weir__err and returns
    the code; the command decides what to show.  */
#ifndef WEIR_ERROR_H_INCLUDED
#define WEIR_ERROR_H_INCLUDED

#include <stdarg.h>
#include <weir/weir.h>

typedef struct weir__err {
    int code;    /*  0 or a WEIR_E* code  */
    long offset; /*  offset into the description, or -1  */
    char msg[1024];
} weir__err;

void weir__err_init (weir__err *e);

/*  Set code and message (printf-style); return CODE so callers can write
    return weir__err_set (err, WEIR_EIO, "...");  */
int weir__err_set (weir__err *e, int code, const char *fmt, ...) WEIR_PRINTF (3, 4);

/*  weir__err_set with the arguments in AP.  */
int weir__err_vset (weir__err *e, int code, const char *fmt, va_list ap) WEIR_PRINTF (3, 0);

/*  Like weir__err_set, pointing at OFFSET in the description.  */
int weir__err_at (weir__err *e, int code, long offset, const char *fmt, ...) WEIR_PRINTF (4, 5);

/*  Put PREFIX (printf-style) in front of the message already in E.  */
void weir__err_prefix (weir__err *e, const char *fmt, ...) WEIR_PRINTF (2, 3);

#endif

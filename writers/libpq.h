/*  writers/libpq.h - PostgreSQL's client library, loaded when a writer
    needs it.

    libpq is opened with dlopen the first time a postgres writer opens,
    not linked: through Kerberos and LDAP it brings GnuTLS and p11-kit into
    the process, whose threads and memory every job would carry (and under
    which LeakSanitizer's stop of the world crashes, as it did with
    libmicrohttpd), for a writer most jobs never use.  The functions keep
    libpq's names and types (libpq-fe.h), reached through the table.  */
#ifndef WEIR_LIBPQ_H_INCLUDED
#define WEIR_LIBPQ_H_INCLUDED

#include <libpq-fe.h>

#include "lib/error.h"

typedef struct weir__libpq {
    PGconn *(*PQconnectdb) (const char *conninfo);
    ConnStatusType (*PQstatus) (const PGconn *conn);
    char *(*PQerrorMessage) (const PGconn *conn);
    void (*PQfinish) (PGconn *conn);
    char *(*PQdb) (const PGconn *conn);
    char *(*PQhost) (const PGconn *conn);
    char *(*PQport) (const PGconn *conn);
    PGresult *(*PQexec) (PGconn *conn, const char *query);
    PGresult *(*PQexecParams) (PGconn *conn, const char *command, int nParams, const Oid *paramTypes,
                               const char *const *paramValues, const int *paramLengths,
                               const int *paramFormats, int resultFormat);
    ExecStatusType (*PQresultStatus) (const PGresult *res);
    char *(*PQresultErrorField) (const PGresult *res, int fieldcode);
    char *(*PQresultErrorMessage) (const PGresult *res);
    void (*PQclear) (PGresult *res);
    int (*PQntuples) (const PGresult *res);
    char *(*PQgetvalue) (const PGresult *res, int tup_num, int field_num);
    int (*PQputCopyData) (PGconn *conn, const char *buffer, int nbytes);
    int (*PQputCopyEnd) (PGconn *conn, const char *errormsg);
    PGresult *(*PQgetResult) (PGconn *conn);
    char *(*PQescapeIdentifier) (PGconn *conn, const char *str, size_t len);
    void (*PQfreemem) (void *ptr);
    PQnoticeProcessor (*PQsetNoticeProcessor) (PGconn *conn, PQnoticeProcessor proc, void *arg);
} weir__libpq;

/*  The library's functions, loaded once (thread-safe): 0 and *OUT, or
    WEIR_ESYSTEM saying what could not be loaded.  */
int weir__libpq_get (const weir__libpq **out, weir__err *err);

#endif

/*  writers/libpq.c - PostgreSQL's client library, loaded on first use.  */
#include "config.h"
#include "writers/libpq.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static weir__libpq s_pq;
static pthread_once_t s_once = PTHREAD_ONCE_INIT;
static char s_why[512];  //  why it could not load; "" when it did

//  POSIX's way from a void pointer to a function pointer
#define S_LOAD(lib, name)                                                                                    \
    do {                                                                                                     \
        *(void **) &s_pq.name = dlsym (lib, #name);                                                          \
        if (!s_pq.name && !*s_why)                                                                           \
            snprintf (s_why, sizeof s_why, "libpq lacks %s, which weir calls", #name);                       \
    } while (0)

static void s_load (void)
{
    void *lib = dlopen ("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        lib = dlopen ("libpq.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror ();
        snprintf (s_why, sizeof s_why, "cannot load libpq, PostgreSQL's client library (Debian: libpq5): %s",
                  why ? why : "not found");
        return;
    }
    S_LOAD (lib, PQconnectdb);
    S_LOAD (lib, PQstatus);
    S_LOAD (lib, PQerrorMessage);
    S_LOAD (lib, PQfinish);
    S_LOAD (lib, PQdb);
    S_LOAD (lib, PQhost);
    S_LOAD (lib, PQport);
    S_LOAD (lib, PQexec);
    S_LOAD (lib, PQexecParams);
    S_LOAD (lib, PQresultStatus);
    S_LOAD (lib, PQresultErrorField);
    S_LOAD (lib, PQresultErrorMessage);
    S_LOAD (lib, PQclear);
    S_LOAD (lib, PQntuples);
    S_LOAD (lib, PQgetvalue);
    S_LOAD (lib, PQputCopyData);
    S_LOAD (lib, PQputCopyEnd);
    S_LOAD (lib, PQgetResult);
    S_LOAD (lib, PQescapeIdentifier);
    S_LOAD (lib, PQfreemem);
    S_LOAD (lib, PQsetNoticeProcessor);
}

int weir__libpq_get (const weir__libpq **out, weir__err *err)
{
    pthread_once (&s_once, s_load);
    if (*s_why)
        return weir__err_set (err, WEIR_ESYSTEM, "postgres: %s", s_why);
    *out = &s_pq;
    return 0;
}

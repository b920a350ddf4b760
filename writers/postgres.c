/*  writers/postgres.c - records into a PostgreSQL table, exactly once.

    Every record is a map whose keys name columns; it becomes one row.
    Each writer thread has its own connection and sends its rows with COPY
    (text format), in one transaction per epoch.

    Exactly once (mode=copy, the default, with checkpoints) is two-phase
    commit with the epoch (as Flink's two-phase sinks do).  At the epoch's
    barrier each thread ends its COPY and prepares its transaction
    (PREPARE TRANSACTION 'weir:ID:N:T': the job's writer ID, drawn at its
    fresh start; N, the commit it belongs to; T, the thread).  The commit
    returns "id:ID commit:N", which the checkpoint records: the checkpoint's
    synced write is the commit point.  Once it is written (settle), the
    prepared transactions up to N are committed, from a connection of
    their own.  A resume from a checkpoint that says commit N commits the
    job's prepared transactions up to N and rolls back those after: a
    crash before the checkpoint loses its epoch's rows to the resume,
    which writes them again; a crash after it leaves them to be committed.

    mode=upsert conflict=COLUMNS needs no prepared transactions: each epoch's
    rows are copied into a temporary table and merged with INSERT ... ON
    CONFLICT (key) DO UPDATE, committed at the barrier; rows written again
    by a resume overwrite themselves.  Within one batch of merged rows the
    last of a key wins.

    Without checkpoints a job that may end (a batch job) keeps one
    transaction per thread open to the end and commits them when it
    succeeds, so that a failed job leaves the table as it was (as the file
    writers keep the old file); a job without end commits at every epoch.

    Which column a map's key names is decided at open, from the table's
    catalog: the columns written are columns= or else every column without
    a default (serial, identity, DEFAULT now()) or generated.  With map=
    (COLUMN=PATH, ...) the columns written are the map's instead, each
    value taken from its path into the record ('.user.id', '.tags[0]', '.'
    for the whole record), NULL when the path leads nowhere; the record
    may then be anything, and what the paths do not reach is not written.  A value is
    checked against its column's kind (number, boolean, text, json, bytea,
    array) and sent as text; what the server refuses beyond that (a date it
    cannot read, a NOT NULL column left out) fails the epoch's COPY with
    the server's message, which names the column and the row.  */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <weir/plugin.h>

#include "lib/batch.h"
#include "lib/buf.h"
#include "lib/decimal.h"
#include "lib/fieldpath.h"
#include "lib/jsontext.h"
#include "lib/killpoint.h"
#include "writers/libpq.h"
#include "writers/writer.h"

#define S_SEND_AT (256 * 1024)  //  COPY bytes buffered before they go
#define S_SHOW 160              //  bytes of a record's JSON text an error shows
#define S_TEMP "weir_rows"      //  mode=upsert's temporary table, per connection

//  What a column takes, and how its values are written
typedef enum { K_TEXT, K_NUMBER, K_BOOL, K_JSON, K_BYTEA, K_ARRAY, K_OTHER } s_kind;

//  map=: a column, and the steps of the path its value comes from (into
//  the map's text; none: the whole record)
typedef struct {
    char *name;
    weir__step *steps;
    size_t nsteps;
} s_mapping;

typedef struct {
    char *name;    //  as the catalog has it
    char *quoted;  //  as an identifier in SQL
    char *type;    //  format_type, for messages
    s_kind kind;
    const s_mapping *from;  //  map=: where its value comes from
} s_column;

typedef struct {
    PGconn *conn;
    int in_tx;      //  BEGIN sent, not ended
    int copying;    //  COPY FROM STDIN under way
    weir__buf out;  //  COPY text not sent yet
    weir__buf scratch;
    weir__records it;
    const msgpack_object **values;  //  per column, the record's (NULL: none)
    uint64_t *pending;              //  the commits of its prepared transactions, not yet committed
    size_t npending, cap;
} s_thread;

typedef struct {
    const weir__libpq *pq;
    char *conninfo;
    char *table;  //  quoted, as the server prints regclass
    char *shown;  //  as the user named it
    s_column *cols;
    size_t ncols;
    char **defaulted;  //  columns with a default or generated, left out
    size_t ndefaulted;
    int upsert;
    int listed;     //  columns= was given
    char *maptext;  //  map=, which the steps point into
    s_mapping *maps;
    size_t nmaps;
    int two_phase;  //  checkpointed mode=copy: prepare, and commit at settle
    int replace;    //  one transaction per thread for the job
    int discarded;
    char *copy_sql, *merge_sql;
    char id[17];
    _Atomic uint64_t commits;
    weir__writer_reject_fn *reject;  //  on-error=skip: where a record the table cannot take goes
    void *reject_arg;
    unsigned threads;
    s_thread *t;
    PGconn *control;  //  commits and rolls back prepared transactions
} s_pg;

static const weir_property_info s_props[] = {
    {"conninfo", "",
     "how to reach the server: a libpq connection string or URI ('host=/run/postgresql dbname=app', "
     "'postgresql://user@host/db'); empty: libpq's defaults and PG* environment variables"},
    {"table", NULL, "the table rows go into (required; schema.table allowed); it must exist"},
    {"columns", "",
     "the columns written, comma-separated (default: every column without a default and not "
     "generated); a record's key outside them is an error"},
    {"mode", "copy",
     "copy: COPY, exactly once by two-phase commit with the checkpoint (the server needs "
     "max_prepared_transactions > 0); upsert: INSERT ... ON CONFLICT (conflict=) DO UPDATE, "
     "exactly once for a table with a unique key, without prepared transactions"},
    {"conflict", "", "mode=upsert: the columns of the table's unique key, comma-separated (ON CONFLICT)"},
    {"map", "",
     "the columns written and where each value comes from, COLUMN=PATH comma-separated "
     "('id=.user.id,at=.ts,raw=.'): a path that leads nowhere writes NULL, and the record may be "
     "anything; instead of columns="},
    {"on-error", "fail",
     "fail: a record the table cannot take (not a map, a key that is no column, a value its column "
     "refuses) fails the job, naming it; skip: it is counted, kept in the dead letter and skipped. What "
     "the server refuses when it reads the rows (a date, NOT NULL) fails the epoch either way"},
    {"dead-letter", "",
     "msgpack file for the records skipped, each with its reason (implies on-error=skip; committed with "
     "each epoch like an output)"},
    {NULL, NULL, NULL},
};

/*  ---------------------------------------------------------------------
    Connections and statements  */

//  The server's words for why RES failed (or CONN, without a result):
//  its message, detail and hint on one line
static const char *s_why (const s_pg *self, PGresult *res, PGconn *conn, char *out, size_t size)
{
    const char *primary = res ? self->pq->PQresultErrorField (res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    if (primary) {
        const char *detail = self->pq->PQresultErrorField (res, PG_DIAG_MESSAGE_DETAIL);
        const char *hint = self->pq->PQresultErrorField (res, PG_DIAG_MESSAGE_HINT);
        snprintf (out, size, "%s%s%s%s%s", primary, detail ? " (" : "", detail ? detail : "",
                  detail ? ")" : "", "");
        if (hint)
            snprintf (out + strlen (out), size - strlen (out), "; %s", hint);
    }
    else {
        const char *msg = res ? self->pq->PQresultErrorMessage (res) : NULL;
        if (!msg || !*msg)
            msg = self->pq->PQerrorMessage (conn);
        snprintf (out, size, "%s", msg && *msg ? msg : "no reason given");
    }
    //  libpq's own messages come on several lines, indented
    char *o = out;
    for (const char *p = out; *p; p++) {
        int space = *p == '\n' || *p == '\t' || *p == ' ';
        if (space && (o == out || o[-1] == ' '))
            continue;
        *o++ = space ? ' ' : *p;
    }
    while (o > out && o[-1] == ' ')
        o--;
    *o = '\0';
    return out;
}

//  Run SQL on CONN: 0, or an error saying WHAT failed and why
static int s_exec (s_pg *self, PGconn *conn, const char *sql, const char *what, weir__err *err)
{
    PGresult *res = self->pq->PQexec (conn, sql);
    ExecStatusType st = res ? self->pq->PQresultStatus (res) : PGRES_FATAL_ERROR;
    int rc = 0;
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        char why[1024];
        rc = weir__err_set (err, WEIR_EIO, "postgres: %s on table %s: %s", what, self->shown,
                            s_why (self, res, conn, why, sizeof why));
    }
    self->pq->PQclear (res);
    return rc;
}

//  The server's notices (a WARNING as it shuts down) are not printed:
//  libpq's default would print them on standard error, and what fails
//  says why through the error it returns
static void s_quiet (void *arg, const char *message)
{
}

static int s_connect (s_pg *self, PGconn **out, weir__err *err)
{
    PGconn *conn = self->pq->PQconnectdb (self->conninfo);
    if (!conn)
        return weir__err_set (err, WEIR_ENOMEM, "postgres: out of memory");
    if (self->pq->PQstatus (conn) != CONNECTION_OK) {
        char why[1024];
        //  Not the conninfo, which may hold a password
        weir__err_set (err, WEIR_EIO, "postgres: cannot connect to the server: %s",
                       s_why (self, NULL, conn, why, sizeof why));
        self->pq->PQfinish (conn);
        return WEIR_EIO;
    }
    *out = conn;
    self->pq->PQsetNoticeProcessor (conn, s_quiet, NULL);
    //  Rows are sent as text in UTF-8, numbers with all their digits
    return s_exec (self, conn,
                   "SET client_encoding = 'UTF8'; SET extra_float_digits = 3; SET DateStyle = 'ISO'",
                   "setting up the session", err);
}

/*  ---------------------------------------------------------------------
    The table's columns  */

static void s_free (s_pg *self)
{
    for (unsigned i = 0; self->t && i < self->threads; i++) {
        s_thread *t = &self->t[i];
        if (t->conn)
            self->pq->PQfinish (t->conn);
        weir__buf_release (&t->out);
        weir__buf_release (&t->scratch);
        weir__records_release (&t->it);
        free (t->values);
        free (t->pending);
    }
    if (self->control)
        self->pq->PQfinish (self->control);
    for (size_t i = 0; i < self->ncols; i++) {
        free (self->cols[i].name);
        free (self->cols[i].quoted);
        free (self->cols[i].type);
    }
    for (size_t i = 0; i < self->ndefaulted; i++)
        free (self->defaulted[i]);
    free (self->defaulted);
    free (self->cols);
    free (self->t);
    free (self->conninfo);
    free (self->table);
    free (self->shown);
    free (self->copy_sql);
    free (self->merge_sql);
    for (size_t i = 0; i < self->nmaps; i++) {
        free (self->maps[i].name);
        free (self->maps[i].steps);
    }
    free (self->maps);
    free (self->maptext);
    free (self);
}

static s_kind s_kind_of (const char *typname, const char *category)
{
    if (!strcmp (typname, "json") || !strcmp (typname, "jsonb"))
        return K_JSON;
    if (!strcmp (typname, "bytea"))
        return K_BYTEA;
    switch (*category) {
    case 'N': return K_NUMBER;
    case 'B': return K_BOOL;
    case 'S': return K_TEXT;
    case 'A': return K_ARRAY;
    default: return K_OTHER;
    }
}

//  The next name of a comma-separated list at *AT, spaces trimmed: its
//  start and *LEN, *AT moved past it; NULL at the list's end
static const char *s_next_name (const char **at, size_t *len)
{
    const char *p = *at;
    if (!p || !*p)
        return NULL;
    while (*p == ' ')
        p++;
    const char *end = strchr (p, ',');
    *len = end ? (size_t) (end - p) : strlen (p);
    while (*len && p[*len - 1] == ' ')
        (*len)--;
    *at = end ? end + 1 : NULL;
    return p;
}

//  Whether NAME is one of the comma-separated LIST
static int s_listed (const char *list, const char *name)
{
    size_t len;
    for (const char *p; (p = s_next_name (&list, &len));)
        if (len == strlen (name) && !strncmp (p, name, len))
            return 1;
    return 0;
}

//  Each name of the comma-separated list of property PROP must be a
//  column of the table, among N rows of RES (column 0 the name)
static int s_check_list (s_pg *self, const weir__prop *prop, PGresult *res, int n, weir__err *err)
{
    const char *list = prop->value, *p;
    size_t len;
    while ((p = s_next_name (&list, &len))) {
        int found = 0;
        for (int r = 0; r < n && !found; r++) {
            const char *name = self->pq->PQgetvalue (res, r, 0);
            found = len && strlen (name) == len && !strncmp (name, p, len);
        }
        if (!found)
            return weir__err_at (err, WEIR_EPROPERTY, prop->value_offset,
                                 "postgres: %s=%s: '%.*s' is no column of table %s", prop->key, prop->value,
                                 (int) len, p, self->shown);
    }
    return 0;
}

static char *s_quote (s_pg *self, const char *name)
{
    char *q = self->pq->PQescapeIdentifier (self->control, name, strlen (name));
    char *copy = q ? strdup (q) : NULL;
    if (q)
        self->pq->PQfreemem (q);
    return copy;
}

//  map=COLUMN=PATH,...: into SELF->maps
static int s_parse_map (s_pg *self, const weir__prop *prop, weir__err *err)
{
    if (!(self->maptext = strdup (prop->value)))
        return weir__err_set (err, WEIR_ENOMEM, "postgres: out of memory");
    const char *p = self->maptext;
    while (*p) {
        while (*p == ' ')
            p++;
        const char *eq = strchr (p, '='), *comma = strchr (p, ',');
        size_t len = eq ? (size_t) (eq - p) : 0;
        while (len && p[len - 1] == ' ')
            len--;
        if (!eq || (comma && comma < eq) || !len)
            return weir__err_at (err, WEIR_EPROPERTY, prop->value_offset,
                                 "postgres: map=%s: '%.*s' is not COLUMN=PATH", prop->value,
                                 (int) (comma ? (size_t) (comma - p) : strlen (p)), p);
        s_mapping *grown = realloc (self->maps, (self->nmaps + 1) * sizeof *grown);
        if (!grown)
            return weir__err_set (err, WEIR_ENOMEM, "postgres: out of memory");
        self->maps = grown;
        s_mapping *m = &self->maps[self->nmaps++];
        memset (m, 0, sizeof *m);
        if (!(m->name = strndup (p, len)))
            return weir__err_set (err, WEIR_ENOMEM, "postgres: out of memory");
        for (size_t i = 0; i + 1 < self->nmaps; i++)
            if (!strcmp (self->maps[i].name, m->name))
                return weir__err_at (err, WEIR_EPROPERTY, prop->value_offset,
                                     "postgres: map=%s: column '%s' is mapped twice", prop->value, m->name);
        const char *q = eq + 1;
        while (*q == ' ')
            q++;
        const char *path = q;
        if (*q == '.' && (q[1] == ',' || q[1] == ' ' || !q[1]))
            q++;  //  the whole record
        else
            while (weir__step_starts (q)) {
                weir__step *steps = realloc (m->steps, (m->nsteps + 1) * sizeof *steps);
                if (!steps)
                    return weir__err_set (err, WEIR_ENOMEM, "postgres: out of memory");
                m->steps = steps;
                if (weir__step_read (&q, &m->steps[m->nsteps]))
                    break;
                m->nsteps++;
            }
        while (*q == ' ')
            q++;
        if (q == path || (*q && *q != ','))
            return weir__err_at (err, WEIR_EPROPERTY, prop->value_offset,
                                 "postgres: map=%s: the path of column '%s' is not a path: '%.*s' (paths are "
                                 ".key, [index] and their chains, as .user.id or .tags[0]; '.' is the whole "
                                 "record)",
                                 prop->value, m->name, (int) strcspn (path, ","), path);
        p = *q ? q + 1 : q;
    }
    if (!self->nmaps)
        return weir__err_at (err, WEIR_EPROPERTY, prop->value_offset,
                             "postgres: map= is empty: give COLUMN=PATH, comma-separated");
    return 0;
}

//  The mapping of column NAME, or NULL
static const s_mapping *s_mapped (const s_pg *self, const char *name)
{
    for (size_t i = 0; i < self->nmaps; i++)
        if (!strcmp (self->maps[i].name, name))
            return &self->maps[i];
    return NULL;
}

//  The table's columns from the catalog: those written into SELF->cols
static int s_columns (s_pg *self, weir__props *props, weir__err *err)
{
    const char *name = self->shown;
    const char *sql = "SELECT $1::regclass::text";
    PGresult *res = self->pq->PQexecParams (self->control, sql, 1, NULL, &name, NULL, NULL, 0);
    if (self->pq->PQresultStatus (res) != PGRES_TUPLES_OK) {
        char why[1024];
        s_why (self, res, self->control, why, sizeof why);
        self->pq->PQclear (res);
        return weir__err_set (err, WEIR_EIO, "postgres: table %s: %s (database '%s')", self->shown, why,
                              self->pq->PQdb (self->control));
    }
    self->table = strdup (self->pq->PQgetvalue (res, 0, 0));
    self->pq->PQclear (res);
    if (!self->table)
        return weir__err_set (err, WEIR_ENOMEM, "postgres: out of memory");
    sql = "SELECT a.attname, t.typname, t.typcategory, format_type (a.atttypid, a.atttypmod), "
          "a.atthasdef OR a.attidentity <> '' OR a.attgenerated <> '' "
          "FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
          "WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum";
    res = self->pq->PQexecParams (self->control, sql, 1, NULL, &name, NULL, NULL, 0);
    if (self->pq->PQresultStatus (res) != PGRES_TUPLES_OK) {
        char why[1024];
        s_why (self, res, self->control, why, sizeof why);
        self->pq->PQclear (res);
        return weir__err_set (err, WEIR_EIO, "postgres: reading the columns of table %s: %s", self->shown,
                              why);
    }
    int n = self->pq->PQntuples (res);
    weir__prop *columns = weir__props_find (props, "columns"), *map = weir__props_find (props, "map");
    self->listed = columns != NULL || map != NULL;
    weir__prop *key = weir__props_find (props, "conflict");
    int rc = columns ? s_check_list (self, columns, res, n, err) : 0;
    if (!rc && map && columns)
        rc = weir__err_at (err, WEIR_EPROPERTY, map->value_offset,
                           "postgres: map= names the columns written, and so does columns=: give one");
    if (!rc && map)
        rc = s_parse_map (self, map, err);
    for (size_t i = 0; i < self->nmaps && !rc; i++) {
        int found = 0;
        for (int r = 0; r < n && !found; r++)
            found = !strcmp (self->pq->PQgetvalue (res, r, 0), self->maps[i].name);
        if (!found)
            rc = weir__err_at (err, WEIR_EPROPERTY, map->value_offset,
                               "postgres: map=%s: '%s' is no column of table %s", map->value,
                               self->maps[i].name, self->shown);
    }
    if (!rc && key)
        rc = s_check_list (self, key, res, n, err);
    if (!rc
        && (!(self->cols = calloc ((size_t) n + 1, sizeof *self->cols))
            || !(self->defaulted = calloc ((size_t) n + 1, sizeof *self->defaulted))))
        rc = weir__err_set (err, WEIR_ENOMEM, "postgres: out of memory");
    for (int r = 0; r < n && !rc; r++) {
        const char *col = self->pq->PQgetvalue (res, r, 0);
        int has_default = *self->pq->PQgetvalue (res, r, 4) == 't';
        int written = map       ? s_mapped (self, col) != NULL
                      : columns ? s_listed (columns->value, col)
                                : !has_default;
        if (!written) {
            if (!(self->defaulted[self->ndefaulted++] = strdup (col)))
                rc = weir__err_set (err, WEIR_ENOMEM, "postgres: out of memory");
            continue;
        }
        s_column *c = &self->cols[self->ncols++];
        c->name = strdup (col);
        c->quoted = s_quote (self, col);
        c->type = strdup (self->pq->PQgetvalue (res, r, 3));
        c->kind = s_kind_of (self->pq->PQgetvalue (res, r, 1), self->pq->PQgetvalue (res, r, 2));
        c->from = s_mapped (self, col);
        if (!c->name || !c->quoted || !c->type)
            rc = weir__err_set (err, WEIR_ENOMEM, "postgres: out of memory");
    }
    self->pq->PQclear (res);
    if (!rc && !self->ncols)
        rc = weir__err_set (err, WEIR_EPROPERTY,
                            "postgres: table %s has no column to write: every one has a default; name "
                            "those to write in columns=",
                            self->shown);
    return rc;
}

//  "a", "b", "c": the written columns as SQL, with PREFIX before each
static int s_column_list (const s_pg *self, weir__buf *b, const char *prefix)
{
    int rc = 0;
    for (size_t i = 0; i < self->ncols && !rc; i++)
        rc = weir__buf_printf (b, "%s%s%s", i ? ", " : "", prefix, self->cols[i].quoted);
    return rc;
}

//  The statements: the COPY, and mode=upsert's merge
static int s_statements (s_pg *self, const char *key, weir__err *err)
{
    weir__buf b;
    weir__buf_init (&b);
    int rc = weir__buf_printf (&b, "COPY %s (", self->upsert ? S_TEMP : self->table)
             || s_column_list (self, &b, "") || weir__buf_printf (&b, ") FROM STDIN")
             || weir__buf_putc (&b, '\0');
    self->copy_sql = rc ? NULL : b.data;
    if (rc || !self->upsert)
        return rc ? (weir__buf_release (&b), weir__err_set (err, WEIR_ENOMEM, "postgres: out of memory")) : 0;
    //  INSERT INTO t (cols) SELECT DISTINCT ON (key) cols FROM temp
    //  ORDER BY key, weir_ord DESC ON CONFLICT (key) DO UPDATE SET ...
    weir__buf keys;
    weir__buf_init (&keys);
    size_t nkeys = 0;
    for (size_t i = 0; i < self->ncols && !rc; i++)
        if (s_listed (key, self->cols[i].name))
            rc = weir__buf_printf (&keys, "%s%s", nkeys++ ? ", " : "", self->cols[i].quoted);
    weir__buf_init (&b);
    rc = rc || weir__buf_putc (&keys, '\0') || weir__buf_printf (&b, "INSERT INTO %s (", self->table)
         || s_column_list (self, &b, "") || weir__buf_printf (&b, ") SELECT DISTINCT ON (%s) ", keys.data)
         || s_column_list (self, &b, "")
         || weir__buf_printf (&b, " FROM " S_TEMP " ORDER BY %s, weir_ord DESC ON CONFLICT (%s) DO ",
                              keys.data, keys.data);
    size_t updated = 0;
    for (size_t i = 0; i < self->ncols && !rc; i++)
        if (!s_listed (key, self->cols[i].name))
            rc = weir__buf_printf (&b, "%s%s = EXCLUDED.%s", updated++ ? ", " : "UPDATE SET ",
                                   self->cols[i].quoted, self->cols[i].quoted);
    rc = rc || (!updated && weir__buf_printf (&b, "NOTHING")) || weir__buf_putc (&b, '\0');
    weir__buf_release (&keys);
    if (rc) {
        weir__buf_release (&b);
        return weir__err_set (err, WEIR_ENOMEM, "postgres: out of memory");
    }
    self->merge_sql = b.data;
    return 0;
}

/*  ---------------------------------------------------------------------
    Prepared transactions  */

//  The commit and thread a prepared transaction of this job's belongs
//  to, from its GID "weir:ID:N:T"; -1 when it is not the job's
static int s_gid (const s_pg *self, const char *gid, uint64_t *commit, unsigned *thread)
{
    char id[17];
    unsigned long long n;
    if (sscanf (gid, "weir:%16[0-9a-f]:%llu:%u", id, &n, thread) != 3 || strcmp (id, self->id))
        return -1;
    *commit = n;
    return 0;
}

//  Commit (or roll back) the prepared transaction of commit N, thread T
static int s_finish_prepared (s_pg *self, uint64_t n, unsigned t, int commit, weir__err *err)
{
    char sql[128], what[96];
    snprintf (sql, sizeof sql, "%s PREPARED 'weir:%s:%" PRIu64 ":%u'", commit ? "COMMIT" : "ROLLBACK",
              self->id, n, t);
    snprintf (what, sizeof what, "%s the prepared transaction of commit %" PRIu64 ", thread %u",
              commit ? "committing" : "rolling back", n, t);
    return s_exec (self, self->control, sql, what, err);
}

//  Resuming from commit N: the job's prepared transactions that the
//  checkpoint counted on are committed, those after it rolled back
static int s_resolve (s_pg *self, uint64_t n, weir__err *err)
{
    const char *sql =
        "SELECT gid FROM pg_prepared_xacts WHERE database = current_database () AND gid LIKE $1";
    char like[32];
    snprintf (like, sizeof like, "weir:%s:%%", self->id);
    const char *param = like;
    PGresult *res = self->pq->PQexecParams (self->control, sql, 1, NULL, &param, NULL, NULL, 0);
    if (self->pq->PQresultStatus (res) != PGRES_TUPLES_OK) {
        char why[1024];
        s_why (self, res, self->control, why, sizeof why);
        self->pq->PQclear (res);
        return weir__err_set (err, WEIR_EIO, "postgres: listing the prepared transactions of table %s: %s",
                              self->shown, why);
    }
    int rc = 0;
    for (int r = 0; r < self->pq->PQntuples (res) && !rc; r++) {
        uint64_t commit;
        unsigned thread;
        if (s_gid (self, self->pq->PQgetvalue (res, r, 0), &commit, &thread))
            continue;
        rc = s_finish_prepared (self, commit, thread, commit <= n, err);
    }
    self->pq->PQclear (res);
    return rc;
}

static int s_check_two_phase (s_pg *self, weir__err *err)
{
    PGresult *res = self->pq->PQexec (self->control, "SHOW max_prepared_transactions");
    int most =
        self->pq->PQresultStatus (res) == PGRES_TUPLES_OK ? atoi (self->pq->PQgetvalue (res, 0, 0)) : -1;
    self->pq->PQclear (res);
    if (most >= (int) self->threads)
        return 0;
    return weir__err_set (
        err, WEIR_EPROPERTY,
        "postgres: the server of database '%s' allows %d prepared transactions (max_prepared_transactions), "
        "and exactly-once COPY prepares one per writer thread at each epoch's end (%u here): set "
        "max_prepared_transactions = %u or more in postgresql.conf and restart the server, or write with "
        "mode=upsert conflict=COLUMNS into a table with a unique key (idempotent, no prepared transactions)",
        self->pq->PQdb (self->control), most < 0 ? 0 : most, self->threads, 2 * self->threads);
}

static int s_new_id (s_pg *self, weir__err *err)
{
    unsigned char bytes[8];
    if (getrandom (bytes, sizeof bytes, 0) != (ssize_t) sizeof bytes)
        return weir__err_set (err, WEIR_ESYSTEM, "postgres: cannot draw a job id: %s", strerror (errno));
    for (size_t i = 0; i < sizeof bytes; i++)
        snprintf (self->id + 2 * i, 3, "%02x", bytes[i]);
    return 0;
}

static int s_open (weir__props *props, unsigned threads, const char *resume, unsigned flags, void **state,
                   weir__err *err)
{
    const weir__libpq *pq;
    const char *table = weir__props_get (props, "table", NULL);
    const char *mode = weir__props_get (props, "mode", "copy");
    const char *key = weir__props_get (props, "conflict", NULL);
    if (!table)
        return weir__err_set (err, WEIR_EPROPERTY, "postgres: property 'table' is required");
    if (strcmp (mode, "copy") && strcmp (mode, "upsert"))
        return weir__err_at (err, WEIR_EPROPERTY, weir__props_find (props, "mode")->value_offset,
                             "postgres: mode=%s: wants copy or upsert", mode);
    if (!strcmp (mode, "upsert") && (!key || !*key))
        return weir__err_set (
            err, WEIR_EPROPERTY,
            "postgres: mode=upsert needs conflict=COLUMNS, the columns of the table's unique key");
    if (key && strcmp (mode, "upsert"))
        return weir__err_at (err, WEIR_EPROPERTY, weir__props_find (props, "conflict")->value_offset,
                             "postgres: conflict= is for mode=upsert; mode=%s writes every row", mode);
    if (weir__libpq_get (&pq, err))
        return err->code;
    s_pg *self = calloc (1, sizeof *self);
    if (!self)
        return weir__err_set (err, WEIR_ENOMEM, "postgres: out of memory");
    self->pq = pq;
    self->threads = threads;
    self->upsert = !strcmp (mode, "upsert");
    self->two_phase = !self->upsert && (flags & WEIR__WRITER_CHECKPOINTED);
    self->replace = (flags & WEIR__WRITER_REPLACE) != 0;
    int rc = 0;
    if (!(self->conninfo = strdup (weir__props_get (props, "conninfo", "")))
        || !(self->shown = strdup (table)) || !(self->t = calloc (threads, sizeof *self->t)))
        rc = weir__err_set (err, WEIR_ENOMEM, "postgres: out of memory");
    for (unsigned i = 0; i < threads && self->t; i++)
        weir__records_init (&self->t[i].it);
    if (!rc && resume) {
        unsigned long long n = 0;
        if (sscanf (resume, "id:%16[0-9a-f] commit:%llu", self->id, &n) != 2 || strlen (self->id) != 16)
            rc = weir__err_set (err, WEIR_ECORRUPT,
                                "postgres: the checkpoint's state of table %s is malformed: '%s'", table,
                                resume);
        atomic_store_explicit (&self->commits, n, memory_order_relaxed);
    }
    else if (!rc)
        rc = s_new_id (self, err);
    if (!rc)
        rc = s_connect (self, &self->control, err);
    if (!rc)
        rc = s_columns (self, props, err);
    if (!rc)
        rc = s_statements (self, key, err);
    if (!rc && self->two_phase)
        rc = s_check_two_phase (self, err);
    //  A resume settles what the crash left prepared, whatever its mode now
    if (!rc && resume)
        rc = s_resolve (self, atomic_load_explicit (&self->commits, memory_order_relaxed), err);
    for (unsigned i = 0; i < threads && !rc; i++) {
        s_thread *t = &self->t[i];
        if (!(t->values = calloc (self->ncols, sizeof *t->values)))
            rc = weir__err_set (err, WEIR_ENOMEM, "postgres: out of memory");
        else
            rc = s_connect (self, &t->conn, err);
        if (!rc && self->upsert) {
            weir__buf sql;
            weir__buf_init (&sql);
            rc = weir__buf_printf (&sql, "CREATE TEMP TABLE " S_TEMP " AS SELECT ")
                 || s_column_list (self, &sql, "")
                 || weir__buf_printf (&sql,
                                      " FROM %s WITH NO DATA; ALTER TABLE " S_TEMP
                                      " ADD COLUMN weir_ord bigserial; EXPLAIN %s",
                                      self->table, self->merge_sql);
            //  EXPLAIN: the ON CONFLICT target is checked now, not at the
            //  first epoch's end
            rc = rc ? weir__err_set (err, WEIR_ENOMEM, "postgres: out of memory")
                    : s_exec (self, t->conn, sql.data, "preparing mode=upsert", err);
            weir__buf_release (&sql);
        }
    }
    if (rc) {
        s_free (self);
        return rc;
    }
    *state = self;
    return 0;
}

/*  ---------------------------------------------------------------------
    Rows  */

//  A record's JSON text, cut short, for a message
static const char *s_show (const msgpack_object *o, char *out, size_t size)
{
    weir__buf b;
    weir__buf_init (&b);
    if (weir__jsontext_append (&b, o) || weir__buf_putc (&b, '\0'))
        snprintf (out, size, "(a msgpack %s)", weir_type_name (o));
    else if (b.len - 1 > S_SHOW)
        snprintf (out, size, "%.*s...", S_SHOW, b.data);
    else
        snprintf (out, size, "%s", b.data);
    weir__buf_release (&b);
    return out;
}

//  P, N escaped for COPY's text format
static int s_escape (weir__buf *b, const char *p, size_t n)
{
    if (b->cap - b->len < 2 * n && weir__buf_reserve (b, 2 * n))
        return -1;
    char *o = b->data + b->len;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        switch (c) {
        case '\\': *o++ = '\\', *o++ = '\\'; break;
        case '\n': *o++ = '\\', *o++ = 'n'; break;
        case '\r': *o++ = '\\', *o++ = 'r'; break;
        case '\t': *o++ = '\\', *o++ = 't'; break;
        default: *o++ = c;
        }
    }
    b->len = (size_t) (o - b->data);
    return 0;
}

//  A number as text: integers in decimal, a float as the shortest text
//  that reads back the same, in the C locale whatever the program's
//  (lib/decimal.h)
static int s_number (weir__buf *b, const msgpack_object *o)
{
    if (weir__buf_reserve (b, WEIR__DECIMAL_MAX))
        return -1;
    char *at = b->data + b->len;
    if (o->type == MSGPACK_OBJECT_FLOAT32 || o->type == MSGPACK_OBJECT_FLOAT64) {
        double d = o->via.f64;
        if (isnan (d))
            return weir__buf_append (b, "NaN", 3);
        if (isinf (d))
            return d < 0 ? weir__buf_append (b, "-Infinity", 9) : weir__buf_append (b, "Infinity", 8);
        b->len += weir__decimal_format (at, d);
        return 0;
    }
    //  The digits backwards, then in place
    char digits[24];
    size_t n = 0;
    int negative = o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER;
    //  The magnitude of INT64_MIN does not fit an int64
    uint64_t v = negative ? (uint64_t) 0 - (uint64_t) o->via.i64 : o->via.u64;
    do
        digits[n++] = (char) ('0' + v % 10);
    while ((v /= 10));
    if (negative)
        *at++ = '-';
    while (n)
        *at++ = digits[--n];
    b->len = (size_t) (at - b->data);
    return 0;
}

static int s_is_number (const msgpack_object *o)
{
    return o->type == MSGPACK_OBJECT_POSITIVE_INTEGER || o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER
           || o->type == MSGPACK_OBJECT_FLOAT32 || o->type == MSGPACK_OBJECT_FLOAT64;
}

//  An array as a PostgreSQL array literal ({1,"a",NULL}): -2 for what an
//  array cannot hold
static int s_array (weir__buf *b, const msgpack_object *o)
{
    if (weir__buf_putc (b, '{'))
        return -1;
    for (uint32_t i = 0; i < o->via.array.size; i++) {
        const msgpack_object *e = &o->via.array.ptr[i];
        int rc = i && weir__buf_putc (b, ',');
        if (e->type == MSGPACK_OBJECT_NIL)
            rc = rc || weir__buf_printf (b, "NULL");
        else if (e->type == MSGPACK_OBJECT_BOOLEAN)
            rc = rc || weir__buf_putc (b, e->via.boolean ? 't' : 'f');
        else if (s_is_number (e))
            rc = rc || s_number (b, e);
        else if (e->type == MSGPACK_OBJECT_ARRAY) {
            int sub = rc ? -1 : s_array (b, e);
            if (sub)
                return sub;
        }
        else if (e->type == MSGPACK_OBJECT_STR) {
            rc = rc || weir__buf_putc (b, '"');
            for (uint32_t k = 0; k < e->via.str.size && !rc; k++) {
                char c = e->via.str.ptr[k];
                rc = ((c == '"' || c == '\\') && weir__buf_putc (b, '\\')) || weir__buf_putc (b, c);
            }
            rc = rc || weir__buf_putc (b, '"');
        }
        else
            return -2;
        if (rc)
            return -1;
    }
    return weir__buf_putc (b, '}');
}

//  Value O of column C into B, escaped for COPY: 0, -1 out of memory, or
//  -2 when the column does not take it
static int s_value (weir__buf *b, weir__buf *scratch, const s_column *c, const msgpack_object *o)
{
    if (o->type == MSGPACK_OBJECT_NIL)
        return weir__buf_printf (b, "\\N");
    if (o->type == MSGPACK_OBJECT_EXT)
        return -2;
    if (o->type == MSGPACK_OBJECT_STR && memchr (o->via.str.ptr, '\0', o->via.str.size) && c->kind != K_BYTEA
        && c->kind != K_JSON)
        return -2;
    scratch->len = 0;
    int rc;
    switch (c->kind) {
    case K_JSON: return weir__jsontext_append (scratch, o) ? -1 : s_escape (b, scratch->data, scratch->len);
    case K_BYTEA:
        if (o->type != MSGPACK_OBJECT_BIN && o->type != MSGPACK_OBJECT_STR)
            return -2;
        if (weir__buf_printf (b, "\\\\x"))
            return -1;
        for (uint32_t i = 0; i < o->via.bin.size; i++)
            if (weir__buf_printf (b, "%02x", (unsigned char) o->via.bin.ptr[i]))
                return -1;
        return 0;
    case K_ARRAY:
        if (o->type != MSGPACK_OBJECT_ARRAY)
            return o->type == MSGPACK_OBJECT_STR ? s_escape (b, o->via.str.ptr, o->via.str.size) : -2;
        rc = s_array (scratch, o);
        return rc ? rc : s_escape (b, scratch->data, scratch->len);
    case K_NUMBER:
        if (s_is_number (o))
            return s_number (b, o);
        return o->type == MSGPACK_OBJECT_STR ? s_escape (b, o->via.str.ptr, o->via.str.size) : -2;
    case K_BOOL:
        if (o->type == MSGPACK_OBJECT_BOOLEAN)
            return weir__buf_putc (b, o->via.boolean ? 't' : 'f');
        return o->type == MSGPACK_OBJECT_STR ? s_escape (b, o->via.str.ptr, o->via.str.size) : -2;
    case K_TEXT:
    case K_OTHER:
        if (o->type == MSGPACK_OBJECT_STR)
            return s_escape (b, o->via.str.ptr, o->via.str.size);
        if (s_is_number (o))
            return s_number (b, o);
        if (o->type == MSGPACK_OBJECT_BOOLEAN)
            return weir__buf_printf (b, o->via.boolean ? "true" : "false");
        if (c->kind == K_TEXT && (o->type == MSGPACK_OBJECT_MAP || o->type == MSGPACK_OBJECT_ARRAY))
            return weir__jsontext_append (scratch, o) ? -1 : s_escape (b, scratch->data, scratch->len);
        return -2;
    }
    return -2;
}

//  Record O, which the table cannot take for WHY: skipped (1) with
//  on-error=skip, its part of the line taken back; else the job fails,
//  naming it
static int s_bad (s_pg *self, s_thread *t, const msgpack_object *o, size_t line, const char *why,
                  weir__err *err)
{
    t->out.len = line;
    if (self->reject)
        return self->reject (self->reject_arg, o, why, err) ? err->code : 1;
    char shown[S_SHOW + 8];
    return weir__err_set (err, WEIR_ECORRUPT, "postgres: record %s: %s; on-error=skip would skip it",
                          s_show (o, shown, sizeof shown), why);
}

static int s_fields (s_pg *self, s_thread *t, const msgpack_object *o, size_t line, weir__err *err);

//  Record O as one line of COPY text on thread T: 0, 1 when it was
//  skipped, or an error
static int s_row (s_pg *self, s_thread *t, const msgpack_object *o, weir__err *err)
{
    char why[512];
    size_t line = t->out.len;
    if (self->maps) {
        //  map=: each column's path, walked; NULL where it leads nowhere
        for (size_t c = 0; c < self->ncols; c++) {
            const s_mapping *m = self->cols[c].from;
            const msgpack_object *v = o;
            for (size_t s = 0; s < m->nsteps && v; s++)
                v = weir__step_take (&m->steps[s], v);
            t->values[c] = v;
        }
        return s_fields (self, t, o, line, err);
    }
    if (o->type != MSGPACK_OBJECT_MAP) {
        snprintf (why, sizeof why, "table %s takes maps (one per row, keys naming columns), not a msgpack %s",
                  self->shown, weir_type_name (o));
        return s_bad (self, t, o, line, why, err);
    }
    memset (t->values, 0, self->ncols * sizeof *t->values);
    for (uint32_t i = 0; i < o->via.map.size; i++) {
        const msgpack_object *k = &o->via.map.ptr[i].key;
        if (k->type != MSGPACK_OBJECT_STR) {
            snprintf (why, sizeof why, "a msgpack %s as a key; keys name columns of table %s",
                      weir_type_name (k), self->shown);
            return s_bad (self, t, o, line, why, err);
        }
        size_t c = 0;
        while (c < self->ncols
               && (strlen (self->cols[c].name) != k->via.str.size
                   || memcmp (self->cols[c].name, k->via.str.ptr, k->via.str.size)))
            c++;
        if (c < self->ncols) {
            t->values[c] = &o->via.map.ptr[i].val;
            continue;
        }
        for (size_t d = 0; d < self->ndefaulted; d++)
            if (strlen (self->defaulted[d]) == k->via.str.size
                && !memcmp (self->defaulted[d], k->via.str.ptr, k->via.str.size)) {
                snprintf (why, sizeof why,
                          "it sets column '%s' of table %s, which %s: name it in columns= to write it",
                          self->defaulted[d], self->shown,
                          self->listed ? "columns= leaves out"
                                       : "has a default (or is generated) and is left to the server");
                return s_bad (self, t, o, line, why, err);
            }
        snprintf (why, sizeof why, "key '%.*s' is no column of table %s",
                  (int) (k->via.str.size < 128 ? k->via.str.size : 128), k->via.str.ptr, self->shown);
        return s_bad (self, t, o, line, why, err);
    }
    return s_fields (self, t, o, line, err);
}

//  The line of COPY text of record O, its values per column in T->values
static int s_fields (s_pg *self, s_thread *t, const msgpack_object *o, size_t line, weir__err *err)
{
    char why[512];
    for (size_t c = 0; c < self->ncols; c++) {
        int rc = c && weir__buf_putc (&t->out, '\t') ? -1 : 0;
        if (!rc)
            rc = t->values[c] ? s_value (&t->out, &t->scratch, &self->cols[c], t->values[c])
                              : weir__buf_printf (&t->out, "\\N");
        if (rc == -2) {
            snprintf (why, sizeof why, "column '%s' of table %s is %s, which takes no msgpack %s%s",
                      self->cols[c].name, self->shown, self->cols[c].type, weir_type_name (t->values[c]),
                      t->values[c]->type == MSGPACK_OBJECT_STR ? " holding a NUL byte" : "");
            return s_bad (self, t, o, line, why, err);
        }
        if (rc)
            return weir__err_set (err, WEIR_ENOMEM, "postgres: out of memory");
    }
    return weir__buf_putc (&t->out, '\n') ? weir__err_set (err, WEIR_ENOMEM, "postgres: out of memory") : 0;
}

//  The server refused the COPY of thread T (RES): its words, which name
//  the row's line and column
static int s_copy_failed (s_pg *self, s_thread *t, PGresult *res, weir__err *err)
{
    char why[1024];
    s_why (self, res, t->conn, why, sizeof why);
    //  "COPY t, line 3, column n: "x"": which row, which column
    const char *context = res ? self->pq->PQresultErrorField (res, PG_DIAG_CONTEXT) : NULL;
    return weir__err_set (err, WEIR_EIO, "postgres: table %s refused this epoch's rows: %s%s%s%s",
                          self->shown, why, context ? " (" : "", context ? context : "", context ? ")" : "");
}

//  Send what thread T buffered, beginning its transaction and COPY first
static int s_send (s_pg *self, s_thread *t, weir__err *err)
{
    if (!t->out.len)
        return 0;
    if (!t->in_tx) {
        if (s_exec (self, t->conn, "BEGIN", "beginning a transaction", err))
            return err->code;
        t->in_tx = 1;
    }
    if (!t->copying) {
        PGresult *res = self->pq->PQexec (t->conn, self->copy_sql);
        int ok = self->pq->PQresultStatus (res) == PGRES_COPY_IN;
        int rc = ok ? 0 : s_copy_failed (self, t, res, err);
        self->pq->PQclear (res);
        if (rc)
            return rc;
        t->copying = 1;
    }
    for (size_t at = 0; at < t->out.len;) {
        int n = t->out.len - at > (1u << 30) ? 1 << 30 : (int) (t->out.len - at);
        if (self->pq->PQputCopyData (t->conn, t->out.data + at, n) != 1) {
            char why[1024];
            return weir__err_set (err, WEIR_EIO, "postgres: sending rows into table %s: %s", self->shown,
                                  s_why (self, NULL, t->conn, why, sizeof why));
        }
        at += (size_t) n;
    }
    t->out.len = 0;
    return 0;
}

static int s_write (void *state, unsigned thread, const char *payload, size_t len, uint32_t count,
                    weir__err *err)
{
    s_pg *self = state;
    s_thread *t = &self->t[thread];
    weir__records_reset (&t->it, payload, len);
    msgpack_object o;
    int more, rc = 0;
    while (!rc && (more = weir__records_next (&t->it, &o)) == 1)
        rc = s_row (self, t, &o, err) < 0 ? err->code : 0;
    if (!rc && more < 0)
        rc = weir__err_set (err, WEIR_ECORRUPT, "postgres: malformed record in a batch");
    if (!rc && t->out.len >= S_SEND_AT)
        rc = s_send (self, t, err);
    return rc;
}

//  End thread T's COPY, and merge its rows in mode=upsert
static int s_end_copy (s_pg *self, s_thread *t, weir__err *err)
{
    if (s_send (self, t, err))
        return err->code;
    if (!t->copying)
        return 0;
    t->copying = 0;
    if (self->pq->PQputCopyEnd (t->conn, NULL) != 1) {
        char why[1024];
        return weir__err_set (err, WEIR_EIO, "postgres: ending the rows into table %s: %s", self->shown,
                              s_why (self, NULL, t->conn, why, sizeof why));
    }
    int rc = 0;
    PGresult *res;
    while ((res = self->pq->PQgetResult (t->conn))) {
        if (!rc && self->pq->PQresultStatus (res) != PGRES_COMMAND_OK)
            rc = s_copy_failed (self, t, res, err);
        self->pq->PQclear (res);
    }
    if (!rc && self->upsert)
        rc = s_exec (self, t->conn, self->merge_sql, "merging this epoch's rows", err)
             || s_exec (self, t->conn, "TRUNCATE " S_TEMP, "emptying the rows merged", err);
    return rc ? err->code : 0;
}

static int s_flush (void *state, unsigned thread, weir__err *err)
{
    s_pg *self = state;
    s_thread *t = &self->t[thread];
    //  A job without checkpoints that may end commits when it succeeds:
    //  its COPY goes on across epochs
    if (self->replace && !self->upsert)
        return s_send (self, t, err);
    if (s_end_copy (self, t, err))
        return err->code;
    if (!t->in_tx || self->replace)
        return 0;
    if (!self->two_phase) {
        t->in_tx = 0;
        return s_exec (self, t->conn, "COMMIT", "committing this epoch's rows", err);
    }
    //  Prepared for the commit that comes next
    uint64_t n = atomic_load_explicit (&self->commits, memory_order_relaxed) + 1;
    if (t->npending == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 4;
        uint64_t *more = realloc (t->pending, cap * sizeof *more);
        if (!more)
            return weir__err_set (err, WEIR_ENOMEM, "postgres: out of memory");
        t->pending = more;
        t->cap = cap;
    }
    char sql[96];
    snprintf (sql, sizeof sql, "PREPARE TRANSACTION 'weir:%s:%" PRIu64 ":%u'", self->id, n, thread);
    t->in_tx = 0;
    if (s_exec (self, t->conn, sql, "preparing this epoch's rows", err))
        return err->code;
    t->pending[t->npending++] = n;
    return 0;
}

static int s_commit (void *state, char *out, weir__err *err)
{
    s_pg *self = state;
    if (self->two_phase)
        WEIR_KILL_POINT ("postgres-prepared");
    uint64_t n = atomic_fetch_add_explicit (&self->commits, 1, memory_order_relaxed) + 1;
    snprintf (out, WEIR__WRITER_STATE_MAX, "id:%s commit:%" PRIu64, self->id, n);
    return 0;
}

static int s_settle (void *state, const char *durable, weir__err *err)
{
    s_pg *self = state;
    char id[17];
    unsigned long long n;
    if (sscanf (durable, "id:%16[0-9a-f] commit:%llu", id, &n) != 2 || strcmp (id, self->id))
        return weir__err_set (err, WEIR_EINVAL, "postgres: settling a state not its own: '%s'", durable);
    int passed = 0, rc = 0;
    for (unsigned i = 0; i < self->threads && !rc; i++) {
        s_thread *t = &self->t[i];
        size_t kept = 0;
        for (size_t k = 0; k < t->npending; k++) {
            if (t->pending[k] > n || rc) {
                t->pending[kept++] = t->pending[k];
                continue;
            }
            if (!passed++)
                WEIR_KILL_POINT ("postgres-settling");
            rc = s_finish_prepared (self, t->pending[k], i, 1, err);
            if (rc)
                t->pending[kept++] = t->pending[k];
        }
        t->npending = kept;
    }
    return rc;
}

static void s_rejecting (void *state, weir__writer_reject_fn *reject, void *arg)
{
    s_pg *self = state;
    self->reject = reject;
    self->reject_arg = arg;
}

static void s_discard (void *state)
{
    s_pg *self = state;
    self->discarded = 1;
}

static int s_close (void *state, weir__err *err)
{
    s_pg *self = state;
    int rc = 0;
    //  A job without checkpoints that succeeded: its transactions commit
    //  now (a failed one's roll back as their connections close)
    for (unsigned i = 0; i < self->threads && !self->discarded; i++) {
        s_thread *t = &self->t[i];
        if (!rc && (t->copying || t->out.len))
            rc = s_end_copy (self, t, err);
        if (!rc && t->in_tx)
            rc = s_exec (self, t->conn, "COMMIT", "committing the job's rows", err);
        t->in_tx = 0;
    }
    s_free (self);
    return rc;
}

const weir__writer_class weir__writer_postgres = {
    "postgres",
    "rows into a PostgreSQL table by COPY, exactly once (two-phase commit with the checkpoint), or by "
    "upsert",
    s_props,
    s_open,
    s_write,
    s_flush,
    s_commit,
    s_close,
    s_discard,
    s_settle,
    s_rejecting,
};

# tests/pg.sh - a PostgreSQL server of the test's own.  Source it after
# tests/lib.sh.  pg_available says whether the server's programs are
# here, pg_require skips the test (exit 77) when they are not; pg_start
# starts a server in a folder of its own under /tmp, on a Unix socket
# there only (no TCP), with prepared transactions allowed, and stops it
# at exit.  The server refuses to run as root: as root it runs as nobody
# (setpriv, from util-linux).
#
# After pg_start: PGSOCK, the socket's folder; CONNINFO, what the postgres
# writer's conninfo= takes; psql_q SQL runs SQL and prints its rows
# unaligned, tab-separated, without headers; a statement waits 30 s at most
# for a lock.

PG_BIN=
for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && PG_BIN=$d
done
as_pg () {
    if [ "$(id -u)" -eq 0 ]; then
        setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
    else
        "$@"
    fi
}

# pg_available: whether a server can run here.  PG_WHY says why not.  As
# root, nobody must be able to run programs: it cannot where the root
# folder is not searchable by others (a chroot made in a folder of mode
# 700)
pg_available () {
    if [ -z "$PG_BIN" ] || ! command -v psql >/dev/null 2>&1; then
        PG_WHY="no PostgreSQL server here (Debian: postgresql; scripts/install-deps.sh installs it)"
        return 1
    fi
    if ! (cd / && as_pg "$PG_BIN/initdb" --version) >/dev/null 2>&1; then
        PG_WHY="the server must run as an unprivileged user, and nobody cannot run $PG_BIN/initdb here ($(ls -ld / | cut -c1-10) /)"
        return 1
    fi
}

pg_require () {
    if ! pg_available; then
        echo "SKIP: $PG_WHY"
        exit 77
    fi
}

pg_stop () {
    [ -n "${PGSOCK:-}" ] && as_pg "$PG_BIN/pg_ctl" -D "$PGSOCK/data" -m immediate -w stop >/dev/null 2>&1
    [ -n "${PGSOCK:-}" ] && rm -rf "$PGSOCK"
    rm -rf "$T"
}

# pg_start [SETTING=VALUE...]: initdb and start; settings go to the
# server's command line (max_prepared_transactions=32 unless given)
pg_start () {
    PGSOCK=$(mktemp -d /tmp/weir-pg-XXXXXX)
    trap pg_stop EXIT
    [ "$(id -u)" -eq 0 ] && chown nobody "$PGSOCK"
    if ! as_pg "$PG_BIN/initdb" -D "$PGSOCK/data" -A trust -U weir -E UTF8 --locale=C --no-sync \
        >"$PGSOCK/initdb.log" 2>&1; then
        cat "$PGSOCK/initdb.log" >&2
        echo "FAIL: initdb" >&2
        exit 1
    fi
    opts="-c listen_addresses= -k $PGSOCK -c fsync=off -c max_prepared_transactions=32"
    for s in "$@"; do
        opts="$opts -c $s"
    done
    if ! as_pg "$PG_BIN/pg_ctl" -D "$PGSOCK/data" -o "$opts" -l "$PGSOCK/server.log" -w -t 60 start \
        >/dev/null 2>&1; then
        cat "$PGSOCK/server.log" >&2
        echo "FAIL: the PostgreSQL server does not start" >&2
        exit 1
    fi
    CONNINFO="host=$PGSOCK user=weir dbname=postgres"
    export PGHOST=$PGSOCK PGUSER=weir PGDATABASE=postgres
    # A lock that transactions left prepared hold fails the statement
    # that waits for it, rather than hanging the test
    export PGOPTIONS="-c lock_timeout=30s"
}

psql_q () {
    psql -X -q -A -t -F '	' -v ON_ERROR_STOP=1 -c "$1"
}

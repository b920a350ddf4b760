#!/bin/sh
# The postgres writer in a job of several ranks: every rank prepares its
# own transactions, rank 0's checkpoint decides all of them, and a rank
# killed at any point of the two-phase commit, resumed on another number
# of ranks, leaves every row in the table exactly once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mpi.sh"
. "$(dirname "$0")/pg.sh"
pg_require
pg_start

psql_q "CREATE TABLE nums (n bigint NOT NULL)"
seq 1 20000 | awk '{ print "{\"n\":" $1 "}" }' > "$T/nums.jsonl"
(cd "$T" && split -n l/6 -d --additional-suffix=.jsonl nums.jsonl part-)
JOB="json path=$T/part-*.jsonl ! postgres conninfo='$CONNINFO' table=nums threads=2"

# check WHAT: every n exactly once, nothing left prepared
check () {
    got=$(psql_q "SELECT count(*), count(DISTINCT n), sum(n) FROM nums")
    [ "$got" = "20000	20000	200010000" ] && ok || fail "$1: rows, distinct, sum = $got"
    left=$(psql_q "SELECT count(*) FROM pg_prepared_xacts")
    [ "$left" = 0 ] && ok || fail "$1: $left transactions left prepared"
}

mpi 2 "$WEIR" run -q --checkpoint "$T/ck" --epoch-records 1000 "$JOB" || fail "2 ranks"
check "2 ranks"

# POINT:K RANK RANKS RESUMED: rank RANK of RANKS killed at kill point
# POINT's K-th pass, then the job resumed on RESUMED ranks
for cycle in "postgres-prepared:2 0 2 1" "postgres-settling:3 1 2 3" "postgres-settling:2 0 3 2" \
    "ranks-prepared:3 0 2 2" "after-leveldb-write:2 0 3 1"; do
    set -- $cycle
    psql_q "TRUNCATE nums"
    rm -rf "$T/ck"
    mpi_kill_at "$1" "$2" "$3" "$T/err" run -q --checkpoint "$T/ck" --epoch-records 1000 "$JOB"
    grep -q "killed at kill point ${1%:*}" "$T/err" && ok || fail "rank $2 of $3 not killed at $1: $(tail -3 "$T/err")"
    mpi "$4" "$WEIR" run -q --checkpoint "$T/ck" --resume --epoch-records 1000 "$JOB" \
        || fail "resumed on $4 ranks after rank $2 of $3 was killed at $1"
    check "rank $2 of $3 killed at $1, resumed on $4"
done

finish

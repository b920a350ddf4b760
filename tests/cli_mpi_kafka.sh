#!/bin/sh
# The kafka reader in a job of several ranks: the partitions spread over
# the ranks, every message once; a rank killed, the job resumed on
# another number of ranks, every message still once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mpi.sh"
. "$(dirname "$0")/kafka.sh"
kafka_require
kafka_start events 6

seq 0 29999 | awk '{ print "{\"n\":" $1 "}" }' > "$T/a.msgs"
kafka_produce "$T/a.msgs"
JOB="kafka brokers=$BROKERS topic=events value=json threads=2 ! lines path=$T/out/out-{rank}.txt"

# as_numbers: each rank's output, one n a line, in place
as_numbers () {
    for f in "$T"/out/out-*.txt; do
        jq -r .n "$f" > "$f.n" && mv "$f.n" "$f"
    done
}

mkdir -p "$T/out"
mpi 2 "$WEIR" run -q "$JOB" || fail "2 ranks"
as_numbers
exact "$T/out" 30000 "2 ranks, 6 partitions"
[ -s "$T/out/out-0.txt" ] && [ -s "$T/out/out-1.txt" ] && ok || fail "a rank read nothing"
# group=: each rank commits its own partitions' offsets once a checkpoint
# is written; at the end the group has every partition's end
rm -rf "$T/out" "$T/gck"
mkdir -p "$T/out"
mpi 2 "$WEIR" run -q --checkpoint "$T/gck" --epoch-records 2000 "$(echo "$JOB" | sed 's/value=json/value=json group=g/')" \
    || fail "2 ranks, group="
got=$(kafka_committed g)
[ "$got" = "0:5000 1:5000 2:5000 3:5000 4:5000 5:5000" ] && ok || fail "2 ranks, group=: the group has '$got'"

# POINT:K RANK RANKS RESUMED
for cycle in "writers-synced:3 1 2 3" "ranks-prepared:2 0 3 2" "readers-resumed:4 0 2 1"; do
    set -- $cycle
    rm -rf "$T/ck" "$T/out"
    mkdir -p "$T/out"
    mpi_kill_at "$1" "$2" "$3" "$T/err" run -q --checkpoint "$T/ck" --epoch-records 2000 "$JOB"
    grep -q "killed at kill point ${1%:*}" "$T/err" && ok || fail "rank $2 of $3 not killed at $1: $(tail -3 "$T/err")"
    mpi "$4" "$WEIR" run -q --checkpoint "$T/ck" --resume --epoch-records 2000 "$JOB" \
        || fail "resumed on $4 ranks after rank $2 of $3 was killed at $1"
    as_numbers
    exact "$T/out" 30000 "rank $2 of $3 killed at $1, resumed on $4"
done

finish

#!/bin/sh
# tests/cli_mpi.sh - jobs of several ranks under mpirun (Open MPI).
#
# 1 to 4 ranks on this machine (--oversubscribe --bind-to none): the union
# of the ranks' outputs is the input, once; {rank} paths and what a job of
# several ranks refuses; a graph of two readers spread over the ranks;
# one rank's failure ending the job with its
# message; SIGTERM to mpirun, every rank stopping at one boundary; a rank
# aborted alone (a second signal, its stop timeout) while the others wait
# for it ending every rank; the epoch watchdog naming a stopped rank.
# Resuming after kills is tests/cli_mpi_resume.sh.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mpi.sh"

# --- 1 to 4 ranks, each record once --------------------------------------
seq 1 60000 > "$T/in.txt"
for n in 1 2 3 4; do
    d="$T/lines$n"
    mkdir "$d"
    expect_exit 0 "records read" -- mpi $n "$WEIR" run --stats "$d/stats-{rank}.json" \
        "lines path=$T/in.txt split=40000 ! identity threads=2 ! lines path=$d/out-{rank}.txt"
    sort -n "$d"/out-*.txt | cmp -s - "$T/in.txt" && ok || fail "$n ranks: the outputs are not the input once"
    [ "$(ls "$d"/out-*.txt | wc -l)" -eq $n ] && ok || fail "$n ranks: not one output per rank"
    [ "$(ls "$d"/stats-*.json | wc -l)" -eq $n ] && ok || fail "$n ranks: not one statistics file per rank"
    grep -q "\"ranks\": $n" "$d/stats-0.json" && ok || fail "$n ranks: the statistics do not say the ranks"
    grep -q '"job_records": 60000' "$d/stats-0.json" && ok || fail "$n ranks: the statistics lack the job's total"
    if [ $n -gt 1 ]; then
        grep -q "^weir: 60000 records read, 60000 written in .* by $n ranks" "$T/err" && ok \
            || fail "$n ranks: rank 0 does not say the job's totals: $(grep '^weir:' "$T/err")"
    fi
done
# cache= on 2 ranks: each keeps and replays its own shards; every line
# once per pass, and the passes after the first from memory
mkdir "$T/cached"
expect_exit 0 "records read" -- mpi 2 "$WEIR" run --stats "$T/cached/stats-{rank}.json" \
    "lines path=$T/in.txt split=100k passes=3 cache=10M ! lines path=$T/cached/out-{rank}.txt"
{ cat "$T/in.txt" "$T/in.txt" "$T/in.txt"; } | sort -n > "$T/thrice"
sort -n "$T/cached"/out-*.txt | cmp -s - "$T/thrice" && ok || fail "cache= on 2 ranks: not every line 3 times"
replayed=$(cat "$T/cached"/stats-*.json | sed -n 's/.*"records_replayed": \([0-9]*\).*/\1/p' | awk '{ n += $1 } END { print n }')
[ "$replayed" = 120000 ] && ok || fail "cache= on 2 ranks: $replayed records from memory, not 120000"
# One msgpack file, cut into shards at record boundaries: both ranks read
# part of it (it was one shard, and rank 1 of 2 read nothing)
"$WEIR" run -q "range count=300000 ! msgpack path=$T/one.mp" || fail "one.mp made"
d="$T/onemp"
mkdir "$d"
expect_exit 0 "" -- mpi 2 "$WEIR" run -q --stats "$d/stats-{rank}.json" \
    "msgpack path=$T/one.mp split=200k ! lines path=$d/out-{rank}.txt"
exact "$d" 300000 "one msgpack file on 2 ranks"
for r in 0 1; do
    got=$(sed -n 's/.*"records_out": \([0-9]*\).*/\1/p' "$d/stats-$r.json" | head -1)
    [ "${got:-0}" -gt 0 ] && ok || fail "one msgpack file on 2 ranks: rank $r read nothing"
done
# shuffle keeps its buffer in blobs, and a checkpoint keeps rank 0's: it
# is refused on several ranks, saying why
expect_exit 1 "shuffle runs on one rank only, for now" -- mpi 2 "$WEIR" run -q "range count=100 ! shuffle ! null"
# More ranks than shards: the ranks without any wait, and the job ends
d="$T/few"
mkdir "$d"
expect_exit 0 "" -- mpi 4 "$WEIR" run -q --checkpoint "$d/ck" --epoch-records 3000 \
    "range count=40000 ! identity ! lines path=$d/out-{rank}.txt"
exact "$d" 40000 "4 ranks, 2 shards"

# --- a graph of two readers: each reader's shards spread over the ranks ---
# range's 200,000 numbers (4 shards) and the lines 200000..259999 (3
# shards), merged, on 3 ranks
d="$T/merge"
mkdir "$d"
seq 200000 259999 > "$d/in.txt"
expect_exit 0 "" -- mpi 3 "$WEIR" run -q --stats "$d/stats-{rank}.json" \
    "range count=200000 ! m.  lines path=$d/in.txt split=20000 ! m.  identity name=m ! lines path=$d/out-{rank}.txt"
seq 0 259999 > "$d/want"
sort -n "$d"/out-*.txt | cmp -s - "$d/want" && ok || fail "two readers on 3 ranks: the outputs are not both inputs once"
for r in 0 1 2; do
    for reader in range lines; do
        grep -q "\"name\": \"$reader\", \"kind\": \"reader\".*\"records_in\": [1-9]" "$d/stats-$r.json" && ok \
            || fail "two readers on 3 ranks: $reader read nothing on rank $r"
    done
done

# --- what a job of several ranks refuses ----------------------------------
expect_exit 2 "every rank would write that one file; put \\{rank\\}" -- mpi 2 "$WEIR" run \
    "range count=10 ! lines path=$T/one.txt"
expect_exit 2 "dead-letter= is not supported yet in a job of several ranks" -- mpi 2 "$WEIR" run \
    "lines path=$T/in.txt on-error=skip dead-letter=$T/dl-{rank} ! lines path=$T/dl-out-{rank}.txt"
expect_exit 2 "follow=1 is not supported yet in a job of several ranks" -- mpi 2 "$WEIR" run \
    "lines path=$T/in.txt follow=1 ! lines path=$T/f-{rank}.txt"
# One rank alone may write one file, as ever, and {rank} is 0 there
expect_exit 0 "" -- "$WEIR" run -q "range count=10 ! lines path=$T/solo-{rank}.txt"
[ "$(wc -l < "$T/solo-0.txt")" -eq 10 ] && ok || fail "{rank} is not 0 in a job of one rank"

# --- one rank's failure ends the job, with its message --------------------
mkdir "$T/dir-0"
start=$(date +%s)
expect_exit 1 "dir-1" -- mpi 2 "$WEIR" run --checkpoint "$T/fck" --epoch-records 1000 \
    "range count=100000000 ! identity ! lines path=$T/dir-{rank}/out.txt"
[ $(($(date +%s) - start)) -lt 30 ] && ok || fail "one rank's failure took $(($(date +%s) - start)) s to end the job"

# --- SIGTERM to mpirun: every rank stops at one boundary, with a checkpoint
d="$T/term"
mkdir "$d"
"$MPIRUN" -n 2 "$WEIR" run --checkpoint "$d/ck" --epoch-records 1000 \
    "range count=5000000 ! identity ! lines path=$d/out-{rank}.txt" > /dev/null 2> "$d/err" &
pid=$!
# Once both ranks write
for i in $(seq 1 300); do
    [ -s "$d/out-0.txt" ] && [ -s "$d/out-1.txt" ] && break
    sleep 0.05
done
kill -TERM $pid
wait $pid
[ "$(grep -c 'stopped by SIGTERM .* checkpoint written' "$d/err")" -eq 2 ] && ok \
    || fail "SIGTERM: not every rank stopped with a checkpoint: $(cat "$d/err")"
grep -q MPI_ABORT "$d/err" && fail "SIGTERM: a graceful stop aborted the job: $(cat "$d/err")" || ok
expect_exit 0 "" -- mpi 3 "$WEIR" run -q --checkpoint "$d/ck" --resume --epoch-records 10000 \
    --stats "$d/stats-{rank}.json" "range count=5000000 ! identity ! lines path=$d/out-{rank}.txt"
exact "$d" 5000000 "SIGTERM, then resumed on 3 ranks"
# Rank 0 knows the job's records since it began; this run read fewer
grep -q '"total_records": 5000000,' "$d/stats-0.json" && ! grep -q '"job_records": 5000000,' "$d/stats-0.json" \
    && ok || fail "SIGTERM, resumed: rank 0's stats: $(grep records "$d/stats-0.json" | head -3)"

# --- a rank that ends alone ends every rank -------------------------------
# Rank 0 is stopped (SIGSTOP), so rank 1 waits for it at the next
# boundary, for ever (no --epoch-timeout); then rank 1 is aborted while it
# waits: by a second signal, or by its stop timeout.  Its wait must look
# at the abort, and its exit take the job down: mpirun ends, non-zero.
# With a third argument 'boundary', rank 0 stops itself (the kill-point
# build's WEIR_KILL_SIGNAL=STOP) in the end of an epoch the ranks agreed
# to go on from, its writers synced: rank 1 waits for it in that epoch's
# checkpoint, not in the agreement, and must be aborted there as well.
alone () {
    how=$1
    where=$2
    shift 2
    rm -rf "$T"/alone-*.txt "$T/alone-ck"
    job="range count=1000000000 ! identity ! lines path=$T/alone-{rank}.txt"
    if [ "$where" = boundary ]; then
        "$MPIRUN" -n 1 env WEIR_KILL_AT=writers-synced:20 WEIR_KILL_SIGNAL=STOP \
            "$WEIR_KP" run -q --checkpoint "$T/alone-ck" --epoch-records 5000 "$@" "$job" \
            : -n 1 "$WEIR_KP" run -q --checkpoint "$T/alone-ck" --epoch-records 5000 "$@" "$job" \
            > /dev/null 2> "$T/alone.err" &
    else
        "$MPIRUN" -n 2 "$WEIR" run -q --epoch-records 5000 "$@" "$job" > /dev/null 2> "$T/alone.err" &
    fi
    pid=$!
    r0=$(rank_of $pid 0)
    r1=$(rank_of $pid 1)
    if [ -z "$r0" ] || [ -z "$r1" ] || ! working 2 "$T/alone"; then
        fail "$how: the ranks were not found at work among the children of mpirun"
        kill -TERM $pid
        reap $pid
        return
    fi
    if [ "$where" = boundary ]; then
        # Stopped, and said so (mpirun forwards what it said with a lag)
        for i in $(seq 1 600); do
            [ "$(awk '{ print $3 }' "/proc/$r0/stat" 2>/dev/null)" = T ] \
                && grep -q "stopped at kill point writers-synced" "$T/alone.err" && break
            sleep 0.1
        done
        grep -q "stopped at kill point writers-synced" "$T/alone.err" \
            || fail "$how: rank 0 did not stop itself at its kill point"
    else
        kill -STOP "$r0"
    fi
    sleep 0.5
    kill -TERM "$r1"
    case $how in "a second signal"*) sleep 0.5; kill -INT "$r1" ;; esac
    start=$(date +%s)
    reap $pid
    took=$(($(date +%s) - start))
    kill -KILL "$r0" 2>/dev/null
    [ $RC -ne 0 ] && ok || fail "$how: a rank aborted alone ended the job with 0"
    [ $took -le 20 ] && ok || fail "$how: the job took $took s to end after rank 1 was aborted"
    grep -q "weir run: aborted in epoch" "$T/alone.err" && ok || {
        fail "$how: rank 1 did not say it aborted"
        sed 's/^/    /' "$T/alone.err" | head -20 >&2
    }
}
alone "a second signal" agreement --stop-timeout 0
alone "the stop timeout" agreement --stop-timeout 2
alone "the stop timeout, in an agreed epoch's end" boundary --stop-timeout 2
alone "a second signal, in an agreed epoch's end" boundary --stop-timeout 0

# --- the watchdog ---------------------------------------------------------
"$MPIRUN" -n 3 "$WEIR" run -q --epoch-timeout 2 --epoch-records 5000 \
    "range count=1000000000 ! identity ! lines path=$T/wd-{rank}.txt" > /dev/null 2> "$T/wd.err" &
pid=$!
stopped=$(rank_of $pid 2)
start=$(date +%s)
if [ -n "$stopped" ] && working 3 "$T/wd"; then
    start=$(date +%s)
    kill -STOP "$stopped"
else
    # Never wait for a job of a billion records: say so and end it
    fail "the watchdog: rank 2 of 3 was not found at work among the children of mpirun"
    kill -TERM $pid
fi
reap $pid
rc=$RC
took=$(($(date +%s) - start))
[ $rc -ne 0 ] && ok || fail "a stopped rank did not end the job"
[ $took -le 15 ] && ok || fail "the watchdog took $took s for a timeout of 2 s"
grep -q "waited 2 s (--epoch-timeout) for rank 2 of 3" "$T/wd.err" && ok || {
    fail "the watchdog did not name rank 2"
    sed 's/^/    /' "$T/wd.err" | head -20 >&2
}
[ -n "$stopped" ] && kill -KILL "$stopped" 2>/dev/null

finish

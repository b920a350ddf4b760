#!/bin/sh
# tests/cli_mpi_resume.sh - jobs of several ranks killed and resumed.
#
# SIGKILL of one rank at random instants, resumed with a random rank
# count each time; kill points on the way of the global commit (a rank
# prepared, all prepared, committed), resumed on another count; a graph
# of two readers killed and resumed; an adopted output with bytes past
# its commit on disk; a job grown to more ranks, killed and shrunk; blob
# regions declared in init after a resume.
# A summed blob ends where one rank would have ended it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mpi.sh"

# --- SIGKILL of one rank, resumed with another rank count -----------------
# The job: 3,000,000 integers (3 to 10 s on 2 cores; each run is killed
# 0.3 to 1 s after its start), a blob that sums them
# across ranks (the total one rank would reach), epochs of 1,000 records
# per rank.
N=3000000
WANT=$((N * (N - 1) / 2))
JOB="range count=$N ! accumulate reduce=sum ! lines path=$T/kill/out-{rank}.txt"
mkdir "$T/kill"
limit=${MPI_KILL_CYCLES:-8}
[ -n "${FAULT_LONG:-}" ] && limit=40
kill_cycles $limit 4 "$T/kill.err" run -q --checkpoint "$T/kill/ck" --resume --epoch-records 1000 "$JOB"
[ $FINISHED -eq 1 ] && ok || fail "the killed job never finished in $CYCLES runs"
exact "$T/kill" $N "after $KILLS kills in $CYCLES runs of 1 to 4 ranks"
total=$(blob "$T/kill/ck")
[ "$total" = "$WANT" ] && ok || fail "the summed blob is $total after $KILLS kills, wanted $WANT"

# --- kill points of the global commit -------------------------------------
# RANK of N dies at POINT's K-th pass; the job resumes on M ranks.
point () {
    name=$1 rank=$2 n=$3 k=$4 m=$5
    d="$T/kp-$name"
    mkdir "$d"
    job="range count=60000 ! accumulate reduce=sum ! lines path=$d/out-{rank}.txt"
    mpi_kill_at "$name:$k" "$rank" "$n" "$d/err" run -q --checkpoint "$d/ck" --epoch-records 1000 "$job"
    [ $RC -ne 0 ] && ok || fail "kill point $name:$k on rank $rank did not end the job"
    # weir-kp again: its checkpoint goes to the ranks in pieces of 127 bytes
    expect_exit 0 "" -- mpi "$m" "$WEIR_KP" run -q --checkpoint "$d/ck" --resume --epoch-records 1000 "$job"
    exact "$d" 60000 "killed at $name on rank $rank of $n, resumed on $m"
    total=$(blob "$d/ck")
    [ "$total" = "$((60000 * 59999 / 2))" ] && ok || fail "killed at $name: the summed blob is $total"
}
point writers-synced 1 3 4 2    # one rank prepared, the others not all
point ranks-prepared 0 2 5 3    # all prepared, no commit record yet
point after-leveldb-write 0 3 6 1   # the commit record written, ranks not yet on
point readers-resumed 2 4 3 2   # the next epoch began

# --- a graph of two readers, killed and resumed on other counts -----------
# range's numbers and a file's lines merged: every reader's offsets go to
# rank 0 from the rank that reads each shard.  Rank 1 of 3 dies with its
# output synced and the checkpoint not written; resumed on 2, killed again
# at random, finished on 4.
d="$T/merge"
mkdir "$d"
seq 200000 399999 > "$d/in.txt"
job="range count=200000 ! m.  lines path=$d/in.txt split=50000 ! m.  identity name=m threads=2 ! lines path=$d/out-{rank}.txt"
set -- run -q --checkpoint "$d/ck" --resume --epoch-records 4000 "$job"
"$MPIRUN" -n 1 "$WEIR_KP" "$@" : -n 1 env WEIR_KILL_AT=writers-synced:3 "$WEIR_KP" "$@" : -n 1 "$WEIR_KP" "$@" \
    > /dev/null 2> "$d/err" &
reap $!
[ $RC -ne 0 ] && ok || fail "two readers: the kill of rank 1 did not end the job"
"$MPIRUN" -n 2 "$WEIR" "$@" > /dev/null 2> "$d/err" &
pid=$!
sleep 0.3
kill -KILL $(pgrep -P $pid | head -1) 2>/dev/null
reap $pid
expect_exit 0 "" -- mpi 4 "$WEIR" "$@"
exact "$d" 400000 "two readers merged, killed on 3 ranks and on 2, finished on 4"

# --- an adopted output cut back -------------------------------------------
# The kill points above leave no bytes past the commit on disk: their
# epochs are about 7 KB a rank, and a writer buffers 256 KiB.  Here an
# epoch is 60,000 records a rank (about 400 KB of lines), so the output
# reaches the disk mid-epoch; rank 2 of 3 dies quiescent at pipe-drained:2
# (nothing of epoch 2 committed), leaving its output past the checkpoint's
# length; resumed on 2 ranks, rank 0 adopts it and must cut it back.
d="$T/adopt"
mkdir "$d"
job="range count=600000 ! lines path=$d/out-{rank}.txt"
set -- run -q --checkpoint "$d/ck" --epoch-records 60000 "$job"
"$MPIRUN" -n 2 "$WEIR_KP" "$@" : -n 1 env WEIR_KILL_AT=pipe-drained:2 "$WEIR_KP" "$@" > /dev/null 2> "$d/err" &
reap $!
[ $RC -ne 0 ] && ok || fail "adopted: the kill of rank 2 did not end the job"
latest=$("$WEIR" checkpoints "$d/ck" | awk '/latest/ {print $1}')
committed=$("$WEIR" checkpoints "$d/ck" --epoch "$latest" | awk '$1 == "1:lines@2:" {print $2}')
size=$(wc -c < "$d/out-2.txt")
[ -n "$committed" ] && [ "$size" -gt "$committed" ] && ok \
    || fail "adopted: rank 2 left no bytes past its commit ($size bytes, '$committed' committed): the resume proves nothing"
expect_exit 0 "" -- mpi 2 "$WEIR" run -q --checkpoint "$d/ck" --resume --epoch-records 60000 "$job"
exact "$d" 600000 "rank 2 of 3 killed with bytes past its commit, resumed on 2"

# --- grown, killed, shrunk ------------------------------------------------
# Resumed on 4 ranks from a checkpoint of 2; rank 3 killed once its first
# epoch's output was synced, before that epoch's checkpoint; resumed on 2.
# The outputs of ranks 2 and 3 held records that ranks 0 and 1 read again:
# the checkpoint must know them before they hold any (it is written again
# when the job grows), so that the resume on 2 takes them back to empty.
d="$T/grow"
mkdir "$d"
job="range count=300000 ! accumulate reduce=sum ! lines path=$d/out-{rank}.txt"
set -- run -q --checkpoint "$d/ck" --resume --epoch-records 10000 "$job"
expect_exit 0 "" -- mpi 2 "$WEIR" run -q --checkpoint "$d/ck" --epoch-records 10000 --epochs 2 "$job"
"$MPIRUN" -n 3 "$WEIR_KP" "$@" : -n 1 env WEIR_KILL_AT=writers-synced:1 "$WEIR_KP" "$@" > /dev/null 2> "$d/err" &
reap $!
[ $RC -ne 0 ] && ok || fail "grown: the kill of rank 3 did not end the job"
[ -s "$d/out-3.txt" ] && ok || fail "grown: rank 3 left no records behind, so the shrink proves nothing"
expect_exit 0 "" -- mpi 2 "$WEIR" "$@"
exact "$d" 300000 "grown to 4 ranks, rank 3 killed, shrunk to 2"
total=$(blob "$d/ck")
[ "$total" = "$((300000 * 299999 / 2))" ] && ok || fail "grown, killed, shrunk: the summed blob is $total"

# --- regions declared in init, after a resume -----------------------------
# init runs on a fresh start only: the checkpoint declares the regions
# again, or each rank would sum its own from the resume on, silently.
# Stopped after 3 epochs of 2 ranks, resumed on 3, every rank with shards
# left to read: the total is the job's (it was 19595868648 before the
# checkpoint held the regions).
d="$T/init-reduce"
mkdir "$d"
job="range count=300000 ! accumulate reduce=sum declare=init ! lines path=$d/out-{rank}.txt"
expect_exit 0 "" -- mpi 2 "$WEIR" run -q --checkpoint "$d/ck" --epoch-records 10000 --epochs 3 "$job"
expect_exit 0 "" -- mpi 3 "$WEIR" run -q --checkpoint "$d/ck" --resume --epoch-records 10000 "$job"
exact "$d" 300000 "regions declared in init, resumed on 3 ranks"
total=$(blob "$d/ck")
[ "$total" = "$((300000 * 299999 / 2))" ] && ok || fail "regions declared in init: the summed blob is $total after a resume"
latest=$("$WEIR" checkpoints "$d/ck" | awk '/latest/ {print $1}')
"$WEIR" checkpoints "$d/ck" --epoch "$latest" | grep -q "reduce:0.*0 1 8 2 0 total" \
    && ok || fail "checkpoint $latest does not show the region it combines"

# --- incremental ingest on several ranks -----------------------------------
# A finished job of 2 ranks over a glob; a file grows and a new one comes;
# resumed on 2 ranks, then again on 3 after more growth: every line once
# over the ranks' outputs.
d="$T/incremental"
mkdir -p "$d/logs"
seq 1 1000 > "$d/logs/a.log"
seq 5001 5300 > "$d/logs/b.log"
job="lines path='$d/logs/*.log' split=2000 ! lines path=$d/out-{rank}.txt"
expect_exit 0 "" -- mpi 2 "$WEIR" run -q --checkpoint "$d/ck" "$job"
seq 1001 1500 >> "$d/logs/a.log"
seq 9001 9100 > "$d/logs/c.log"
expect_exit 0 "1 file grew and 1 is new: reading what was added" -- mpi 2 "$WEIR" run --checkpoint "$d/ck" --resume "$job"
seq 1501 1600 >> "$d/logs/b.log"
expect_exit 0 "" -- mpi 3 "$WEIR" run -q --checkpoint "$d/ck" --resume "$job"
cat "$d"/out-*.txt | sort > "$d/got"
cat "$d"/logs/*.log | sort > "$d/want"
same "$d/got" "$d/want" "incremental ingest on 2, then 3 ranks"

finish

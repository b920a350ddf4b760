#!/bin/sh
# tests/cli_mpi.sh - jobs of several ranks under mpirun (Open MPI).
#
# 1 to 4 ranks on this machine (--oversubscribe --bind-to none): the union
# of the ranks' outputs is the input, once; {rank} paths and what a job of
# several ranks refuses; SIGKILL of one rank at random instants, resumed
# with a random rank count each time; kill points on the way of the global
# commit (a rank prepared, all prepared, committed); a summed blob that
# ends where one rank would have ended it; one rank's failure ending the
# job with its message; a rank aborted alone (a second signal, its stop
# timeout) while the others wait for it ending every rank; the epoch
# watchdog naming a stopped rank.
. "$(dirname "$0")/lib.sh"

if [ "${WEIR_MPI:-no}" != yes ]; then
    echo "skipped: this weir was configured without MPI (install openmpi-bin libopenmpi-dev)"
    exit 77
fi
: "${MPIRUN:?MPIRUN must name mpirun}"
# Open MPI refuses root without these; ranks outnumber the cores here, and
# binding would pin every rank and its threads to one core
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_hwloc_base_binding_policy=none
# One machine: shared memory between ranks, no network, no warnings
export OMPI_MCA_btl=self,vader OMPI_MCA_oob_tcp_if_include=lo
export OMPI_MCA_btl_base_warn_component_unused=0
# AddressSanitizer builds: MPI's libraries have no frame pointers, so only
# the slow unwinder sees through them to the frames tests/lsan.supp names
export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}fast_unwind_on_malloc=0"

seed=${FAULT_SEED:-$$}
echo "seed=$seed (FAULT_SEED=$seed replays this run)"
# rnd N: a pseudo-random number in 0..N-1, from the seed
rnd_state=$seed
rnd () {
    rnd_state=$(((rnd_state * 1103515245 + 12345) % 2147483648))
    echo $(((rnd_state / 65536) % $1))
}

mpi () {
    n=$1
    shift
    "$MPIRUN" -n "$n" "$@"
}

# reap PID: wait for the mpirun PID, RC=its exit.  Open MPI's mpirun
# (4.1, Debian 12) sometimes never returns once one of its ranks was
# killed: every rank is gone (a zombie it has not reaped) and it sleeps on
# a lock of its own.  Such an mpirun is killed after 5 s of that, HUNG=1,
# and counted in mpirun_hangs; a rank of weir's still alive after 120 s is a
# hang of weir's, and fails the test.
mpirun_hangs=0
reap () {
    quiet=0 busy=0 HUNG=0
    while :; do
        state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)
        [ -z "$state" ] || [ "$state" = Z ] && break
        alive=0
        for c in $(pgrep -P "$1"); do
            [ "$(awk '{ print $3 }' "/proc/$c/stat" 2>/dev/null)" = Z ] || alive=1
        done
        if [ $alive -eq 1 ]; then
            quiet=0
            busy=$((busy + 1))
            if [ $busy -ge 1200 ]; then
                fail "a rank was still running after 120 s"
                pkill -KILL -P "$1"
                kill -KILL "$1"
                break
            fi
        else
            quiet=$((quiet + 1))
            if [ $quiet -ge 50 ]; then
                mpirun_hangs=$((mpirun_hangs + 1))
                HUNG=1
                kill -KILL "$1"
                break
            fi
        fi
        sleep 0.1
    done
    wait "$1"
    RC=$?
}

# rank_of PID R: the process of rank R among mpirun PID's children, once
# it runs (empty after 10 s)
rank_of () {
    for i in $(seq 1 100); do
        for p in $(pgrep -P "$1"); do
            if tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2"; then
                echo "$p"
                return
            fi
        done
        sleep 0.1
    done
}

# working N PREFIX: wait (60 s at most) until PREFIX-0.txt .. PREFIX-(N-1).txt
# have bytes: every rank is past MPI's start, in its epochs.  A rank
# stopped before that would hold the others in MPI_Init, where nothing of
# weir's runs yet (under AddressSanitizer, on a loaded machine, MPI's
# start takes seconds).
working () {
    for i in $(seq 1 600); do
        all=1
        for r in $(seq 0 $(($1 - 1))); do
            [ -s "$2-$r.txt" ] || all=0
        done
        [ $all -eq 1 ] && return 0
        sleep 0.1
    done
    return 1
}

# exact DIR N: the union of DIR/out-*.txt is 0 .. N-1, each once
exact () {
    sort -n "$1"/out-*.txt > "$T/union"
    seq 0 $(($2 - 1)) > "$T/want"
    if cmp -s "$T/union" "$T/want"; then
        ok
    else
        dup=$(uniq -d "$T/union" | wc -l)
        got=$(sort -nu "$T/union" | wc -l)
        fail "$3: the ranks' outputs hold $(wc -l < "$T/union") records, $got distinct, $dup repeated; wanted 0..$(($2 - 1)) once each"
    fi
}

# blob DIR: blob 'total' of DIR's latest checkpoint, as a decimal
blob () {
    latest=$("$WEIR" checkpoints "$1" | awk '/latest/ {print $1}')
    "$WEIR" checkpoints "$1" --epoch "$latest" --blob total | od -An -td8 | tr -d ' '
}

${CC:-cc} -std=c11 -O2 -shared -fPIC $PLUGIN_CFLAGS "$PLUGINS_SRC/accumulate.c" -o "$T/accumulate.so" \
    || fail "accumulate plugin does not compile"
export WEIR_PLUGIN_PATH="$T"

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
# More ranks than shards: the ranks without any wait, and the job ends
d="$T/few"
mkdir "$d"
expect_exit 0 "" -- mpi 4 "$WEIR" run -q --checkpoint "$d/ck" --epoch-records 3000 \
    "range count=40000 ! identity ! lines path=$d/out-{rank}.txt"
exact "$d" 40000 "4 ranks, 2 shards"

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
        for i in $(seq 1 600); do
            [ "$(awk '{ print $3 }' "/proc/$r0/stat" 2>/dev/null)" = T ] && break
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

# --- SIGKILL of one rank, resumed with another rank count -----------------
# The job: 3,000,000 integers (3 to 10 s on 2 cores; each run is killed
# 0.3 to 1 s after its start), a blob that sums them
# across ranks (the total one rank would reach), epochs of 1,000 records
# per rank.
N=3000000
WANT=$((N * (N - 1) / 2))
JOB="range count=$N ! accumulate reduce=sum ! lines path=$T/kill/out-{rank}.txt"
mkdir "$T/kill"
cycles=0
kills=0
finished=0
limit=${MPI_KILL_CYCLES:-8}
[ -n "${FAULT_LONG:-}" ] && limit=40
while [ $finished -eq 0 ] && [ $cycles -lt $((limit + 10)) ]; do
    n=$(($(rnd 4) + 1))
    cycles=$((cycles + 1))
    "$MPIRUN" -n $n "$WEIR" run -q --checkpoint "$T/kill/ck" --resume --epoch-records 1000 "$JOB" \
        > "$T/kill.out" 2> "$T/kill.err" &
    pid=$!
    if [ $cycles -le $limit ]; then
        sleep "0.$(($(rnd 7) + 3))$(rnd 10)"
        victims=$(pgrep -P $pid)
        count=$(echo "$victims" | wc -w)
        if [ "$count" -gt 0 ]; then
            victim=$(echo "$victims" | tr ' ' '\n' | sed -n "$(($(rnd "$count") + 1))p")
            kill -KILL "$victim" 2>/dev/null && kills=$((kills + 1))
        fi
    fi
    reap $pid
    rc=$RC
    if [ $rc -eq 0 ]; then
        finished=1
    elif [ $HUNG -eq 0 ] && ! grep -q -E "killed|signal|exited|aborted|terminated|ABORT" "$T/kill.err"; then
        fail "cycle $cycles ($n ranks): exit $rc without a kill's trace"
        sed 's/^/    /' "$T/kill.err" | head -20 >&2
    fi
done
[ $finished -eq 1 ] && ok || fail "the killed job never finished in $cycles runs"
exact "$T/kill" $N "after $kills kills in $cycles runs of 1 to 4 ranks"
total=$(blob "$T/kill/ck")
[ "$total" = "$WANT" ] && ok || fail "the summed blob is $total after $kills kills, wanted $WANT"
echo "kills: cycles=$cycles kills=$kills mpirun_hangs=$mpirun_hangs"

# --- kill points of the global commit -------------------------------------
# RANK of N dies at POINT's K-th pass; the job resumes on M ranks.
point () {
    name=$1 rank=$2 n=$3 k=$4 m=$5
    d="$T/kp-$name"
    mkdir "$d"
    job="range count=60000 ! accumulate reduce=sum ! lines path=$d/out-{rank}.txt"
    set -- run -q --checkpoint "$d/ck" --epoch-records 1000 "$job"
    # MPMD: the dying rank gets WEIR_KILL_AT, the others not
    if [ "$rank" -eq 0 ]; then
        "$MPIRUN" -n 1 env WEIR_KILL_AT="$name:$k" "$WEIR_KP" "$@" : -n $((n - 1)) "$WEIR_KP" "$@" \
            > /dev/null 2> "$d/err" &
    else
        "$MPIRUN" -n "$rank" "$WEIR_KP" "$@" : -n 1 env WEIR_KILL_AT="$name:$k" "$WEIR_KP" "$@" \
            : -n $((n - rank - 1)) "$WEIR_KP" "$@" > /dev/null 2> "$d/err" &
    fi
    reap $!
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

#!/bin/sh
# Part 6 of the fault-injection suite: backpressure.  Fast readers feed a
# slow stage (the probe plugin with PROBE_SLEEP_US): full queues must
# block the readers, so the peak resident memory stays under a bound
# that follows from the queues alone, not from the input.  And SIGTERM at
# random instants must end such a job promptly, with exit 143, every
# time, with a checkpoint that --resume goes on from exactly.
PART=backpressure
. "$(dirname "$0")/common.sh"
: "${PLUGINS_DIR:?PLUGINS_DIR must point at the built test plugins}"
PROBE="$PLUGINS_DIR/probe.so"

# peak KB CMD...: PEAK=the peak resident memory of CMD in KiB, RC its exit.
# From /usr/bin/time when it is there, else VmHWM polled from /proc.
peak () {
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f '%M' -o "$T/time.out" "$@" 2>"$T/err"
        RC=$?
        PEAK=$(tail -n 1 "$T/time.out")
    else
        "$@" 2>"$T/err" &
        _pid=$!
        PEAK=0
        while kill -0 $_pid 2>/dev/null; do
            _h=$(awk '/^VmHWM:/ { print $2 }' /proc/$_pid/status 2>/dev/null)
            [ -n "$_h" ] && PEAK=$_h
            sleep 0.05
        done
        wait $_pid
        RC=$?
    fi
}

# --- Peak memory under a slow stage ---------------------------------------
# Records of about 1 KB: lines of 1000 characters
if long; then LINES=96000; else LINES=48000; fi
mkdir -p "$T/big"
awk -v n=$LINES 'BEGIN {
    pad = sprintf ("%990s", ""); gsub (/ /, "x", pad)
    for (i = 0; i < n; i++) printf "%09d %s\n", i, pad > ("'"$T/big"'/in-" (i % 2) ".txt")
}'
input_kb=$(($(cat "$T"/big/in-*.txt | wc -c) / 1024))
echo "input: $LINES records of 1000 bytes, $input_kb KiB in 2 files"

# bound CAPACITY BATCH: the most the queues can hold, in KiB, above the
# base.  Records are 1003 bytes as msgpack str.  Each of the two queues
# holds at most CAPACITY batches in flight (the bound is exact), plus one
# batch being filled by each of its 2 producer threads and one held by
# each of its 2 consumer threads (kept until their next receive), plus
# one: CAPACITY + 5 batches of BATCH records.  Twice that for malloc and
# ZeroMQ's message headers; plus the two reader threads' 1 MiB read
# windows; plus 8 MiB for what a longer run touches that a tiny one does
# not (thread arenas, stacks, page rounding).
bound () {
    echo $(((2 * ($1 + 5) * $2 * 1003 * 2) / 1024 + 2 * 1024 + 8 * 1024))
}

# capacity= is the queue that feeds a stage, batch= what a stage sends on;
# fuse=0 gives the slow stage a queue of its own to fill (fused, it would
# run in the readers' threads, which then read no faster than it goes)
DESC="lines path='$T/big/*.txt' threads=2 batch=BATCH ! $PROBE log=$T/probe.log threads=2 capacity=CAP batch=BATCH fuse=0 ! null capacity=CAP"
run_bp () {
    _d=$(echo "$DESC" | sed "s/CAP/$1/g; s/BATCH/$2/g")
    peak env PROBE_SLEEP_US=$3 "$WEIR" run -q "$_d"
}

for cb in "4 64" "16 256" "64 16" "256 4"; do
    set -- $cb
    cap=$1
    batch=$2
    # The base: the same pipe over 10 records, at full speed
    mkdir -p "$T/tiny"
    head -n 5 "$T/big/in-0.txt" > "$T/tiny/in-0.txt"
    head -n 5 "$T/big/in-1.txt" > "$T/tiny/in-1.txt"
    _d=$(echo "$DESC" | sed "s|$T/big|$T/tiny|; s/CAP/$cap/g; s/BATCH/$batch/g")
    peak "$WEIR" run -q "$_d"
    [ $RC -eq 0 ] || { fail "capacity $cap batch $batch: the base run: exit $RC"; sed 's/^/    /' "$T/err" >&2; }
    base=$PEAK
    limit=$((base + $(bound $cap $batch)))
    # 20 us a record: the slow stage takes about a second
    run_bp $cap $batch 20
    cycles=$((cycles + 1))
    [ $RC -eq 0 ] || { fail "capacity $cap batch $batch: exit $RC"; sed 's/^/    /' "$T/err" >&2; }
    echo "capacity=$cap batch=$batch: peak $PEAK KiB, base $base KiB, bound $limit KiB (input $input_kb KiB)"
    # A sanitizer's allocator keeps freed memory in quarantine and adds
    # shadow memory as the run goes on: the peak follows the records
    # processed, not the queues, so the bound holds in plain builds only
    [ -n "${SANITIZER_CFLAGS:-}" ] && continue
    [ "$PEAK" -le $limit ] && ok || fail "capacity $cap batch $batch: peak $PEAK KiB over the bound $limit KiB"
done
[ -n "${SANITIZER_CFLAGS:-}" ] && echo "peak memory: measured, not held to the bound: a sanitizer build ($SANITIZER_CFLAGS)"

# The measure can see a pipe that holds its input: with room for every
# batch in the queues, the readers run ahead and the peak passes the
# bound of capacity 4
cap=100000
run_bp $cap 64 20
[ $RC -eq 0 ] || { fail "capacity $cap: exit $RC"; sed 's/^/    /' "$T/err" >&2; }
limit=$((base + $(bound 4 64)))
echo "capacity=$cap batch=64 (room for everything): peak $PEAK KiB"
[ "$PEAK" -gt $limit ] && ok || fail "the peak with unbounded queues, $PEAK KiB, is not over the bound $limit KiB: the measure sees nothing"
# Fused, the slow stage reads as it goes: with the same room for every
# batch, nothing runs ahead, and the peak stays inside that bound
DESC=$(echo "$DESC" | sed 's/fuse=0/fuse=1/')
run_bp $cap 64 20
[ $RC -eq 0 ] || { fail "capacity $cap, fused: exit $RC"; sed 's/^/    /' "$T/err" >&2; }
echo "capacity=$cap batch=64, the slow stage fused: peak $PEAK KiB"
[ -n "${SANITIZER_CFLAGS:-}" ] || { [ "$PEAK" -le $limit ] && ok \
    || fail "fused, with room for every batch: peak $PEAK KiB over the bound $limit KiB: something ran ahead"; }

# --- SIGTERM at random instants ------------------------------------------
if long; then STOPS=40; else STOPS=5; fi
IN="$T/in"
make_inputs "$IN" 2 20000
DESC="lines path='$IN/*.txt' threads=2 ! $PROC slots=4 threads=2 capacity=4 batch=64 ! lines path=$T/stop.out capacity=4"
"$WEIR" run -q "$(echo "$DESC" | sed "s|$T/stop.out|$T/stop.ref|")" || fail "SIGTERM: reference"
i=0
slowest=0
while [ $i -lt $STOPS ]; do
    i=$((i + 1))
    rm -rf "$T/stop.ck" "$T/stop.out"
    rand 1500
    delay=$R
    # 100 us a record on each of 2 threads: 40000 records take 2 s
    FAULTPROC_SLEEP_US=100 "$WEIR" run -q --checkpoint "$T/stop.ck" --epoch-records 5000 "$DESC" 2>"$T/err" &
    pid=$!
    sleep "$(awk -v ms="$delay" 'BEGIN { printf "%.3f", ms / 1000 }')"
    start=$(now_ms)
    kill -TERM $pid
    # Wait at most 20 s, then count a hang
    waited=0
    while kill -0 $pid 2>/dev/null && [ $waited -lt 400 ]; do
        sleep 0.05
        waited=$((waited + 1))
    done
    if kill -0 $pid 2>/dev/null; then
        hangs=$((hangs + 1))
        kill -9 $pid
    fi
    wait $pid
    rc=$?
    took=$(($(now_ms) - start))
    [ $took -gt $slowest ] && slowest=$took
    cycles=$((cycles + 1))
    name="SIGTERM after $delay ms"
    [ $rc -eq 143 ] && ok || { fail "$name: exit $rc, wanted 143"; sed 's/^/    /' "$T/err" >&2; }
    [ $took -lt 5000 ] && ok || fail "$name: the stop took $took ms"
    # A stop before the store was made leaves nothing to resume from
    "$WEIR" run -q --checkpoint "$T/stop.ck" --resume --epoch-records 5000 "$DESC" 2>"$T/err" \
        || { fail "$name: resume"; sed 's/^/    /' "$T/err" >&2; continue; }
    cycles=$((cycles - 1))
    verify "$name" lines "$T/stop.ref" "$T/stop.out" "$T/stop.ck"
done
echo "$PART: $STOPS stops by SIGTERM, the slowest took $slowest ms"

summary
finish

#!/bin/sh
# tests/cli_fuse.sh - fuse=: a processor run in the threads of the reader
# that feeds it.
#
# A fused processor gives what the same processor with threads of its own
# gives: every record once, its callbacks in the same order on each
# thread, the end of the input told at the last epoch only (when one
# reader thread runs out epochs before the others), its partial batches
# sent on after linger= while a followed input is idle (as an unfused
# one's: a followed file's partial batch waits linger=, not the epoch's
# end), its bad records
# to its dead letter, its failures the job's, and exactly-once output when
# killed at a checkpoint's points and resumed with other threads and
# fuse= changed.  fuse=1 where it cannot be is refused, saying why; weir
# graph draws no queue into a fused processor.
. "$(dirname "$0")/lib.sh"
command -v jq > /dev/null || { echo "skipped: jq is not installed (scripts/install-deps.sh installs it)"; exit 77; }

PROBE="$PLUGINS_DIR/probe.so"

seq 0 199999 > "$T/in.txt"
awk '{ print $1 * 3 }' "$T/in.txt" > "$T/x3.want"

# --- the same records, fused or not -------------------------------------
# (json: each line an integer, which probe scale=3 multiplies)
for fuse in 0 1 auto; do
    rm -f "$T/log"
    "$WEIR" run -q --stats "$T/s$fuse.json" \
        "json path=$T/in.txt split=64k threads=2 ! $PROBE log=$T/log scale=3 threads=2 fuse=$fuse ! lines path=$T/f$fuse.out" \
        || fail "fuse=$fuse: the job failed"
    sort -n "$T/f$fuse.out" | cmp -s - "$T/x3.want" && ok || fail "fuse=$fuse: not every record once, times 3"
    # Each thread opened, ended the one epoch and closed, the records
    # processed in all every record
    [ "$(grep -c '^thread_open [01] of 2$' "$T/log")" -eq 2 ] \
        && [ "$(grep -c '^epoch_end [01] 1$' "$T/log")" -eq 2 ] \
        && [ "$(awk '/^thread_close/ { n += $4 } END { print n }' "$T/log")" -eq 200000 ] && ok \
        || fail "fuse=$fuse: the callbacks: $(cat "$T/log")"
    # auto: fused when the 4 threads outnumber the CPUs
    fused=0
    [ $fuse = 0 ] && fused=null
    [ $fuse = auto ] && [ "$(nproc)" -ge 4 ] && fused=null
    jq -e ".stages[1].fused_with == $fused" "$T/s$fuse.json" > /dev/null && ok \
        || fail "fuse=$fuse: --stats says fused_with $(jq .stages[1].fused_with "$T/s$fuse.json")"
    jq -e '.stages[1].records_in == 200000 and .stages[1].records_out == 200000
           and .stages[1].threads == 2 and .stages[1].busy_seconds > 0
           and [.links[].records] == [200000, 200000]' "$T/s$fuse.json" > /dev/null && ok \
        || fail "fuse=$fuse: statistics: $(jq -c '.stages, .links' "$T/s$fuse.json")"
done

# --- weir graph: no queue into a fused processor -----------------------
D="lines path=$T/in.txt threads=2 ! $PROBE log=$T/log threads=2"
"$WEIR" graph "$D fuse=1 ! null" > "$T/dot" || fail "weir graph, fused"
grep -q 's0 -> s1 \[label="no queue' "$T/dot" && grep -q 's1 -> s2 \[label="capacity=16' "$T/dot" && ok \
    || fail "weir graph, fused: $(cat "$T/dot")"
"$WEIR" graph "$D fuse=0 ! null" > "$T/dot" || fail "weir graph, not fused"
grep -q 's0 -> s1 \[label="capacity=16' "$T/dot" && ok || fail "weir graph, fuse=0: $(cat "$T/dot")"

# --- the end of the input, when one reader thread runs out first ---------
# Two files, one of 50 lines and one of 20,000, one shard each: the thread
# that takes the small one runs out in the first epoch, the other reads on
# for several.  A fused processor's thread hears of the end with the
# others' only: weir_last_epoch is true in the last epoch alone, on both
# threads.
mkdir "$T/two"
seq 1 50 > "$T/two/a.txt"
seq 1 20000 > "$T/two/b.txt"
rm -f "$T/log"
"$WEIR" run -q --epoch-records 2000 \
    "lines path=$T/two/*.txt threads=2 ! $PROBE log=$T/log last=1 threads=2 fuse=1 ! null" \
    || fail "uneven shards, fused"
last=$(awk '/^epoch_end/ { if ($3 > m) m = $3 } END { print m }' "$T/log")
[ "$last" -gt 2 ] && [ "$(grep -c '^last_epoch' "$T/log")" -eq 2 ] \
    && [ "$(grep -c "^last_epoch [01] $last\$" "$T/log")" -eq 2 ] && ok \
    || fail "uneven shards: the last epoch told early or not at all: $(grep -e last -e epoch_end "$T/log" | tr '\n' ' ')"

# Two readers, each with a fused processor: each processor hears of its
# own reader's end, as it would unfused (from its reader's barriers), and
# both its threads alike: the one of a tiny input in every epoch from
# the one its input ran out in (whether its reader got a share of the
# epoch's records or not), the other's at the last epoch only
mkdir "$T/tiny" "$T/big"
seq 1 10 > "$T/tiny/a.txt"; seq 11 20 > "$T/tiny/b.txt"
seq 1 20000 > "$T/big/a.txt"; seq 1 20000 > "$T/big/b.txt"
for fuse in 1 0; do
    rm -f "$T/la" "$T/lb"
    "$WEIR" run -q --epoch-records 2000 \
        "lines path=$T/tiny/*.txt threads=2 ! $PROBE log=$T/la last=1 threads=2 fuse=$fuse ! null
         lines path=$T/big/*.txt threads=2 ! $PROBE log=$T/lb last=1 threads=2 fuse=$fuse ! null" \
        || fail "two readers, fuse=$fuse"
    last=$(awk '/^epoch_end/ { if ($3 > m) m = $3 } END { print m }' "$T/lb")
    from=$(awk '/^last_epoch/ { if (!m || $3 < m) m = $3 } END { print m + 0 }' "$T/la")
    [ "$(grep -c '^last_epoch' "$T/lb")" -eq 2 ] && [ "$(grep -c "^last_epoch [01] $last\$" "$T/lb")" -eq 2 ] \
        && [ "$from" -ge 1 ] && [ "$from" -lt "$last" ] \
        && [ "$(grep -c '^last_epoch' "$T/la")" -eq $((2 * (last - from + 1))) ] && ok \
        || fail "two readers, fuse=$fuse: the end of each told wrong: $(grep last_epoch "$T/la" "$T/lb" | tr '\n' ' ') (last $last)"
done

# --- bad records and failures ------------------------------------------
rm -f "$T/log" "$T/dl.mp"
"$WEIR" run -q "json path=$T/in.txt split=64k threads=2 ! $PROBE log=$T/log reject=7 threads=2 fuse=1 dead-letter=$T/dl.mp ! lines path=$T/r.out" \
    || fail "rejects, fused"
awk '$1 % 7 != 0 { print $1 }' "$T/in.txt" > "$T/r.want"
sort -n "$T/r.out" | cmp -s - "$T/r.want" && ok || fail "rejects, fused: the records kept"
[ "$("$WEIR" run -q "msgpack path=$T/dl.mp ! lines path=-" | wc -l)" -eq 28572 ] && ok \
    || fail "rejects, fused: the dead letter does not hold each rejected record once"
for cb in thread_open process epoch_end; do
    expect_exit 1 "probe.so: $cb fails as asked" -- \
        "$WEIR" run "lines path=$T/in.txt split=64k threads=2 ! $PROBE log=$T/log fail=$cb threads=2 fuse=1 ! null"
done

# --- what fuse=1 cannot do ------------------------------------------------
refused "fuse=1: it cannot run in the threads of 'lines': its threads= differs from its reader's" \
    "lines path=$T/in.txt ! $PROBE log=$T/log threads=2 fuse=1 ! lines path=$T/never.out"
refused "fuse=1: it cannot run in the threads of 'lines': its input is partitioned by key=" \
    "lines path=$T/in.txt ! count key=. fuse=1 ! lines path=$T/never.out"
refused "fuse=1: it cannot run in the threads of 'identity': the stage feeding it is not a reader" \
    "lines path=$T/in.txt ! identity ! $PROBE log=$T/log fuse=1 ! lines path=$T/never.out"
refused "fuse=1: it cannot run in the threads of 'lines': it forwards whole batches" \
    "lines path=$T/in.txt ! identity fuse=1 ! lines path=$T/never.out"
refused "fuse=1: it cannot run in the threads of 'lines': it has several inputs" \
    "lines path=$T/in.txt ! $PROBE log=$T/log fuse=1 name=p ! lines path=$T/never.out  range count=3 ! p."
refused "fuse=2: expected auto, 0 or 1" "lines path=$T/in.txt ! $PROBE log=$T/log fuse=2 ! lines path=$T/never.out"
refused "unknown property 'fuse'" "lines path=$T/in.txt fuse=1 ! lines path=$T/never.out"

# --- a followed input: partial batches on after linger= ------------------
# Epochs of a minute, and the output a FIFO, which the writer writes each
# batch through: only linger= sends a batch on, the reader's and then the
# processor's, before the epoch ends; fused or not
for fuse in 1 0; do
    L="$T/logs$fuse"
    mkdir "$L"
    seq 1 5 > "$L/a.log"
    rm -f "$T/fifo"
    mkfifo "$T/fifo"
    cat "$T/fifo" > "$T/follow.out" &
    cpid=$!
    "$WEIR" run -q --epoch-seconds 60 \
        "json path=$L/*.log follow=1 ! $PROBE log=$T/flog scale=3 fuse=$fuse ! lines path=$T/fifo" 2> "$T/ferr" &
    pid=$!
    wait_lines "$T/follow.out" 5 && ok || fail "fuse=$fuse: followed lines did not get through within linger="
    seq 6 8 >> "$L/a.log"
    wait_lines "$T/follow.out" 8 && ok || fail "fuse=$fuse: appended lines did not get through within linger="
    kill -TERM $pid
    wait $pid
    rc=$?
    [ $rc -eq 143 ] && ok || fail "fuse=$fuse: a followed job ended with $rc on SIGTERM: $(cat "$T/ferr")"
    wait $cpid
    seq 1 8 | awk '{ print $1 * 3 }' > "$T/follow.want"
    same "$T/follow.out" "$T/follow.want" "fuse=$fuse: a followed input"
done

# --- killed at a checkpoint's points, resumed with fuse= changed ---------
for point in readers-stopped:2 pipe-drained:3 writers-synced:2 after-leveldb-write:3; do
    # killed fused and resumed not, with other threads; and the other way
    for fuses in "1 0 1" "0 1 2"; do
        set -- $fuses
        rm -rf "$T/k.out" "$T/kck"
        job="json path=$T/in.txt split=64k THREADS ! $PROBE log=$T/klog scale=3 THREADS fuse=FUSE ! lines path=$T/k.out"
        WEIR_KILL_AT=$point "$WEIR_KP" run -q --checkpoint "$T/kck" --epoch-records 30000 \
            "$(echo "$job" | sed "s/THREADS/threads=2/g; s/FUSE/$1/")" 2> "$T/err"
        rc=$?
        [ $rc -eq 137 ] && ok || fail "fuse=$1, killed at $point: exit $rc $(cat "$T/err")"
        "$WEIR" run -q --checkpoint "$T/kck" --resume --epoch-records 30000 \
            "$(echo "$job" | sed "s/THREADS/threads=$3/g; s/FUSE/$2/")" || fail "fuse=$1, resumed fuse=$2 after $point"
        sort -n "$T/k.out" | cmp -s - "$T/x3.want" && ok \
            || fail "fuse=$1 killed at $point, resumed fuse=$2: not every record once"
    done
done

finish

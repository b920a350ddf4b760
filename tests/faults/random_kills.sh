#!/bin/sh
# Part 2 of the fault-injection suite: SIGKILL at random instants.  A job
# over several shards, with several threads a stage, is killed again and
# again at delays drawn from the measured time of an uninterrupted run (so
# that most land mid-run), resumed each time with other thread counts,
# for every writer and for sync and async checkpoints.  In the end its
# output must be that of the uninterrupted run (records lost and
# duplicated are counted) and every checkpoint the state its offsets give.
PART=random-kills
. "$(dirname "$0")/common.sh"

if long; then
    FILES=6
    PER=60000
    KILLS=8
    ROUNDS=3
else
    FILES=4
    PER=15000
    KILLS=3
    ROUNDS=1
fi
IN="$T/in"
make_inputs "$IN" $FILES $PER
TOTAL=$((FILES * PER))
EPOCH="--epoch-records $((TOTAL / 20))"
landed=0
finished_early=0

# records_done DIR: the records of the latest checkpoint, 0 without one
records_done () {
    _r=$("$WEIR" checkpoints "$1" 2>/dev/null | awk '/latest/ { print $3 }')
    echo "${_r:-0}"
}

round=0
while [ $round -lt $ROUNDS ]; do
    round=$((round + 1))
    for writer in lines msgpack leveldb-flush leveldb-sync; do
        for mode in sync async; do
            async=
            [ $mode = async ] && async=--async-checkpoint
            name="$writer $mode round $round"
            job $writer "$T/ref.out" 2 2 2
            rm -rf "$T/ref.out" "$T/ref.ck" "$T/got.out" "$T/got.ck"
            start=$(now_ms)
            "$WEIR" run -q --checkpoint "$T/ref.ck" $EPOCH $async "$JOB" || fail "$name: reference run"
            took=$(($(now_ms) - start))
            k=0
            while [ $k -lt $KILLS ]; do
                k=$((k + 1))
                # The time the rest of the job takes, and a delay within it
                done_=$(records_done "$T/got.ck")
                left=$((took * (TOTAL - done_) / TOTAL + 30))
                rand 90
                ms=$((left * (R + 5) / 100))
                rand 4
                rt=$((R + 1))
                rand 4
                pt=$((R + 1))
                rand 3
                wt=$((R + 1))
                job $writer "$T/got.out" $rt $pt $wt
                "$WEIR" run -q --checkpoint "$T/got.ck" --resume --keep 3 $EPOCH $async "$JOB" 2>"$T/err" &
                pid=$!
                sleep "$(awk -v ms="$ms" 'BEGIN { printf "%.3f", ms / 1000 }')"
                kill -9 $pid 2>/dev/null
                wait $pid 2>/dev/null
                rc=$?
                case $rc in
                    137) landed=$((landed + 1)); ok ;;
                    0) finished_early=$((finished_early + 1)); ok ;;
                    *) [ $rc -gt 128 ] && crashes=$((crashes + 1))
                       fail "$name: kill $k (${ms} ms, threads $rt/$pt/$wt): exit $rc"
                       sed 's/^/    /' "$T/err" >&2 ;;
                esac
            done
            rand 4
            job $writer "$T/got.out" $((R + 1)) 3 2
            timed 300 "$WEIR" run -q --checkpoint "$T/got.ck" --resume --keep 3 $EPOCH $async "$JOB" 2>"$T/err"
            [ $RC -eq 0 ] && ok || { fail "$name: final resume exit $RC"; sed 's/^/    /' "$T/err" >&2; }
            verify "$name, $KILLS kills" $writer "$T/ref.out" "$T/got.out" "$T/got.ck"
        done
    done
done

echo "$PART: $landed kills landed mid-run, $finished_early runs had finished before their kill"
summary
finish

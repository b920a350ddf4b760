#!/bin/sh
# A job killed with SIGKILL at random instants (kills land during
# checkpoint writes too) and resumed with --resume ends with exactly the
# output and model of an uninterrupted run: byte for byte with one thread
# per stage, as a multiset with several.
. "$(dirname "$0")/lib.sh"
: "${PLUGIN_CFLAGS:?PLUGIN_CFLAGS must hold the compile flags of <weir/plugin.h>}"
: "${PLUGINS_SRC:?PLUGINS_SRC must point at tests/plugins}"
# shellcheck disable=SC2086
${CC:-cc} -std=c11 -O2 -shared -fPIC $PLUGIN_CFLAGS "$PLUGINS_SRC/accumulate.c" -o "$T/acc.so" \
    || fail "accumulate plugin does not compile"

seed=${CRASH_SEED:-$(date +%s)}
kills=${CRASH_KILLS:-8}
echo "crash test: seed $seed, $kills kills (set CRASH_SEED to replay)"

# Delays in milliseconds, from the seed
delays=$(awk -v seed="$seed" -v n="$kills" 'BEGIN { srand (seed); for (i = 0; i < n; i++) printf "%d ", 30 + int (rand () * 400) }')

# 3M records; under ThreadSanitizer, which runs this job many times
# slower, 600k, so that the test ends well inside its time limit and the
# kills still land at every stage of a run
records=3000000
case "${SANITIZER_CFLAGS:-}" in *thread*) records=600000 ;; esac

# A model of 1M int64 slots (8 MB) makes every checkpoint write take a
# while, so that some kills land inside one
run_crashes () {
    name=$1
    job=$2
    "$WEIR" run -q --checkpoint "$T/$name.ref" --epoch-records 100k "$job path=$T/$name.ref.txt" \
        || fail "$name: uninterrupted run failed"
    for ms in $delays; do
        "$WEIR" run -q --checkpoint "$T/$name.ck" --resume --keep 3 --epoch-records 100k "$job path=$T/$name.txt" &
        pid=$!
        sleep "$(awk -v ms="$ms" 'BEGIN { printf "%.3f", ms / 1000 }')"
        kill -9 "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    "$WEIR" run -q --checkpoint "$T/$name.ck" --resume --keep 3 --epoch-records 100k "$job path=$T/$name.txt" \
        || fail "$name: final resumed run failed"
    ref=$("$WEIR" checkpoints "$T/$name.ref" | awk 'END {print $1}')
    got=$("$WEIR" checkpoints "$T/$name.ck" | awk 'END {print $1}')
    [ "$ref" = "$got" ] && ok || fail "$name: last epoch $got, uninterrupted $ref"
    "$WEIR" checkpoints "$T/$name.ref" --epoch "$ref" --blob model > "$T/$name.ref.model"
    "$WEIR" checkpoints "$T/$name.ck" --epoch "$got" --blob model > "$T/$name.model"
    same "$T/$name.ref.model" "$T/$name.model" "$name: model after crashes"
}

run_crashes single "range count=$records ! $T/acc.so blob=model slots=1000000 ! lines"
same "$T/single.ref.txt" "$T/single.txt" "single: output after crashes (byte for byte)"

run_crashes threaded "range count=$records threads=2 ! $T/acc.so blob=model slots=1000000 threads=2 ! lines threads=2"
sort -n "$T/threaded.ref.txt" > "$T/a"
sort -n "$T/threaded.txt" > "$T/b"
same "$T/a" "$T/b" "threaded: output after crashes (sorted)"
seq 0 $((records - 1)) | cmp -s - "$T/a" && ok || fail "threaded: the uninterrupted output is not 0..$((records - 1))"

finish

#!/bin/sh
# tests/cli_stream.sh - a trickling stream is not held back.
#
# A record of a FIFO or of standard input reaches a pipe or FIFO output
# long before the stream ends: the reader sends a partial batch once it
# waited linger= ms, processors do the same, and writers to pipes write
# each batch through.  Generous bounds: the benchmark (bench/latency_bench)
# measures the real figures.
. "$(dirname "$0")/lib.sh"

PROBE="$PLUGINS_DIR/probe.so"

now_ms () {
    echo $(($(date +%s%N) / 1000000))
}

# first_line_after MS DESCRIPTION: feed 'first', wait, feed 'second'; print
# how many ms after the start the first output line came (through a FIFO)
first_line_after () {
    hold=$1
    shift
    rm -f "$T/in.fifo" "$T/out.fifo"
    mkfifo "$T/in.fifo" "$T/out.fifo"
    "$WEIR" run -q "$@" &
    pid=$!
    start=$(now_ms)
    { echo first; sleep "$hold"; echo second; } > "$T/in.fifo" &
    feeder=$!
    read -r line < "$T/out.fifo"
    got=$(($(now_ms) - start))
    wait $feeder
    wait $pid
    echo "$got $line"
}

# The reader alone, identity (whole batches), a decoding processor, and a
# processor with linger=0
for mid in "identity" "$PROBE log=$T/log" "$PROBE log=$T/log linger=0"; do
    set -- $(first_line_after 3 "lines path=$T/in.fifo ! $mid ! lines path=$T/out.fifo")
    [ "$2" = first ] && [ "$1" -lt 2000 ] && ok \
        || fail "through '$mid': the first line came after $1 ms ('$2'), the stream ended after 3000"
done

# Standard input to standard output, as a shell pipeline
start=$(now_ms)
{ echo first; sleep 3; echo second; } | "$WEIR" run -q "lines path=- ! identity ! lines path=-" | {
    read -r line
    echo "$(($(now_ms) - start)) $line" > "$T/stdio"
    cat > /dev/null
}
set -- $(cat "$T/stdio")
[ "$2" = first ] && [ "$1" -lt 2000 ] && ok || fail "stdin to stdout: the first line came after $1 ms"

# linger is a property of readers and processors, not of what a stage
# computes: it may change on resume, and it is checked
expect_exit 2 "lines: property 'linger': 60001 is out of range \\[0, 60000\\]" -- \
    "$WEIR" run "lines path=- linger=60001 ! null"
expect_exit 2 "null: unknown property 'linger'" -- "$WEIR" run "range count=1 ! null linger=3"
seq 1 1000 > "$T/nums"
"$WEIR" run -q --checkpoint "$T/ck" --epoch-records 100 --epochs 2 "lines path=$T/nums linger=1 ! lines path=$T/o" \
    && "$WEIR" run -q --checkpoint "$T/ck" --resume "lines path=$T/nums linger=50 ! lines path=$T/o" && ok \
    || fail "a resume with another linger was refused"
same "$T/o" "$T/nums" "resume with another linger"

finish

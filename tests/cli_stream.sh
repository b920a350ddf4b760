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

# --- a checkpointed job reading a pipe -------------------------------------
# A pipe cannot be read again: the job says how a resume goes on, and a
# resume fed the same input again reads past what the checkpoint committed
N=300000
seq 1 $N > "$T/all"
seq 1 $N | "$WEIR" run -q --checkpoint "$T/p.ck" --epoch-records 10000 --epochs 3 "lines path=- ! lines path=$T/p.out" \
    2>"$T/p.err" || fail "a checkpointed job reading a pipe failed: $(cat "$T/p.err")"
grep -q "lines: '-' is not a file (a pipe or a terminal) and cannot be read again: to resume this job, feed it the same input again from its start" "$T/p.err" \
    && ok || { fail "no word on how a job reading a pipe resumes"; cat "$T/p.err" >&2; }
[ "$(wc -l < "$T/p.out")" -eq 30000 ] && ok || fail "--epochs 3 of 10000 records wrote $(wc -l < "$T/p.out") lines"
# Fed less than the checkpoint read: not the same input, refused
expect_exit 1 "lines: '-' ended at byte 48894, before byte [0-9]* where the checkpoint goes on: it is not the input the checkpoint was taken from" -- \
    sh -c "seq 1 10000 | '$WEIR' run -q --checkpoint '$T/p.ck' --resume --epoch-records 10000 'lines path=- ! lines path=$T/p.out'"
seq 1 $N | "$WEIR" run -q --checkpoint "$T/p.ck" --resume --epoch-records 10000 "lines path=- ! lines path=$T/p.out" \
    2>"$T/p.err" || fail "resuming a job reading a pipe failed: $(cat "$T/p.err")"
grep -q "its first [0-9]* bytes, which the checkpoint committed, were read and dropped" "$T/p.err" \
    && ok || { fail "the resume does not say it read past the committed bytes"; cat "$T/p.err" >&2; }
same "$T/p.out" "$T/all" "a job reading a pipe, resumed fed the same input"

# Killed mid-run, resumed fed the same input: every line once.  A FIFO
# fed by this shell: the job waits for more after the first 100000 lines,
# committed in five epochs, and is killed there
seq 1 1000000 > "$T/kall"
mkfifo "$T/kfifo"
"$WEIR" run -q --checkpoint "$T/k.ck" --epoch-records 20000 "lines path=$T/kfifo ! lines path=$T/k.out" 2>/dev/null &
pid=$!
exec 4>"$T/kfifo"
head -n 100000 "$T/kall" >&4
i=0
while [ $i -lt 1200 ] && [ "$(checkpointed "$T/k.ck")" != 100000 ]; do
    sleep 0.05
    i=$((i + 1))
done
[ "$(checkpointed "$T/k.ck")" = 100000 ] && ok || fail "the job reading a FIFO did not checkpoint its first 100000 lines"
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
exec 4>&-
cat "$T/kall" > "$T/kfifo" &
feeder=$!
"$WEIR" run -q --checkpoint "$T/k.ck" --resume --epoch-records 20000 "lines path=$T/kfifo ! lines path=$T/k.out" \
    2>"$T/k.err" || fail "resuming a killed job reading a FIFO failed: $(cat "$T/k.err")"
wait $feeder
same "$T/k.out" "$T/kall" "a job reading a FIFO, killed, resumed fed the same input"

finish

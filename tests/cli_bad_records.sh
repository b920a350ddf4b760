#!/bin/sh
# tests/cli_bad_records.sh - on-error=fail|skip and dead-letter=PATH.
#
# With skip, a bad record of a reader (malformed input) or of a processor
# (weir_reject) is counted, kept with its reason in the dead letter and
# skipped; the dead letter is committed with each epoch, so after any
# kill and resume it holds each bad record exactly once.
. "$(dirname "$0")/lib.sh"

PROBE="$PLUGINS_DIR/probe.so"

# dead FILE: the dead letter FILE as JSON lines (a record's bytes: a str
# when they are text, else a bin, in base64)
dead () {
    "$WEIR" run -q "msgpack path=$1 ! lines path=-"
}

long=$(printf '%0200d' 0)

# --- lines: a line longer than max-line --------------------------------
printf 'one\n%s\ntwo\n%s' "$long" "$long" > "$T/long.txt"
expect_exit 1 "lines: '$T/long.txt' at byte 4: line longer than max-line=100 bytes; on-error=skip would skip it, and dead-letter=FILE keep it\$" -- \
    "$WEIR" run "lines path=$T/long.txt max-line=100 ! lines path=$T/out"
expect_exit 0 "skipped a bad record of '$T/long.txt' line 2 \\(byte 4\\): line longer than max-line=100 bytes \\(kept with any others in '$T/long.dead'\\)" -- \
    "$WEIR" run --stats "$T/long.json" "lines path=$T/long.txt max-line=100 dead-letter=$T/long.dead ! lines path=$T/long.out"
grep -q "2 records read, 2 written, 2 bad skipped" "$T/err" && ok || fail "the summary does not count the bad records"
printf 'one\ntwo\n' > "$T/long.want"
same "$T/long.out" "$T/long.want" "lines with over-long lines skipped"
dead "$T/long.dead" > "$T/long.dead.json"
[ "$(wc -l < "$T/long.dead.json")" -eq 2 ] && ok || fail "the dead letter holds $(wc -l < "$T/long.dead.json") entries, wanted 2"
head -1 "$T/long.dead.json" | grep -q "^{\"element\":\"lines\",\"reason\":\"line longer than max-line=100 bytes\",\"epoch\":1,\"file\":\"$T/long.txt\",\"offset\":4,\"line\":2,\"size\":201,\"record\":\"000" \
    && ok || { fail "the first dead letter entry"; head -1 "$T/long.dead.json" >&2; }
# The last line has no newline: it ends at the end of the file
tail -1 "$T/long.dead.json" | grep -q "\"offset\":209,\"line\":4,\"size\":200," && ok \
    || { fail "the last dead letter entry"; tail -1 "$T/long.dead.json" >&2; }
grep -q '"records_rejected": 2' "$T/long.json" && ok || fail "--stats does not count the bad records"
# record: the bad line's bytes whole, up to 64 KiB, though the reader's
# buffer held max-line + 1 of them at a time
record () { sed -n "${2}p" "$1" | sed 's/.*"record":"\([^"]*\)".*/\1/'; }
[ "$(record "$T/long.dead.json" 1)" = "$long" ] && ok \
    || fail "the dead letter kept $(record "$T/long.dead.json" 1 | wc -c) bytes of a 200-byte line, wanted them all"
head -c 100000 /dev/zero | tr '\0' x > "$T/huge.txt"
printf '\nok\n' >> "$T/huge.txt"
"$WEIR" run -q "lines path=$T/huge.txt max-line=1k dead-letter=$T/huge.dead ! lines path=$T/huge.out" 2>/dev/null
dead "$T/huge.dead" > "$T/huge.dead.json"
grep -q '"size":100001,' "$T/huge.dead.json" && [ "$(record "$T/huge.dead.json" 1)" = "$(head -c 65536 "$T/huge.txt")" ] \
    && ok || fail "a 100,000-byte line: the dead letter did not keep its first 64 KiB"

# Without a dead letter they are counted, and the warning says how to keep them
expect_exit 0 "skipped a bad record .* \\(dead-letter=PATH would keep it\\)" -- \
    "$WEIR" run "lines path=$T/long.txt max-line=100 on-error=skip ! lines path=$T/long2.out"
same "$T/long2.out" "$T/long.want" "on-error=skip without a dead letter"

# Standard input, in epochs: the skip works on a stream too
"$WEIR" run -q --epoch-records 1 "lines path=- max-line=100 on-error=skip ! lines path=$T/stdin.out" < "$T/long.txt" 2>/dev/null \
    && ok || fail "on-error=skip on standard input failed"
same "$T/stdin.out" "$T/long.want" "on-error=skip on standard input"

# --- libsvm: a malformed line ------------------------------------------
printf '1 1:0.5\n2 x:1\n3 2:1.5\n' > "$T/in.svm"
expect_exit 1 "libsvm: '$T/in.svm' line 2 \\(byte 10\\): .*; on-error=skip would skip it, and dead-letter=FILE keep it\$" -- \
    "$WEIR" run "libsvm path=$T/in.svm ! lines path=$T/out"
expect_exit 0 "" -- "$WEIR" run "libsvm path=$T/in.svm dead-letter=$T/svm.dead ! libsvm path=$T/svm.out"
printf '1 1:0.5\n3 2:1.5\n' > "$T/svm.want"
same "$T/svm.out" "$T/svm.want" "libsvm with a malformed line skipped"
dead "$T/svm.dead" | grep -q '"file":"'"$T"'/in.svm","offset":8,"line":2,"size":6,"record":"2 x:1"}$' && ok \
    || { fail "the libsvm dead letter"; dead "$T/svm.dead" >&2; }

# --- json: text stays text, binary stays exact, lines are numbered ------
# A bad line that is text is a str in the dead letter; one that is not
# UTF-8 a bin; each with its line, counted on across a run of bad lines
printf '{"a":1}\nbad\n{"b":2}\n\377\376\n{"c":3}\nalso bad\n' > "$T/u.jsonl"
expect_exit 1 "json: '$T/u.jsonl' line 2 column 1 \\(byte 8\\): .*; on-error=skip would skip it, and dead-letter=FILE keep it\$" -- \
    "$WEIR" run "json path=$T/u.jsonl ! json path=$T/u.out"
expect_exit 0 "skipped a bad record of '$T/u.jsonl' line 2 \\(byte 8\\)" -- \
    "$WEIR" run "json path=$T/u.jsonl dead-letter=$T/u.dead ! json path=$T/u.out"
dead "$T/u.dead" > "$T/u.dead.json"
sed -n 1p "$T/u.dead.json" | grep -q '"offset":8,"line":2,"size":4,"record":"bad"}$' \
    && sed -n 2p "$T/u.dead.json" | grep -q '"offset":20,"line":4,"size":3,"record":"//4="}$' \
    && sed -n 3p "$T/u.dead.json" | grep -q '"offset":31,"line":6,"size":9,"record":"also bad"}$' && ok \
    || { fail "the json dead letter: text, binary, line numbers"; cat "$T/u.dead.json" >&2; }
# A shard that starts inside the file (split=) still counts from the
# file's first line
seq 1 2000 | sed 's/^/{"n":/; s/$/}/' > "$T/v.jsonl"
sed -i '1500s/.*/oops/' "$T/v.jsonl"
"$WEIR" run -q "json path=$T/v.jsonl split=4k threads=2 dead-letter=$T/v.dead ! null" || fail "json split skip"
dead "$T/v.dead" | grep -q '"line":1500,.*"record":"oops"}$' && ok || { fail "the line of a bad record in a later shard"; dead "$T/v.dead" >&2; }

# --- msgpack: a stream that cannot be resynchronised --------------------
# 0xc1 is never valid: the rest of that file is one bad record, and the
# next file is read
"$MKMSGPACK" ints 5 "$T/a.mp"
"$MKMSGPACK" ints 3 "$T/b1.mp"
"$MKMSGPACK" ints 2 "$T/b2.mp"
{ cat "$T/b1.mp"; printf '\301\001\002'; cat "$T/b2.mp"; } > "$T/b.mp"
rm "$T/b1.mp" "$T/b2.mp"
"$MKMSGPACK" ints 4 "$T/c.mp"
expect_exit 1 "msgpack: '$T/b.mp' at byte [0-9]*" -- "$WEIR" run "msgpack path=$T/[abc].mp ! lines path=$T/out"
expect_exit 0 "" -- "$WEIR" run "msgpack path=$T/[abc].mp dead-letter=$T/mp.dead ! lines path=$T/mp.out"
[ "$(wc -l < "$T/mp.out")" -eq 12 ] && ok || fail "msgpack skip: $(wc -l < "$T/mp.out") records written, wanted 5+3+4"
dead "$T/mp.dead" > "$T/mp.dead.json"
[ "$(wc -l < "$T/mp.dead.json")" -eq 1 ] && grep -q "\"file\":\"$T/b.mp\"" "$T/mp.dead.json" && ok \
    || { fail "msgpack dead letter"; cat "$T/mp.dead.json" >&2; }
# A file cut inside its last record: the tail is the bad record
"$MKMSGPACK" ints 3 "$T/cut0.mp"
{ cat "$T/cut0.mp"; printf '\222\001'; } > "$T/cut.mp"
expect_exit 0 "" -- "$WEIR" run "msgpack path=$T/cut.mp dead-letter=$T/cut.dead ! lines path=$T/cut.out"
[ "$(wc -l < "$T/cut.out")" -eq 3 ] && ok || fail "a cut msgpack file: $(wc -l < "$T/cut.out") records, wanted 3"
dead "$T/cut.dead" | grep -q '"reason":"truncated record (the file ends inside it)".*"size":2,' && ok \
    || { fail "a cut msgpack file: the dead letter"; dead "$T/cut.dead" >&2; }

# --- processors: weir_reject -------------------------------------------
expect_exit 1 "probe.so: a bad record 0: 0 is divisible by 7 \\(epoch 1; on-error=skip would skip it\\)" -- \
    "$WEIR" run "range count=100 ! $PROBE log=$T/log reject=7 ! lines path=$T/out"
expect_exit 0 "100 records read, 85 written, 15 bad skipped" -- \
    "$WEIR" run "range count=100 ! $PROBE log=$T/log reject=7 dead-letter=$T/proc.dead ! lines path=$T/proc.out"
dead "$T/proc.dead" > "$T/proc.dead.json"
[ "$(wc -l < "$T/proc.dead.json")" -eq 15 ] && ok || fail "processor dead letter: $(wc -l < "$T/proc.dead.json") entries"
grep -q '"reason":"14 is divisible by 7","epoch":1,"record":14}$' "$T/proc.dead.json" && ok \
    || { fail "processor dead letter entry"; head -3 "$T/proc.dead.json" >&2; }

# --- usage errors -------------------------------------------------------
expect_exit 2 "lines: on-error wants fail or skip, not 'maybe'" -- \
    "$WEIR" run "lines path=$T/long.txt on-error=maybe ! null"
expect_exit 2 "dead-letter= keeps skipped records, but on-error=fail skips none" -- \
    "$WEIR" run "lines path=$T/long.txt on-error=fail dead-letter=$T/x ! null"
# A writer fails on what it cannot write: it has no such property
expect_exit 2 "lines: unknown property 'on-error'" -- \
    "$WEIR" run "lines path=$T/long.txt ! lines path=$T/x on-error=skip"
expect_exit 2 "'$T/same' is written twice, as 'dead-letter' and as 'path'" -- \
    "$WEIR" run "lines path=$T/long.txt dead-letter=$T/same ! lines path=$T/same"
expect_exit 2 "lines: '$T/long.txt' is also an input of the reader" -- \
    "$WEIR" run "lines path=$T/long.txt dead-letter=$T/long.txt ! null"
expect_exit 2 "cannot be cut back to what a checkpoint committed" -- \
    "$WEIR" run --checkpoint "$T/ck.x" "lines path=$T/long.txt dead-letter=- ! null"
expect_exit 2 "dead-letter wants a file path" -- "$WEIR" run "lines path=$T/long.txt dead-letter= ! null"

# --- exactly once across kills ------------------------------------------
# Every 10th line is too long; a slow stage lets the kills land mid-run
i=0
while [ $i -lt 3000 ]; do
    if [ $((i % 10)) -eq 3 ]; then echo "$long$i"; else echo "$i"; fi
    i=$((i + 1))
done > "$T/many.txt"
desc="lines path=$T/many.txt max-line=100 dead-letter=$T/many.dead ! $PROBE log=$T/log ! lines path=$T/many.out"
PROBE_SLEEP_US=200 "$WEIR" run -q --checkpoint "$T/many.ck" --epoch-records 100 "$desc" 2>/dev/null &
pid=$!
wait_checkpointed "$T/many.ck" $pid
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
# The kill came mid-run (3000 records take at least 0.6 s at that pace)
got=$(checkpointed "$T/many.ck")
[ -n "$got" ] && [ "$got" -lt 2700 ] && ok || fail "the first kill did not land mid-run ($got records checkpointed)"
kills=1
while [ $kills -lt 4 ]; do
    PROBE_SLEEP_US=200 "$WEIR" run -q --resume --checkpoint "$T/many.ck" --epoch-records 100 "$desc" 2>/dev/null &
    pid=$!
    sleep 0.4
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    kills=$((kills + 1))
done
"$WEIR" run -q --resume --checkpoint "$T/many.ck" --epoch-records 100 "$desc" && ok || fail "the last resume failed"
awk '$0 !~ /^0000/' "$T/many.txt" > "$T/many.want"
sort -n "$T/many.out" > "$T/many.got"
sort -n "$T/many.want" > "$T/many.want.sorted"
same "$T/many.got" "$T/many.want.sorted" "output after kills"
dead "$T/many.dead" | sed 's/.*"offset":\([0-9]*\),.*/\1/' | sort -n > "$T/many.offsets"
[ "$(wc -l < "$T/many.offsets")" -eq 300 ] && ok || fail "after kills the dead letter holds $(wc -l < "$T/many.offsets") entries, wanted 300"
[ "$(uniq "$T/many.offsets" | wc -l)" -eq 300 ] && ok || fail "after kills the dead letter repeats entries"
# The checkpoint counts them over all runs
last=$("$WEIR" checkpoints "$T/many.ck" | awk '/latest/ { print $1 }')
"$WEIR" checkpoints "$T/many.ck" --epoch "$last" | grep -q "rejected:0: 300" && ok \
    || { fail "the checkpoint does not count 300 rejected"; "$WEIR" checkpoints "$T/many.ck" --epoch "$last" >&2; }

# --- cut back on resume --------------------------------------------------
# The kills above leave no dead letter bytes on disk past the commit: the
# dead letter is buffered up to 256 KiB, and those epochs reject 3 KB.
# Here an epoch rejects five lines of 70,000 bytes (64 KiB of each kept),
# so its dead letter reaches the disk before the commit; the kill-point
# build dies there (pipe-drained: quiescent, nothing committed), and the
# resume must cut those bytes back, or their entries would be twice.
big=$(head -c 70000 /dev/zero | tr '\0' x)
i=0
while [ $i -lt 100 ]; do
    if [ $((i % 4)) -eq 1 ]; then echo "$big$i"; else echo "$i"; fi
    i=$((i + 1))
done > "$T/big.txt"
desc="lines path=$T/big.txt max-line=100 dead-letter=$T/big.dead ! lines path=$T/big.out"
WEIR_KILL_AT=pipe-drained:3 "$WEIR_KP" run -q --checkpoint "$T/big.ck" --epoch-records 20 "$desc" 2>/dev/null
[ $? -eq 137 ] && ok || fail "the kill-point build did not die at pipe-drained:3"
last=$("$WEIR" checkpoints "$T/big.ck" | awk '/latest/ { print $1 }')
committed=$("$WEIR" checkpoints "$T/big.ck" --epoch "$last" | awk '/0:lines:dead-letter:/ { print $2 }')
size=$(wc -c < "$T/big.dead")
[ -n "$committed" ] && [ "$size" -gt "$committed" ] && ok \
    || fail "the kill left no dead letter bytes past the commit ($size bytes, $committed committed): the resume proves nothing"
"$WEIR" run -q --resume --checkpoint "$T/big.ck" --epoch-records 20 "$desc" && ok || fail "big: the resume failed"
dead "$T/big.dead" | sed 's/.*"offset":\([0-9]*\),.*/\1/' > "$T/big.offsets"
[ "$(wc -l < "$T/big.offsets")" -eq 25 ] && [ "$(sort -n "$T/big.offsets" | uniq | wc -l)" -eq 25 ] && ok \
    || fail "after a kill with uncommitted dead letter bytes it holds $(wc -l < "$T/big.offsets") entries, $(sort -n "$T/big.offsets" | uniq | wc -l) distinct; wanted 25"
[ "$(wc -l < "$T/big.out")" -eq 75 ] && ok || fail "big: the output holds $(wc -l < "$T/big.out") lines, wanted 75"

finish

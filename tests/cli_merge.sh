#!/bin/sh
# Graphs of several readers merged into one stream: every output compared
# with what jq computes from the inputs; --epoch-records counts what every
# reader read; exactly once after kills at a checkpoint's points and at
# random, with thread counts changed on resume; a resume over inputs that
# grew reads only what was added, for each reader; passes= of every
# reader, killed across the passes' ends; passes= that differ refused; a
# tee in its reader's threads feeding a merge, killed and resumed;
# followed readers merged, stopped, killed and resumed.
. "$(dirname "$0")/lib.sh"
command -v jq > /dev/null || { echo "skipped: jq is not installed (scripts/install-deps.sh installs it)"; exit 77; }

awk 'BEGIN { for (i = 0; i < 3000; i++) printf "{\"app\": %d, \"level\": \"%s\"}\n", i, (i % 3 ? "info" : "error") }' > "$T/app.jsonl"
awk 'BEGIN { for (i = 0; i < 2000; i++) printf "GET /page/%d 200\n", i }' > "$T/access.log"
# What the merge holds: the events as they are, each line as a JSON string
{ jq -c . "$T/app.jsonl"; jq -R -c . "$T/access.log"; } | sort > "$T/all.sorted"
norm () { jq -c . "$1"; }
M="json path=$T/app.jsonl ! m.  lines path=$T/access.log ! m.  identity name=m"

# The issue's example: two readers into one stage, one writer
"$WEIR" run "$M ! json path=$T/all.out" 2> "$T/err" || fail "two readers merged: $(cat "$T/err")"
norm "$T/all.out" | sort > "$T/got"; same "$T/got" "$T/all.sorted" "two readers merged"
grep -q "5000 records read, 5000 written" "$T/err" && ok || fail "the summary counts both readers: $(cat "$T/err")"
# Each reader's own order is kept at threads=1 on every stage
norm "$T/all.out" | grep '^{' > "$T/got"; jq -c . "$T/app.jsonl" > "$T/want"
same "$T/got" "$T/want" "the first reader's records in their order"
norm "$T/all.out" | grep -v '^{' > "$T/got"; jq -R -c . "$T/access.log" > "$T/want"
same "$T/got" "$T/want" "the second reader's records in their order"

# Readers into different branches of one graph: a filter on one, a tee
# after the merge into two writers
"$WEIR" run -q "json path=$T/app.jsonl ! filter '.level == \"error\"' ! m.  lines path=$T/access.log threads=2 split=9000 ! m.  tee name=m  m. ! json path=$T/t1.out  m. ! null" \
    || fail "two readers, a filter, a tee"
{ jq -c 'select(.level == "error")' "$T/app.jsonl"; jq -R -c . "$T/access.log"; } | sort > "$T/want"
norm "$T/t1.out" | sort > "$T/got"; same "$T/got" "$T/want" "a filtered reader and a split reader merged, then teed"
# Two range readers: no paths, each reader its own offsets
"$WEIR" run -q "range count=1000 ! m.  range count=500 start=5000 threads=2 ! m.  identity name=m ! lines path=$T/r.out" \
    || fail "two range readers"
{ seq 0 999; seq 5000 5499; } | sort > "$T/want"; sort "$T/r.out" > "$T/got"
same "$T/got" "$T/want" "two range readers"

# Every link is bounded apart: capacity= of the merge for each link into it
"$WEIR" graph "json path=$T/app.jsonl ! m.  lines path=$T/access.log ! m.  identity name=m capacity=5 ! null" > "$T/dot" \
    || fail "weir graph of a merge"
grep -q 's0 -> s2 \[label="capacity=5"' "$T/dot" && grep -q 's1 -> s2 \[label="capacity=5"' "$T/dot" && ok \
    || fail "weir graph: each link into the merge has capacity=5: $(cat "$T/dot")"

# --epoch-records counts what every reader read, together
rm -rf "$T/ck"
"$WEIR" run -q --checkpoint "$T/ck" --epoch-records 700 --epochs 1 "$M ! json path=$T/e.out" || fail "one epoch of 700"
"$WEIR" checkpoints "$T/ck" --epoch 1 > "$T/meta" || fail "the checkpoint of epoch 1"
read0=$(awk '$1 == "records_in:0:" {print $2}' "$T/meta"); read1=$(awk '$1 == "records_in:1:" {print $2}' "$T/meta")
[ $((read0 + read1)) -eq 700 ] && ok || fail "an epoch of 700 records: readers read $read0 and $read1"
[ "$("$WEIR" checkpoints "$T/ck" | awk '$1 == 1 {print $3}')" = 700 ] && ok \
    || fail "weir checkpoints counts what both readers read: $("$WEIR" checkpoints "$T/ck")"
grep -q '^  0|.*app.jsonl@' "$T/meta" && grep -q '^  1|.*access.log@' "$T/meta" && ok \
    || fail "each reader's offsets under its own prefix: $(cat "$T/meta")"
"$WEIR" run -q --checkpoint "$T/ck" --resume "$M ! json path=$T/e.out" || fail "resumed to the end"
norm "$T/e.out" | sort > "$T/got"; same "$T/got" "$T/all.sorted" "resumed after one epoch"

# Exactly once: SIGKILL at a checkpoint's points, then at random, resumed
# with other thread counts
awk 'BEGIN { for (i = 0; i < 60000; i++) printf "{\"app\": %d}\n", i }' > "$T/big.jsonl"
awk 'BEGIN { for (i = 0; i < 60000; i++) printf "GET /big/%d\n", i }' > "$T/big.log"
{ jq -c . "$T/big.jsonl"; jq -R -c . "$T/big.log"; } | sort > "$T/big.sorted"
J="json path=$T/big.jsonl split=200000 THREADS ! m.  lines path=$T/big.log split=300000 ! m.  identity name=m ! json path=$T/k.out"
for point in pipe-drained:2 writers-synced:3 after-leveldb-write:2; do
    rm -rf "$T/ck" "$T/k.out"
    killed_at $point "$T/ck" 10000 "$J" merge
    norm "$T/k.out" | sort > "$T/got"; same "$T/got" "$T/big.sorted" "merge killed at $point"
done
rm -rf "$T/ck" "$T/k.out"
kill_rounds "$T/ck" 3000 "$J"
norm "$T/k.out" | sort > "$T/got"; same "$T/got" "$T/big.sorted" "merge after random kills"

# A tee in its reader's threads, one branch merged with a second reader:
# the merge counts the tee's threads as its producers; killed at three
# points with 2 reader threads, resumed with 1
seq 1000000 1299999 > "$T/h.in"
{ seq 0 399999; cat "$T/h.in"; } | sort > "$T/h.want"
seq 0 399999 > "$T/h.bwant"
HJ="lines path=$T/h.in ! m.  range count=400000 THREADS ! tee name=t  t. ! m.  identity name=m ! lines path=$T/h.a  t. ! lines path=$T/h.b"
for point in pipe-drained:3 writers-synced:5 readers-resumed:4; do
    rm -rf "$T/hck" "$T/h.a" "$T/h.b"
    killed_at $point "$T/hck" 30000 "$HJ" "tee and merge"
    sort "$T/h.a" | cmp -s - "$T/h.want" && sort -n "$T/h.b" | cmp -s - "$T/h.bwant" && ok \
        || fail "tee and merge killed at $point: an output is not its records once"
done

# Inputs that grew: a resume reads what each reader's files gained
awk 'BEGIN { for (i = 60000; i < 60100; i++) printf "{\"app\": %d}\n", i }' >> "$T/big.jsonl"
awk 'BEGIN { for (i = 60000; i < 60050; i++) printf "GET /big/%d\n", i }' >> "$T/big.log"
"$WEIR" run -q --checkpoint "$T/ck" --resume --epoch-records 3000 "$(echo "$J" | sed 's/THREADS//')" 2> "$T/err" \
    || fail "resumed over grown inputs: $(cat "$T/err")"
{ jq -c . "$T/big.jsonl"; jq -R -c . "$T/big.log"; } | sort > "$T/want"
norm "$T/k.out" | sort > "$T/got"; same "$T/got" "$T/want" "each reader read what its file gained, once"

# Passes: a pass ends when both readers have read their inputs, and the
# next reads both again; killed across the passes' ends, resumed with
# other thread counts, every pass's records once
for i in 1 2 3; do cat "$T/all.sorted"; done | sort > "$T/thrice"
P="json path=$T/app.jsonl passes=3 THREADS ! m.  lines path=$T/access.log passes=3 ! m.  identity name=m ! json path=$T/p.out"
"$WEIR" run -q "$(echo "$P" | sed 's/THREADS//')" || fail "two readers, passes=3"
norm "$T/p.out" | sort > "$T/got"; same "$T/got" "$T/thrice" "two readers, three passes"
rm -f "$T/p.out"
WEIR_KILL_AT=writers-synced:4 "$WEIR_KP" run -q --checkpoint "$T/pck" --epoch-records 2000 \
    "$(echo "$P" | sed 's/THREADS/threads=2/')" 2> "$T/err"
rc=$?
[ $rc -eq 137 ] && ok || fail "passes killed at writers-synced:4: exit $rc $(cat "$T/err")"
# Epoch 3 read the last 1,000 of the first pass's 5,000 records
"$WEIR" checkpoints "$T/pck" --epoch 3 | grep -q "^  pass: 1$" && ok \
    || fail "checkpoint 3 does not go on in the second pass: $("$WEIR" checkpoints "$T/pck" --epoch 3)"
kill_rounds "$T/pck" 1500 "$P"
norm "$T/p.out" | sort > "$T/got"; same "$T/got" "$T/thrice" "two readers, three passes, after kills"

# Followed readers: an application's JSON log and an access log tailed
# into one stream, beside a file read once; appends, a rotation, SIGTERM,
# a resume with more appended, SIGKILL and a resume: every line once.
F="$T/follow"
mkdir -p "$F/app" "$F/web"
seq 1 3 | sed 's/.*/{"app": &}/' > "$F/app/a.jsonl"
seq 1 2 | sed 's/^/GET \/w\//' > "$F/web/access.log"
FJ="json path=$F/app/*.jsonl follow=1 ! m.  lines path=$F/web/access* follow=1 rotate-wait=300 ! m.  json path=$T/app.jsonl ! m.  identity name=m ! json path=$F/out.jsonl"
follow_job () {
    "$WEIR" run -q --checkpoint "$F/ck" $1 --epoch-seconds 0.2 "$FJ" 2> "$F/err" &
    pid=$!
}
follow_job ""
wait_lines "$F/out.jsonl" 3005 || fail "the followed and the read-once inputs were not read: $(cat "$F/err")"
seq 4 6 | sed 's/.*/{"app": &}/' >> "$F/app/a.jsonl"
mv "$F/web/access.log" "$F/web/access.log.1"
seq 3 4 | sed 's/^/GET \/w\//' > "$F/web/access.log"
echo "GET /w/late" >> "$F/web/access.log.1"
wait_lines "$F/out.jsonl" 3011 || fail "appends and a rotation were not followed in a merge"
kill -TERM $pid; wait $pid; rc=$?
[ $rc -eq 143 ] && ok || fail "a merge of followed readers ended with $rc on SIGTERM, wanted 143: $(cat "$F/err")"
seq 7 8 | sed 's/.*/{"app": &}/' >> "$F/app/a.jsonl"
follow_job --resume
wait_lines "$F/out.jsonl" 3013 || fail "the resumed merge did not read what was appended: $(cat "$F/err")"
sleep 0.5
kill -KILL $pid; wait $pid 2> /dev/null
seq 5 6 | sed 's/^/GET \/w\//' >> "$F/web/access.log"
follow_job --resume
wait_lines "$F/out.jsonl" 3015 || fail "the merge resumed after SIGKILL did not read what was appended: $(cat "$F/err")"
sleep 0.5
kill -TERM $pid; wait $pid
{ jq -c . "$T/app.jsonl" "$F"/app/*.jsonl; cat "$F"/web/* | jq -R -c .; } | sort > "$T/want"
norm "$F/out.jsonl" | sort > "$T/got"; same "$T/got" "$T/want" "two followed readers and one read once, merged, stopped and killed"

# What is not built yet is refused, saying so, before anything is written
rm -f "$T/never.out"
expect_exit 2 "lines has passes=2 and json passes=1: a pass of a graph of 2 readers ends when every reader has read its input" -- \
    "$WEIR" run "json path=$T/app.jsonl ! m.  lines path=$T/access.log passes=2 ! m.  identity name=m ! json path=$T/never.out"
[ ! -e "$T/never.out" ] && ok || fail "a refused merge wrote its output"
# An output that is an input of either reader
expect_exit 2 "is also an input of the reader 'lines'" -- \
    "$WEIR" run "json path=$T/app.jsonl ! m.  lines path=$T/access.log ! m.  identity name=m ! lines path=$T/access.log"

finish

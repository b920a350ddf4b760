#!/bin/sh
# Tumbling windows (window=, time=, lateness=): every aggregation per key
# and window against tests/windows.py's plain computation, out-of-order
# and late records (counted, in the dead letter with their reason, or
# failing the job), windows emitted while the input still flows, exactly
# once across kills at a checkpoint's points and at random with the
# thread count changed, processing time, bad times and refused
# descriptions.
. "$(dirname "$0")/lib.sh"
command -v jq > /dev/null || { echo "skipped: jq is not installed (scripts/install-deps.sh installs it)"; exit 77; }
command -v python3 > /dev/null || { echo "skipped: python3 is not installed (scripts/install-deps.sh installs it)"; exit 77; }
REF="python3 $(dirname "$0")/windows.py"

# 20,000 events, 0.1 s apart, out of order by up to 40 s, every 997th an
# hour late; 40,000 more without those, for the runs with several threads
$REF events 20000 1 > "$T/late.jsonl"
$REF events 40000 0 > "$T/ev.jsonl"

value_of () {
    case $1 in count) ;; distinct) echo value=.ip ;; *) echo value=.b ;; esac
}

# One thread, lateness=60s: every window, and the late records aside
for op in count sum min max mean distinct; do
    $REF expect $op 10 60 < "$T/late.jsonl" 2> "$T/late.want" | jq -c . | sort > "$T/want"
    rm -f "$T/dl.mp"
    "$WEIR" run -q --stats "$T/stats.json" "json path=$T/late.jsonl ! $op key=.u $(value_of $op) window=10s time=.t lateness=60s dead-letter=$T/dl.mp ! json path=$T/got.out" \
        || fail "$op per window"
    jq -c . "$T/got.out" | sort > "$T/got"
    same "$T/got" "$T/want" "$op per 10 s window, lateness=60s"
    "$WEIR" run -q "msgpack path=$T/dl.mp ! json path=$T/dl.jsonl" || fail "reading the dead letter"
    [ "$(wc -l < "$T/dl.jsonl")" -eq "$(cat "$T/late.want")" ] && ok \
        || fail "$op: $(wc -l < "$T/dl.jsonl") records in the dead letter, $(cat "$T/late.want") late"
    [ "$(jq -r '.reason' "$T/dl.jsonl" | grep -c '^late: its time .* is in the window from .* to .*, closed at .* (the latest time seen less lateness=60s)$')" \
        -eq "$(cat "$T/late.want")" ] && ok || fail "$op: a late record's reason: $(jq -r .reason "$T/dl.jsonl" | head -2)"
    jq -e ".stages[1].metrics.late == $(cat "$T/late.want") and .stages[1].metrics.windows == $(wc -l < "$T/want")" \
        "$T/stats.json" > /dev/null && ok || fail "$op: metrics $(jq -c '.stages[1].metrics' "$T/stats.json")"
done
[ "$(cat "$T/late.want")" -gt 100 ] && ok || fail "too few late records to test: $(cat "$T/late.want")"

# Without on-error=skip a late record fails the job, naming it
expect_exit 1 "count: a bad record .*: late: its time 2026-11-27T.* is in the window from .* closed at" -- \
    "$WEIR" run "json path=$T/late.jsonl ! count key=.u window=10s time=.t lateness=60s ! null"

# Three threads, windows closing as the input flows (lateness=20m: none
# late, whatever the threads' order), against one thread's result
for op in count sum distinct; do
    $REF expect $op 10 1200 < "$T/ev.jsonl" 2> "$T/late.want" | jq -c . | sort > "$T/want.$op"
    [ "$(cat "$T/late.want")" -eq 0 ] && ok || fail "$op: the reference has late records"
    "$WEIR" run -q "json path=$T/ev.jsonl ! $op key=.u $(value_of $op) window=10s time=.t lateness=20m threads=3 ! json path=$T/got.out" \
        || fail "$op on 3 threads"
    jq -c . "$T/got.out" | sort > "$T/got"
    same "$T/got" "$T/want.$op" "$op per window on 3 threads"
done
# Windows are emitted when they close, not at the end: after 3 epochs of
# 10,000 records (of 4), those more than 20 minutes behind are out
rm -rf "$T/ck" "$T/part.out"
"$WEIR" run -q --checkpoint "$T/ck" --epochs 3 --epoch-records 10000 \
    "json path=$T/ev.jsonl ! count key=.u window=10s time=.t lateness=20m threads=2 ! json path=$T/part.out" \
    || fail "3 epochs"
n=$(wc -l < "$T/part.out")
[ "$n" -gt 500 ] && [ "$n" -lt "$(wc -l < "$T/want.count")" ] && ok \
    || fail "after 3 epochs of 4, $n windows were emitted (of $(wc -l < "$T/want.count"))"
"$WEIR" run -q --checkpoint "$T/ck" --resume "json path=$T/ev.jsonl ! count key=.u window=10s time=.t lateness=20m threads=2 ! json path=$T/part.out" \
    || fail "the resume after 3 epochs"
jq -c . "$T/part.out" | sort > "$T/got"
same "$T/got" "$T/want.count" "windows paused after 3 epochs and resumed, each once"

# Killed at a checkpoint's points on 3 threads, resumed on 1 (and the
# other way round): every window once, exact
J="json path=$T/ev.jsonl ! sum key=.u value=.b window=10s time=.t lateness=20m THREADS ! json path=$T/k.out"
for point in keyed-epoch-ended:3 writers-synced:4 shuffle-part-sent:60 after-leveldb-write:3; do
    rm -rf "$T/ck" "$T/k.out"
    killed_at $point "$T/ck" 7000 "$J" "windowed sums" 3 1
    jq -c . "$T/k.out" | sort > "$T/got"
    same "$T/got" "$T/want.sum" "windowed sums killed at $point, 3 threads then 1"
done
rm -rf "$T/ck" "$T/k.out"
killed_at keyed-epoch-ended:2 "$T/ck" 7000 "$J" "windowed sums" 1 2
jq -c . "$T/k.out" | sort > "$T/got"
same "$T/got" "$T/want.sum" "windowed sums killed on 1 thread, resumed on 2"
rm -rf "$T/ck" "$T/k.out"
kill_rounds "$T/ck" 5000 "$J"
jq -c . "$T/k.out" | sort > "$T/got"
same "$T/got" "$T/want.sum" "windowed sums after random kills"

# The latest time seen is in the checkpoint: killed and resumed, the same
# records are late, each once in the dead letter
$REF expect count 10 60 < "$T/late.jsonl" 2> "$T/late.want" | jq -c . | sort > "$T/want"
L="json path=$T/late.jsonl ! count key=.u window=10s time=.t lateness=60s dead-letter=$T/kdl.mp THREADS ! json path=$T/k.out"
rm -rf "$T/ck" "$T/k.out" "$T/kdl.mp"
killed_at keyed-epoch-ended:2 "$T/ck" 3000 "$L" "late records" 1 1
jq -c . "$T/k.out" | sort > "$T/got"
same "$T/got" "$T/want" "windows with late records, killed and resumed"
"$WEIR" run -q "msgpack path=$T/kdl.mp ! json path=$T/kdl.jsonl" || fail "reading the dead letter"
[ "$(wc -l < "$T/kdl.jsonl")" -eq "$(cat "$T/late.want")" ] && ok \
    || fail "killed and resumed: $(wc -l < "$T/kdl.jsonl") records in the dead letter, $(cat "$T/late.want") late"

# Processing time: the window of the moment each record is counted
before=$(date -u +%s)
"$WEIR" run -q "range count=3000 ! count key=. window=1h ! json path=$T/p.out" || fail "processing time"
after=$(date -u +%s)
[ "$(wc -l < "$T/p.out")" -eq 3000 ] && ok || fail "processing time: $(wc -l < "$T/p.out") windows, not 3000"
good=$(jq --argjson before "$before" --argjson after "$after" \
    '.[1] == 1 and (.[3] | fromdateiso8601) - (.[2] | fromdateiso8601) == 3600
     and (.[2] | fromdateiso8601) <= $after and (.[3] | fromdateiso8601) > $before' "$T/p.out" | grep -c '^true$')
[ "$good" -eq 3000 ] && ok || fail "processing time windows: $good of 3000 as expected: $(head -2 "$T/p.out")"

# Bad times are bad records, named
printf '%s\n' '{"u":"a","t":"2026-11-27T18:00:00Z"}' > "$T/good.jsonl"
for bad in '{"u":"a"}|time=\.t is absent' \
    '{"u":"a","t":{"s":1}}|time=\.t is a map, not a time \(RFC 3339 or epoch seconds\)' \
    '{"u":"a","t":"yesterday"}|time=\.t is '"'"'yesterday'"'"', not an RFC 3339 time' \
    '{"u":"a","t":"2026-11-27T18:00:00"}|time=\.t is .2026-11-27T18:00:00., not an RFC 3339 time' \
    '{"u":"a","t":1e300}|time=\.t is 1e\+300, not a time in epoch seconds'; do
    { cat "$T/good.jsonl"; echo "${bad%%|*}"; } > "$T/bad.jsonl"
    expect_exit 1 "count: a bad record .*: ${bad#*|}" -- \
        "$WEIR" run "json path=$T/bad.jsonl ! count key=.u window=1m time=.t ! null"
done

# Wrong descriptions are refused before anything runs
refused "count: window=60: expected a length of time, a number and a unit" "json path=$T/ev.jsonl ! count key=.u window=60 ! json path=$T/never.out"
refused "count: window=0s: expected a length of time" "json path=$T/ev.jsonl ! count key=.u window=0s ! json path=$T/never.out"
refused "count: time= is for windows, and there is no window=" "json path=$T/ev.jsonl ! count key=.u time=.t ! json path=$T/never.out"
refused "count: emit=epoch and window=1m: a window is emitted when it closes" "json path=$T/ev.jsonl ! count key=.u window=1m emit=epoch ! json path=$T/never.out"
refused "count: lateness= needs time=" "json path=$T/ev.jsonl ! count key=.u window=1m lateness=5s ! json path=$T/never.out"
refused "count: lateness=soon: expected a length of time" "json path=$T/ev.jsonl ! count key=.u window=1m time=.t lateness=soon ! json path=$T/never.out"
refused "count: time=\.t\[: expected a path step" "json path=$T/ev.jsonl ! count key=.u window=1m time=.t[ ! json path=$T/never.out"

finish

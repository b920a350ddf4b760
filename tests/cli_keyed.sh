#!/bin/sh
# Keyed stages (key=): every record of a key goes to one thread, through
# a straight line, a forwarding stage, a tee and a merge; the builtin
# aggregations compared with what jq computes; the changelog; keys of
# every kind; a key too long; rescaling by thread count across kills at
# a checkpoint's points and at random; the number of key groups fixed.
. "$(dirname "$0")/lib.sh"
command -v jq > /dev/null || { echo "skipped: jq is not installed (scripts/install-deps.sh installs it)"; exit 77; }
: "${PLUGINS_DIR:?PLUGINS_DIR must point at the test plugins}"
WHOSE="$PLUGINS_DIR/whose.so"
DEDUPE="$PLUGINS_DIR/dedupe.so"

# 60,000 records of 97 users, bytes from -30,000 on, some floats
awk 'BEGIN { for (i = 0; i < 60000; i++) {
    b = (i % 10 == 3) ? (i - 30000) ".5" : i - 30000
    printf "{\"u\": \"user%d\", \"b\": %s}\n", (i * 7919) % 97, b } }' > "$T/in.jsonl"

# one_thread FILE WHAT: FILE holds [record, thread] lines; each user went
# to one thread, and the users to more than one
one_thread () {
    jq -r '"\(.[0].u) \(.[1])"' "$1" | sort -u > "$T/pairs"
    [ "$(cut -d' ' -f1 "$T/pairs" | uniq -d | wc -l)" -eq 0 ] && ok \
        || fail "$2: a key went to several threads: $(cut -d' ' -f1 "$T/pairs" | uniq -d | head -3)"
    [ "$(cut -d' ' -f2 "$T/pairs" | sort -u | wc -l)" -gt 1 ] && ok || fail "$2: every key went to one thread"
    [ "$(wc -l < "$1")" -eq 60000 ] && ok || fail "$2: $(wc -l < "$1") records, not 60000"
}
"$WEIR" run -q "json path=$T/in.jsonl threads=2 ! $WHOSE key=.u threads=3 ! json path=$T/w1" || fail "straight"
one_thread "$T/w1" "a reader into a keyed stage"
"$WEIR" run -q "json path=$T/in.jsonl threads=2 ! identity threads=2 ! $WHOSE key=.u threads=3 ! json path=$T/w2" \
    || fail "forwarded"
one_thread "$T/w2" "identity into a keyed stage"
"$WEIR" run -q "json path=$T/in.jsonl threads=2 ! tee name=t  t. ! $WHOSE key=.u threads=3 ! json path=$T/w3  t. ! null" \
    || fail "tee"
one_thread "$T/w3" "a tee into a keyed stage"
head -30000 "$T/in.jsonl" > "$T/a.jsonl"; tail -30000 "$T/in.jsonl" > "$T/b.jsonl"
"$WEIR" run -q "json path=$T/a.jsonl ! m.  json path=$T/b.jsonl threads=2 ! m.  $WHOSE name=m key=.u threads=4 ! json path=$T/w4" \
    || fail "merge"
one_thread "$T/w4" "a merge into a keyed stage"
# A keyed writer's threads, each writing its keys
"$WEIR" run -q "json path=$T/in.jsonl ! $WHOSE key=.u threads=2 ! json key=[0].u threads=3 path=$T/w5" || fail "keyed writer"
one_thread "$T/w5" "a keyed stage into a keyed writer"

# The aggregations against jq
jq -s -c 'group_by(.u) | map([.[0].u, length]) | .[]' "$T/in.jsonl" > "$T/want.count"
jq -s -c 'group_by(.u) | map([.[0].u, (map(.b) | add)]) | .[]' "$T/in.jsonl" > "$T/want.sum"
jq -s -c 'group_by(.u) | map([.[0].u, (map(.b) | min)]) | .[]' "$T/in.jsonl" > "$T/want.min"
jq -s -c 'group_by(.u) | map([.[0].u, (map(.b) | max)]) | .[]' "$T/in.jsonl" > "$T/want.max"
jq -s -c 'group_by(.u) | map([.[0].u, ((map(.b) | add) / length)]) | .[]' "$T/in.jsonl" > "$T/want.mean"
for op in count sum min max mean; do
    value="value=.b"
    [ $op = count ] && value=
    "$WEIR" run -q "json path=$T/in.jsonl threads=2 ! $op key=.u $value threads=3 ! json path=$T/$op.out" || fail "$op"
    jq -c . "$T/$op.out" | sort > "$T/got"
    sort "$T/want.$op" > "$T/want"
    same "$T/got" "$T/want" "$op key=.u"
done

# The combiner: a hot key is folded by its producers, which hold their
# partial aggregates until the epoch's end, so 200,000 records of 3 keys
# arrive as at most one partial aggregate per key and producer thread,
# with the same sums; keys that are all distinct are not folded (the
# combiner rests)
awk 'BEGIN { for (i = 0; i < 200000; i++) printf "{\"u\":\"u%d\",\"b\":%d}\n", i % 3, i }' > "$T/hot.jsonl"
"$WEIR" run -q --stats "$T/hot.json" "json path=$T/hot.jsonl threads=2 ! sum key=.u value=.b threads=2 ! json path=$T/hot.out" \
    || fail "hot keys"
sort "$T/hot.out" > "$T/got"
printf '["u0",6666633333]\n["u1",6666700000]\n["u2",6666566667]\n' > "$T/want"
same "$T/got" "$T/want" "sums of hot keys"
jq -e '.stages[1].records_in == 200000 and .stages[1].metrics.combined == 200000 and .stages[1].metrics.partials <= 6' \
    "$T/hot.json" > /dev/null && ok || fail "hot keys were not combined: $(jq -c '.stages[1]' "$T/hot.json")"
awk 'BEGIN { for (i = 0; i < 100000; i++) printf "{\"u\":\"u%d\"}\n", i }' > "$T/cold.jsonl"
"$WEIR" run -q --stats "$T/cold.json" "json path=$T/cold.jsonl ! count key=.u threads=2 ! null" || fail "distinct keys"
jq -e '.stages[1].records_in == 100000 and (.stages[1].metrics.combined // 0) < 10000 and .stages[1].metrics.keys == 100000' \
    "$T/cold.json" > /dev/null && ok || fail "distinct keys were combined: $(jq -c '.stages[1]' "$T/cold.json")"

# Words folded as they are emitted: a str record into a stage keyed by
# the whole record (count key=.) is folded by the producer without being
# packed into a batch and read back, whether emitted with weir_emit_str,
# packed with weir_packer or (the usual way) given as an object.  Hot
# words, words of 32 bytes and more (a longer str header), empty ones
# (two spaces); every piece counted as awk counts it, on every path, and
# every piece in the counts of the stages and links
WORDS="$PLUGINS_DIR/words.so"
awk 'BEGIN { for (i = 0; i < 20000; i++) {
    printf "the cat w%d %s\n", i % 500, (i % 7 == 0) ? "a-word-of-more-than-thirty-two-bytes-" i % 3 : "x  y" } }' > "$T/words.txt"
tr ' ' '\n' < "$T/words.txt" | sort | uniq -c | awk '{ printf "[\"%s\",%d]\n", $2, $1 }' | sort > "$T/want.words"
pieces=$(tr ' ' '\n' < "$T/words.txt" | wc -l)
for via in str packer object; do
    "$WEIR" run -q --stats "$T/words.json" \
        "lines path=$T/words.txt split=64k threads=2 ! $WORDS via=$via threads=2 ! count key=. threads=3 ! json path=$T/words.out" \
        || fail "words via=$via"
    sort "$T/words.out" > "$T/got"
    same "$T/got" "$T/want.words" "words emitted via=$via, counted"
    jq -e --argjson n "$pieces" '.stages[1].records_out == $n and .stages[2].records_in == $n
        and .stages[2].metrics.combined == $n and .stages[2].metrics.partials <= 3 * 1000' "$T/words.json" > /dev/null \
        && ok || fail "words via=$via: not $pieces pieces through: $(jq -c '.stages[1,2]' "$T/words.json")"
done
# Words that are all distinct: the combiner rests, whichever way they come
awk 'BEGIN { for (i = 0; i < 100000; i++) printf "u%d\n", i }' > "$T/distinct.txt"
"$WEIR" run -q --stats "$T/dw.json" "lines path=$T/distinct.txt ! $WORDS via=str ! count key=. threads=2 ! null" \
    || fail "distinct words"
jq -e '.stages[2].records_in == 100000 and (.stages[2].metrics.combined // 0) < 10000 and .stages[2].metrics.keys == 100000' \
    "$T/dw.json" > /dev/null && ok || fail "distinct words were combined: $(jq -c '.stages[2]' "$T/dw.json")"
# Stopped after 2 epochs and resumed on other thread counts: every word
# folded before the stop is in the checkpoint, none twice
"$WEIR" run -q --checkpoint "$T/wck" --epoch-records 3000 --epochs 2 \
    "lines path=$T/words.txt ! $WORDS via=str threads=2 ! count key=. threads=2 ! json path=$T/wr.out" || fail "words, 2 epochs"
"$WEIR" run -q --checkpoint "$T/wck" --resume --epoch-records 3000 \
    "lines path=$T/words.txt threads=2 ! $WORDS via=str threads=3 ! count key=. threads=3 ! json path=$T/wr.out" \
    || fail "words, resumed"
sort "$T/wr.out" > "$T/got"
same "$T/got" "$T/want.words" "words counted across a stop and a resume"
# A word longer than a key may be is refused on every path, naming it
awk 'BEGIN { s = "w"; while (length (s) < 70000) s = s s; print "short " s }' > "$T/long.txt"
for via in str packer object; do
    expect_exit 1 "words.so: a bad record \"w*\.\.\.: its key \(key=\.\) is 131077 bytes, longer than the 65536 bytes" -- \
        "$WEIR" run "lines path=$T/long.txt max-line=1M ! $WORDS via=$via ! count key=. ! null"
done
# A value the combiner cannot fold goes on to its stage, which judges it
echo "a b" > "$T/ab.txt"
for via in str object; do
    expect_exit 1 "sum: a bad record \"a\": value=\.n is absent, not a number" -- \
        "$WEIR" run "lines path=$T/ab.txt ! $WORDS via=$via ! sum key=. value=.n ! null"
done

# distinct: the distinct values of each key, against jq; the whole
# record by default; across a kill and a resume on other thread counts
awk 'BEGIN { for (i = 0; i < 30000; i++) printf "{\"page\":\"p%d\",\"user\":\"u%d\"}\n", i % 13, (i * 31) % 211 }' > "$T/pages.jsonl"
jq -s -c 'group_by(.page) | map([.[0].page, (map(.user) | unique | length)]) | .[]' "$T/pages.jsonl" | sort > "$T/want.distinct"
"$WEIR" run -q "json path=$T/pages.jsonl threads=2 ! distinct key=.page value=.user threads=3 ! json path=$T/d1.out" || fail "distinct"
sort "$T/d1.out" > "$T/got"; same "$T/got" "$T/want.distinct" "distinct key=.page value=.user"
jq -s -c 'group_by(.page) | map([.[0].page, (unique | length)]) | .[]' "$T/pages.jsonl" | sort > "$T/want.records"
"$WEIR" run -q "json path=$T/pages.jsonl ! distinct key=.page threads=2 ! json path=$T/d2.out" || fail "distinct records"
sort "$T/d2.out" > "$T/got"; same "$T/got" "$T/want.records" "distinct key=.page (whole records)"
rm -rf "$T/ck" "$T/d3.out"
DJ="json path=$T/pages.jsonl ! distinct key=.page value=.user THREADS ! json path=$T/d3.out"
killed_at writers-synced:3 "$T/ck" 4000 "$DJ" distinct 3 1
sort "$T/d3.out" > "$T/got"; same "$T/got" "$T/want.distinct" "distinct killed, resumed on 1 thread"

# Integers stay integers; a float makes the sum a float; a sum past 64
# bits goes on as a float rather than wrapping
printf '{"k":"a","v":1}\n{"k":"a","v":2}\n{"k":"b","v":1}\n{"k":"b","v":0.5}\n{"k":"c","v":9223372036854775807}\n{"k":"c","v":1}\n' > "$T/kinds.jsonl"
"$WEIR" run -q "json path=$T/kinds.jsonl ! sum key=.k value=.v ! json path=$T/kinds.out" || fail "sum of kinds"
sort "$T/kinds.out" > "$T/got"
printf '["a",3]\n["b",1.5]\n["c",9.223372036854776e+18]\n' > "$T/want"
same "$T/got" "$T/want" "sums of integers and floats"

# The changelog: at each epoch's end the keys that changed, with their
# value; each key's last line is its final value, and no epoch repeats a
# key it did not change
awk 'BEGIN { for (i = 0; i < 3000; i++) printf "{\"u\": \"%s%d\"}\n", (i < 1500 ? "early" : "late"), i % 10 }' > "$T/cl.jsonl"
"$WEIR" run -q --checkpoint "$T/clck" --epoch-records 1000 "json path=$T/cl.jsonl ! count key=.u emit=epoch threads=2 ! json path=$T/cl.out" \
    || fail "changelog"
jq -r '.[0]' "$T/cl.out" | sort | uniq -c | awk '{ print $2, $1 }' | sort > "$T/got"
printf 'early%d 2\n' 0 1 2 3 4 5 6 7 8 9 > "$T/want.a"; printf 'late%d 2\n' 0 1 2 3 4 5 6 7 8 9 >> "$T/want.a"
sort "$T/want.a" > "$T/want"
same "$T/got" "$T/want" "each key in the changelog of the epochs it changed in, and only those"
jq -c 'select(.[1] == 150)' "$T/cl.out" | wc -l | grep -qx 20 && ok || fail "changelog final values: $(cat "$T/cl.out")"

# Keys of every kind, compared as values: 1 and 1.0 differ (a float is
# no integer), a missing key is nil, as null is
printf '%s\n' '{"k":1}' '{"k":1}' '{"k":"1"}' '{"k":1.5}' '{"k":true}' '{"k":null}' '{"x":0}' '{"k":[1,2]}' \
    '{"k":[1,2]}' '{"k":{"a":1}}' '{"k":-1}' '{"k":1.0}' > "$T/types.jsonl"
"$WEIR" run -q "json path=$T/types.jsonl ! count key=.k threads=2 ! json path=$T/types.out" || fail "keys of every kind"
sort "$T/types.out" > "$T/got"
printf '%s\n' '["1",1]' '[-1,1]' '[1,2]' '[1.0,1]' '[1.5,1]' '[[1,2],2]' '[null,2]' '[true,1]' '[{"a":1},1]' | sort > "$T/want"
same "$T/got" "$T/want" "keys of every kind"

# A key longer than the limit is a bad record of the stage that sends it
awk 'BEGIN { printf "{\"k\":\""; for (i = 0; i < 70000; i++) printf "x"; printf "\"}\n{\"k\":\"short\"}\n" }' > "$T/huge.jsonl"
expect_exit 1 "its key \(key=\.k\) is 70005 bytes, longer than the 65536 bytes a key may have" -- \
    "$WEIR" run "json path=$T/huge.jsonl ! count key=.k ! null"
"$WEIR" run -q "json path=$T/huge.jsonl on-error=skip dead-letter=$T/dl.mp ! count key=.k ! json path=$T/huge.out" \
    || fail "a huge key skipped"
grep -qx '\["short",1\]' "$T/huge.out" && ok || fail "after a skipped huge key: $(cat "$T/huge.out")"

# Wrong descriptions are refused before anything runs
refused "a reader has no input: give key= to the stage the records go to" "json path=$T/in.jsonl key=.u ! json path=$T/never.out"
refused "count needs key=PATH" "json path=$T/in.jsonl ! count ! json path=$T/never.out"
refused "sum needs value=PATH" "json path=$T/in.jsonl ! sum key=.u ! json path=$T/never.out"
refused "count: key=\.u\[: expected a path step" "json path=$T/in.jsonl ! count key=.u[ ! json path=$T/never.out"
refused "count: key=user: expected a path step .* \(a field is a path: key=\.user\)" "json path=$T/in.jsonl ! count key=user ! json path=$T/never.out"
refused "postgres takes the columns of an upsert's unique key as conflict=COLUMNS" "json path=$T/in.jsonl ! postgres table=t mode=upsert key=id"
refused "emit=never: expected end or epoch" "json path=$T/in.jsonl ! count key=.u emit=never ! json path=$T/never.out"
refused "count has threads=3 and the job 2 key groups" --key-groups 2 "json path=$T/in.jsonl ! count key=.u threads=3 ! json path=$T/never.out"
expect_exit 1 "sum: a bad record .*: value=\.x is absent, not a number" -- "$WEIR" run "json path=$T/in.jsonl ! sum key=.u value=.x ! null"

# Rescaled: killed at a checkpoint's points with 3 keyed threads, resumed
# with 1; then random kills, the thread counts changing every round.  The
# combiner sends a part per consumer thread at each epoch's end (97 keys
# over 3 threads): shuffle-part-sent:10 comes in the fourth epoch.
J="json path=$T/in.jsonl split=400000 threads=2 ! sum key=.u value=.b THREADS ! json path=$T/k.out"
for point in pipe-drained:2 writers-synced:3 after-leveldb-write:2 shuffle-part-sent:10 keyed-epoch-ended:5; do
    rm -rf "$T/ck" "$T/k.out"
    killed_at $point "$T/ck" 7000 "$J" sums 3 1
    jq -c . "$T/k.out" | sort > "$T/got"; sort "$T/want.sum" > "$T/want"
    same "$T/got" "$T/want" "sums after a kill at $point, 3 threads then 1"
done
rm -rf "$T/ck" "$T/k.out"
kill_rounds "$T/ck" 3000 "$J"
jq -c . "$T/k.out" | sort > "$T/got"; same "$T/got" "$T/want" "sums after random kills"

# The number of key groups is the job's: a resume takes it, another is
# refused naming both
rm -rf "$T/ck" "$T/g.out"
"$WEIR" run -q --checkpoint "$T/ck" --key-groups 16 --epochs 2 --epoch-records 5000 \
    "json path=$T/in.jsonl ! count key=.u threads=2 ! json path=$T/g.out" || fail "16 key groups, 2 epochs"
expect_exit 2 "--key-groups 64, and the job in '$T/ck' was created with 16 key groups \(checkpoint 2\)" -- \
    "$WEIR" run --checkpoint "$T/ck" --resume --key-groups 64 "json path=$T/in.jsonl ! count key=.u threads=2 ! json path=$T/g.out"
"$WEIR" run -q --checkpoint "$T/ck" --resume "json path=$T/in.jsonl ! count key=.u threads=3 ! json path=$T/g.out" \
    || fail "resumed without --key-groups"
sort "$T/g.out" > "$T/got"; sort "$T/want.count" > "$T/want"
same "$T/got" "$T/want" "counts over 16 key groups, resumed with 3 threads"
"$WEIR" checkpoints "$T/ck" --epoch 3 > "$T/list" 2>&1
grep -q "keys/1/" "$T/list" && ok || fail "the key groups' state is not among the checkpoint's blobs: $(cat "$T/list")"

# A plugin's keyed state (weir_key_state, weir_key_delete, weir_key_each):
# the first record of each user passes, over 3 threads, across kills and
# resumes with other thread counts; a forgotten key passes again
jq -c -s 'group_by(.u) | map(.[0].u) | .[]' "$T/in.jsonl" | sort > "$T/want.users"
D="json path=$T/in.jsonl split=400000 threads=2 ! $DEDUPE key=.u THREADS ! json path=$T/d.out"
for point in writers-synced:3 keyed-epoch-ended:4; do
    rm -rf "$T/ck" "$T/d.out"
    killed_at $point "$T/ck" 7000 "$D" dedupe 3 2
    jq -r 'select(type == "object") | .u' "$T/d.out" | sort > "$T/got"
    sed 's/"//g' "$T/want.users" > "$T/want"
    same "$T/got" "$T/want" "the first record of each user once, killed at $point, resumed on 2 threads"
    jq -r 'select(type == "array") | .[1]' "$T/d.out" | awk '{ n += $1 } END { print n }' | grep -qx 97 && ok \
        || fail "dedupe holds $(jq -c 'select(type == "array")' "$T/d.out" | tr '\n' ' ') keys, not 97"
done
printf '%s\n' '{"u":"a","n":1}' '{"u":"a","n":2}' '{"u":"a","forget":true}' '{"u":"a","n":3}' '{"u":"b","n":4}' > "$T/f.jsonl"
"$WEIR" run -q "json path=$T/f.jsonl ! $DEDUPE key=.u ! json path=$T/f.out" || fail "dedupe with forget"
printf '%s\n' '{"u":"a","n":1}' '{"u":"a","n":3}' '{"u":"b","n":4}' '["held",2]' > "$T/want"
same "$T/f.out" "$T/want" "a forgotten key passes again"
expect_exit 1 "weir_key_state: '.*dedupe.so' keeps state per key only with key=PATH" -- \
    "$WEIR" run "json path=$T/f.jsonl ! $DEDUPE ! null"
printf '%s\n' '{"u":"a"}' '{"u":"a","big":true}' > "$T/big.jsonl"
expect_exit 1 "weir_key_state: the keyed state holds values of 1 bytes, and values of 2 bytes were asked for" -- \
    "$WEIR" run "json path=$T/big.jsonl ! $DEDUPE key=.u ! null"

# A msgpack value per key (weir_key_value, weir_key_set_value,
# weir_key_each_value): {n, sum, s} per user, s growing with every record
# (the engine moves a value that outgrows its room), on 3 threads;
# killed at a checkpoint's points and resumed on 1
COLLECT="$PLUGINS_DIR/collect.so"
awk 'BEGIN { for (i = 0; i < 60000; i++)
    printf "{\"u\": \"user%d\", \"v\": %d, \"t\": \"%c\"}\n", (i * 7919) % 97, i % 1000, 97 + i % 26 }' > "$T/col.jsonl"
jq -c -s 'group_by(.u) | map([.[0].u, length, (map(.v) | add), (map(.t) | sort | join(""))]) | .[]' "$T/col.jsonl" \
    | sort > "$T/want.col"
collected () {
    jq -c '[.[0], .[1].n, .[1].sum, (.[1].s | split("") | sort | join(""))]' "$1" | sort > "$T/got"
}
"$WEIR" run -q "json path=$T/col.jsonl threads=2 ! $COLLECT key=.u threads=3 ! json path=$T/col.out" || fail "collect"
collected "$T/col.out"
same "$T/got" "$T/want.col" "a msgpack value per key on 3 threads"
C="json path=$T/col.jsonl split=400000 threads=2 ! $COLLECT key=.u THREADS ! json path=$T/col.out"
for point in writers-synced:3 keyed-epoch-ended:4; do
    rm -rf "$T/ck" "$T/col.out"
    killed_at $point "$T/ck" 7000 "$C" collect 3 1
    collected "$T/col.out"
    same "$T/got" "$T/want.col" "msgpack values per key killed at $point on 3 threads, resumed on 1"
done
printf '%s\n' '{"u":"a","v":1,"t":"x"}' '{"u":"a","forget":true}' '{"u":"a","v":2,"t":"y"}' '{"u":"b","v":3,"t":"z"}' > "$T/cf.jsonl"
"$WEIR" run -q "json path=$T/cf.jsonl ! $COLLECT key=.u ! json path=$T/cf.out" || fail "collect with forget"
printf '%s\n' '["a",{"n":1,"sum":2,"s":"y"}]' '["b",{"n":1,"sum":3,"s":"z"}]' > "$T/want"
sort "$T/cf.out" > "$T/got"
same "$T/got" "$T/want" "a forgotten key's value starts again"
printf '%s\n' '{"u":"a","v":1,"t":"x"}' '{"u":"a","fixed":true}' > "$T/cx.jsonl"
expect_exit 1 "weir_key_state: the keyed state holds msgpack values \(weir_key_value\), and values of 8 bytes were asked for" -- \
    "$WEIR" run "json path=$T/cx.jsonl ! $COLLECT key=.u ! null"

# A checkpoint of a weir whose count kept 24 bytes a key (the fixture's
# README says how it was made): resumed, its groups keep that size, and
# every key ends counted twice
mkdir -p "$T/old/ck"
cp "$(dirname "$0")"/fixtures/count-state-24/* "$T/old/ck/"
(cd "$T/old" && "$WEIR" run -q --checkpoint ck --resume \
    "range count=1000 ! m.  range count=1000 ! m.  count name=m key=. ! json path=out.jsonl") \
    || fail "the checkpoint of 24-byte counts did not resume"
[ "$(jq -c 'select(.[1] == 2)' "$T/old/out.jsonl" | wc -l)" -eq 1000 ] && [ "$(wc -l < "$T/old/out.jsonl")" -eq 1000 ] && ok \
    || fail "resumed from 24-byte counts: $(wc -l < "$T/old/out.jsonl") keys, $(jq -c 'select(.[1] != 2)' "$T/old/out.jsonl" | head -3)"

# Two million distinct keys, counted in a job without checkpoints: every
# key held once, and the peak memory within 45 bytes a key (and 30 MB for
# the process; 94 MB measured).  Without a checkpoint the key groups are
# not copied into the workspace at the epoch's end: with that copy it took
# 93 bytes a key; with a count of 24 bytes (an s_value), 126 MB.
# The bound is not checked under a sanitizer, whose shadow memory and
# red zones are most of the process.
python3 -c '
import os, resource, subprocess, sys
child = subprocess.Popen(sys.argv[1:])
_, status, usage = os.wait4(child.pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)' \
    "$WEIR" run -q --stats "$T/many.json" "range count=2M ! count key=. threads=2 ! null" > "$T/many.rss" \
    || fail "could not run the job of 2 million keys"
read -r rc rss < "$T/many.rss"
[ "$rc" = 0 ] && jq -e '.stages[1].metrics.keys == 2000000' "$T/many.json" > /dev/null && ok \
    || fail "2 million keys: exit $rc, $(jq -c '.stages[1].metrics' "$T/many.json")"
if [ -n "${SANITIZER_CFLAGS:-}" ]; then
    echo "# the peak memory of 2 million keys is not bounded under a sanitizer (it was $rss kB)"
else
    [ "$rss" -lt $((30000 + 2000000 * 45 / 1000)) ] && ok \
        || fail "2 million keys took a peak of $rss kB, more than 45 bytes a key and 30 MB"
fi

finish

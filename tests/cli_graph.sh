#!/bin/sh
# Graphs: tee, filter, merge and several writers, each output compared
# with what jq computes from the input; every mistake refused with a
# caret before anything is opened; exactly once on every output under
# kills, with thread counts changed on resume; a changed graph refused on
# resume; independent chains in one description; weir graph's DOT; the
# progress line of a graph of 11 nodes within 60 columns.
. "$(dirname "$0")/lib.sh"
command -v jq > /dev/null || { echo "skipped: jq is not installed (scripts/install-deps.sh installs it)"; exit 77; }

awk 'BEGIN {
    split("debug info warn error", lv, " "); split("api web db", sv, " ")
    for (i = 0; i < 4000; i++)
        printf "{\"level\": \"%s\", \"service\": \"%s\", \"n\": %d}\n", lv[i % 4 + 1], sv[i % 3 + 1], i
}' > "$T/ev.jsonl"
jq -c . "$T/ev.jsonl" > "$T/all.want"
jq -c 'select(.level == "error")' "$T/ev.jsonl" > "$T/errors.want"
jq -c 'select(.level == "error" or .level == "debug")' "$T/ev.jsonl" > "$T/errdebug.want"
E="json path=$T/ev.jsonl"

# norm FILE: one JSON record per line, as jq writes it
norm () { jq -c . "$1"; }

# The issue's first example: an archive of everything, the errors apart
rm -f "$T"/*.mp "$T"/*.jsonl.out
"$WEIR" run -q "$E ! tee name=t  t. ! msgpack path=$T/archive.mp  t. ! filter '.level == \"error\"' ! json path=$T/errors.out" \
    || fail "tee to an archive and a filter"
"$WEIR" run -q "msgpack path=$T/archive.mp ! json path=$T/archive.out" || fail "reading the archive back"
norm "$T/archive.out" > "$T/got"; same "$T/got" "$T/all.want" "tee: the archive"
norm "$T/errors.out" > "$T/got"; same "$T/got" "$T/errors.want" "tee: the errors"

# A three-way tee, one branch with two threads: each branch every record
"$WEIR" run -q "$E ! tee name=t  t. ! json path=$T/a.out  t. ! identity threads=2 ! json path=$T/b.out  t. ! null" \
    || fail "three-way tee"
norm "$T/a.out" > "$T/got"; same "$T/got" "$T/all.want" "three-way tee, branch a (order kept at threads=1)"
norm "$T/b.out" | sort > "$T/got"; sort "$T/all.want" > "$T/want.sorted"
same "$T/got" "$T/want.sorted" "three-way tee, branch b (two threads)"

# Independent chains in one description, as in gst-launch: one job, one
# checkpoint; killed at a checkpoint's point, resumed with other threads
C="$E ! filter '.level == \"error\"' ! json path=$T/c1.out  range count=50000 THREADS ! lines path=$T/c2.out"
"$WEIR" run -q "$(echo "$C" | sed 's/THREADS//')" || fail "two independent chains"
norm "$T/c1.out" > "$T/got"; same "$T/got" "$T/errors.want" "independent chains: the first's"
seq 0 49999 > "$T/want.c2"
cmp -s "$T/want.c2" "$T/c2.out" && ok || fail "independent chains: the second's"
rm -f "$T/c1.out" "$T/c2.out"
WEIR_KILL_AT=writers-synced:3 "$WEIR_KP" run -q --checkpoint "$T/cck" --epoch-records 2000 \
    "$(echo "$C" | sed 's/THREADS/threads=2/')" 2> "$T/err"
[ $? -eq 137 ] && ok || fail "independent chains: the kill at writers-synced:3 $(cat "$T/err")"
"$WEIR" run -q --checkpoint "$T/cck" --resume --epoch-records 2000 "$(echo "$C" | sed 's/THREADS//')" \
    || fail "independent chains resumed"
norm "$T/c1.out" > "$T/got"; same "$T/got" "$T/errors.want" "independent chains killed: the first's"
sort -n "$T/c2.out" | cmp -s - "$T/want.c2" && ok || fail "independent chains killed: the second's"
# A bare word that names no element is a key that lost its value
expect_exit 2 "expected key=value or '!' after element 'identity', not 'threads' \(a word there starts a new chain when it names an element, and no element is named 'threads'\)" -- \
    "$WEIR" run "range ! identity threads ! null"
expect_exit 2 "no element is named 'rnage'; did you mean 'range'" -- "$WEIR" run "range ! null  rnage ! null"
expect_exit 2 "'identity' is a processor, but an element that starts a branch must be a reader" -- \
    "$WEIR" run "range ! null  identity ! null"

# A diamond: a tee, two filters, merged into one writer
"$WEIR" run -q "$E ! tee name=t  t. ! filter '.level == \"error\"' ! m.  t. ! filter '.level == \"debug\"' ! m.  identity name=m ! json path=$T/d.out" \
    || fail "diamond"
norm "$T/d.out" | sort > "$T/got"; sort "$T/errdebug.want" > "$T/want.sorted"
same "$T/got" "$T/want.sorted" "diamond: the merge has both branches' records"
# Branches that end in a merge named after them, from a tee that feeds
# it twice: each record twice
"$WEIR" run -q "$E ! tee name=t  t. ! m.  t. ! m.  identity name=m ! json path=$T/twice.out" || fail "merge named last"
norm "$T/twice.out" | sort > "$T/got"; cat "$T/all.want" "$T/all.want" | sort > "$T/want.sorted"
same "$T/got" "$T/want.sorted" "a tee into one merge twice"

# The summary counts what every writer wrote
"$WEIR" run "$E ! tee name=t  t. ! null  t. ! filter '.level == \"error\"' ! null" 2> "$T/err"
grep -q "4000 records read, 5000 written" "$T/err" && ok || fail "summary of two writers: $(cat "$T/err")"

# The same graph in code: weir_pipe_branch and weir_pipe_link are
# covered by tests/check_pipe.c; in a file, with comments and breaks
cat > "$T/job.weir" <<EOF
# everything, and the errors apart
$E
  ! tee name=t
t. ! json path=$T/f1.out       # the archive
t. ! filter '.level == "error"'
   ! json path=$T/f2.out
EOF
"$WEIR" run -q -f "$T/job.weir" || fail "a graph in a file"
norm "$T/f2.out" > "$T/got"; same "$T/got" "$T/errors.want" "a graph in a file"

# Every mistake refused, exit 2, nothing written
rm -f "$T/never.out"
N="json path=$T/never.out"
refused "'x.' refers to no element: no element has name=x" "$E ! tee name=t  t. ! $N  x. ! null"
refused "did you mean 'archive.'" "$E ! tee name=archive  archive. ! $N  arcive. ! null"
refused "'i' sends its records on to one element, and 2 branches start from it; .*put a tee" \
    "$E ! identity name=i ! $N  i. ! null"
refused "the branch that 't.' starts goes nowhere" "$E ! tee name=t ! $N  t."
refused "a cycle: a -> b -> a" "$E ! identity name=a ! identity name=b ! a.  b. ! $N"
refused "a cycle: 'a' feeds itself" "$E ! tee name=a ! $N  a. ! a."
refused "name 't' is given twice" "$E ! tee name=t ! $N  t. ! identity name=t ! null"
refused "name='1x' cannot name an element" "$E ! tee name=1x ! $N"
refused "'t.out': 't' \(tee\) has no output named 'out'" "$E ! tee name=t ! $N  t.out ! null"
refused "'m.in': an element has one input" "$E ! m.in  identity name=m ! $N"
refused "'filter' is a processor, but an element that ends a branch must be a writer" \
    "$E ! tee name=t  t. ! $N  t. ! filter '.a'"
refused "'null' is a writer, but an element inside a branch must be a processor" "$E ! tee name=t  t. ! null ! $N  t. ! null"
refused "'range' is a reader, but an element inside a branch must be a processor" "$E ! tee name=t  t. ! range ! $N  t. ! null"
refused "'!' separates elements: if it is part of a value, quote the value" "lines path=$T/a!b.txt"
# The caret points at the culprit
"$WEIR" run "$E ! tee name=t  t. ! $N  x. ! null" 2> "$T/err"
prefix="$E ! tee name=t  t. ! $N  "
[ "$(sed -n 3p "$T/err")" = "$(printf '%*s^' $((${#prefix} + 2)) '')" ] && ok \
    || fail "caret under the unknown reference: $(cat "$T/err")"

# weir graph: DOT with every node and link; checked like weir run
G="$E ! tee name=t  t. ! msgpack path=$T/g.mp  t. ! filter '.level == \"error\"' capacity=4 ! json path=$T/g.out"
"$WEIR" graph "$G" > "$T/dot" || fail "weir graph"
grep -q '^digraph weir {' "$T/dot" && grep -q '^}' "$T/dot" && ok || fail "not a DOT digraph: $(cat "$T/dot")"
[ "$(grep -c -- ' -> ' "$T/dot")" -eq 4 ] && ok || fail "weir graph: not 4 links: $(cat "$T/dot")"
grep -q 's1 \[label="t: tee' "$T/dot" && grep -q 's1 -> s3 \[label="capacity=4"' "$T/dot" && ok \
    || fail "weir graph: the tee's node or the filter's capacity: $(cat "$T/dot")"
grep -q 'expr=.level == \\"error\\"' "$T/dot" && ok || fail "weir graph: the expression, escaped: $(cat "$T/dot")"
[ ! -e "$T/g.out" ] && [ ! -e "$T/g.mp" ] && ok || fail "weir graph opened an output"
"$WEIR" run -q --stats "$T/stats.json" "$G" || fail "run with --stats"
"$WEIR" graph --stats "$T/stats.json" "$G" > "$T/dot" || fail "weir graph --stats"
grep -q 's3 -> s4 \[label="capacity=16\\n1000 records"' "$T/dot" && grep -q 's1 -> s2 \[label="capacity=16\\n4000 records"' "$T/dot" \
    && ok || fail "weir graph --stats: records per link: $(cat "$T/dot")"
jq -e '.links | length == 4' "$T/stats.json" > /dev/null && jq -e '.stages[1].label == "t"' "$T/stats.json" > /dev/null \
    && ok || fail "--stats: links and labels"
# A tee fed by one stage runs in that stage's threads: no queue into it,
# its threads the feeder's; each branch has every record
grep -q 's0 -> s1 \[label="no queue' "$T/dot" && ok || fail "weir graph: the link into a hosted tee: $(cat "$T/dot")"
"$WEIR" run -q --stats "$T/host.json" "range count=100000 ! identity threads=2 ! tee name=t threads=3  t. ! lines path=$T/h1.out  t. ! lines path=$T/h2.out" \
    || fail "a tee in its feeder's threads"
seq 0 99999 > "$T/want"
sort -n "$T/h1.out" | cmp -s - "$T/want" && sort -n "$T/h2.out" | cmp -s - "$T/want" && ok \
    || fail "a tee in its feeder's threads: a branch lacks records"
jq -e '.stages[2].threads == 2 and .stages[2].records_in == 100000 and .stages[2].records_out == 100000' "$T/host.json" > /dev/null \
    && jq -e '[.links[].records] == [100000, 100000, 100000, 100000]' "$T/host.json" > /dev/null && ok \
    || fail "a hosted tee's statistics: $(jq -c '.stages[2], .links' "$T/host.json")"
expect_exit 2 "a cycle" -- "$WEIR" graph "$E ! identity name=a ! a."
expect_exit 1 "holds no statistics of 4 links" -- "$WEIR" graph --stats "$T/ev.jsonl" "$G"

# Exactly once on both outputs: SIGKILL at a checkpoint's points, resumed
# with other thread counts
J="json path=$T/ev.jsonl ! tee name=t  t. ! json path=$T/k1.out  t. ! filter '.level == \"error\"' THREADS ! json path=$T/k2.out"
sort "$T/all.want" > "$T/all.sorted"; sort "$T/errors.want" > "$T/errors.sorted"
for point in pipe-drained:2 writers-synced:3 after-leveldb-write:2 after-leveldb-write:5; do
    rm -rf "$T/ck" "$T/k1.out" "$T/k2.out"
    job=$(echo "$J" | sed 's/THREADS/threads=2/')
    WEIR_KILL_AT=$point "$WEIR_KP" run -q --checkpoint "$T/ck" --epoch-records 500 "$job" 2> "$T/err"
    rc=$?
    [ $rc -eq 137 ] && ok || fail "graph killed at $point: exit $rc $(cat "$T/err")"
    job=$(echo "$J" | sed 's/THREADS/threads=1/')
    "$WEIR" run -q --checkpoint "$T/ck" --resume --epoch-records 500 "$job" || fail "graph resumed after $point"
    norm "$T/k1.out" | sort > "$T/got"; same "$T/got" "$T/all.sorted" "tee output 1 killed at $point"
    norm "$T/k2.out" | sort > "$T/got"; same "$T/got" "$T/errors.sorted" "tee output 2 killed at $point"
done

# Random kills mid-run, each resume with other threads
rm -rf "$T/ck" "$T/k1.out" "$T/k2.out"
awk 'BEGIN { for (i = 0; i < 200000; i++) printf "{\"level\": \"%s\", \"n\": %d}\n", (i % 3 ? "info" : "error"), i }' \
    > "$T/big.jsonl"
R="json path=$T/big.jsonl ! tee name=t  t. ! json path=$T/k1.out  t. ! filter '.level == \"error\"' THREADS ! json path=$T/k2.out"
kill_rounds "$T/ck" 5000 "$R"
norm "$T/k1.out" | sort > "$T/got"; jq -c . "$T/big.jsonl" | sort > "$T/want"
same "$T/got" "$T/want" "random kills: output 1"
norm "$T/k2.out" | sort > "$T/got"; jq -c 'select(.level == "error")' "$T/big.jsonl" | sort > "$T/want"
same "$T/got" "$T/want" "random kills: output 2"

# A changed graph does not resume: a branch removed, links moved
rm -rf "$T/ck"
"$WEIR" run -q --checkpoint "$T/ck" --epochs 1 --epoch-records 500 \
    "$E ! tee name=t  t. ! json path=$T/c1.out  t. ! json path=$T/c2.out" || fail "first run of the changed graph"
expect_exit 2 "written by another pipeline: stage 4, json, was removed" -- "$WEIR" run --checkpoint "$T/ck" --resume \
    "$E ! tee name=t  t. ! json path=$T/c1.out"
expect_exit 2 "written by another pipeline: tee \(stage 2\): name= was 't', is now 'u'" -- "$WEIR" run --checkpoint "$T/ck" \
    --resume "$E ! tee name=u  u. ! json path=$T/c1.out  u. ! json path=$T/c2.out"
rm -rf "$T/ck2"
"$WEIR" run -q --checkpoint "$T/ck2" --epochs 1 --epoch-records 500 \
    "$E ! tee name=a ! tee name=b ! json path=$T/c3.out  a. ! json path=$T/c4.out  b. ! null" || fail "two tees"
expect_exit 2 "written by another pipeline: the same elements, linked otherwise" -- "$WEIR" run --checkpoint "$T/ck2" \
    --resume "$E ! tee name=a ! tee name=b ! json path=$T/c3.out  b. ! json path=$T/c4.out  a. ! null"
"$WEIR" run -q --checkpoint "$T/ck" --resume \
    "$E ! tee name=t threads=2  t. ! json path=$T/c1.out  t. ! json path=$T/c2.out" || fail "same graph, other threads"
# Two tee threads keep no order: compared sorted
norm "$T/c1.out" | sort > "$T/got"; same "$T/got" "$T/all.sorted" "resumed graph: output 1"
norm "$T/c2.out" | sort > "$T/got"; same "$T/got" "$T/all.sorted" "resumed graph: output 2"

# The progress line of a graph of 11 nodes (two readers, a tee, a route,
# a merge) stays within a terminal of 60 columns, and names both readers
G="range count=30M ! tee name=t  t. ! identity ! filter '. == 1' ! null  t. ! identity name=a ! route name=r e='. == 3' default=o  r.e ! null  r.o ! m.  range count=1M ! m.  identity name=m ! null"
if command -v script > /dev/null 2>&1; then
    script -qec "stty cols 60 rows 20; '$WEIR' run --progress --progress-interval 5 \"$G\"" /dev/null > "$T/tty.txt" 2>&1
    tr '\r' '\n' < "$T/tty.txt" | sed 's/\x1b\[K//g' | grep ' records' | grep -v '^weir:' > "$T/lines"
    [ -s "$T/lines" ] && awk 'length > 59 { bad = 1 } END { exit bad }' "$T/lines" && ok \
        || fail "a graph's progress lines wider than 59 columns: $(awk 'length > 59' "$T/lines" | head -2)"
    grep -q 'range#1 .*range#9 ' "$T/lines" && ok || fail "the progress line does not name both readers: $(head -2 "$T/lines")"
else
    fail "script (bsdutils) is missing: the terminal width cannot be tested"
fi

finish

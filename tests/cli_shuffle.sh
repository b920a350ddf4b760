#!/bin/sh
# tests/cli_shuffle.sh - the builtin processor shuffle: every record once,
# in an order its seed fixes, never more than buffer= records ahead of
# its place; another order every pass; a job stopped and resumed on one
# thread gives the same bytes as one run at once; held records survive a
# resume on another thread count and random kills; bad properties refused.
. "$(dirname "$0")/lib.sh"

seq 0 99999 > "$T/want"
"$WEIR" run -q "range count=100000 ! shuffle buffer=1000 seed=7 ! lines path=$T/a" || fail "shuffle"
sort -n "$T/a" | cmp -s - "$T/want" && ok || fail "not every record once"
cmp -s "$T/a" "$T/want" && fail "the records came out in order" || ok
"$WEIR" run -q "range count=100000 ! shuffle buffer=1000 seed=7 ! lines path=$T/b" || fail "shuffle again"
same "$T/b" "$T/a" "the same seed, the same order"
"$WEIR" run -q "range count=100000 ! shuffle buffer=1000 seed=8 ! lines path=$T/c" || fail "another seed"
cmp -s "$T/c" "$T/a" && fail "another seed gave the same order" || ok
# A record comes out at most buffer= places before its own, and the draws
# reach back through the whole buffer
awk '{ d = $1 - (NR - 1); if (d > max) max = d } END { print max + 0 }' "$T/a" > "$T/ahead"
[ "$(cat "$T/ahead")" -le 1000 ] && [ "$(cat "$T/ahead")" -ge 900 ] && ok \
    || fail "a record came out $(cat "$T/ahead") places early with buffer=1000"
"$WEIR" run -q "range count=1000 ! shuffle buffer=1 ! lines path=$T/one" || fail "buffer=1"
seq 0 999 | cmp -s - "$T/one" && ok || fail "buffer=1 changed the order"
# Several threads: every record once
"$WEIR" run -q "range count=100000 ! shuffle buffer=500 threads=3 ! lines path=$T/t3" || fail "3 threads"
sort -n "$T/t3" | cmp -s - "$T/want" && ok || fail "3 threads: not every record once"
# Every pass in another order: the records held at a pass's end go on in
# the next, and the draws go on
"$WEIR" run -q "lines path=$T/want passes=2 ! shuffle buffer=100 ! lines path=$T/p" || fail "2 passes"
{ cat "$T/want" "$T/want"; } | sort -n > "$T/twice"
sort -n "$T/p" | cmp -s - "$T/twice" && ok || fail "2 passes: not every record twice"
head -n 100000 "$T/p" > "$T/p1"; tail -n 100000 "$T/p" > "$T/p2"
awk 'NR == FNR { a[FNR] = $1; next } a[FNR] == $1 { same++ } END { exit !(same < 1000) }' "$T/p1" "$T/p2" && ok \
    || fail "the second pass came out in the first's order"

# Stopped after 2 epochs and resumed, one thread: the same bytes as a run
# at once (the buffer and the draws are in the checkpoint)
"$WEIR" run -q --checkpoint "$T/ck" --epoch-records 30000 --epochs 2 "range count=100000 ! shuffle ! lines path=$T/r" \
    || fail "2 epochs"
"$WEIR" run -q --stats "$T/r.json" --checkpoint "$T/ck" --resume --epoch-records 30000 "range count=100000 ! shuffle ! lines path=$T/r" \
    || fail "resumed"
"$WEIR" run -q "range count=100000 ! shuffle ! lines path=$T/once" || fail "at once"
same "$T/r" "$T/once" "stopped and resumed on one thread"
# Resumed on fewer threads: the held records are dealt out, none lost
"$WEIR" run -q --checkpoint "$T/ck3" --epoch-records 30000 --epochs 2 \
    "range count=100000 ! shuffle buffer=5000 threads=3 ! lines path=$T/s" || fail "3 threads, 2 epochs"
"$WEIR" run -q --checkpoint "$T/ck3" --resume --epoch-records 30000 --epochs 3 \
    "range count=100000 ! shuffle buffer=5000 threads=2 ! lines path=$T/s" || fail "resumed on 2 threads for an epoch"
# and again: the third thread's blob, dealt out at the first resume, is
# not dealt out twice
"$WEIR" run -q --checkpoint "$T/ck3" --resume --epoch-records 30000 "range count=100000 ! shuffle buffer=5000 threads=2 ! lines path=$T/s" \
    || fail "resumed on 2 threads"
sort -n "$T/s" | cmp -s - "$T/want" && ok || fail "3 threads resumed on 2: not every record once"
# and on more
"$WEIR" run -q --checkpoint "$T/ck4" --epoch-records 30000 --epochs 2 \
    "range count=100000 ! shuffle buffer=5000 ! lines path=$T/u" || fail "1 thread, 2 epochs"
"$WEIR" run -q --checkpoint "$T/ck4" --resume --epoch-records 30000 "range count=100000 ! shuffle buffer=5000 threads=3 ! lines path=$T/u" \
    || fail "resumed on 3 threads"
sort -n "$T/u" | cmp -s - "$T/want" && ok || fail "1 thread resumed on 3: not every record once"
# Random kills on 1 and 2 threads: every record once
kill_rounds "$T/ck5" 20000 "range count=100000 ! shuffle buffer=3000 THREADS ! lines path=$T/k"
sort -n "$T/k" | cmp -s - "$T/want" && ok || fail "random kills: not every record once"

# Bad properties: usage errors naming them
expect_exit 2 "shuffle: property 'buffer': 0 is out of range" -- "$WEIR" run "range count=1 ! shuffle buffer=0 ! null"
expect_exit 2 "shuffle: property 'seed': 'x' is not" -- "$WEIR" run "range count=1 ! shuffle seed=x ! null"
finish

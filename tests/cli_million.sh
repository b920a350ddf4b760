#!/bin/sh
# A million integers through a multi-threaded pipe arrive exactly once.
. "$(dirname "$0")/lib.sh"

seq 0 999999 > "$T/expected"

check_ints () {
    # $1: description of the pipe, output in $T/out.txt
    if sort -n "$T/out.txt" | cmp -s - "$T/expected"; then ok; else fail "$1: not every integer exactly once"; fi
}

"$WEIR" run -q "range count=1M ! identity threads=2 ! lines path=$T/out.txt" || fail "identity threads=2 run failed"
check_ints "identity threads=2"

"$WEIR" run -q "range count=1M threads=2 batch=100 ! identity threads=3 capacity=2 ! identity threads=2 ! lines path=$T/out.txt threads=2" \
    || fail "multi-stage run failed"
check_ints "2 readers, 3+2 processors, 2 writers, capacity 2"

# One thread per stage keeps the order
"$WEIR" run -q "range count=1M ! identity ! lines path=$T/out.txt" || fail "single-thread run failed"
cmp -s "$T/out.txt" "$T/expected" && ok || fail "one thread per stage: order not kept"

# Through msgpack files and back
"$WEIR" run -q "range count=1M threads=2 ! identity threads=2 ! msgpack path=$T/ints.mp threads=2" || fail "to msgpack failed"
"$WEIR" run -q "msgpack path=$T/ints.mp ! lines path=$T/out.txt" || fail "from msgpack failed"
check_ints "via a msgpack file"

# start= shifts the range
"$WEIR" run -q "range count=5 start=-2 ! lines path=$T/out.txt" || fail "start=-2 failed"
printf -- '-2\n-1\n0\n1\n2\n' | cmp -s - "$T/out.txt" && ok || fail "start=-2 gave $(cat "$T/out.txt")"

# An empty range is a job with no records, not an error
"$WEIR" run -q "range count=0 ! lines path=$T/out.txt" && [ ! -s "$T/out.txt" ] && ok || fail "count=0"

# 100 threads on each of three stages: every record once (the queues then
# use a socket per thread, not per pair of threads)
"$WEIR" run -q --stats "$T/many.json" "range count=200k threads=100 ! identity threads=100 ! null threads=100" \
    && grep -q '"name": "null", "kind": "writer", "threads": 100, "records_in": 200000, "records_out": 200000' "$T/many.json" \
    && ok || fail "threads=100 on three stages"
# 256 threads on each of three stages, stopped after 4 of 10 epochs and
# resumed: every integer once.  Past 64 producer-consumer pairs the
# producers of a consumer share its socket and a round of markers is sent
# once, by the last producer, for all (lib/queue.h): each epoch's barrier
# and the end of the stream must still come behind every record.
wide="range count=200k threads=256 batch=64 ! identity threads=256 ! lines path=$T/out.txt threads=256"
"$WEIR" run -q --epoch-records 20k --checkpoint "$T/wide.ck" --epochs 4 "$wide" \
    && [ "$(wc -l < "$T/out.txt")" -eq 80000 ] && ok || fail "threads=256: 4 epochs of 20k"
"$WEIR" run -q --epoch-records 20k --checkpoint "$T/wide.ck" --resume "$wide" || fail "threads=256: the resume failed"
seq 0 199999 > "$T/expected_wide"
sort -n "$T/out.txt" | cmp -s - "$T/expected_wide" && ok || fail "threads=256: not every integer once after the resume"
# The same through a keyed edge: each part of a producer's batch goes to
# its key's thread, and the markers still follow them
"$WEIR" run -q --key-groups 256 --epoch-records 20k "range count=200k threads=16 ! identity threads=256 key=. ! lines path=$T/out.txt threads=16" \
    && sort -n "$T/out.txt" | cmp -s - "$T/expected_wide" && ok || fail "threads=256 keyed: not every integer once"
# Too few file descriptors for the sockets: the limit and the stage are named
expect_exit 1 "this process may open 200 \\(ulimit -n\\): give 'range' fewer than threads=100" -- \
    sh -c "ulimit -n 200 && exec \"\$0\" run 'range count=10 threads=100 ! identity threads=100 ! null threads=100'" "$WEIR"

finish

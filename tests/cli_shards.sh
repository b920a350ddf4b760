#!/bin/sh
# Several files, and large files split at line boundaries, are shards read
# by several threads: every line arrives exactly once.
. "$(dirname "$0")/lib.sh"

mkdir "$T/in"
for i in 1 2 3 4 5; do
    seq $((i * 10000)) $((i * 10000 + 4999)) | sed "s/^/file$i line /" > "$T/in/part$i.txt"
done
cat "$T"/in/part*.txt | sort > "$T/expected"

"$WEIR" run -q "lines path='$T/in/part*.txt' threads=3 ! identity threads=2 ! lines path=$T/out.txt threads=2" \
    || fail "glob run failed"
sort "$T/out.txt" | cmp -s - "$T/expected" && ok || fail "glob: lines lost or doubled"

# Splitting one file into many shards at line boundaries
cat "$T"/in/part*.txt > "$T/big.txt"
for split in 1 7 1000 65536; do
    "$WEIR" run -q "lines path=$T/big.txt split=$split threads=3 ! lines path=$T/out.txt" || fail "split=$split failed"
    sort "$T/out.txt" | cmp -s - "$T/expected" && ok || fail "split=$split: lines lost or doubled"
done

# With one thread the shards are read in order: the output is the input
"$WEIR" run -q "lines path=$T/big.txt split=1000 ! lines path=$T/out.txt" || fail "split, one thread"
same "$T/out.txt" "$T/big.txt" "split=1000 threads=1"

# One msgpack file cut into shards at record boundaries, found by a scan
# when the job starts: every record once on any thread count, in order on
# one thread, across a stop and a resume on another thread count
"$WEIR" run -q "lines path=$T/big.txt ! msgpack path=$T/big.mp" || fail "msgpack made"
for split in 1 100 10k 1M; do
    "$WEIR" run -q "msgpack path=$T/big.mp split=$split threads=3 ! lines path=$T/out.txt" || fail "msgpack split=$split"
    sort "$T/out.txt" | cmp -s - "$T/expected" && ok || fail "msgpack split=$split: records lost or doubled"
done
"$WEIR" run -q "msgpack path=$T/big.mp split=10k ! lines path=$T/out.txt" || fail "msgpack split, one thread"
same "$T/out.txt" "$T/big.txt" "msgpack split=10k threads=1"
"$WEIR" run -q --checkpoint "$T/mck" --epoch-records 4000 --epochs 2 "msgpack path=$T/big.mp split=10k threads=2 ! lines path=$T/out.txt" \
    || fail "msgpack split, 2 epochs"
"$WEIR" run -q --checkpoint "$T/mck" --resume --epoch-records 4000 "msgpack path=$T/big.mp split=10k threads=3 ! lines path=$T/out.txt" \
    || fail "msgpack split, resumed"
sort "$T/out.txt" | cmp -s - "$T/expected" && ok || fail "msgpack split across a resume: records lost or doubled"
# Records larger than split=: a cut after each
awk 'BEGIN { pad = sprintf ("%3000s", ""); gsub (/ /, "x", pad); for (i = 0; i < 50; i++) printf "{\"i\":%d,\"pad\":\"%s\"}\n", i, pad }' \
    > "$T/wide.jsonl"
"$WEIR" run -q "json path=$T/wide.jsonl ! msgpack path=$T/wide.mp" || fail "wide msgpack made"
"$WEIR" run -q "msgpack path=$T/wide.mp split=1k threads=2 ! json path=$T/wide.out" || fail "wide records, split=1k"
sort "$T/wide.out" > "$T/a"; sort "$T/wide.jsonl" > "$T/b"
same "$T/a" "$T/b" "records larger than split="
# A malformed record in the middle: no cut past it, and its read names it
head -n 10000 "$T/big.txt" > "$T/h.txt"; tail -n +10001 "$T/big.txt" > "$T/t.txt"
"$WEIR" run -q "lines path=$T/h.txt ! msgpack path=$T/bad.mp" && "$WEIR" run -q "lines path=$T/t.txt ! msgpack path=$T/t.mp" \
    || fail "bad msgpack made"
at=$(stat -c %s "$T/bad.mp")
printf '\301' >> "$T/bad.mp"
cat "$T/t.mp" >> "$T/bad.mp"
expect_exit 1 "msgpack: '$T/bad.mp' at byte $at: " -- "$WEIR" run -q "msgpack path=$T/bad.mp split=10k threads=2 ! null"
# A file checkpointed whole (a msgpack file no larger than split= then)
# that grew past it goes on whole: every record once
head -n 20000 "$T/big.txt" > "$T/g1.txt"; tail -n +20001 "$T/big.txt" > "$T/g2.txt"
"$WEIR" run -q "lines path=$T/g1.txt ! msgpack path=$T/grow.mp" && "$WEIR" run -q "lines path=$T/g2.txt ! msgpack path=$T/g2.mp" \
    || fail "growing msgpack made"
size=$(stat -c %s "$T/grow.mp")
"$WEIR" run -q --checkpoint "$T/gck" --epoch-records 5000 --epochs 2 "msgpack path=$T/grow.mp split=$((size + 1)) ! lines path=$T/out.txt" \
    || fail "whole, 2 epochs"
cat "$T/g2.mp" >> "$T/grow.mp"
"$WEIR" run -q --checkpoint "$T/gck" --resume --epoch-records 5000 "msgpack path=$T/grow.mp split=$((size + 1)) threads=2 ! lines path=$T/out.txt" \
    || fail "grown past split=, resumed"
sort "$T/out.txt" | cmp -s - "$T/expected" && ok || fail "a whole msgpack file grown past split=: records lost or doubled"

# A last line without a newline is still a line; empty lines are kept
printf 'a\n\nb\n\n\nlast' > "$T/odd.txt"
"$WEIR" run -q "lines path=$T/odd.txt split=2 ! lines path=$T/out.txt" || fail "odd file"
printf 'a\n\nb\n\n\nlast\n' | cmp -s - "$T/out.txt" && ok || fail "odd file content: $(od -c "$T/out.txt")"

# An empty file has no lines
: > "$T/empty.txt"
"$WEIR" run -q "lines path=$T/empty.txt ! lines path=$T/out.txt" && [ ! -s "$T/out.txt" ] && ok || fail "empty file"

# Reading from a pipe (not a regular file): one shard, read to the end
if command -v mkfifo >/dev/null; then
    mkfifo "$T/fifo"
    seq 1 1000 > "$T/fifo" &
    "$WEIR" run -q "lines path=$T/fifo ! lines path=$T/out.txt" || fail "fifo"
    wait
    seq 1 1000 | cmp -s - "$T/out.txt" && ok || fail "fifo content"
fi

finish

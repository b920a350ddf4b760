#!/bin/sh
# tests/cli_compress.sh - gzip and zstd files: read decompressed by every
# reader of files, told by their first bytes; several members one after
# another; damaged files refused naming the compressed offset; a resume
# and random kills reading and writing them; the writers' compress= and
# level=, one member per epoch.
. "$(dirname "$0")/lib.sh"
for tool in gzip zstd; do
    command -v $tool > /dev/null || { echo "skipped: $tool is not installed (scripts/install-deps.sh installs it)"; exit 77; }
done

# 300,000 lines, about 2 MB: the window's buffer (1 MiB) is refilled
# many times, and records cross its ends
seq 1 300000 | awk '{ printf "line %d of the text %s\n", $1, ($1 % 11 == 0) ? "and a longer tail" : "" }' > "$T/t.txt"
gzip -c "$T/t.txt" > "$T/t.txt.gz"
zstd -q -c "$T/t.txt" > "$T/t.txt.zst"
# gzip in two members, zstd in two frames: one file standing for both
head -100000 "$T/t.txt" > "$T/a.txt"; tail -n +100001 "$T/t.txt" > "$T/b.txt"
{ gzip -c "$T/a.txt"; gzip -c "$T/b.txt"; } > "$T/two.gz"
{ zstd -q -c "$T/a.txt"; zstd -q -c "$T/b.txt"; } > "$T/two.zst"

for f in t.txt.gz t.txt.zst two.gz two.zst; do
    "$WEIR" run -q "lines path=$T/$f ! lines path=$T/out" || fail "lines $f"
    same "$T/out" "$T/t.txt" "lines of $f, in order"
    # threads and split=: a compressed file is one shard all the same
    "$WEIR" run -q --stats "$T/s.json" "lines path=$T/$f split=64k threads=2 ! lines path=$T/out threads=2" \
        || fail "lines $f, 2 threads"
    sort "$T/out" > "$T/got"; sort "$T/t.txt" > "$T/want"
    same "$T/got" "$T/want" "lines of $f on 2 threads"
done

# json, libsvm and msgpack alike
awk 'BEGIN { for (i = 0; i < 20000; i++) printf "{\"i\":%d,\"s\":\"v%d\"}\n", i, i % 7 }' > "$T/j.jsonl"
gzip -c "$T/j.jsonl" > "$T/j.jsonl.gz"
"$WEIR" run -q "json path=$T/j.jsonl ! msgpack path=$T/j.mp" || fail "msgpack made"
zstd -q -c "$T/j.mp" > "$T/j.mp.zst"
printf '1 1:0.5 3:1\n0 2:1\n-1 7:2.5\n' > "$T/s.svm"
gzip -c "$T/s.svm" > "$T/s.svm.gz"
"$WEIR" run -q "json path=$T/j.jsonl ! json path=$T/want" || fail "json plain"
"$WEIR" run -q "json path=$T/j.jsonl.gz threads=2 ! json path=$T/got" || fail "json gzip"
sort "$T/got" > "$T/a"; sort "$T/want" > "$T/b"
same "$T/a" "$T/b" "json of a gzip file"
"$WEIR" run -q "msgpack path=$T/j.mp.zst ! json path=$T/got" || fail "msgpack zstd"
same "$T/got" "$T/want" "msgpack of a zstd file"
"$WEIR" run -q "libsvm path=$T/s.svm ! json path=$T/want" && "$WEIR" run -q "libsvm path=$T/s.svm.gz ! json path=$T/got" \
    || fail "libsvm gzip"
same "$T/got" "$T/want" "libsvm of a gzip file"
# Standard input redirected from a compressed file is a file
"$WEIR" run -q "lines path=- ! lines path=$T/out" < "$T/t.txt.gz" || fail "stdin gzip"
same "$T/out" "$T/t.txt" "lines of standard input, a gzip file"
# Its first bytes are judged decompressed: JSON given to msgpack is said
expect_exit 0 "msgpack: '$T/j.jsonl.gz' looks like JSON Lines \\(json path=\\.\\.\\.\\), not msgpack" -- \
    "$WEIR" run -q "msgpack path=$T/j.jsonl.gz ! null"

# Damaged files: an error naming the file and the compressed offset, exit
# 1, on-error=skip or not (a stream cannot be picked up past damage)
size=$(stat -c %s "$T/t.txt.gz")
head -c $((size / 2)) "$T/t.txt.gz" > "$T/cut.gz"
expect_exit 1 "^weir run: lines: '$T/cut.gz' ends at compressed byte $((size / 2)) inside a gzip member: the file is cut short" -- \
    "$WEIR" run -q "lines path=$T/cut.gz ! null"
expect_exit 1 "the file is cut short" -- "$WEIR" run -q "lines path=$T/cut.gz on-error=skip ! null"
zsize=$(stat -c %s "$T/t.txt.zst")
head -c $((zsize - 3)) "$T/t.txt.zst" > "$T/cut.zst"
expect_exit 1 "^weir run: lines: '$T/cut.zst' ends at compressed byte $((zsize - 3)) inside a zstd frame: the file is cut short" -- \
    "$WEIR" run -q "lines path=$T/cut.zst ! null"
cp "$T/t.txt.gz" "$T/bad.gz"
printf '\377\377\377\377\377\377' | dd of="$T/bad.gz" bs=1 seek=50000 conv=notrunc 2> /dev/null
expect_exit 1 "^weir run: lines: '$T/bad.gz' is not valid gzip data at compressed byte [0-9]+: " -- \
    "$WEIR" run -q "lines path=$T/bad.gz ! null"
{ cat "$T/t.txt.gz"; echo "not gzip"; } > "$T/tail.gz"
expect_exit 1 "^weir run: lines: '$T/tail.gz' is not valid gzip data at compressed byte $size: what follows its last gzip member is not another one" -- \
    "$WEIR" run -q "lines path=$T/tail.gz ! null"
# follow=1 reads files as they grow, not compressed ones
expect_exit 1 "'$T/t.txt.gz' is gzip-compressed \\(its first bytes say so\\): follow=1 reads files as they grow, not compressed ones" -- \
    "$WEIR" run -q "lines path=$T/t.txt.gz follow=1 ! null"

# Stopped after 2 epochs and resumed on another thread count: every line
# once (the resume decompresses the file again up to its offset)
"$WEIR" run -q --checkpoint "$T/ck" --epoch-records 40000 --epochs 2 "lines path=$T/t.txt.gz ! lines path=$T/r.out" \
    || fail "2 epochs of a gzip file"
[ "$(wc -l < "$T/r.out")" -eq 80000 ] && ok || fail "2 epochs: $(wc -l < "$T/r.out") lines"
"$WEIR" run -q --checkpoint "$T/ck" --resume --epoch-records 40000 "lines path=$T/t.txt.gz threads=2 ! lines path=$T/r.out" \
    || fail "resumed"
sort "$T/r.out" > "$T/got"; sort "$T/t.txt" > "$T/want"
same "$T/got" "$T/want" "a gzip file read across a stop and a resume"

# The writers: compress=gzip and zstd decompress to what the plain
# writer writes; on a checkpoint, a member per epoch
for w in lines json msgpack; do
    "$WEIR" run -q "json path=$T/j.jsonl ! $w path=$T/plain" || fail "$w plain"
    "$WEIR" run -q "json path=$T/j.jsonl ! $w path=$T/w.gz compress=gzip" || fail "$w gzip"
    gzip -dc < "$T/w.gz" | cmp -s - "$T/plain" && ok || fail "$w compress=gzip does not decompress to the plain output"
    "$WEIR" run -q "json path=$T/j.jsonl ! $w path=$T/w.zst compress=zstd level=19" || fail "$w zstd"
    zstd -q -dc < "$T/w.zst" | cmp -s - "$T/plain" && ok || fail "$w compress=zstd does not decompress to the plain output"
done
"$WEIR" run -q "libsvm path=$T/s.svm ! libsvm path=$T/plain" && "$WEIR" run -q "libsvm path=$T/s.svm ! libsvm path=$T/w.gz compress=gzip" \
    || fail "libsvm writer"
gzip -dc < "$T/w.gz" | cmp -s - "$T/plain" && ok || fail "libsvm compress=gzip"
"$WEIR" run -q --checkpoint "$T/ck2" --epoch-records 5000 "json path=$T/j.jsonl ! lines path=$T/m.gz compress=gzip level=1" \
    || fail "members per epoch"
members=$(od -An -tx1 -v "$T/m.gz" | tr -s ' \n' ' ' | grep -o '1f 8b 08' | wc -l)
[ "$members" -ge 4 ] && ok || fail "4 epochs, $members gzip members"
"$WEIR" run -q "json path=$T/j.jsonl ! lines path=$T/plain" || fail "plain lines"
gzip -dc < "$T/m.gz" | cmp -s - "$T/plain" && ok || fail "a member per epoch: not the plain output"
# To a pipe, each batch flushed: the reader has whole lines at once
"$WEIR" run -q "lines path=$T/t.txt ! lines path=- compress=zstd" | zstd -q -dc > "$T/out" || fail "zstd to a pipe"
same "$T/out" "$T/t.txt" "compress=zstd to a pipe"

# Random kills, reading a zstd file and writing gzip: the output is a
# valid gzip file of every line once
kill_rounds "$T/ck3" 20000 "lines path=$T/t.txt.zst ! identity THREADS ! lines path=$T/k.gz compress=gzip threads=2"
gzip -dc < "$T/k.gz" > "$T/k.out" && ok || fail "after random kills the output is no valid gzip file"
sort "$T/k.out" > "$T/got"
same "$T/got" "$T/want" "random kills reading zstd and writing gzip: every line once"

# Bad properties: usage errors naming them
expect_exit 2 "lines: compress=bzip2 is none of gzip, zstd, none" -- "$WEIR" run "lines path=$T/t.txt ! lines path=$T/x compress=bzip2"
expect_exit 2 "lines: level= applies with compress=gzip or zstd" -- "$WEIR" run "lines path=$T/t.txt ! lines path=$T/x level=3"
expect_exit 2 "lines: property 'level': 10 is out of range \\[1, 9\\]" -- "$WEIR" run "lines path=$T/t.txt ! lines path=$T/x compress=gzip level=10"
expect_exit 2 "json: property 'level': 20 is out of range \\[1, 19\\]" -- "$WEIR" run "lines path=$T/t.txt ! json path=$T/x compress=zstd level=20"
finish

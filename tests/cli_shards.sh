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

#!/bin/sh
# tests/cli_cache.sh - cache=SIZE on a reader: the passes after the first
# give the records kept in memory instead of reading the input again.
# Every pass gives the same records as without a cache, in the same order
# on one thread, and the statistics say how many came from memory; a
# cache too small keeps what fits, says so once and loses nothing; a
# shard with a bad record is read again each pass, so the dead letter
# has it each pass; kills in a pass given from memory resume exactly;
# cache= without passes= is refused.
. "$(dirname "$0")/lib.sh"

seq 1 5000 | sed 's/^/line /' > "$T/in"
replayed () { sed -n 's/.*"cache_bytes": \([0-9]*\), "records_replayed": \([0-9]*\).*/\2/p' "$1" | head -1; }
kept () { sed -n 's/.*"cache_bytes": \([0-9]*\), "records_replayed": \([0-9]*\).*/\1/p' "$1" | head -1; }

# One thread: the same bytes as without a cache, two passes of three from
# memory
"$WEIR" run -q "lines path=$T/in passes=3 ! lines path=$T/plain" || fail "no cache"
"$WEIR" run -q --stats "$T/st" "lines path=$T/in passes=3 cache=10M ! lines path=$T/cached" || fail "cache=10M"
same "$T/cached" "$T/plain" "cache=10M: the same records in the same order"
[ "$(replayed "$T/st")" = 10000 ] && ok || fail "records given from memory: $(replayed "$T/st"), not 10000"
[ "$(kept "$T/st")" -gt 50000 ] && ok || fail "bytes kept: $(kept "$T/st")"

# Several shards and threads, epochs cut inside passes
"$WEIR" run -q --stats "$T/st" --epoch-records 700 \
    "lines path=$T/in split=10k threads=2 passes=4 cache=10M batch=16 ! lines path=$T/four" || fail "2 threads"
{ cat "$T/in" "$T/in" "$T/in" "$T/in"; } | sort > "$T/want4"
sort "$T/four" | cmp -s - "$T/want4" && ok || fail "2 threads, 4 passes: not every line 4 times"
[ "$(replayed "$T/st")" = 15000 ] && ok || fail "2 threads: $(replayed "$T/st") given from memory, not 15000"

# Too small: what fits is kept, the rest read again, one warning
"$WEIR" run --stats "$T/st" "lines path=$T/in split=10k passes=3 cache=100k ! lines path=$T/small" 2> "$T/err" \
    || fail "cache=100k: $(cat "$T/err")"
sort "$T/small" | cmp -s - "$(sort "$T/plain" > "$T/plain.s"; echo "$T/plain.s")" && ok \
    || fail "cache=100k: not every line 3 times"
[ "$(grep -c "cache=100000 is full: '$T/in' does not fit and is read again every pass" "$T/err")" = 1 ] && ok \
    || fail "cache=100k: not one warning naming the file: $(cat "$T/err")"
n=$(replayed "$T/st")
[ "$n" -gt 0 ] && [ "$n" -lt 10000 ] && ok || fail "cache=100k: $n given from memory"
[ "$(kept "$T/st")" -le 100000 ] && ok || fail "cache=100k holds $(kept "$T/st") bytes"

# A shard of most of the cache still fits: the arrays do not double past
# the room left, and a whole shard gives back what it does not use
"$WEIR" run -q --stats "$T/st" "lines path=$T/in passes=2 cache=160k ! null" 2> "$T/err" || fail "cache=160k"
[ "$(replayed "$T/st")" = 5000 ] && ok || fail "cache=160k: $(replayed "$T/st") given from memory: $(cat "$T/err")"
# (a line's newline becomes its str header: the records are the file's bytes)
[ "$(kept "$T/st")" = $(( $(wc -c < "$T/in") + 5000 * 16 )) ] && ok \
    || fail "cache=160k holds $(kept "$T/st") bytes, not the records' and 16 each"

# JSON with blank lines between records (skipped, the offsets past them)
awk '{ print "{\"n\": " NR "}"; if (NR % 7 == 0) print "" }' "$T/in" > "$T/in.jsonl"
"$WEIR" run -q --epoch-records 333 "json path=$T/in.jsonl passes=3 ! json path=$T/j-plain" || fail "json"
"$WEIR" run -q --epoch-records 333 "json path=$T/in.jsonl passes=3 cache=1M ! json path=$T/j-cached" \
    || fail "json cache=1M"
same "$T/j-cached" "$T/j-plain" "json with blank lines: the same records"

# A gzip file (one shard, its offsets in decompressed bytes): the same
# bytes as without a cache, and a kill in a pass from memory resumed
if command -v gzip > /dev/null; then
    gzip -c "$T/in" > "$T/in.gz"
    "$WEIR" run -q --epoch-records 1500 "lines path=$T/in.gz passes=3 cache=1M ! lines path=$T/gz-cached" \
        || fail "gzip with cache="
    cat "$T/in" "$T/in" "$T/in" | cmp -s - "$T/gz-cached" && ok \
        || fail "gzip with cache=: not the file three times in order"
    rm -rf "$T/ck" "$T/k"
    killed_at after-leveldb-write:9 "$T/ck" 1500 "lines path=$T/in.gz passes=3 cache=1M THREADS ! lines path=$T/k" \
        "gzip, cache=1M" 1 1
    same "$T/k" "$T/gz-cached" "gzip, cache=1M, killed in the third pass and resumed"
fi

# A file of blank lines: no records, nothing held, every pass at its end
printf '\n\n\n' > "$T/blank.jsonl"
"$WEIR" run -q --stats "$T/st" "json path=$T/blank.jsonl passes=3 cache=1M ! json path=$T/blank.out" \
    || fail "a file of blank lines with cache="
[ ! -s "$T/blank.out" ] && [ "$(kept "$T/st")" = 0 ] && ok || fail "blank lines: $(kept "$T/st") bytes held"

# A bad record: its shard is read again each pass, the dead letter has it
# each pass, as without a cache
{ head -100 "$T/in.jsonl"; echo '{"broken'; tail -50 "$T/in.jsonl"; } > "$T/bad.jsonl"
"$WEIR" run -q --stats "$T/st" "json path=$T/bad.jsonl passes=3 cache=1M dead-letter=$T/dl ! null" \
    || fail "a bad record with cache="
[ "$(replayed "$T/st")" = 0 ] && ok || fail "a shard with a bad record was given from memory"
"$WEIR" run -q "msgpack path=$T/dl ! json path=$T/dl.json" || fail "read the dead letter"
[ "$(wc -l < "$T/dl.json")" = 3 ] && ok || fail "the dead letter holds $(wc -l < "$T/dl.json") records, not 3"

# Killed in a pass given from memory, resumed on another thread count:
# every line 4 times; on one thread, the same bytes as one run
"$WEIR" run -q "lines path=$T/in passes=4 ! lines path=$T/plain4" || fail "4 passes"
job="lines path=$T/in passes=4 cache=10M THREADS ! lines path=$T/k"
for at in after-leveldb-write:6 readers-stopped:9 after-leveldb-write:11; do
    rm -rf "$T/ck" "$T/k"
    killed_at "$at" "$T/ck" 1500 "$job" "cache=10M" 1 1
    same "$T/k" "$T/plain4" "cache=10M killed at $at and resumed"
done
rm -rf "$T/ck" "$T/k"
kill_rounds "$T/ck" 800 "lines path=$T/in split=10k passes=4 cache=10M THREADS ! lines path=$T/k"
sort "$T/k" | cmp -s - "$T/want4" && ok || fail "random kills: not every line 4 times"

# A large input read in several passes without a cache: the log says how
# to keep it (files of 64 MiB a pass or more); not with cache=, not -q
yes 0123456789012345678901234567890 | head -c 70000000 > "$T/big"
"$WEIR" run "lines path=$T/big passes=2 ! null" 2> "$T/err" || fail "a large input, 2 passes"
grep -q "lines: passes=2 reads its 70 MB again in every pass; cache=SIZE would keep its records" "$T/err" && ok \
    || fail "no word of cache= for a large input read twice: $(cat "$T/err")"
"$WEIR" run "lines path=$T/big passes=2 cache=200M ! null" 2> "$T/err" || fail "a large input, cache=200M"
grep -q "cache=SIZE would" "$T/err" && fail "the word of cache= with cache= given" || ok
rm -f "$T/big"

# Refused: no passes after the first, and not a size
refused "cache= keeps the records of a pass for the passes after it, and with passes=1 there are none" \
    "lines path=$T/in cache=1M ! null"
expect_exit 2 "property 'cache': 'lots' is not an integer" -- "$WEIR" run -q "lines path=$T/in passes=2 cache=lots ! null"
finish

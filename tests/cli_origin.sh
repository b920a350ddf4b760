#!/bin/sh
# tests/cli_origin.sh - a processor's failure names the record's place in
# the input: the file and line (and byte) for a reader of lines, the file
# and byte for msgpack, its count from an offset for other readers.
#
# The place is found the same way whatever carried the record: a reader
# thread of its own or a fused one, one thread or two over split files,
# a batch that holds records of several shards, the cache's replay of a
# later pass.  Where it cannot be known (past the shards a batch says
# the place of, behind another processor) the message says nothing of a
# place rather than a wrong one.
. "$(dirname "$0")/lib.sh"

PROBE="$PLUGINS_DIR/probe.so"

# Integers, one per line, with blank lines here and there (the json reader
# skips them, so a line is not a record's number); one of them is
# 1000003, which probe reject=1000003 rejects, and with on-error=fail
# (the default) the job fails naming it
awk 'BEGIN { for (i = 1; i <= 20000; i++) { print (i == 15000 ? 1000003 : i); if (i % 7 == 0) print ""; if (i % 11 == 0) print "  " } }' \
    > "$T/in.jsonl"
line=$(grep -n '^1000003$' "$T/in.jsonl" | cut -d: -f1)
byte=$(head -n $((line - 1)) "$T/in.jsonl" | wc -c)
where="the record at line $line of '$T/in.jsonl' \\(byte $byte\\)"

for how in "threads=1" "threads=2 split=16k" "threads=2 split=16k batch=2000" "threads=1 split=16k batch=4000"; do
    for fuse in 0 1; do
        expect_exit 1 "probe.so: a bad record 1000003: 1000003 is divisible by 1000003 \\(epoch 1; $where;" -- \
            "$WEIR" run "json path=$T/in.jsonl $how ! $PROBE log=$T/log reject=1000003 ${how%% *} fuse=$fuse ! null"
    done
done

# A message of the processor's own (weir_fail), after the 100th record of
# the thread: a record of the second pass, which the cache replays
seq 1 60 > "$T/sixty.txt"
expect_exit 1 "probe.so: process fails as asked .* \\(epoch [0-9]+; the record at line 40 of '$T/sixty.txt' \\(byte 108\\)\\)" -- \
    "$WEIR" run "lines path=$T/sixty.txt passes=2 cache=1M batch=7 ! $PROBE log=$T/log fail=process ! null"
expect_exit 1 "\\(epoch [0-9]+; the record at line 40 of '$T/sixty.txt' \\(byte 108\\)\\)" -- \
    "$WEIR" run "lines path=$T/sixty.txt passes=2 ! $PROBE log=$T/log fail=process fuse=1 ! null"

# msgpack: the byte the record starts at, which is the size of what the
# records before it take
"$WEIR" run -q "json path=$T/in.jsonl ! msgpack path=$T/in.mp" || fail "write msgpack"
head -n $((line - 1)) "$T/in.jsonl" > "$T/before.jsonl"
"$WEIR" run -q "json path=$T/before.jsonl ! msgpack path=$T/before.mp" || fail "write msgpack"
at=$(wc -c < "$T/before.mp")
for how in "threads=1" "threads=2 split=8k" "threads=1 split=8k batch=4000"; do
    expect_exit 1 "\\(epoch 1; the record at byte $at of '$T/in.mp';" -- \
        "$WEIR" run "msgpack path=$T/in.mp $how ! $PROBE log=$T/log reject=1000003 ${how%% *} ! null"
done

# A batch says the place of the records of its first four shards only:
# with shards of 1 kB (about 150 records) and batches of 20000, the
# record is in the batch's hundredth shard, and the message names no place
expect_exit 1 "1000003 is divisible by 1000003 \\(epoch 1; on-error=skip would skip it\\)" -- \
    "$WEIR" run "json path=$T/in.jsonl split=1k batch=20000 ! $PROBE log=$T/log reject=1000003 ! null"
# Nor behind another processor, whose records have no place in a file
expect_exit 1 "probe.so: a bad record 1000003: 1000003 is divisible by 1000003 \\(epoch 1; on-error=skip" -- \
    "$WEIR" run "json path=$T/in.jsonl ! $PROBE log=$T/log ! $PROBE name=second log=$T/log2 reject=1000003 ! null"

# A compressed file is not read again for a line: the record's count from
# the offset its batch began at.  And range's records say where they are
gzip -c "$T/in.jsonl" > "$T/in.jsonl.gz"
expect_exit 1 "1000003 is divisible by 1000003 \\(epoch 1; record [0-9]+ of those read from offset [0-9]+ of '$T/in.jsonl.gz' \\(decompressed\\);" -- \
    "$WEIR" run "json path=$T/in.jsonl.gz ! $PROBE log=$T/log reject=1000003 ! null"
expect_exit 1 "process fails as asked at record 99 \\(epoch 1\\)" -- \
    "$WEIR" run "range count=1000 ! $PROBE log=$T/log fail=process ! null"

# A bad line the reader skips before it in the same batch: what follows
# is not where the batch's count would find it, and no place is named
awk 'NR == 20 { print "{" } { print }' "$T/in.jsonl" > "$T/skipped.jsonl"
expect_exit 1 "1000003 is divisible by 1000003 \\(epoch 1; on-error=skip would skip it\\)" -- \
    "$WEIR" run "json path=$T/skipped.jsonl batch=20000 on-error=skip ! $PROBE log=$T/log reject=1000003 ! null"
# In a later batch, sent after the bad line, the place is known again
expect_exit 1 "\\(epoch 1; the record at line $((line + 1)) of '$T/skipped.jsonl' \\(byte $((byte + 2))\\);" -- \
    "$WEIR" run "json path=$T/skipped.jsonl batch=100 on-error=skip ! $PROBE log=$T/log reject=1000003 ! null"

# A byte order mark alone on the first line: the json reader skips it, and
# it is no record's line
printf '\357\273\277\n1\n\n1000003\n' > "$T/bom.jsonl"
expect_exit 1 "\\(epoch 1; the record at line 4 of '$T/bom.jsonl' \\(byte 7\\);" -- \
    "$WEIR" run "json path=$T/bom.jsonl ! $PROBE log=$T/log reject=1000003 ! null"

# Skipped, a bad record goes to the dead letter as before, and the job on
expect_exit 0 "" -- "$WEIR" run "json path=$T/in.jsonl ! $PROBE log=$T/log reject=1000003 on-error=skip ! null"
finish

#!/bin/sh
# The leveldb reader and writer: [key, value] records in and out, key
# order, idempotent on resume.
. "$(dirname "$0")/lib.sh"

"$MKMSGPACK" pairs 5000 "$T/pairs.mp"
"$WEIR" run -q "msgpack path=$T/pairs.mp ! leveldb path=$T/db threads=2" || fail "into leveldb"
"$WEIR" run -q "leveldb path=$T/db ! lines path=$T/out.txt" || fail "out of leveldb"
awk 'BEGIN { for (i = 0; i < 5000; i++) printf "[\"key%06d\",\"value %d\"]\n", i, i }' > "$T/expected"
same "$T/out.txt" "$T/expected" "leveldb round trip, in key order"

# Values that are not strings are stored as their text
printf '\222\243one\001\222\243two\222\001\002' > "$T/mixed.mp"
"$WEIR" run -q "msgpack path=$T/mixed.mp ! leveldb path=$T/db2" || fail "mixed values"
"$WEIR" run -q "leveldb path=$T/db2 ! lines path=$T/out.txt" || fail "mixed values out"
printf '["one","1"]\n["two","[1,2]"]\n' | cmp -s - "$T/out.txt" && ok || fail "mixed values: $(cat "$T/out.txt")"

# Records that are no [key, value] pair are an error naming the database
expect_exit 1 "leveldb: '$T/db3' takes \[key, value\] records, got a msgpack positive integer" -- "$WEIR" run "range count=3 ! leveldb path=$T/db3"
expect_exit 1 "leveldb: cannot open '$T/none'" -- "$WEIR" run "leveldb path=$T/none ! null"

# Checkpointed: resuming from any epoch ends with the same database
"$WEIR" run -q --checkpoint "$T/ck" --epoch-records 700 "msgpack path=$T/pairs.mp ! leveldb path=$T/db4" || fail "checkpointed into leveldb"
"$WEIR" run -q --checkpoint "$T/ck" --resume-from 3 --epoch-records 700 "msgpack path=$T/pairs.mp ! leveldb path=$T/db4" \
    || fail "resume into leveldb"
"$WEIR" run -q "leveldb path=$T/db4 ! lines path=$T/out.txt" || fail "out of leveldb after resume"
same "$T/out.txt" "$T/expected" "leveldb after resume"

# Reading a database with checkpoints, resumed mid-way
"$WEIR" run -q --checkpoint "$T/ck2" --epoch-records 1000 --epochs 2 "leveldb path=$T/db ! lines path=$T/part.txt" || fail "leveldb reader, 2 epochs"
"$WEIR" run -q --checkpoint "$T/ck2" --resume --epoch-records 1000 "leveldb path=$T/db ! lines path=$T/part.txt" || fail "leveldb reader resumed"
same "$T/part.txt" "$T/expected" "leveldb reader resumed"

# The database must be the one the checkpoint counted on: removed or
# replaced between a pause and --resume, it is refused, not silently
# filled with only the records after the checkpoint
for durability in flush sync; do
    rm -rf "$T/ck5" "$T/db5"
    "$WEIR" run -q --checkpoint "$T/ck5" --epoch-records 1000 --epochs 2 \
        "msgpack path=$T/pairs.mp ! leveldb path=$T/db5 durability=$durability" || fail "$durability: paused run"
    grep -q '^id:[0-9a-f]\{16\} commit:3$' "$T/db5/WEIR-COMMIT" && ok || fail "$durability: marker $(cat "$T/db5/WEIR-COMMIT")"
    cp -r "$T/db5" "$T/db5.kept"
    rm -rf "$T/db5"
    expect_exit 1 "leveldb: '$T/db5' is not the database this job committed 3 times to \\(no WEIR-COMMIT in it\\)" -- \
        "$WEIR" run --checkpoint "$T/ck5" --resume --epoch-records 1000 "msgpack path=$T/pairs.mp ! leveldb path=$T/db5 durability=$durability"
    [ ! -e "$T/db5" ] && ok || fail "$durability: a refused resume made a new database"
    "$WEIR" run -q "msgpack path=$T/pairs.mp ! leveldb path=$T/db5" || fail "another job's database"
    expect_exit 1 "leveldb: '$T/db5' was written by another job since the checkpoint" -- \
        "$WEIR" run --checkpoint "$T/ck5" --resume --epoch-records 1000 "msgpack path=$T/pairs.mp ! leveldb path=$T/db5 durability=$durability"
    rm -rf "$T/db5" && mv "$T/db5.kept" "$T/db5"
    "$WEIR" run -q --checkpoint "$T/ck5" --resume --epoch-records 1000 "msgpack path=$T/pairs.mp ! leveldb path=$T/db5 durability=$durability" \
        || fail "$durability: resume"
    "$WEIR" run -q "leveldb path=$T/db5 ! lines path=$T/out.txt" || fail "$durability: out"
    same "$T/out.txt" "$T/expected" "leveldb durability=$durability after a resume"
done
# Restored from an older copy, the database lacks commits the checkpoint
# counted on: refused as rolled back, not resumed with a gap
desc="msgpack path=$T/pairs.mp ! leveldb path=$T/db7"
"$WEIR" run -q --checkpoint "$T/ck7" --epoch-records 1000 --epochs 1 "$desc" || fail "rollback: the first epoch"
cp -r "$T/db7" "$T/db7.old"
"$WEIR" run -q --checkpoint "$T/ck7" --resume --epoch-records 1000 --epochs 2 "$desc" || fail "rollback: the second epoch"
rm -rf "$T/db7" && mv "$T/db7.old" "$T/db7"
expect_exit 1 "leveldb: '$T/db7' was rolled back since the checkpoint \\(its marker says id [0-9a-f]{16}, commit 2; the checkpoint says id [0-9a-f]{16}, commit 3\\)" -- \
    "$WEIR" run --checkpoint "$T/ck7" --resume --epoch-records 1000 "$desc"

expect_exit 2 "leveldb: property 'durability': 'never' is neither flush nor sync" -- \
    "$WEIR" run "range count=1 ! leveldb path=$T/db6 durability=never"

finish

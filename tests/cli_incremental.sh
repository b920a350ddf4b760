#!/bin/sh
# Incremental ingest: a batch job over a glob, resumed after its files
# grew and new ones came, reads exactly what was added; a file changed
# otherwise is refused with the way out; kills during the incremental
# run lose and repeat nothing.
. "$(dirname "$0")/lib.sh"

L="$T/logs"
DESC="lines path='$L/*.log' split=2000 ! lines path=$T/out.txt"

# fresh: the logs of day one (a.log cut into shards, b.log whole) and the
# job run over them to its end, into a new checkpoint
fresh () {
    rm -rf "$L" "$T/ck" "$T/out.txt"
    mkdir -p "$L"
    seq 1 1000 > "$L/a.log"
    seq 5001 5300 > "$L/b.log"
    "$WEIR" run -q --checkpoint "$T/ck" "$DESC" || fail "day one's run"
}

# exact WHAT FILE...: the output holds the lines of FILE... each once
exact () {
    _what=$1
    shift
    cat "$@" | sort > "$T/want"
    sort "$T/out.txt" > "$T/got"
    same "$T/got" "$T/want" "$_what"
}

# --- Day two: a file grew, a new file came --------------------------------
fresh
cp "$L/a.log" "$T/a.day1"
seq 1001 1500 >> "$L/a.log"
seq 9001 9100 > "$L/c.log"
expect_exit 0 "since checkpoint 1, 1 file grew and 1 is new: reading what was added" \
    -- "$WEIR" run --checkpoint "$T/ck" --resume "$DESC"
grep -q "^weir: 600 records read" "$T/err" && ok || fail "day two read other than the 600 new lines: $(cat "$T/err")"
exact "day two" "$L/a.log" "$L/b.log" "$L/c.log"
# Nothing new: nothing to do
expect_exit 0 "the job finished at epoch 2: nothing left to do" -- "$WEIR" run --checkpoint "$T/ck" --resume "$DESC"
exact "day two again" "$L/a.log" "$L/b.log" "$L/c.log"
# Days three to five: the shards a file was read in are merged, so a file
# appended to daily does not gain a shard a day
for day in 3 4 5; do
    before=$(wc -c < "$L/a.log")
    seq $((day * 1000 + 1)) $((day * 1000 + 400)) >> "$L/a.log"
    "$WEIR" run -q --checkpoint "$T/ck" --resume "$DESC" || fail "day $day's run"
done
exact "day five" "$L/a.log" "$L/b.log" "$L/c.log"
"$WEIR" checkpoints "$T/ck" --epoch 5 > "$T/epoch5"
n=$(grep -c "^  $L/a.log@" "$T/epoch5")
# What was read before day five is one shard; day five's 2000 bytes are
# cut where split=2000 cuts the file (one or two shards)
grep -q "^  $L/a.log@0-$before: $before\$" "$T/epoch5" && [ "$n" -le 3 ] && ok \
    || fail "a.log after five days: not merged: $(grep "^  $L/a.log@" "$T/epoch5" | tr '\n' ' ')"
grep -q "^  $L/a.log: .* 0 $(wc -c < "$L/a.log") [0-9a-f]*$" "$T/epoch5" && ok \
    || fail "the checkpoint does not note a.log's size: $(grep "^  $L/a.log:" "$T/epoch5")"

# --- What cannot go on is refused, saying why and what to do -------------
next="A new file is read in full under a name the job has not read"
# refused PATTERN: the resume exits 1 saying PATTERN, and the output is
# day one's, untouched: refused before any output moved
seq 5001 5300 > "$T/b.day1"
refused () {
    expect_exit 1 "$1" -- "$WEIR" run --checkpoint "$T/ck" --resume "$DESC"
    exact "refused: $1" "$T/a.day1" "$T/b.day1"
}
fresh
head -5 "$L/a.log" > "$T/x" && cat "$T/x" > "$L/a.log"
refused "lines: '$L/a.log' shrank from 3893 to 10 bytes since checkpoint 1 read it; resuming would lose or repeat records. $next"
fresh
: > "$L/b.log"
refused "'$L/b.log' shrank to 0 bytes since checkpoint 1 read it"
fresh
{ echo first; seq 2 1200; } > "$T/x" && cat "$T/x" > "$L/a.log"
refused "'$L/a.log' was written again since checkpoint 1 read it: its first 64 bytes changed"
fresh
{ seq 1 999; echo last; seq 1 100; } > "$T/x" && cat "$T/x" > "$L/a.log"
refused "'$L/a.log' was written again since checkpoint 1 read it: the bytes before byte 3893, where it ended then, changed"
fresh
{ cat "$L/a.log"; echo more; } > "$T/x" && mv "$T/x" "$L/a.log"
refused "'$L/a.log' is another file than the one checkpoint 1 read \(inode [0-9]+, was [0-9]+\): it was replaced"
# The way out the message gives: the new file under a new name
mv "$L/a.log" "$L/a2.log"
expect_exit 0 "" -- "$WEIR" run -q --checkpoint "$T/ck" --resume "$DESC"
grep -c '^more$' "$T/out.txt" | grep -qx 1 && ok || fail "the renamed file was not read in full once"

# A file read to its end may go; one gone before it was read is refused
fresh
rm "$L/b.log"
expect_exit 0 "the job finished at epoch 1: nothing left to do" -- "$WEIR" run --checkpoint "$T/ck" --resume "$DESC"
rm -rf "$L" "$T/ck" "$T/out.txt" && mkdir -p "$L"
seq 1 1000 > "$L/a.log"
seq 5001 5300 > "$L/b.log"
"$WEIR" run -q --checkpoint "$T/ck" --epoch-records 100 --epochs 2 "$DESC" || fail "a run of two epochs"
rm "$L/b.log"
expect_exit 1 "'$L/b.log' is gone \(or no longer matches the path\), and checkpoint 2 had not read it to its end \(byte 0 of bytes 0-1500\); put it back to read the rest" \
    -- "$WEIR" run --checkpoint "$T/ck" --resume "$DESC"

# --- A job stopped half-way, then its files grew --------------------------
rm -rf "$L" "$T/ck" "$T/out.txt" && mkdir -p "$L"
seq 1 1000 > "$L/a.log"
seq 5001 5300 > "$L/b.log"
"$WEIR" run -q --checkpoint "$T/ck" --epoch-records 300 --epochs 2 "$DESC" || fail "a run of two epochs"
seq 1001 1300 >> "$L/a.log"
seq 5301 5400 >> "$L/b.log"
seq 7001 7050 > "$L/0.log"
# with two reader threads now: threads= may change on resume
"$WEIR" run -q --checkpoint "$T/ck" --resume --epoch-records 300 \
    "lines path='$L/*.log' split=2000 threads=2 ! lines path=$T/out.txt" || fail "the rest after growth"
exact "stopped half-way, grown" "$L/a.log" "$L/b.log" "$L/0.log"

# --- A shard not read to its end before one that was ----------------------
# Two reader threads: one in a.log's long first shard when the epoch ends,
# the other done with its one-line last shard.  Only shards read to their
# end are merged: the first keeps its offset.
rm -rf "$L" "$T/ck" "$T/out.txt" && mkdir -p "$L"
seq 1 200000 > "$L/a.log"
echo last >> "$L/a.log"
split=$(($(wc -c < "$L/a.log") - 5))
TDESC="lines path='$L/*.log' split=$split threads=2 ! lines path=$T/out.txt"
pattern=no
for try in 1 2 3 4 5; do
    rm -rf "$T/ck" "$T/out.txt"
    "$WEIR" run -q --checkpoint "$T/ck" --epochs 1 --epoch-records 100000 "$TDESC" || fail "two threads, one epoch"
    "$WEIR" checkpoints "$T/ck" --epoch 1 > "$T/epoch1"
    if grep -q "^  $L/a.log@$split-$((split + 5)): $((split + 5))\$" "$T/epoch1" \
        && ! grep -q "^  $L/a.log@0-$split: $split\$" "$T/epoch1"; then
        pattern=yes
        break
    fi
done
[ $pattern = yes ] && ok || fail "five runs never ended an epoch with the last shard read and the first not: $(cat "$T/epoch1")"
seq 200001 200100 >> "$L/a.log"
"$WEIR" run -q --checkpoint "$T/ck" --resume "$TDESC" || fail "two threads, grown"
exact "a shard left half-read before one read, then grown" "$L/a.log"

# --- A last line without its newline -----------------------------------
fresh
printf 'abc' >> "$L/b.log"
"$WEIR" run -q --checkpoint "$T/ck" --resume "$DESC" || fail "an unfinished last line"
printf 'def\n' >> "$L/b.log"
expect_exit 0 "warning: lines: '$L/b.log' ended without a newline at byte 1503 when checkpoint 2 read it: its last line was a record then, and the bytes appended since begin a new record" \
    -- "$WEIR" run -q --checkpoint "$T/ck" --resume "$DESC"
[ "$(tail -2 "$T/out.txt" | tr '\n' ' ')" = "abc def " ] && ok \
    || fail "a line written in two parts: $(tail -2 "$T/out.txt" | tr '\n' ' ')"

# --- A whole file (msgpack) that grew -------------------------------------
rm -rf "$T/mp" && mkdir -p "$T/mp"
"$WEIR" run -q "range count=100 ! msgpack path=$T/mp/a.mp" || fail "msgpack input"
MDESC="msgpack path='$T/mp/*.mp' ! lines path=$T/mp/out.txt"
"$WEIR" run -q --checkpoint "$T/mp/ck" "$MDESC" || fail "msgpack day one"
"$WEIR" run -q "range start=100 count=20 ! msgpack path=$T/mp/more" && cat "$T/mp/more" >> "$T/mp/a.mp"
expect_exit 0 "1 file grew" -- "$WEIR" run --checkpoint "$T/mp/ck" --resume "$MDESC"
seq 0 119 > "$T/mp/want"
sort -n "$T/mp/out.txt" > "$T/mp/got"
same "$T/mp/got" "$T/mp/want" "a msgpack file that grew"

# --- A whole file not yet read to its end is not one that grew ---------------
# passes= refuses growth; a msgpack file stopped half-way through a pass
# has an offset short of its size, and is no file that grew
"$WEIR" run -q --epochs 1 --epoch-records 30 --checkpoint "$T/mp/ck2" \
    "msgpack path='$T/mp/a.mp' passes=2 ! lines path=$T/mp/twice.txt" || fail "msgpack passes=2, one epoch"
"$WEIR" run -q --epoch-records 30 --checkpoint "$T/mp/ck2" --resume \
    "msgpack path='$T/mp/a.mp' passes=2 ! lines path=$T/mp/twice.txt" || fail "msgpack passes=2 resumed half-way"
{ seq 0 119; seq 0 119; } | sort -n > "$T/mp/want2"
sort -n "$T/mp/twice.txt" > "$T/mp/got2"
same "$T/mp/got2" "$T/mp/want2" "msgpack passes=2 stopped half-way and resumed"

# --- passes= reads the same input each pass ------------------------------
rm -rf "$T/p" && mkdir -p "$T/p"
seq 1 100 > "$T/p/a.log"
PDESC="lines path='$T/p/*.log' passes=2 ! lines path=$T/p/out.txt"
"$WEIR" run -q --checkpoint "$T/p/ck" "$PDESC" || fail "passes=2"
seq 1 10 > "$T/p/b.log"
expect_exit 1 "'$T/p/b.log' is new since checkpoint 2, but passes=2 reads the same input in every pass" \
    -- "$WEIR" run --checkpoint "$T/p/ck" --resume "$PDESC"

# --- Killed during the incremental run, at every point of an epoch's end --
# Day two's run is killed, then resumed; a third day's growth may come in
# between.  Every line is in the output once.
for point in pipe-drained:2 writers-synced:1 writers-synced:3 before-leveldb-write:2 after-leveldb-write:1 \
    after-leveldb-write:3 readers-resumed:2; do
    fresh
    seq 1001 3000 >> "$L/a.log"
    seq 9001 9500 > "$L/c.log"
    WEIR_KILL_AT=$point "$WEIR_KP" run -q --checkpoint "$T/ck" --resume --epoch-records 300 "$DESC" 2>"$T/err"
    rc=$?
    [ $rc -eq 137 ] && ok || { fail "killed at $point: exit $rc, wanted 137"; sed 's/^/    /' "$T/err" >&2; }
    case $point in *:3) seq 3001 3100 >> "$L/a.log" ;; esac
    "$WEIR" run -q --checkpoint "$T/ck" --resume --epoch-records 300 "$DESC" 2>"$T/err" \
        || { fail "resumed after $point"; sed 's/^/    /' "$T/err" >&2; }
    exact "killed at $point" "$L/a.log" "$L/b.log" "$L/c.log"
done

finish

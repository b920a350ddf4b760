#!/bin/sh
# What a job does to the files it writes when it fails.  Without a
# checkpoint, a batch job writes a new file beside each output and puts it
# in the output's place only when it succeeds: a failed, killed or aborted
# job leaves the old file as it was (as sed -i and rsync do).  With a
# checkpoint the output itself is written, and --resume goes on from the
# last checkpoint.  An input that may never end (follow=1, a pipe) writes
# in place, so that its output can be watched as it grows.
. "$(dirname "$0")/lib.sh"

# leftovers DIR: the files a job left beside its outputs
leftovers () {
    find "$1" -name '.*.weir-*' | wc -l
}

O="$T/o"
mkdir "$O"
printf '{"n":1}\n{"n":\n{"n":3}\n' > "$O/bad.jsonl"
printf '{"n":1}\n{"n":2}\n' > "$O/good.jsonl"
echo precious > "$O/keep.jsonl"
cp "$O/keep.jsonl" "$T/keep.before"

# --- a failed job leaves the old file as it was ---------------------------
expect_exit 1 "json: '.*bad.jsonl' line 2 column 6 \(byte 13\)" -- \
    "$WEIR" run -q "json path=$O/bad.jsonl ! json path=$O/keep.jsonl"
same "$O/keep.jsonl" "$T/keep.before" "a failed job's output"
[ "$(leftovers "$O")" -eq 0 ] && ok || fail "a failed job left its new file behind: $(ls -a "$O")"

# Failing late, after many epochs were committed to the new file
seq 1 200000 | awk '{ printf "{\"n\":%d}\n", $1 }' > "$O/late.jsonl"
echo '{"n": oops}' >> "$O/late.jsonl"
expect_exit 1 "late.jsonl' line 200001" -- \
    "$WEIR" run -q --epoch-records 10000 "json path=$O/late.jsonl threads=2 ! json path=$O/keep.jsonl threads=2"
same "$O/keep.jsonl" "$T/keep.before" "a job failing after 20 epochs"
[ "$(leftovers "$O")" -eq 0 ] && ok || fail "a late failure left its new file behind"

# --- a job that succeeds replaces the file, keeping its mode ---------------
chmod 640 "$O/keep.jsonl"
"$WEIR" run -q "json path=$O/good.jsonl ! json path=$O/keep.jsonl" || fail "a good job failed"
same "$O/keep.jsonl" "$O/good.jsonl" "a good job's output"
[ "$(stat -c %a "$O/keep.jsonl")" = 640 ] && ok || fail "the replaced file's mode is $(stat -c %a "$O/keep.jsonl"), was 640"
[ "$(leftovers "$O")" -eq 0 ] && ok || fail "a good job left a file behind"
# A new output is created as before
"$WEIR" run -q "json path=$O/good.jsonl ! lines path=$O/new.txt" || fail "a new output"
[ "$(wc -l < "$O/new.txt")" -eq 2 ] && ok || fail "a new output has $(wc -l < "$O/new.txt") lines"

# A symbolic link: its target is replaced, the link stays a link
echo precious > "$O/target.jsonl"
ln -s target.jsonl "$O/link.jsonl"
expect_exit 1 "" -- "$WEIR" run -q "json path=$O/bad.jsonl ! json path=$O/link.jsonl"
[ "$(cat "$O/target.jsonl")" = precious ] && ok || fail "a failed job changed a link's target"
"$WEIR" run -q "json path=$O/good.jsonl ! json path=$O/link.jsonl" || fail "a good job through a link"
[ -L "$O/link.jsonl" ] && ok || fail "the link was replaced by a file"
same "$O/target.jsonl" "$O/good.jsonl" "a good job through a link"

# What cannot be written is refused at once, as before: a folder
mkdir "$O/dir"
expect_exit 1 "cannot open '.*dir' for writing: Is a directory" -- \
    "$WEIR" run -q "json path=$O/good.jsonl ! json path=$O/dir"

# --- killed: the old file stays --------------------------------------------
cp "$T/keep.before" "$O/keep.jsonl"
"$WEIR" run -q --epoch-records 1000 "range count=100000000 ! lines path=$O/keep.jsonl" 2>/dev/null &
pid=$!
# Until the new file has grown past a few epochs
waited=0
while [ $waited -lt 400 ]; do
    n=$(find "$O" -name '.keep.jsonl.weir-*' -size +100k | wc -l)
    [ "$n" -gt 0 ] && break
    sleep 0.05
    waited=$((waited + 1))
done
[ "$n" -gt 0 ] && ok || fail "the new file beside keep.jsonl never grew"
kill -9 $pid
wait $pid 2>/dev/null
same "$O/keep.jsonl" "$T/keep.before" "a killed job's output"
find "$O" -name '.keep.jsonl.weir-*' -delete

# Stopped by a signal (a graceful stop, exit 143): the job did not fail,
# and the output holds what was read until the stop
"$WEIR" run -q --epoch-records 1000 "range count=100000000 ! lines path=$O/keep.jsonl" 2>/dev/null &
pid=$!
sleep 1
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 143 ] && ok || fail "a stopped job exits $rc, wanted 143"
head -1 "$O/keep.jsonl" | grep -qx 0 && ok || fail "a stopped job's output starts with '$(head -c 20 "$O/keep.jsonl")'"
[ "$(leftovers "$O")" -eq 0 ] && ok || fail "a stopped job left a file behind"

# --- with a checkpoint, the output itself is written ------------------------
cp "$T/keep.before" "$O/keep.jsonl"
expect_exit 1 "late.jsonl' line 200001" -- \
    "$WEIR" run -q --checkpoint "$T/ck" --epoch-records 10000 "json path=$O/late.jsonl ! json path=$O/keep.jsonl"
# The epochs committed before the bad line are there, in the file itself
n=$(wc -l < "$O/keep.jsonl")
[ "$n" -ge 190000 ] && ok || fail "with a checkpoint, the failed job's output has $n lines"
grep -q precious "$O/keep.jsonl" && fail "with a checkpoint, the old content is still there" || ok
[ "$(leftovers "$O")" -eq 0 ] && ok || fail "a checkpointed job wrote beside its output"

# --- an input that never ends: written in place, watched as it grows -------
# A pipe: the file itself is written (truncated at the start), nothing
# beside it
mkfifo "$T/fifo"
echo precious > "$O/live.jsonl"
"$WEIR" run -q "json path=$T/fifo ! json path=$O/live.jsonl" 2>"$T/live.err" &
pid=$!
exec 3>"$T/fifo"
echo '{"n":1}' >&3
waited=0
while [ $waited -lt 400 ] && [ -s "$O/live.jsonl" ]; do
    sleep 0.05
    waited=$((waited + 1))
done
[ -s "$O/live.jsonl" ] && fail "a job reading a pipe does not write its output in place" || ok
[ "$(leftovers "$O")" -eq 0 ] && ok || fail "a job reading a pipe writes beside its output"
exec 3>&-
wait $pid || { fail "the job reading a pipe failed"; cat "$T/live.err" >&2; }
[ "$(cat "$O/live.jsonl")" = '{"n":1}' ] && ok || fail "the job reading a pipe wrote '$(cat "$O/live.jsonl")'"

# follow=1: its epochs end every second, and each one's lines are in the
# output while the job runs
echo '{"n":1}' > "$O/f.jsonl"
echo precious > "$O/follow.jsonl"
"$WEIR" run -q "json path=$O/f.jsonl follow=1 ! json path=$O/follow.jsonl" 2>"$T/follow.err" &
pid=$!
waited=0
while [ $waited -lt 400 ] && ! grep -q '"n":1' "$O/follow.jsonl"; do
    sleep 0.05
    waited=$((waited + 1))
done
grep -q '"n":1' "$O/follow.jsonl" && ok || fail "a follow=1 job's output does not grow as it runs"
kill -TERM $pid
wait $pid
[ $? -eq 143 ] && ok || fail "the follow=1 job did not stop with 143"

finish

#!/bin/sh
# tests/cli_follow.sh - follow=1: tail -F that neither loses nor repeats.
#
# Appends, rotation by rename and create, copytruncate, deletion, new
# files; a kill loop while another process appends and rotates; a
# rotation while weir is not running; a waiting job's CPU; msgpack
# records cut at the end of a growing file.
. "$(dirname "$0")/lib.sh"

# stop PID: SIGTERM, and the exit code must be 143
stop () {
    kill -TERM "$1"
    wait "$1" 2>/dev/null
    rc=$?
    [ $rc -eq 143 ] && ok || fail "a follow job ended with $rc on SIGTERM, wanted 143"
}

# --- what tail -F does ---------------------------------------------------
L="$T/logs"
mkdir "$L"
seq 1 5 > "$L/a.log"
"$WEIR" run -q --stats "$T/a.json" --checkpoint "$T/a.ck" \
    "lines path=$L/*.log follow=1 rotate-wait=300 ! lines path=$T/a.out" 2>"$T/a.err" &
pid=$!
wait_lines "$T/a.out" 5 || fail "the lines already there were not read"
seq 6 8 >> "$L/a.log"
wait_lines "$T/a.out" 8 || fail "appended lines were not read"
# Rotation: renamed, a new file under the name, and one late line for the
# old file, which is read within rotate-wait
mv "$L/a.log" "$L/a.log.1"
seq 100 102 > "$L/a.log"
echo 9 >> "$L/a.log.1"
wait_lines "$T/a.out" 12 || fail "a rotation was not followed"
# A new file in the folder
seq 200 201 > "$L/b.log"
wait_lines "$T/a.out" 14 || fail "a new file was not picked up"
# copytruncate: emptied in place, then written again
sleep 0.3
: > "$L/b.log"
sleep 0.3
echo 300 >> "$L/b.log"
wait_lines "$T/a.out" 15 || fail "a truncated file was not read again"
# Deleted: finished; the name taken again later is a new file
rm "$L/b.log"
sleep 0.3
echo 400 > "$L/b.log"
wait_lines "$T/a.out" 16 || fail "a file created again under a deleted one's name was not read"
stop $pid
printf '%s\n' 1 2 3 4 5 6 7 8 9 100 101 102 200 201 300 400 > "$T/a.want"
sort -n "$T/a.out" > "$T/a.got"
same "$T/a.got" "$T/a.want" "tail -F semantics"
grep -q "b.log' shrank to 0 bytes below byte 8, where reading had got: it was truncated" "$T/a.err" && ok \
    || { fail "no warning for the truncated file"; cat "$T/a.err" >&2; }
grep -q '"files_truncated": 1,' "$T/a.json" && ok || fail "--stats does not count the truncation"
# Each file in order with one thread
grep -x -e 9 -e 100 "$T/a.out" | tr '\n' ' ' | grep -q "^9 100 $" && ok || fail "the old file's last line came after the new file's"
"$WEIR" checkpoints "$T/a.ck" --epoch "$("$WEIR" checkpoints "$T/a.ck" | awk '/latest/ { print $1 }')" \
    | grep -q "^  $L/a.log: [0-9]* [0-9]* 12 [0-9a-f]* 0$" && ok || fail "the checkpoint lacks a.log's identity"

# --- a kill loop while another process appends and rotates --------------
# append_rotate DIR FILES CASCADE: append numbered lines to DIR/app.log,
# 150 per file, and rotate it FILES times: to app.log.R (the R-th
# rotation), or with CASCADE=1 as logrotate numbers copies (app.log.1 to
# app.log.2 and so on, app.log to app.log.1).  After the last line the file
# is rotated and no live file remains; DIR.total then holds the count.
append_rotate () {
    n=1
    for r in $(seq 1 "$2"); do
        i=0
        while [ $i -lt 150 ]; do
            echo "$n" >> "$1/app.log"
            n=$((n + 1))
            i=$((i + 1))
            # A file lives about 3.5 s: longer than weir takes to start
            # again after a kill, even under a sanitizer.  A file created
            # and rotated away while weir is down is never seen (README,
            # Streaming), and the test is of what weir promises
            [ $((i % 10)) -eq 0 ] && sleep 0.25
        done
        if [ "$3" = 1 ]; then
            for c in $(seq "$r" -1 1); do
                [ -e "$1/app.log.$c" ] && mv "$1/app.log.$c" "$1/app.log.$((c + 1))"
            done
            mv "$1/app.log" "$1/app.log.1"
        else
            mv "$1/app.log" "$1/app.log.$r"
        fi
    done
    echo "$((n - 1))" > "$1.total"
}

# kill_loop DIR DESC: SIGKILL a job of DESC, checkpointed in DIR.ck, and
# start it again while the appender in the background runs, then let a
# last run read what is left: every line of DIR.total exactly once in
# DIR.out.  Every run lives 0.2 to 0.7 s, less than rotate-wait=: a
# rotated file must be left because it has been quiet that long, whichever
# run sees it, not because one run watched it that long (none does)
kill_loop () {
    kills=0
    while kill -0 $appender 2>/dev/null; do
        "$WEIR" run -q --checkpoint "$1.ck" --resume --epoch-seconds 0.1 "$2" 2>>"$1.err" &
        pid=$!
        sleep "0.$(awk -v s=$kills 'BEGIN { srand (s + 7); printf "%d", 2 + rand () * 6 }')"
        kill -9 $pid 2>/dev/null
        wait $pid 2>/dev/null
        kills=$((kills + 1))
    done
    wait $appender
    total=$(cat "$1.total")
    "$WEIR" run -q --checkpoint "$1.ck" --resume --epoch-seconds 0.1 "$2" 2>>"$1.err" &
    pid=$!
    # The last rotated file is found by its inode, read to its end: all lines
    wait_lines "$1.out" "$total" || fail "after $kills kills the output has $(wc -l < "$1.out") of $total lines"
    sleep 0.5
    stop $pid
    [ $kills -ge 3 ] && ok || fail "only $kills kills landed while the appender ran"
    seq 1 "$total" > "$1.want"
    sort -n "$1.out" > "$1.got"
    same "$1.got" "$1.want" "$kills kills while appending and rotating ($2): every line exactly once"
    if grep -q "is lost" "$1.err"; then fail "a gap was reported: $(cat "$1.err")"; else ok; fi
}

K="$T/k"
mkdir "$K"
append_rotate "$K" 6 0 &
appender=$!
kill_loop "$K" "lines path=$K/*.log follow=1 rotate-wait=750 ! lines path=$K.out"

# The same with a glob that matches the rotated copies, numbered as
# logrotate numbers them: a copy is a file read, or being read, under
# another name, and is never read again, across kills
KC="$T/kc"
mkdir "$KC"
append_rotate "$KC" 5 1 &
appender=$!
kill_loop "$KC" "lines path=$KC/app.log* follow=1 rotate-wait=750 ! lines path=$KC.out"

# --- a glob that matches the rotated copies -----------------------------
# Copies there before the job are files like any other, each read once;
# every rotation after renames each copy along (app.log.1 to app.log.2,
# app.log to app.log.1) and creates app.log; the oldest copy is deleted.
G="$T/g"
mkdir "$G"
seq 1 3 > "$G/app.log.2"
seq 4 6 > "$G/app.log.1"
seq 7 9 > "$G/app.log"
rotate_copies () {
    rm -f "$G/app.log.4"
    for c in 3 2 1; do
        [ -e "$G/app.log.$c" ] && mv "$G/app.log.$c" "$G/app.log.$((c + 1))"
    done
    mv "$G/app.log" "$G/app.log.1"
}
desc="lines path=$G/app.log* follow=1 rotate-wait=300 ! lines path=$T/g.out"
"$WEIR" run -q --checkpoint "$T/g.ck" "$desc" 2>"$T/g.err" &
pid=$!
wait_lines "$T/g.out" 9 || fail "app.log*: the files there at the start were not read"
rotate_copies
seq 10 12 > "$G/app.log"
echo 13 >> "$G/app.log.1"  # a late line for the file just rotated
wait_lines "$T/g.out" 13 || fail "app.log*: the first rotation was not followed"
rotate_copies
seq 14 16 > "$G/app.log"
wait_lines "$T/g.out" 16 || fail "app.log*: the second rotation was not followed"
sleep 2.5  # epochs end (1 s), each looking at the copies again
stop $pid
# Two rotations while weir is not running: app.log, read up to line 16,
# ends up as app.log.2 with two more lines, and app.log.1 is a file weir
# never saw
seq 17 18 >> "$G/app.log"
rotate_copies
seq 19 20 > "$G/app.log"
rotate_copies
seq 21 22 > "$G/app.log"
"$WEIR" run -q --checkpoint "$T/g.ck" --resume "$desc" 2>"$T/g.err" &
pid=$!
wait_lines "$T/g.out" 22 || fail "app.log*: rotations while down: $(wc -l < "$T/g.out") lines, wanted 22"
sleep 2.5
stop $pid
seq 1 22 > "$T/g.want"
sort -n "$T/g.out" > "$T/g.got"
same "$T/g.got" "$T/g.want" "app.log*: every line once, the rotated copies never read again"
# The checkpoint knows the copies it must not read as files read and left
"$WEIR" checkpoints "$T/g.ck" --epoch "$("$WEIR" checkpoints "$T/g.ck" | awk '/latest/ { print $1 }')" > "$T/g.ls"
grep -q "read:0" "$T/g.ls" && ok || { fail "the checkpoint lists no file read and left"; cat "$T/g.ls" >&2; }

# --- a file found, then rotated in an epoch that was never committed -------
# f.log appears, a checkpoint follows (it must know f.log, at offset 0,
# before a line of it is read), f.log is read and rotated, and the job is
# killed before the next checkpoint: the resume finds f.log's file by its
# identity in f.log.1, which the glob does not match, and reads it first.
F="$T/f"
mkdir "$F"
echo 1 > "$F/a.log"
desc="lines path=$F/*.log follow=1 ! lines path=$T/f.out"
"$WEIR" run -q --checkpoint "$T/f.ck" --epoch-seconds 4 "$desc" 2>/dev/null &
pid=$!
latest () { "$WEIR" checkpoints "$T/f.ck" 2>/dev/null | awk '/latest/ { print $1 }'; }
# after_checkpoint E: wait (30 s at most) for a checkpoint newer than E
after_checkpoint () {
    for i in $(seq 1 300); do
        [ "$(latest)" -gt "$1" ] 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}
after_checkpoint 0 || fail "no first checkpoint"
seq 2 4 > "$F/f.log"
# The first checkpoint that lists f.log must have it at offset 0: found,
# not yet read (epochs of 4 s leave the polls time to see it)
at=
for i in $(seq 1 200); do
    at=$("$WEIR" checkpoints "$T/f.ck" --epoch "$(latest)" 2>/dev/null | sed -n "s|^ *$F/f.log@[0-9-]*: ||p")
    [ -n "$at" ] && break
    sleep 0.05
done
[ "$at" = 0 ] && ok || fail "f.log was first checkpointed at offset '$at', not 0: lines of it were read before a checkpoint knew it"
mv "$F/f.log" "$F/f.log.1"
echo 5 > "$F/f.log"
kill -9 $pid
wait $pid 2>/dev/null
# read_back N WHAT: a resume brings f.out to 1 .. N, each line once
read_back () {
    "$WEIR" run -q --checkpoint "$T/f.ck" --resume --epoch-seconds 4 "$desc" 2>"$T/f.err" &
    pid=$!
    wait_lines "$T/f.out" "$1" || fail "$2: $(wc -l < "$T/f.out") lines, wanted $1"
    sleep 0.3
    stop $pid
    seq 1 "$1" > "$T/f.want"
    sort -n "$T/f.out" > "$T/f.got"
    same "$T/f.got" "$T/f.want" "$2: read on resume"
}
read_back 5 "a file found and rotated in an uncommitted epoch"

# The same for a file that appeared while weir was down: the resume
# writes its checkpoint again, knowing it, before reading it
stop_at=$(latest)
seq 6 8 > "$F/g.log"
"$WEIR" run --no-progress --checkpoint "$T/f.ck" --resume --epoch-seconds 20 "$desc" 2>"$T/g.err" &
pid=$!
for i in $(seq 1 100); do
    grep -q "written again with the 1 file found since" "$T/g.err" && break
    sleep 0.1
done
grep -q "checkpoint $stop_at written again with the 1 file found since" "$T/g.err" && ok \
    || { fail "the resume did not write its checkpoint again with the new file"; cat "$T/g.err" >&2; }
mv "$F/g.log" "$F/g.log.1"
echo 9 > "$F/g.log"
kill -9 $pid
wait $pid 2>/dev/null
read_back 9 "a file found on resume and rotated before a checkpoint"

# --- copytruncate, written past the offset before a read finds it short --
# The job is frozen (SIGSTOP) while the file is emptied and written again,
# longer than where reading had got: no read finds it shorter, and only
# its first bytes say that it changed.  Read from byte 14 of the new
# content, the output would lose 100 to 103.  The file ends in a line
# without its newline ("part", which the rewrite drops): what the reader
# had searched of it must not outlive the start over.
C="$T/c"
mkdir "$C"
{ seq 1 5; printf part; } > "$C/c.log"
"$WEIR" run -q --stats "$T/c.json" "lines path=$C/c.log follow=1 ! lines path=$T/c.out" 2>"$T/c.err" &
pid=$!
wait_lines "$T/c.out" 5 || fail "c.log was not read"
sleep 0.5
kill -STOP $pid
# kill returns before every thread has stopped: a reader thread still
# running would see the file emptied, which is the other (also correct)
# path; wait until each thread of the job is in state T
for i in $(seq 1 200); do
    running=$(cat /proc/$pid/task/*/stat 2>/dev/null | sed 's/^.*) //' | cut -c1 | grep -vc T)
    [ "$running" = 0 ] && break
    sleep 0.01
done
seq 100 120 > "$C/c.log"
kill -CONT $pid
wait_lines "$T/c.out" 26 || fail "a file truncated and written past the offset: $(wc -l < "$T/c.out") lines, wanted 26"
sleep 0.3
stop $pid
{ seq 1 5; seq 100 120; } > "$T/c.want"
same "$T/c.out" "$T/c.want" "a file truncated and written past the offset is read again from its start"
grep -q "c.log' was truncated and written again past byte 14, where reading had got (its first bytes changed)" "$T/c.err" \
    && ok || { fail "no warning for the file written again"; cat "$T/c.err" >&2; }
grep -q '"files_truncated": 1,' "$T/c.json" && ok || fail "--stats does not count the file written again"

# The same while weir is not running: the checkpoint's inode holds other
# first bytes (the inode reused in place, as a new file given the freed
# inode would look, forced rather than hoped for from the file system)
seq 1 5 > "$C/d.log"
"$WEIR" run -q --checkpoint "$T/d.ck" "lines path=$C/d.log follow=1 ! lines path=$T/d.out" 2>/dev/null &
pid=$!
wait_lines "$T/d.out" 5 || fail "d.log was not read"
stop $pid
seq 100 120 > "$C/d.log"
"$WEIR" run -q --checkpoint "$T/d.ck" --resume "lines path=$C/d.log follow=1 ! lines path=$T/d.out" 2>"$T/d.err" &
pid=$!
wait_lines "$T/d.out" 26 || fail "a file written again while down: $(wc -l < "$T/d.out") lines, wanted 26"
sleep 0.3
stop $pid
same "$T/d.out" "$T/c.want" "a file written again while weir was down is read again from its start"
grep -q "d.log' is the file checkpointed at byte 10, but its first bytes changed" "$T/d.err" \
    && ok || { fail "no warning for the file written again while down"; cat "$T/d.err" >&2; }

# --- a rotation while weir is not running, and a file that vanished ------
R="$T/r"
mkdir "$R"
seq 1 3 > "$R/x.log"
seq 1 3 > "$R/y.log"
seq 1 3 > "$R/z.log"
"$WEIR" run -q --checkpoint "$T/r.ck" "lines path=$R/*.log follow=1 ! lines path=$T/r.out" 2>/dev/null &
pid=$!
wait_lines "$T/r.out" 9 || fail "x.log, y.log and z.log were not read"
sleep 1.2  # an epoch (1 s by default) commits them
stop $pid
seq 4 5 >> "$R/x.log"
mv "$R/x.log" "$R/x.log.old"
echo 6 > "$R/x.log"
seq 4 5 >> "$R/y.log"
# A link outside the folder keeps the deleted file's inode from the new
# y.log, as ext4 would often give it (the same inode with other first
# bytes is the case of d.log above)
ln "$R/y.log" "$T/y.pinned"
rm "$R/y.log"
echo 10 > "$R/y.log"
# z.log is rotated and its new file comes only after the resume: the old
# one is looked for although nothing is at its name
seq 4 5 >> "$R/z.log"
mv "$R/z.log" "$R/z.log.old"
"$WEIR" run -q --checkpoint "$T/r.ck" --resume "lines path=$R/*.log follow=1 ! lines path=$T/r.out" 2>"$T/r.err" &
pid=$!
wait_lines "$T/r.out" 15 || fail "after a rotation while down: $(wc -l < "$T/r.out") lines"
echo 20 > "$R/z.log"
wait_lines "$T/r.out" 16 || fail "the new z.log after the resume: $(wc -l < "$T/r.out") lines"
stop $pid
sort -n "$T/r.out" | tr '\n' ' ' > "$T/r.got"
[ "$(cat "$T/r.got")" = "1 1 1 2 2 2 3 3 3 4 4 5 5 6 10 20 " ] && ok || fail "rotation while down: $(cat "$T/r.got")"
grep -q "y.log' is not the file checkpointed at byte 6 (inode [0-9]*), which is nowhere in its folder: what was written to it after that byte is lost" "$T/r.err" \
    && ok || { fail "the gap of the vanished y.log was not reported"; cat "$T/r.err" >&2; }

# --- a waiting job costs next to nothing --------------------------------
I="$T/i"
mkdir "$I"
echo a > "$I/q.log"
"$WEIR" run -q "lines path=$I/*.log follow=1 ! lines path=$T/i.out" 2>/dev/null &
pid=$!
wait_lines "$T/i.out" 1 || fail "the idle job read nothing"
# The process itself: the command may be a libtool wrapper that execs it
proc=$pid
[ -r "/proc/$proc/stat" ] || fail "no /proc/$proc/stat"
# Two windows of 3 s, the quieter counted: the kernel charges a whole
# tick to a process that happens to run when it strikes, and a suite of
# heavy tests beside this one makes that luck worse; a job that polled
# would use most of a core in both
ticks () { awk '{ print $14 + $15 }' "/proc/$proc/stat"; }
before=$(ticks)
sleep 3
middle=$(ticks)
sleep 3
after=$(ticks)
[ $((after - middle)) -lt $((middle - before)) ] && before=$middle || after=$middle
hz=$(getconf CLK_TCK)
# Under 2% of a core: fewer than 3 s x hz / 50 ticks (a job that polled
# would take most of a core; its 1 s rescans and a wait's wakeups cost 0
# to 2 ticks, and 3 on a machine loaded by two test suites at once, where
# a bound of 1% failed).  ThreadSanitizer runs a background thread of its
# own, which measured 3 ticks here: under a sanitizer the bound is 10%
limit=$((3 * hz / 50))
[ -n "${SANITIZER_CFLAGS:-}" ] && limit=$((limit * 5))
[ $((after - before)) -lt $limit ] && ok \
    || fail "a waiting follow job used $((after - before)) CPU ticks in 3 s (hz $hz, limit $limit)"
stop $pid

# --- msgpack: a record cut at the end of a growing file is waited for ----
M="$T/m"
mkdir "$M"
"$MKMSGPACK" ints 3 "$M/s.mp"
"$WEIR" run -q "msgpack path=$M/*.mp follow=1 ! lines path=$T/m.out" 2>"$T/m.err" &
pid=$!
wait_lines "$T/m.out" 3 || fail "msgpack follow: the first records"
# A fixarray of two, in two writes
printf '\222\001' >> "$M/s.mp"
sleep 0.5
printf '\002' >> "$M/s.mp"
wait_lines "$T/m.out" 4 || { fail "msgpack follow: the record written in two pieces"; cat "$T/m.err" >&2; }
stop $pid
tail -1 "$T/m.out" | grep -qx '\[1,2\]' && ok || fail "msgpack follow: the last record is $(tail -1 "$T/m.out")"

# --- json: a line written in pieces, and a resume -------------------------
J="$T/j"
mkdir "$J"
printf '{"n":1}\n{"n":2}\n' > "$J/e.jsonl"
"$WEIR" run -q --checkpoint "$T/j.ck" "json path=$J/*.jsonl follow=1 ! json path=$T/j.out" 2>"$T/j.err" &
pid=$!
wait_lines "$T/j.out" 2 || fail "json follow: the first records"
# Half a line is no record yet: the rest comes later
printf '{"n":3,"s":"a' >> "$J/e.jsonl"
sleep 0.5
printf 'b"}\n' >> "$J/e.jsonl"
wait_lines "$T/j.out" 3 || { fail "json follow: the line written in two pieces"; cat "$T/j.err" >&2; }
stop $pid
# Lines appended while weir is down are read on resume, once
printf '{"n":4}\n' >> "$J/e.jsonl"
"$WEIR" run -q --checkpoint "$T/j.ck" --resume "json path=$J/*.jsonl follow=1 ! json path=$T/j.out" 2>"$T/j.err" &
pid=$!
wait_lines "$T/j.out" 4 || { fail "json follow: the line appended while weir was down"; cat "$T/j.err" >&2; }
stop $pid
printf '{"n":1}\n{"n":2}\n{"n":3,"s":"ab"}\n{"n":4}\n' > "$T/j.want"
same "$T/j.out" "$T/j.want" "json follow across a resume"

# --- a file written to all the time still sends on after linger= --------
# A line every 10 ms: the reader never waits a whole slice (20 ms) for
# news, and a batch of 100,000 lines never fills; epochs of a minute.
# The lines must still come out (through a FIFO, which the writer writes
# each batch through) after linger=, not at the epoch's end.
B="$T/busy"
mkdir "$B"
: > "$B/a.log"
mkfifo "$T/busy.fifo"
cat "$T/busy.fifo" > "$T/busy.out" &
cpid=$!
"$WEIR" run -q --epoch-seconds 60 "lines path=$B/*.log follow=1 batch=100000 ! lines path=$T/busy.fifo" 2> "$T/busy.err" &
pid=$!
( i=0; while [ $i -lt 3000 ]; do echo "$i"; i=$((i + 1)); sleep 0.01; done >> "$B/a.log" ) &
apid=$!
wait_lines "$T/busy.out" 20 && ok || fail "a file written to every 10 ms: nothing came out within 20 s"
kill $apid 2> /dev/null
wait $apid 2> /dev/null
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 143 ] && ok || fail "a busy followed file: exit $rc on SIGTERM: $(cat "$T/busy.err")"
wait $cpid
cmp -s "$T/busy.out" "$B/a.log" && ok || fail "a busy followed file: the output is not the file"

# --- refusals -------------------------------------------------------------
expect_exit 2 "lines: follow=1 reads its files with one thread, not threads=2" -- \
    "$WEIR" run "lines path=$L/*.log follow=1 threads=2 ! null"
expect_exit 2 "lines: follow=1 never reaches the end of its input, so passes=2 cannot be" -- \
    "$WEIR" run "lines path=$L/*.log follow=1 passes=2 ! null"
expect_exit 2 "lines: follow=1 follows files, and standard input is no file" -- \
    "$WEIR" run "lines path=- follow=1 ! null"
expect_exit 2 "follow=1 watches one folder: wildcards may only be in the file name" -- \
    "$WEIR" run "lines path=$T/*/a.log follow=1 ! null"
expect_exit 2 "lines: rotate-wait= applies with follow=1" -- "$WEIR" run "lines path=$L/a.log rotate-wait=5 ! null"
expect_exit 1 "lines: cannot watch the folder '$T/nowhere': No such file or directory" -- \
    "$WEIR" run "lines path=$T/nowhere/*.log follow=1 ! null"

finish

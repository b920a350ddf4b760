#!/bin/sh
# Epochs and checkpoints: what each checkpoint holds, resume from every
# epoch, other thread counts, refusals.
. "$(dirname "$0")/lib.sh"
: "${PLUGIN_CFLAGS:?PLUGIN_CFLAGS must hold the compile flags of <weir/plugin.h>}"
: "${PLUGINS_SRC:?PLUGINS_SRC must point at tests/plugins}"
# shellcheck disable=SC2086
${CC:-cc} -std=c11 -Wall -Wextra -Werror -shared -fPIC $PLUGIN_CFLAGS "$PLUGINS_SRC/accumulate.c" -o "$T/acc.so" \
    || fail "accumulate plugin does not compile"

# The blob 'total' of a checkpoint, as a decimal
total () {
    "$WEIR" checkpoints "$1" --epoch "$2" --blob total | od -An -t d8 | tr -d ' '
}

# Each checkpoint holds exactly the records of the epochs before it: a
# processor adds each record to 'total', set to 100 by init (which runs
# once); range count=10 with 3-record epochs gives 4 epochs
job="range count=10 ! $T/acc.so init=100 ! lines path=$T/out.txt"
"$WEIR" run -q --checkpoint "$T/ck" --epoch-records 3 "$job" || fail "caffe2 job failed"
expected="100 103 115 136 145"
got=""
for e in 0 1 2 3 4; do got="$got $(total "$T/ck" $e)"; done
[ "$got" = " $expected" ] && ok || fail "totals of checkpoints 0..4: $got, wanted $expected"
"$WEIR" checkpoints "$T/ck" > "$T/list"
[ "$(grep -c '' "$T/list")" -eq 6 ] && grep -q '^4 .*(latest)  finished$' "$T/list" && ok || fail "listing: $(cat "$T/list")"
seq 0 9 > "$T/expected"

# Resuming from each of 0..4 ends at 145, with the same output, and init
# does not run again (it would reset the total to 100)
for e in 0 1 2 3 4; do
    echo "garbage past the committed length" >> "$T/out.txt"
    "$WEIR" run -q --checkpoint "$T/ck" --resume-from $e --epoch-records 3 "$job" || fail "resume from $e failed"
    [ "$(total "$T/ck" 4)" = 145 ] && ok || fail "resume from $e: total $(total "$T/ck" 4), wanted 145"
    same "$T/out.txt" "$T/expected" "resume from $e: output"
done

# --resume-from E goes back for good, synced, before any output is cut
# back: killed before its first checkpoint, the job resumes from E again,
# not from the newer checkpoints it abandoned (the newest would say the
# job finished, over an output rewritten since)
rb="range count=30000 ! identity ! lines path=$T/rb.txt"
"$WEIR" run -q --checkpoint "$T/rb" --epoch-records 1000 "$rb" || fail "the rollback job failed"
WEIR_KILL_AT=writers-synced:1 "$WEIR_KP" run --checkpoint "$T/rb" --resume-from 10 --epoch-records 1000 "$rb" \
    2> "$T/rb.err"
rc=$?
[ $rc -eq 137 ] && ok || fail "--resume-from 10 under WEIR_KILL_AT: exit $rc, wanted 137"
grep -q "warning: --resume-from 10: the [0-9]* newer checkpoints of '$T/rb' dropped" "$T/rb.err" && ok \
    || fail "--resume-from did not say what it dropped: $(cat "$T/rb.err")"
"$WEIR" checkpoints "$T/rb" | grep -q '^10 .*(latest)$' && ok \
    || fail "after --resume-from 10 and a kill the latest is not 10: $("$WEIR" checkpoints "$T/rb" | tail -2)"
"$WEIR" run -q --checkpoint "$T/rb" --resume --epoch-records 1000 "$rb" || fail "the resume after the rollback failed"
seq 0 29999 | cmp -s - "$T/rb.txt" && ok \
    || fail "killed after --resume-from, then resumed: $(wc -l < "$T/rb.txt") lines, wanted 0..29999 once"
# Killed just after the rollback's own write, before any output was cut
WEIR_KILL_AT=after-leveldb-write:1 "$WEIR_KP" run -q --checkpoint "$T/rb" --resume-from 20 --epoch-records 1000 \
    "$rb" 2> /dev/null
rc=$?
[ $rc -eq 137 ] && ok || fail "--resume-from 20 killed after its rollback: exit $rc, wanted 137"
"$WEIR" run -q --checkpoint "$T/rb" --resume --epoch-records 1000 "$rb" || fail "the resume after the rollback failed"
seq 0 29999 | cmp -s - "$T/rb.txt" && ok \
    || fail "killed after the rollback's write, then resumed: $(wc -l < "$T/rb.txt") lines, wanted 0..29999 once"

# After a resume the summary and --stats say this run's counts and the
# job's since it began, each named
printf '%s\n' 1 2 x 3 4 y 5 6 7 8 > "$T/st.txt"
st="json path=$T/st.txt on-error=skip ! json path=$T/st.json"
"$WEIR" run -q --checkpoint "$T/st" --epoch-records 2 --epochs 2 "$st" 2> /dev/null || fail "the first half failed"
"$WEIR" run --checkpoint "$T/st" --resume --epoch-records 2 --stats "$T/st.stats" "$st" 2> "$T/st.err" \
    || fail "the resumed half failed"
grep -q "^weir: 4 records read, 4 written, 1 bad skipped in .*; since the job began: 8 read, 8 written, 2 bad skipped$" \
    "$T/st.err" && ok || fail "the resumed summary: $(tail -1 "$T/st.err")"
grep -q '"records": 4,' "$T/st.stats" && grep -q '"total_records": 8,' "$T/st.stats" \
    && grep -q '"records_rejected": 1, .*"total_records_in": 8, "total_records_out": 8, "total_records_rejected": 2}' \
        "$T/st.stats" && ok || fail "--stats after a resume: $(cat "$T/st.stats")"

# An existing directory is refused without --resume; --resume on a
# finished job does nothing and succeeds
expect_exit 1 "already holds checkpoints \(the latest is epoch 4\): add --resume" -- "$WEIR" run --checkpoint "$T/ck" "$job"
expect_exit 0 "the job finished at epoch 4: nothing left to do" -- "$WEIR" run --checkpoint "$T/ck" --resume "$job"
# --resume on an empty directory starts fresh
expect_exit 0 "" -- "$WEIR" run -q --checkpoint "$T/fresh" --resume "$job"
[ "$(total "$T/fresh" 1)" = 145 ] && ok || fail "fresh --resume: $(total "$T/fresh" 1)"

# Only threads, capacity and batch may change
expect_exit 2 "was written by another pipeline" -- "$WEIR" run --checkpoint "$T/ck" --resume-from 2 "range count=11 ! $T/acc.so init=100 ! lines path=$T/out.txt"
# A refused resume shows both descriptions with a caret under the first
# difference, and names it (a different output name)
"$WEIR" run -q --checkpoint "$T/diff" "range count=10 ! lines path=$T/d1.txt" || fail "diff job"
cat > "$T/want" <<EOF
weir run: checkpoint 1 of '$T/diff' was written by another pipeline: lines (stage 2): path= was '$T/d1.txt', is now '$T/d2.txt'
  was: range count=10 ! lines path=$T/d1.txt
                                   ^
  now: range count=10 ! lines path=$T/d2.txt
                                   ^
only threads=, capacity=, batch=, linger=, fuse= and where elements connect (brokers=, conninfo=) may change on resume; to run the new pipeline, give it another --checkpoint directory
EOF
expect_exit 2 "" -- "$WEIR" run --checkpoint "$T/diff" --resume "range count=10 ! lines path=$T/d2.txt"
same "$T/err" "$T/want" "the message of a resume with another output"
# Properties written in another order, with other threads: the same job
expect_exit 0 "" -- "$WEIR" run -q --checkpoint "$T/diff" --resume "range threads=2 count=10 ! lines threads=1 path=$T/d1.txt"
# A property added, a stage added: each named, the caret under it on the
# side that has it
expect_exit 2 "range \(stage 1\): start=3 was added" -- \
    "$WEIR" run --checkpoint "$T/diff" --resume "range count=10 start=3 ! lines path=$T/d1.txt"
grep -q "^  now: range count=10 start=3 ! " "$T/err" && [ "$(sed -n 5p "$T/err")" = "                      ^" ] && ok \
    || { fail "the caret under an added property"; cat "$T/err" >&2; }
expect_exit 2 "stage 2 was lines, is now identity" -- \
    "$WEIR" run --checkpoint "$T/diff" --resume "range count=10 ! identity ! lines path=$T/d1.txt"
# A long description is shown as a window around the difference
long="range count=10 ! identity ! identity ! identity ! identity ! identity ! identity ! identity ! identity ! identity"
"$WEIR" run -q --checkpoint "$T/long" "$long ! lines path=$T/d1.txt" || fail "long job"
expect_exit 2 "lines \(stage 11\): path= was" -- "$WEIR" run --checkpoint "$T/long" --resume "$long ! lines path=$T/d3.txt"
line=$(grep '^  now: \.\.\.' "$T/err")
caret=$(grep -A1 '^  now: ' "$T/err" | tail -1)
[ -n "$line" ] && [ "${#line}" -le 110 ] && [ "$(printf '%s' "$line" | cut -c${#caret})" = "/" ] && ok \
    || { fail "a long description's window and caret"; cat "$T/err" >&2; }
expect_exit 0 "" -- "$WEIR" run -q --checkpoint "$T/ck" --resume-from 2 --epoch-records 3 "range count=10 threads=2 batch=2 ! $T/acc.so init=100 threads=3 capacity=2 ! lines path=$T/out.txt threads=2"
sort -n "$T/out.txt" | cmp -s - "$T/expected" && ok || fail "resume with other threads: $(cat "$T/out.txt")"
[ "$(total "$T/ck" 4)" = 145 ] && ok || fail "resume with other threads: total $(total "$T/ck" 4)"

# Epochs end at exactly N records read by all readers together, and at the
# end of each pass
"$WEIR" run -q --checkpoint "$T/ck2" --epoch-records 1000 "range count=10500 threads=3 batch=64 passes=2 ! $T/acc.so ! null" \
    || fail "passes run failed"
"$WEIR" checkpoints "$T/ck2" | awk 'NR > 1 {print $1, $3}' > "$T/epochs"
{
    echo "0 0"
    for i in $(seq 1 11); do echo "$i $((i * 1000 > 10500 ? 10500 : i * 1000))"; done
    for i in $(seq 12 22); do echo "$i $((10500 + (i - 11) * 1000 > 21000 ? 21000 : 10500 + (i - 11) * 1000))"; done
} > "$T/epochs.expected"
same "$T/epochs" "$T/epochs.expected" "epoch record counts with 3 readers and 2 passes"
[ "$(total "$T/ck2" 22)" = $((2 * 10500 * 10499 / 2)) ] && ok || fail "two passes: total $(total "$T/ck2" 22)"

# --epochs stops after that epoch; --resume goes on; --keep keeps the newest
"$WEIR" run -q --checkpoint "$T/ck3" --keep 2 --epochs 2 --epoch-records 3 "$job" || fail "--epochs run"
[ "$(cat "$T/out.txt" | tr '\n' ' ')" = "0 1 2 3 4 5 " ] && ok || fail "--epochs 2 output: $(cat "$T/out.txt")"
"$WEIR" checkpoints "$T/ck3" | awk 'NR > 1 {print $1}' | tr '\n' ' ' > "$T/kept"
[ "$(cat "$T/kept")" = "1 2 " ] && ok || fail "--keep 2 kept: $(cat "$T/kept")"
expect_exit 0 "epoch 2 is done and --epochs 2 stops there" -- "$WEIR" run --checkpoint "$T/ck3" --keep 2 --resume --epochs 2 --epoch-records 3 "$job"
[ "$(cat "$T/out.txt" | tr '\n' ' ')" = "0 1 2 3 4 5 " ] && ok || fail "resume at the --epochs limit changed the output: $(cat "$T/out.txt")"
"$WEIR" run -q --checkpoint "$T/ck3" --keep 2 --resume --epoch-records 3 "$job" || fail "resume after --epochs"
same "$T/out.txt" "$T/expected" "resume after --epochs: output"

# Async checkpoints write the same checkpoints
"$WEIR" run -q --checkpoint "$T/ck4" --async-checkpoint --epoch-records 3 "$job" || fail "async run"
got=""
for e in 0 1 2 3 4; do got="$got $(total "$T/ck4" $e)"; done
[ "$got" = " $expected" ] && ok || fail "async totals: $got"

# --load-blobs: another job starts from a trained model
"$WEIR" run -q --load-blobs "$T/ck4:2" --checkpoint "$T/ck6" "range count=0 ! $T/acc.so ! null" 2>"$T/err" \
    || fail "load-blobs run: $(cat "$T/err")"
# The blob came in whole: the checkpoint after init holds epoch 2's total
[ "$(total "$T/ck6" 0)" = "$(total "$T/ck4" 2)" ] && ok \
    || fail "load-blobs: total $(total "$T/ck6" 0), wanted epoch 2's $(total "$T/ck4" 2)"
"$WEIR" run -q --checkpoint "$T/ck5" --load-blobs "$T/ck4:2" "range count=1 start=1000 ! $T/acc.so ! null" || fail "load-blobs checkpoint"
[ "$(total "$T/ck5" 1)" = 1115 ] && ok || fail "load-blobs: total $(total "$T/ck5" 1), wanted 115 + 1000"

# A corrupted checkpoint is refused, naming the epoch; nothing half-loaded
cp -r "$T/ck4" "$T/bad"
for f in "$T"/bad/*.log "$T"/bad/*.ldb; do
    [ -s "$f" ] || continue
    size=$(wc -c < "$f")
    printf 'XXXXXXXXXXXXXXXX' | dd of="$f" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
done
damaged="the checkpoints of '$T/bad' are damaged \\(Corruption: [^)]*\\): restore the directory from a copy, or move it away to start the job again"
cp "$T/out.txt" "$T/out.before"
expect_exit 1 "^weir run: $damaged\$" -- "$WEIR" run --checkpoint "$T/bad" --resume "$job"
same "$T/out.txt" "$T/out.before" "a refused resume left the output alone"
expect_exit 1 "$damaged" -- "$WEIR" checkpoints "$T/bad" --epoch 4

# Inspecting: a missing blob, a missing epoch
"$WEIR" checkpoints "$T/ck" --epoch 4 | grep -Eq '^  time: [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z \([0-9]+\)$' \
    && ok || fail "a checkpoint's time is not shown as RFC 3339: $("$WEIR" checkpoints "$T/ck" --epoch 4 | grep time)"
expect_exit 1 "has no blob 'nope'" -- "$WEIR" checkpoints "$T/ck" --epoch 1 --blob nope
expect_exit 1 "checkpoint 9 does not exist in '$T/ck'; it holds checkpoints 0 to 4\$" -- "$WEIR" checkpoints "$T/ck" --epoch 9
expect_exit 1 "checkpoint 7 does not exist in '$T/ck'; it holds checkpoints 0 to 4\$" -- \
    "$WEIR" run --checkpoint "$T/ck" --resume-from 7 "$job"
expect_exit 2 "" -- "$WEIR" run --epoch-records 0 "$job"
expect_exit 2 "resuming needs a checkpoint directory" -- "$WEIR" run --resume "$job"

# Inspecting never changes a store and works while a job holds it; a
# second job on the same directory is told which process holds it
mkfifo "$T/slow.fifo"
(sleep 3 > "$T/slow.fifo") &
"$WEIR" run -q --checkpoint "$T/busy" "lines path=$T/slow.fifo ! null" &
job=$!
i=0
while [ ! -e "$T/busy/WEIR-PID" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
"$WEIR" checkpoints "$T/busy" > "$T/list" 2>&1 && grep -q '^0 ' "$T/list" && ok || fail "inspecting a running job: $(cat "$T/list")"
expect_exit 1 "checkpoint directory '$T/busy' is in use by another weir \\(pid $job\\)" -- \
    "$WEIR" run --checkpoint "$T/busy" --resume "range count=3 ! null"
wait $job
(cd "$T/busy" && ls -l --time-style=+%s.%N && cat ./* | cksum) > "$T/before" 2>/dev/null
"$WEIR" checkpoints "$T/busy" > /dev/null && "$WEIR" checkpoints "$T/busy" --epoch 0 > /dev/null || fail "inspect"
(cd "$T/busy" && ls -l --time-style=+%s.%N && cat ./* | cksum) > "$T/after" 2>/dev/null
same "$T/before" "$T/after" "the store after inspecting it"

# A store that lost its last checkpoints (as a log cut by a power failure
# would) is resumed from what it has, with a warning, never silently
"$WEIR" run -q --checkpoint "$T/lost" --epoch-records 2 --epochs 2 "range count=10 ! null" || fail "lost: 2 epochs"
cp -r "$T/lost" "$T/lost.old"
"$WEIR" run -q --checkpoint "$T/lost" --resume --epoch-records 2 --epochs 4 "range count=10 ! null" || fail "lost: 4 epochs"
cp "$T/lost/WEIR-LATEST" "$T/lost.old/WEIR-LATEST"
"$WEIR" run --checkpoint "$T/lost.old" --resume --epoch-records 2 "range count=10 ! null" 2>"$T/err" || fail "lost: resume"
grep -q "warning: the checkpoint store '$T/lost.old' had written epoch 4 but holds only up to epoch 2" "$T/err" \
    && grep -q "resuming from checkpoint 2" "$T/err" && ok || fail "no warning for a store gone back: $(cat "$T/err")"
# A damaged manifest is refused, saying what to do
"$WEIR" run -q --checkpoint "$T/dmg" --epoch-records 2 "range count=10 ! null" || fail "dmg"
for m in "$T"/dmg/MANIFEST-*; do printf 'garbage garbage garbage garbage' | dd of="$m" bs=1 seek=10 conv=notrunc 2>/dev/null; done
expect_exit 1 "the checkpoints of '$T/dmg' are damaged .*restore the directory from a copy" -- \
    "$WEIR" run --checkpoint "$T/dmg" --resume "range count=10 ! null"

finish

#!/bin/sh
# A checkpoint that cannot be written (a full disk, simulated with a file
# size limit) fails the job cleanly, and the previous checkpoint still
# resumes; --checkpoint-failures goes on through failures, each reported;
# an asynchronous write's failure surfaces at the next checkpoint.
. "$(dirname "$0")/lib.sh"
: "${PLUGIN_CFLAGS:?PLUGIN_CFLAGS must hold the compile flags of <weir/plugin.h>}"
: "${PLUGINS_SRC:?PLUGINS_SRC must point at tests/plugins}"
# shellcheck disable=SC2086
${CC:-cc} -std=c11 -O2 -shared -fPIC $PLUGIN_CFLAGS "$PLUGINS_SRC/accumulate.c" -o "$T/acc.so" \
    || fail "accumulate plugin does not compile"
# 1M records in epochs of 100k.  Under ThreadSanitizer, which runs these
# jobs many times slower, a fifth of both: as many epochs and checkpoints,
# of the same size, so the file size limits below bite at the same place
N=1000000 E=100000 S=400000
case "${SANITIZER_CFLAGS:-}" in *thread*) N=200000 E=20000 S=80000 ;; esac
seq 0 $((N - 1)) > "$T/expected"

# Every checkpoint holds an 8 MB model; a file may grow to 20 MB (40000
# blocks of 512 bytes), so a few checkpoints fit in LevelDB's log and the
# next write fails with EFBIG, as on a full disk.
limited () {
    (
        trap '' XFSZ
        ulimit -f 40000
        "$@"
    )
}
job="range count=$N ! $T/acc.so blob=model slots=1000000 ! lines"

limited "$WEIR" run -q --checkpoint "$T/ck" --epoch-records $E "$job path=$T/out.txt" 2>"$T/err"
rc=$?
[ "$rc" -eq 1 ] && ok || fail "full disk: exit $rc, wanted 1"
failed=$(sed -n 's/^weir run: checkpoint \([0-9]*\) failed: .*File too large.*/\1/p' "$T/err")
[ -n "$failed" ] && ok || fail "full disk: no 'checkpoint N failed' message: $(cat "$T/err")"
latest=$("$WEIR" checkpoints "$T/ck" | awk 'END {print $1}')
[ "$latest" = "$((failed - 1))" ] && ok || fail "full disk: latest checkpoint $latest, failed one $failed"
"$WEIR" run -q --checkpoint "$T/ck" --resume --epoch-records $E "$job path=$T/out.txt" || fail "resume after full disk"
same "$T/out.txt" "$T/expected" "resume after full disk"

# Allowed failures: each one reported, the job finishes
limited "$WEIR" run -q --stats "$T/failures.json" --checkpoint "$T/ck2" --checkpoint-failures 20 --epoch-records $E \
    "$job path=$T/out.txt" 2>"$T/err" || fail "allowed failures: the job failed: $(cat "$T/err")"
n=$(grep -c '^weir run: warning: checkpoint [0-9]* failed (.* consecutive failures allowed)' "$T/err")
[ "$n" -ge 1 ] && ok || fail "allowed failures: not reported: $(cat "$T/err")"
# --stats (and --metrics) count each of them
grep -q "\"checkpoint_failures\": $n," "$T/failures.json" && ok \
    || fail "allowed failures: $n reported, --stats says $(grep checkpoint_failures "$T/failures.json")"
same "$T/out.txt" "$T/expected" "allowed failures: output"
"$WEIR" run -q --checkpoint "$T/ck2" --resume --epoch-records $E "$job path=$T/out.txt" || fail "resume after allowed failures"
same "$T/out.txt" "$T/expected" "resume after allowed failures"

# Asynchronous writes: the failure is reported, never swallowed
limited "$WEIR" run -q --checkpoint "$T/ck3" --async-checkpoint --epoch-records $E "$job path=$T/out.txt" 2>"$T/err"
rc=$?
[ "$rc" -eq 1 ] && ok || fail "async full disk: exit $rc, wanted 1"
grep -q "checkpoint [0-9]* failed: .*File too large" "$T/err" && ok || fail "async full disk: $(cat "$T/err")"
"$WEIR" run -q --checkpoint "$T/ck3" --resume --async-checkpoint --epoch-records $E "$job path=$T/out.txt" \
    || fail "resume after async failure"
same "$T/out.txt" "$T/expected" "resume after async failure"

# --epoch-seconds ends epochs on time: a slow pipe makes several
"$WEIR" run -q --checkpoint "$T/ck4" --epoch-seconds 0.2 "range count=$N batch=1 capacity=1 ! null" || fail "epoch-seconds run"
epochs=$("$WEIR" checkpoints "$T/ck4" | awk 'END {print $1}')
[ "$epochs" -ge 2 ] && ok || fail "--epoch-seconds 0.2 over a slow pipe made only $epochs epochs"

# The job's last checkpoint failing asynchronously is a failure too, never
# swallowed: only the final checkpoint is large here
limited_small () {
    (
        trap '' XFSZ
        ulimit -f 16000
        "$@"
    )
}
PROBE="$PLUGINS_DIR/probe.so"
final="range count=1000 ! $PROBE log=$T/log final-blob=30000000 ! lines path=$T/final.txt"
for mode in "" --async-checkpoint; do
    rm -rf "$T/ck5"
    limited_small "$WEIR" run -q --checkpoint "$T/ck5" $mode --epoch-records 100 "$final" 2>"$T/err"
    rc=$?
    [ "$rc" -eq 1 ] && ok || fail "last checkpoint failing ($mode): exit $rc, wanted 1"
    grep -Eq "(checkpoint 11 failed|the last checkpoint failed: .*checkpoint 11): .*File too large" "$T/err" && ok || fail "last checkpoint failing ($mode): $(cat "$T/err")"
    "$WEIR" checkpoints "$T/ck5" | grep -q "^10 .*(latest)$" && ok \
        || fail "last checkpoint failing ($mode): the latest is not epoch 10, unfinished"
    "$WEIR" run -q --checkpoint "$T/ck5" --resume $mode --epoch-records 100 "$final" || fail "resume after the last checkpoint failed"
    "$WEIR" checkpoints "$T/ck5" | grep -q "^11 .*(latest)  finished$" && ok \
        || fail "resume after the last checkpoint failed ($mode): no finished epoch 11"
    seq 0 999 > "$T/final.want"
    same "$T/final.txt" "$T/final.want" "resume after the last checkpoint failed ($mode)"
done

# An asynchronous checkpoint holds the state of its epoch's end, copied
# before the pipe goes on: with an 8 MB model written while the next epoch
# updates it, a borrowed live blob would hold later records too
"$WEIR" run -q --checkpoint "$T/ck6" --async-checkpoint --epoch-records $E \
    "range count=$S ! $T/acc.so blob=total slots=1000000 ! null" || fail "async run with an 8 MB model"
# (a blob that changed while it was written also fails the checksum: the
# checkpoint is then refused, and that is a failure too, not a zero sum)
for e in 1 2 3 4; do
    if ! "$WEIR" checkpoints "$T/ck6" --epoch $e --blob total > "$T/blob" 2>"$T/err"; then
        fail "async checkpoint $e cannot be read: $(cat "$T/err")"
        continue
    fi
    n=$("$WEIR" checkpoints "$T/ck6" | awk -v e=$e '$1 == e { print $3 }')
    sum=$(od -An -v -t d8 "$T/blob" | awk '{ for (i = 1; i <= NF; i++) s += $i } END { printf "%.0f", s }')
    want=$(awk -v n="$n" 'BEGIN { printf "%.0f", n * (n - 1) / 2 }')
    [ "$sum" = "$want" ] && ok || fail "async checkpoint $e: the model sums to $sum, but its $n records sum to $want"
done

finish

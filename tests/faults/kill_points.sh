#!/bin/sh
# Part 1 of the fault-injection suite: kill points.  The test build of
# weir (tests/faults/weir-kp) is killed with SIGKILL at each named point of
# the checkpoint path (lib/killpoint.h), at its first hits, for every
# writer and for sync and async checkpoints; --resume must then give
# exactly the output of an uninterrupted run, and every checkpoint the
# state its offsets give.  Each kill must really happen at its point: the
# process dies by SIGKILL (exit 137) saying which point, so a point that
# is never reached fails.
PART=kill-points
. "$(dirname "$0")/common.sh"

POINTS="readers-stopped pipe-drained writers-synced blobs-copied before-leveldb-write after-leveldb-write readers-resumed"
if long; then
    HITS="1 2 3 4 5 6 7 8"
    WRITERS="lines msgpack leveldb-flush leveldb-sync"
    PER=2500
else
    # Short (make check): each point of each writer and mode is killed at
    # one of its first three hits, drawn from the seed, so that the whole
    # part stays inside a minute or two on a slow machine; the long run
    # kills at every one of the first eight
    HITS="1 2 3"
    WRITERS="lines msgpack leveldb-flush leveldb-sync"
    PER=1500
fi
IN="$T/in"
# Two shards; epochs of 500 records: at least 6 epochs, so every point is
# passed at least 8 times (checkpoint 0 and the last one included)
make_inputs "$IN" 2 $PER
EPOCH="--epoch-records 500"

# A typo in a point's name is refused, so a sweep cannot pass vacuously
job lines "$T/typo.txt"
WEIR_KILL_AT=pipe-drainde:1 expect_exit 2 "unknown kill point 'pipe-drainde'" -- \
    "$WEIR_KP" run -q --checkpoint "$T/typo.ck" $EPOCH "$JOB"
WEIR_KILL_AT=pipe-drained expect_exit 2 "wants POINT:N" -- "$WEIR_KP" run -q "range count=1 ! null"
# The installed command has no kill points: the variable means nothing
WEIR_KILL_AT=pipe-drained:1 expect_exit 0 "" -- "$WEIR" run -q --checkpoint "$T/plain.ck" $EPOCH "$JOB"

for writer in $WRITERS; do
    for mode in sync async; do
        async=
        [ $mode = async ] && async=--async-checkpoint
        # The uninterrupted reference
        ext=out
        job $writer "$T/ref.$ext"
        rm -rf "$T/ref.$ext" "$T/ref.ck"
        "$WEIR_KP" run -q --checkpoint "$T/ref.ck" $EPOCH $async "$JOB" || fail "$writer $mode: reference run"
        for point in $POINTS; do
            # Only an asynchronous checkpoint copies the blobs
            [ $point = blobs-copied ] && [ $mode = sync ] && continue
            hits=$HITS
            if ! long; then
                rand 3
                hits=$((R + 1))
            fi
            for n in $hits; do
                name="$writer $mode $point:$n"
                rm -rf "$T/got.$ext" "$T/got.ck"
                # Thread counts change between the killed run and the resume
                rand 3
                job $writer "$T/got.$ext" $((R + 1)) 2 $((2 - R % 2))
                WEIR_KILL_AT=$point:$n timed 60 "$WEIR_KP" run -q --checkpoint "$T/got.ck" $EPOCH $async "$JOB" \
                    2>"$T/err"
                if [ $RC -ne 137 ] || ! grep -q "killed at kill point $point\$" "$T/err"; then
                    fail "$name: exit $RC, wanted 137 with SIGKILL at the point"
                    sed 's/^/    /' "$T/err" >&2
                    continue
                fi
                ok
                job $writer "$T/got.$ext" 2 1 1
                timed 60 "$WEIR_KP" run -q --checkpoint "$T/got.ck" --resume $EPOCH $async "$JOB" 2>"$T/err"
                if [ $RC -ne 0 ]; then
                    [ $RC -ge 128 ] && crashes=$((crashes + 1))
                    fail "$name: resume exit $RC"
                    sed 's/^/    /' "$T/err" >&2
                    continue
                fi
                verify "$name" $writer "$T/ref.$ext" "$T/got.$ext" "$T/got.ck"
            done
        done
    done
done

# --- Kills just before a file-system call -----------------------------
# The shim tests/faults/faultfs.c kills the process just before the k-th
# write, sync, create, rename or unlink under the job's folder: inside
# LevelDB's own steps too (making the store, switching logs, CURRENT).
# A run is first counted, then killed at each k (short: the first, the
# last and one drawn between of each kind, for two writers).
SHIM_ASAN="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
FS="$T/fs"
mkdir -p "$FS" "$T/in1"
awk 'BEGIN { for (i = 0; i < 600; i++) print i }' > "$T/in1/in-0.txt"
fs_calls=0
for writer in lines msgpack leveldb-flush leveldb-sync; do
    long || [ $writer = lines ] || [ $writer = leveldb-sync ] || continue
    IN="$T/in1" job $writer "$FS/out"
    rm -rf "$FS"/* "$T/fs.journal"
    FAULTFS_ROOT="$FS" FAULTFS_JOURNAL="$T/fs.journal" FAULTFS_COUNT=1 LD_PRELOAD="$SHIM" ASAN_OPTIONS="$SHIM_ASAN" \
        "$WEIR_KP" run -q --checkpoint "$FS/ck" --epoch-records 200 "$JOB" || fail "$writer: counted run"
    rm -rf "$T/fs.ref" && mv "$FS/out" "$T/fs.ref"
    for kind in create rename unlink sync write; do
        count=$(sed -n "s/^C .*$kind=\([0-9]*\).*/\1/p" "$T/fs.journal")
        [ "${count:-0}" -gt 0 ] || { fail "$writer: no $kind call was seen"; continue; }
        rand "$count"
        if long; then ks=$(seq 1 "$count"); else ks=$(printf '1\n%s\n%s\n' $((R + 1)) "$count" | sort -nu); fi
        for k in $ks; do
            name="$writer: killed before $kind call $k of $count"
            rm -rf "$FS"/*
            FAULTFS_ROOT="$FS" FAULTFS_KILL=$kind:$k LD_PRELOAD="$SHIM" ASAN_OPTIONS="$SHIM_ASAN" \
                timed 60 "$WEIR_KP" run -q --checkpoint "$FS/ck" --epoch-records 200 "$JOB" 2>"$T/err"
            if [ $RC -ne 137 ] || ! grep -q "killed before $kind call $k (" "$T/err"; then
                fail "$name: exit $RC, wanted 137 at the call"
                sed 's/^/    /' "$T/err" >&2
                continue
            fi
            timed 60 "$WEIR_KP" run -q --checkpoint "$FS/ck" --resume --epoch-records 200 "$JOB" 2>"$T/err"
            if [ $RC -ne 0 ]; then
                [ $RC -ge 128 ] && crashes=$((crashes + 1))
                fail "$name: resume exit $RC"
                sed 's/^/    /' "$T/err" >&2
                continue
            fi
            fs_calls=$((fs_calls + 1))
            verify "$name" $writer "$T/fs.ref" "$FS/out" "$FS/ck"
        done
    done
done
echo "$PART: $fs_calls kills before a file-system call, each resumed"

# The checker itself can fail: a record lost and one duplicated are
# counted, and a checkpoint whose input changed under it is refused
seq 1 10 > "$T/a.txt"
{ seq 1 4; seq 6 10; echo 7; } > "$T/b.txt"
"$FCHECK" output "$T/a.txt" "$T/b.txt" > "$T/fcheck.out"
[ $? -eq 1 ] && grep -q 'lost=1 duplicated=1 extra=0' "$T/fcheck.out" && ok \
    || fail "the checker: $(cat "$T/fcheck.out")"
job lines "$T/self.txt"
"$WEIR" run -q --checkpoint "$T/self.ck" $EPOCH "$JOB" || fail "the checker: a run"
"$FCHECK" state "$T/self.ck" all > /dev/null && ok || fail "the checker: a good run refused"
sed 's/^17$/71/' "$IN/in-0.txt" > "$T/x" && mv "$T/x" "$IN/in-0.txt"
"$FCHECK" state "$T/self.ck" all > "$T/fcheck.out"
[ $? -eq 1 ] && grep -q 'slot 1 is .*, the offsets (500 records) give' "$T/fcheck.out" && ok \
    || fail "the checker: a changed input not seen: $(cat "$T/fcheck.out")"

summary
finish

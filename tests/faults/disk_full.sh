#!/bin/sh
# Part 4 of the fault-injection suite: a full disk.  Writing to /dev/full
# fails with exit 1 and a message naming the output.  Then the shim
# tests/faults/faultfs.c fails the k-th write, sync or create under the
# job's folder with ENOSPC, for each k of a run of a few checkpoints: the
# job must fail cleanly (exit 1, a message saying the disk is full; never
# a crash, exit 128 or more), and once space returns, --resume must be
# exact; a regular file whose sync fails with EROFS, EINVAL or ENOTSUP
# fails the job too.  The only failures weir may step over are LevelDB's own: its
# informational LOG file, which LevelDB does without when it cannot make
# it, and a new log for the leveldb writer's database that LevelDB gives
# up making (see below); the output is checked all the same.
PART=disk-full
. "$(dirname "$0")/common.sh"

# --- /dev/full ------------------------------------------------------------
for writer in lines msgpack; do
    expect_exit 1 "$writer: cannot write '/dev/full' at byte 0: No space left on device" -- \
        "$WEIR" run -q "range count=100000 ! $writer path=/dev/full"
    expect_exit 1 "$writer: cannot write '/dev/full' at byte 0: No space left on device" -- \
        "$WEIR" run -q "range count=10 threads=2 ! identity threads=2 ! $writer path=/dev/full threads=2"
done
expect_exit 1 "leveldb: cannot open '/dev/full' for writing" -- "$WEIR" run -q "range count=1 ! leveldb path=/dev/full"
# A checkpointed job cannot resume into a device, and says so first
expect_exit 2 "'/dev/full' is standard output, a pipe, a terminal or a device" -- \
    "$WEIR" run -q --checkpoint "$T/devfull.ck" "range count=10 ! lines path=/dev/full"

# --- ENOSPC at the k-th call ----------------------------------------------
SHIM_ASAN="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
ROOT="$T/root"
IN="$T/in"
mkdir -p "$ROOT"
make_inputs "$IN" 2 300
tolerated=0
absorbed=0
for writer in lines msgpack leveldb-flush leveldb-sync; do
    for mode in sync async; do
        long || [ $mode = sync ] || [ $writer = lines ] || continue
        async=
        [ $mode = async ] && async=--async-checkpoint
        job $writer "$ROOT/out" 2 1 1
        rm -rf "$ROOT"/* "$T/journal" "$T/ref.out"
        FAULTFS_ROOT="$ROOT" FAULTFS_JOURNAL="$T/journal" FAULTFS_COUNT=1 LD_PRELOAD="$SHIM" \
            ASAN_OPTIONS="$SHIM_ASAN" "$WEIR_KP" run -q --checkpoint "$ROOT/ck" --epoch-records 200 $async "$JOB" \
            || fail "$writer $mode: counted run"
        mv "$ROOT/out" "$T/ref.out"
        for kind in write sync create; do
            count=$(sed -n "s/^C .*$kind=\([0-9]*\).*/\1/p" "$T/journal")
            [ "${count:-0}" -gt 0 ] || { fail "$writer $mode: no $kind call was seen"; continue; }
            rand "$count"
            if long; then ks=$(seq 1 "$count"); else ks=$(printf '1\n%s\n%s\n' $((R + 1)) "$count" | sort -nu); fi
            for k in $ks; do
                # Long: every other k, the disk stays full
                sticky=0
                long && [ $((k % 2)) -eq 0 ] && sticky=1
                name="$writer $mode: ENOSPC at $kind call $k of $count (sticky=$sticky)"
                rm -rf "$ROOT"/*
                FAULTFS_ROOT="$ROOT" FAULTFS_FAIL=$kind:$k FAULTFS_FAIL_STICKY=$sticky LD_PRELOAD="$SHIM" \
                    ASAN_OPTIONS="$SHIM_ASAN" timed 60 "$WEIR_KP" run -q --checkpoint "$ROOT/ck" \
                    --epoch-records 200 $async "$JOB" 2>"$T/err"
                cycles=$((cycles + 1))
                failed=$(sed -n 's/^faultfs: ENOSPC for [a-z]* call [0-9]* (\(.*\))$/\1/p' "$T/err" | head -1)
                if [ -z "$failed" ]; then
                    fail "$name: the call was never made"
                    continue
                fi
                if [ $RC -ge 128 ]; then
                    crashes=$((crashes + 1))
                    fail "$name: crashed, exit $RC"
                    sed 's/^/    /' "$T/err" >&2
                elif [ $RC -eq 0 ]; then
                    case $failed in
                        */LOG | */LOG.old) tolerated=$((tolerated + 1)); ok ;;
                        "$ROOT"/out/*.log)
                            # The leveldb writer's commit asks LevelDB to
                            # write its memtable to a table, which starts a
                            # new log; LevelDB drops that request's failure
                            # (CompactRange returns nothing), and the commit's
                            # synced write then syncs the log that holds the
                            # epoch.  Nothing is lost: the output is checked
                            absorbed=$((absorbed + 1))
                            ok
                            ;;
                        *) fail "$name: exit 0, the failure on '$failed' went unnoticed" ;;
                    esac
                elif [ $RC -eq 1 ] && grep -v '^faultfs:' "$T/err" | grep -q 'No space left on device'; then
                    ok
                else
                    fail "$name: exit $RC, wanted 1 with 'No space left on device'"
                    sed 's/^/    /' "$T/err" >&2
                fi
                # Space is back
                job $writer "$ROOT/out" 1 2 1
                timed 60 "$WEIR_KP" run -q --checkpoint "$ROOT/ck" --resume --epoch-records 200 $async "$JOB" \
                    2>"$T/err"
                if [ $RC -ne 0 ]; then
                    [ $RC -ge 128 ] && crashes=$((crashes + 1))
                    fail "$name: resume with space exit $RC"
                    sed 's/^/    /' "$T/err" >&2
                    continue
                fi
                cycles=$((cycles - 1))
                verify "$name" $writer "$T/ref.out" "$ROOT/out" "$ROOT/ck"
            done
        done
    done
done
# --- a graph: the disk of one of two writers full ------------------------
# A tee feeds two writers; only the first's folder is under the shim, so
# its k-th write, sync or create fails while the other writer and the
# checkpoint go on.  The job fails cleanly, and once space is back the
# resume leaves both outputs exact: the failed writer's, and the other's,
# which committed with it in the same checkpoints.
GROOT="$T/groot"
mkdir -p "$GROOT" "$T/gother"
GJOB="lines path='$IN/*.txt' threads=2 ! tee name=t  t. ! lines path=$GROOT/a.out  t. ! lines path=$T/gother/b.out"
seq 0 599 > "$T/g.ref"
rm -rf "$GROOT"/* "$T/gother"/* "$T/g.ck" "$T/gjournal"
FAULTFS_ROOT="$GROOT" FAULTFS_JOURNAL="$T/gjournal" FAULTFS_COUNT=1 LD_PRELOAD="$SHIM" ASAN_OPTIONS="$SHIM_ASAN" \
    "$WEIR_KP" run -q --checkpoint "$T/g.ck" --epoch-records 100 "$GJOB" || fail "graph: counted run"
for kind in write sync create; do
    count=$(sed -n "s/^C .*$kind=\([0-9]*\).*/\1/p" "$T/gjournal")
    [ "${count:-0}" -gt 0 ] || { fail "graph: no $kind call was seen under the first writer's folder"; continue; }
    for k in $(printf '1\n%s\n' "$count" | sort -nu); do
        name="graph: ENOSPC at the first writer's $kind call $k of $count"
        rm -rf "$GROOT"/* "$T/gother"/* "$T/g.ck"
        FAULTFS_ROOT="$GROOT" FAULTFS_FAIL=$kind:$k LD_PRELOAD="$SHIM" ASAN_OPTIONS="$SHIM_ASAN" \
            timed 60 "$WEIR_KP" run -q --checkpoint "$T/g.ck" --epoch-records 100 "$GJOB" 2>"$T/err"
        if [ $RC -eq 1 ] && grep -v '^faultfs:' "$T/err" | grep -q 'No space left on device'; then
            ok
        else
            [ $RC -ge 128 ] && crashes=$((crashes + 1))
            fail "$name: exit $RC, wanted 1 with 'No space left on device'"
            sed 's/^/    /' "$T/err" >&2
        fi
        timed 60 "$WEIR_KP" run -q --checkpoint "$T/g.ck" --resume --epoch-records 100 "$GJOB" 2>"$T/err"
        [ $RC -eq 0 ] && ok || { fail "$name: resume with space exit $RC"; sed 's/^/    /' "$T/err" >&2; continue; }
        sort -n "$GROOT/a.out" > "$T/g.got"; same "$T/g.got" "$T/g.ref" "$name: the full writer's output"
        sort -n "$T/gother/b.out" > "$T/g.got"; same "$T/g.got" "$T/g.ref" "$name: the other writer's output"
    done
done

# --- a regular file that cannot be synced ---------------------------------
# EROFS, EINVAL and ENOTSUP are what fsync says of a pipe or a terminal,
# which need no sync; said of a regular file they mean its bytes may not
# be on the disk, and a job that went on would commit lengths that never
# got there.  The output's first sync fails so; the job must fail.
for e in EROFS EINVAL ENOTSUP; do
    rm -rf "$T/ro"
    mkdir -p "$T/ro/out"
    FAULTFS_ROOT="$T/ro/out" FAULTFS_FAIL=sync:1 FAULTFS_ERRNO=$e LD_PRELOAD="$SHIM" ASAN_OPTIONS="$SHIM_ASAN" \
        timed 60 "$WEIR_KP" run -q --checkpoint "$T/ro/ck" --epoch-records 200 \
        "range count=1000 ! lines path=$T/ro/out/o.txt" 2>"$T/err"
    if [ $RC -eq 1 ] && grep -q "cannot sync '$T/ro/out/o.txt'" "$T/err"; then
        ok
    else
        fail "fsync of a regular file failing with $e: exit $RC, wanted 1 with \"cannot sync\""
        sed 's/^/    /' "$T/err" >&2
    fi
done

echo "$PART: $tolerated failures of LevelDB's informational LOG stepped over, $absorbed failures to start a new log of the" \
    "leveldb output absorbed by LevelDB"

summary
finish

# tests/lib.sh - helpers for the shell tests.  Source it; it sets up $T, a
# temporary directory removed at exit, and checks that $WEIR is set.
set -u
: "${WEIR:?WEIR must point at the weir command}"
# The tests' files go to TMPDIR when it is set.  Otherwise to /dev/shm
# when it is a memory file system with room (2 GiB): the kill and fault
# tests sync thousands of checkpoints, and on a slow disk those fsyncs,
# not weir, would set the suite's time.  A kill loses nothing the page
# cache holds, and the power-cut tests model lost writes themselves
# (tests/faults/powercut.c), so no test needs a real disk.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ] \
    && [ "$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')" -ge 2097152 ] 2>/dev/null; then
    TMPDIR=/dev/shm
    export TMPDIR
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/weir-sh-XXXXXX")
trap 'rm -rf "$T"' EXIT
failures=0
checks=0

fail () {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

ok () {
    checks=$((checks + 1))
}

# expect_exit CODE PATTERN -- COMMAND...: run COMMAND, check its exit code
# and that its stderr matches the grep -E PATTERN.
expect_exit () {
    want=$1
    pattern=$2
    shift 3
    "$@" >"$T/out" 2>"$T/err"
    got=$?
    if [ "$got" -ne "$want" ]; then
        fail "exit $got (wanted $want): $*"
        sed 's/^/    /' "$T/err" >&2
    elif [ -n "$pattern" ] && ! grep -Eq -- "$pattern" "$T/err"; then
        fail "stderr does not match /$pattern/: $*"
        sed 's/^/    /' "$T/err" >&2
    else
        ok
    fi
}

# same FILE1 FILE2 WHAT: byte-identical files.
same () {
    if cmp -s "$1" "$2"; then
        ok
    else
        fail "$3: $1 and $2 differ"
        diff "$1" "$2" 2>&1 | head -20 >&2
    fi
}

# refused PATTERN DESCRIPTION: weir run refuses DESCRIPTION as a usage error
# (exit 2) with a message matching PATTERN, before writing $T/never.out
refused () {
    pattern=$1; shift
    expect_exit 2 "$pattern" -- "$WEIR" run "$@"
    [ -e "$T/never.out" ] && { fail "'$*' wrote its output"; rm -f "$T/never.out"; }
}

# now_ms: the time in milliseconds
now_ms () {
    echo $(($(date +%s%N) / 1000000))
}

# wait_lines FILE N: wait (up to 20 s) until FILE has N lines
wait_lines () {
    limit=$(($(now_ms) + 20000))
    while [ "$(cat "$1" 2>/dev/null | wc -l)" -lt "$2" ]; do
        [ "$(now_ms)" -lt "$limit" ] || return 1
        sleep 0.05
    done
}

# checkpointed CK: the records the latest checkpoint in CK holds (empty
# while it holds none).  A running job's store is read through a copy.
checkpointed () {
    "$WEIR" checkpoints "$1" 2>/dev/null | awk '/latest/ { print $3 }'
}

# wait_checkpointed CK PID: wait until the job PID has committed a
# checkpoint past the first into CK, so that a kill then lands mid-run
# however slow the machine is.  Gives up when PID ends or after 60 s.
wait_checkpointed () {
    waited=0
    while [ $waited -lt 1200 ] && kill -0 "$2" 2>/dev/null; do
        n=$(checkpointed "$1")
        [ -n "$n" ] && [ "$n" -gt 0 ] && return 0
        sleep 0.05
        waited=$((waited + 1))
    done
    return 1
}

# kill_rounds CK EPOCH_RECORDS JOB: run JOB (a description in which
# THREADS stands for a stage's threads=) with --checkpoint CK three times,
# each killed with SIGKILL a little after its first checkpoint and
# resumed with another thread count, then once more to its end without
# THREADS.  What the outputs hold is the caller's to check.
kill_rounds () {
    resume=""
    for round in 1 2 3; do
        job=$(echo "$3" | sed "s/THREADS/threads=$((round % 2 + 1))/")
        "$WEIR" run -q --checkpoint "$1" $resume --epoch-records "$2" "$job" 2> /dev/null &
        resume=--resume
        pid=$!
        wait_checkpointed "$1" $pid
        sleep 0.0$round
        kill -9 $pid 2> /dev/null
        wait $pid
    done
    "$WEIR" run -q --checkpoint "$1" --resume --epoch-records "$2" "$(echo "$3" | sed 's/THREADS//')" \
        || fail "the last resume after random kills"
}

# killed_at POINT CK EPOCH_RECORDS JOB WHAT [KILLED [RESUMED]]: JOB (a
# description in which THREADS stands for threads=) killed at kill point
# POINT (with $WEIR_KP) with threads=KILLED (2), then resumed with
# threads=RESUMED (1)
killed_at () {
    WEIR_KILL_AT=$1 "$WEIR_KP" run -q --checkpoint "$2" --epoch-records "$3" \
        "$(echo "$4" | sed "s/THREADS/threads=${6:-2}/g")" 2> "$T/err"
    rc=$?
    [ $rc -eq 137 ] && ok || fail "$5 killed at $1: exit $rc $(cat "$T/err")"
    "$WEIR" run -q --checkpoint "$2" --resume --epoch-records "$3" "$(echo "$4" | sed "s/THREADS/threads=${7:-1}/g")" \
        || fail "$5 resumed after $1"
}

finish () {
    echo "$checks passed, $failures failed"
    [ "$failures" -eq 0 ]
}

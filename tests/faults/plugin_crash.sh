#!/bin/sh
# Part 8 of the fault-injection suite: a plugin that crashes mid-run.
# FAULTPROC_CRASH_AT=V makes the suite's processor raise SIGSEGV on record
# V: the process goes down with it, no checkpoint is written after the
# crash (none covers record V), and --resume with the fixed plugin (the
# same description, without the variable) is exact.
PART=plugin-crash
. "$(dirname "$0")/common.sh"

IN="$T/in"
PER=3000
make_inputs "$IN" 2 $PER
EPOCH="--epoch-records 500"
if long; then CRASHES=20; else CRASHES=3; fi
job lines "$T/ref.out" 2 2 2
"$WEIR" run -q "$JOB" || fail "reference run"

i=0
while [ $i -lt $CRASHES ]; do
    i=$((i + 1))
    rand $((2 * PER))
    v=$R
    # One thread a stage reads the records in order: record V is the
    # (V+1)-th; with more, only the consistency of the checkpoints is known
    rand 2
    threads=$((R + 1))
    rand 2
    async=
    [ $R -eq 1 ] && async=--async-checkpoint
    name="crash at record $v (threads $threads${async:+, async})"
    rm -rf "$T/got.out" "$T/got.ck"
    job lines "$T/got.out" $threads $threads $threads
    FAULTPROC_CRASH_AT=$v timed 120 "$WEIR" run -q --checkpoint "$T/got.ck" $EPOCH $async "$JOB" 2>"$T/err"
    cycles=$((cycles + 1))
    # Down by SIGSEGV; a sanitizer reports the signal and exits itself
    if [ $RC -eq 139 ] || { [ $RC -ne 0 ] && grep -q 'SEGV' "$T/err"; }; then
        ok
    else
        fail "$name: exit $RC, wanted death by SIGSEGV"
        sed 's/^/    /' "$T/err" >&2
    fi
    read=$("$WEIR" checkpoints "$T/got.ck" 2>/dev/null | awk '/latest/ { print $3 }')
    if [ $threads -eq 1 ]; then
        [ "${read:-0}" -le "$v" ] && ok \
            || fail "$name: a checkpoint after the crash: the latest holds $read records read"
    fi
    FAULTPROC_CRASH_AT= timed 120 "$WEIR" run -q --checkpoint "$T/got.ck" --resume $EPOCH $async "$JOB" 2>"$T/err"
    if [ $RC -ne 0 ]; then
        fail "$name: resume with the fixed plugin: exit $RC"
        sed 's/^/    /' "$T/err" >&2
        continue
    fi
    cycles=$((cycles - 1))
    verify "$name" lines "$T/ref.out" "$T/got.out" "$T/got.ck"
done

summary
finish

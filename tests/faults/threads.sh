#!/bin/sh
# Part 7 of the fault-injection suite: the thread matrix.  threads= in
# {1, 2, 3, 8, 32, 256} for the reader, the processor plugin and the
# writer, in symmetric and asymmetric mixes, give the same records as a
# multiset and the same final state (the blob of the last checkpoint, to
# the byte) as one thread per stage, and every checkpoint the state its
# offsets give.
PART=threads
. "$(dirname "$0")/common.sh"

IN="$T/in"
make_inputs "$IN" 4 5000
EPOCH="--epoch-records 4000"
job lines "$T/ref.out" 1 1 1
"$WEIR" run -q --checkpoint "$T/ref.ck" $EPOCH "$JOB" || fail "reference run"
awk 'BEGIN { for (i = 0; i < 20000; i++) print i }' | cmp -s - "$T/ref.out" && ok \
    || fail "one thread a stage does not give 0..19999 in order"
last=$("$WEIR" checkpoints "$T/ref.ck" | awk '/latest/ { print $1 }')
"$WEIR" checkpoints "$T/ref.ck" --epoch "$last" --blob sum > "$T/ref.sum"

if long; then
    # Each count on each stage alone, on all three at once, and mixes
    # that put the most threads where the fewest feed them or drain them
    COMBOS=$(for v in 2 3 8 32 256; do echo "$v/1/1 1/$v/1 1/1/$v $v/$v/$v"; done)
    COMBOS="$COMBOS 3/1/8 8/3/1 1/32/2 256/2/3 2/256/1 256/1/256 1/256/256 32/3/256 3/256/32 256/8/1"
else
    COMBOS="2/2/2 3/1/8 8/3/1 1/32/2 256/2/3 2/256/1 32/32/32"
fi
for c in $COMBOS; do
    r=${c%%/*}
    w=${c##*/}
    p=${c#*/}
    p=${p%/*}
    name="threads $r/$p/$w"
    rm -rf "$T/got.out" "$T/got.ck"
    job lines "$T/got.out" $r $p $w
    timed 300 "$WEIR" run -q --checkpoint "$T/got.ck" $EPOCH "$JOB" 2>"$T/err"
    if [ $RC -ne 0 ]; then
        [ $RC -ge 128 ] && crashes=$((crashes + 1))
        fail "$name: exit $RC"
        sed 's/^/    /' "$T/err" >&2
        continue
    fi
    verify "$name" lines "$T/ref.out" "$T/got.out" "$T/got.ck"
    got=$("$WEIR" checkpoints "$T/got.ck" | awk '/latest/ { print $1 }')
    [ "$got" = "$last" ] && ok || fail "$name: last epoch $got, one thread a stage $last"
    "$WEIR" checkpoints "$T/got.ck" --epoch "$got" --blob sum > "$T/got.sum"
    same "$T/ref.sum" "$T/got.sum" "$name: the final state"
done

summary
finish

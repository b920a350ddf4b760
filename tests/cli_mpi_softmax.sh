#!/bin/sh
# tests/cli_mpi_softmax.sh - the softmax plugin on several ranks, with the
# description one rank takes: no dim=, a file of one shard (so that some
# ranks read nothing), epochs in which a rank has had no record yet.  A
# rank that declared no reduced regions by a boundary adopts the lowest
# declaring rank's, with their blobs.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mpi.sh"
. "$(dirname "$0")/hogwild.sh"
hogwild_slices bin map

# --- One shard, three ranks, one epoch: ranks 1 and 2 read nothing -----
# Before, the job failed at the end ("the ranks declared different blobs
# to reduce") unless dim= was given.  The mean counts the ranks that
# trained only, so the model is the one rank's, to the bit.
"$WEIR" run -q --checkpoint "$T/one" "msgpack path=$T/train.bin ! softmax classes=10 ! null" || fail "one rank"
mpi 3 "$WEIR" run -q --checkpoint "$T/three" "msgpack path=$T/train.bin ! softmax classes=10 ! null" \
    2> "$T/three.err" && ok || fail "three ranks over one shard: $(cat "$T/three.err")"
"$WEIR" checkpoints "$T/one" --epoch 1 --blob softmax > "$T/one.model"
"$WEIR" checkpoints "$T/three" --epoch 1 --blob softmax > "$T/three.model"
[ -s "$T/one.model" ] && cmp -s "$T/one.model" "$T/three.model" && ok \
    || fail "three ranks over one shard trained another model than one rank"

# --- Several epochs: the idle ranks hold the model from the first boundary
# on; a resume on another rank count goes on with it
mpi 3 "$WEIR" run -q --checkpoint "$T/ep" --epoch-records 700 --epochs 2 \
    "msgpack path=$T/train.bin passes=2 ! softmax classes=10 ! null" 2> "$T/ep.err" \
    && ok || fail "three ranks, two epochs: $(cat "$T/ep.err")"
mpi 2 "$WEIR" run -q --checkpoint "$T/ep" --resume --epoch-records 700 \
    "msgpack path=$T/train.bin passes=2 ! softmax classes=10 ! null" 2> "$T/ep.err" \
    && ok || fail "resumed on two ranks: $(cat "$T/ep.err")"
"$WEIR" checkpoints "$T/ep" | grep -q finished && ok || fail "the resumed job did not finish"
evaluate "$T/ep" "three ranks, then two"

# --- Sparse maps (2^18 hashed rows) over two shards on three ranks -----
mpi 3 "$WEIR" run -q --checkpoint "$T/map" "msgpack path=$T/train.map split=1M ! softmax classes=10 scale=1/255 ! null" \
    2> "$T/map.err" && ok || fail "sparse on three ranks: $(cat "$T/map.err")"
"$WEIR" run -q --stats "$T/eval.json" --load-blobs "$T/map" \
    "msgpack path=$T/train.map ! softmax mode=eval scale=1/255 ! null" || fail "map: eval failed"
acc=$(metric "$T/eval.json" eval_accuracy)
awk -v a="$acc" 'BEGIN { exit !(a > 0.7) }' && ok || fail "map: training accuracy '$acc'"

# --- Ranks whose data make models of different shapes: a clear error ---
# Rank 0 reads dense bytes (784 rows), rank 1 sparse maps (2^18 rows)
mkdir "$T/mixed"
cp "$T/train.bin" "$T/mixed/a.mp"
cp "$T/train.map" "$T/mixed/b.mp"
expect_exit 1 "the ranks declared different blobs to reduce.*give its size as a property" -- \
    mpi 2 "$WEIR" run -q "msgpack path=$T/mixed/*.mp ! softmax classes=10 ! null"
finish

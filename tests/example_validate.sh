#!/bin/sh
# The softmax plugin's validation and early stopping, on a handcrafted
# case whose scores are known: two classes, each one feature.  Held out
# with the labels flipped, every epoch of training makes the loss worse,
# so the first epoch is the best and patience=2 stops the job at the end
# of the third; held out as trained, every epoch is better than the last.
# The best checkpoint is marked, kept by retention, loaded by DIR:best,
# and a resumed job counts its patience on.
. "$(dirname "$0")/lib.sh"
: "${HOGWILD_DIR:?HOGWILD_DIR must point at the built or installed softmax plugin}"
export WEIR_PLUGIN_PATH="$HOGWILD_DIR"

i=0
while [ $i -lt 100 ]; do
    echo '[0, [1.0, 0.0]]'
    echo '[1, [0.0, 1.0]]'
    i=$((i + 1))
done > "$T/train.jsonl"
head -20 "$T/train.jsonl" > "$T/same.jsonl"
sed 's/^\[0,/[x,/; s/^\[1,/[0,/; s/^\[x,/[1,/' "$T/same.jsonl" > "$T/flipped.jsonl"
for f in same flipped; do
    "$WEIR" run -q "json path=$T/$f.jsonl ! msgpack path=$T/$f.mp" || fail "write $f.mp"
done
JOB="json path=$T/train.jsonl passes=10 ! softmax classes=2"

# is GOT WANT WHAT
is () {
    [ "$1" = "$2" ] && ok || fail "$3: '$1', wanted '$2'"
}
metric () {
    sed -n "s/.*\"$2\": \([0-9.e+-]*\).*/\1/p" "$1" | tail -1
}
# listed CK EPOCH...: the epochs 'weir checkpoints' lists, but 0
listed () {
    "$WEIR" checkpoints "$1" | awk 'NR > 1 && $1 != 0 { printf "%s%s", sep, $1; sep = " " }'
}
best_of () {
    "$WEIR" checkpoints "$1" | awk '/\(best\)/ { print $1 }'
}

# --- Worse every epoch: stopped at the end of epoch 3, epoch 1 the best ---
"$WEIR" run -q --stats "$T/flip.json" --checkpoint "$T/flip" "$JOB validate=$T/flipped.mp patience=2 ! null" \
    && ok || fail "the flipped job failed"
is "$(listed "$T/flip")" "1 2 3" "epochs of a job whose patience ran out after 3"
is "$(best_of "$T/flip")" 1 "the best epoch"
is "$(metric "$T/flip.json" stopped_early_at)" 3 "stopped_early_at"
is "$(metric "$T/flip.json" val_best_epoch)" 1 "val_best_epoch"
awk -v a="$(metric "$T/flip.json" val_accuracy)" 'BEGIN { exit !(a == 0) }' && ok \
    || fail "val_accuracy on flipped labels is not 0"

# --- Better every epoch: all ten passes, the last epoch the best ---------
"$WEIR" run -q --stats "$T/same.json" --checkpoint "$T/same" "$JOB validate=$T/same.mp patience=2 ! null" \
    && ok || fail "the same-labels job failed"
is "$(best_of "$T/same")" 10 "the best epoch when every one improves"
[ -z "$(metric "$T/same.json" stopped_early_at)" ] && ok || fail "a job that kept improving was stopped"
awk -v a="$(metric "$T/same.json" val_accuracy)" 'BEGIN { exit !(a == 1) }' && ok \
    || fail "val_accuracy on the trained labels is not 1"

# --- Retention keeps the best: --keep 1 leaves it and the latest -------
"$WEIR" run -q --keep 1 --checkpoint "$T/keep" "$JOB validate=$T/flipped.mp patience=2 ! null" || fail "--keep 1"
is "$(listed "$T/keep")" "1 3" "--keep 1 with epoch 1 marked the best"

# --- DIR:best loads the best epoch's model --------------------------------
"$WEIR" run -q --checkpoint "$T/eval" --load-blobs "$T/flip:best" \
    "json path=$T/same.jsonl ! softmax mode=eval ! null" || fail "--load-blobs DIR:best"
"$WEIR" checkpoints "$T/eval" --epoch 1 --blob softmax > "$T/loaded"
"$WEIR" checkpoints "$T/flip" --epoch 1 --blob softmax > "$T/best"
"$WEIR" checkpoints "$T/flip" --epoch 3 --blob softmax > "$T/last"
cmp -s "$T/loaded" "$T/best" && ! cmp -s "$T/loaded" "$T/last" && ok \
    || fail "--load-blobs DIR:best did not load epoch 1's model"
expect_exit 1 "'$T/eval' holds no checkpoint marked the best" -- \
    "$WEIR" run -q --load-blobs "$T/eval:best" "json path=$T/same.jsonl ! softmax mode=eval ! null"

# --- A resumed job counts its patience on ---------------------------------
"$WEIR" run -q --epochs 2 --checkpoint "$T/res" "$JOB validate=$T/flipped.mp patience=2 ! null" \
    || fail "two epochs"
"$WEIR" run -q --stats "$T/res.json" --checkpoint "$T/res" --resume "$JOB validate=$T/flipped.mp patience=2 ! null" \
    || fail "resumed"
is "$(listed "$T/res")" "1 2 3" "epochs of the resumed job"
is "$(metric "$T/res.json" stopped_early_at)" 3 "stopped_early_at after a resume"

# --- Two threads: the last one to the epoch's end scores ------------------
"$WEIR" run -q --checkpoint "$T/t2" "$JOB threads=2 validate=$T/flipped.mp patience=2 ! null" || fail "threads=2"
is "$(listed "$T/t2")" "1 2 3" "epochs with two threads"

# --- Bad input: the file, the record, the byte -----------------------------
head -c 30 "$T/flipped.mp" > "$T/cut.mp"
echo '[5, [1.0, 0.0]]' > "$T/l5.jsonl"
echo '[1, [1.0, 0.0, 3.0]]' > "$T/d3.jsonl"
echo '[1, "text"]' > "$T/str.jsonl"
for f in l5 d3 str; do
    "$WEIR" run -q "json path=$T/$f.jsonl ! msgpack path=$T/$f.mp" || fail "write $f.mp"
done
ONE="json path=$T/train.jsonl ! softmax classes=2"
expect_exit 1 "validate='$T/nope.mp': No such file" -- "$WEIR" run -q "$ONE validate=$T/nope.mp ! null"
expect_exit 1 "validate='$T/cut.mp': record 2 \(byte 21\) is cut short" -- \
    "$WEIR" run -q "$ONE validate=$T/cut.mp ! null"
expect_exit 1 "validate='$T/l5.mp': record 1 \(byte 0\): label 5, but the model has 2 classes" -- \
    "$WEIR" run -q "$ONE validate=$T/l5.mp ! null"
expect_exit 1 "validate='$T/d3.mp': record 1 \(byte 0\): 3 features, but the model has 2 rows" -- \
    "$WEIR" run -q "$ONE validate=$T/d3.mp ! null"
expect_exit 1 "validate='$T/str.mp': record 1 \(byte 0\): the features are not" -- \
    "$WEIR" run -q "$ONE validate=$T/str.mp ! null"
expect_exit 1 "patience=2 needs validate=PATH" -- "$WEIR" run -q "$ONE patience=2 ! null"
expect_exit 1 "validate= is for training" -- \
    "$WEIR" run -q --load-blobs "$T/flip" "json path=$T/same.jsonl ! softmax mode=eval validate=$T/same.mp ! null"
finish

# tests/hogwild.sh - what the tests of the softmax plugin share (sourced
# after tests/lib.sh): the plugin on WEIR_PLUGIN_PATH, a slice of
# Fashion-MNIST in $T (train.FORM, 3000 images, for each FORM given to
# hogwild_slices; test.bin, 1000 others), metric and evaluate.
: "${HOGWILD_DIR:?HOGWILD_DIR must point at the built or installed softmax plugin}"
: "${IDX2MSGPACK:?IDX2MSGPACK must point at examples/hogwild/idx2msgpack}"
data=${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -r "$data/train-images-idx3-ubyte.gz" ]; then
    fail "no Fashion-MNIST in $data: install the Debian package dataset-fashion-mnist (scripts/install-deps.sh does) or set FASHION_MNIST_DIR"
    finish
    exit 1
fi
export WEIR_PLUGIN_PATH="$HOGWILD_DIR"

# hogwild_slices FORM...: 3000 images to train on in each FORM (bin,
# array, map), 1000 others to test on (bin)
hogwild_slices () {
    for form in "$@"; do
        "$IDX2MSGPACK" --limit 3000 --features "$form" "$data/train-images-idx3-ubyte.gz" \
            "$data/train-labels-idx1-ubyte.gz" "$T/train.$form" 2>/dev/null || fail "convert train ($form)"
    done
    "$IDX2MSGPACK" --limit 1000 "$data/t10k-images-idx3-ubyte.gz" "$data/t10k-labels-idx1-ubyte.gz" \
        "$T/test.bin" 2>/dev/null || fail "convert test"
}

# The value of metric NAME in a --stats file
metric () {
    sed -n "s/.*\"$2\": \([0-9.e+-]*\).*/\1/p" "$1" | tail -1
}

# evaluate CK WHAT: the model in checkpoint directory CK scores far above
# chance (0.1) on the test slice, after a few passes over 3000 images,
# with one prediction per record
evaluate () {
    "$WEIR" run -q --stats "$T/eval.json" --load-blobs "$1" \
        "msgpack path=$T/test.bin ! softmax mode=eval ! lines path=$T/predicted.txt" || fail "$2: eval failed"
    acc=$(metric "$T/eval.json" eval_accuracy)
    awk -v a="$acc" 'BEGIN { exit !(a > 0.7) }' && ok || fail "$2: accuracy '$acc' on the test slice"
    [ "$(wc -l < "$T/predicted.txt")" -eq 1000 ] && ok || fail "$2: not one prediction per record"
}

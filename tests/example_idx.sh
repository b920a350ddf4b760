#!/bin/sh
# The hogwild example's converter: IDX image and label files to a msgpack
# stream of [label, features].  Inputs are made with printf (octal escapes
# only: POSIX printf has no \x), outputs compared byte for byte.
. "$(dirname "$0")/lib.sh"
: "${IDX2MSGPACK:?IDX2MSGPACK must point at examples/hogwild/idx2msgpack}"

# Two 2x3 images and their labels, 3 and 200 (a label needs not be < 10,
# and 200 takes msgpack's two-byte uint8 form):
#   image 1: 0 1 127 128 255 0     image 2: 0 0 0 0 0 5
printf '\000\000\010\003\000\000\000\002\000\000\000\002\000\000\000\003' > "$T/images.idx"
printf '\000\001\177\200\377\000\000\000\000\000\000\005' >> "$T/images.idx"
printf '\000\000\010\001\000\000\000\002\003\310' > "$T/labels.idx"

# The expected records: fixarray 2, the label, the features
#   bin:   c4 06 + the bytes
#   array: fixarray 6 of the values (128 and 255 as cc xx)
#   map:   fixmap of the nonzero pixels, 1-based index -> value
printf '\222\003\304\006\000\001\177\200\377\000' > "$T/bin.1"
printf '\222\314\310\304\006\000\000\000\000\000\005' > "$T/bin.2"
printf '\222\003\226\000\001\177\314\200\314\377\000' > "$T/array.1"
printf '\222\314\310\226\000\000\000\000\000\005' > "$T/array.2"
printf '\222\003\204\002\001\003\177\004\314\200\005\314\377' > "$T/map.1"
printf '\222\314\310\201\006\005' > "$T/map.2"
for f in bin array map; do
    cat "$T/$f.1" "$T/$f.2" > "$T/$f.expected"
done

# A good conversion, the default form (bin), and the summary line
expect_exit 0 '^idx2msgpack: wrote 2 examples \(21 bytes\) to .*/out\.mp$' -- \
    "$IDX2MSGPACK" "$T/images.idx" "$T/labels.idx" "$T/out.mp"
same "$T/out.mp" "$T/bin.expected" "default (bin) conversion"

# Every --features form, both option spellings
for f in bin array map; do
    expect_exit 0 '^idx2msgpack: wrote 2 examples' -- \
        "$IDX2MSGPACK" --features $f "$T/images.idx" "$T/labels.idx" "$T/out.$f"
    same "$T/out.$f" "$T/$f.expected" "--features $f"
    expect_exit 0 '' -- "$IDX2MSGPACK" "$T/images.idx" --features=$f "$T/labels.idx" "$T/eq.$f"
    same "$T/eq.$f" "$T/$f.expected" "--features=$f after a file"
done
expect_exit 0 '^idx2msgpack: wrote 2 examples \(19 bytes\) to ' -- \
    "$IDX2MSGPACK" --features map "$T/images.idx" "$T/labels.idx" "$T/out.map"

# gzip input, one file or both; OUT '-' is stdout
gzip -c "$T/images.idx" > "$T/images.idx.gz"
gzip -c "$T/labels.idx" > "$T/labels.idx.gz"
expect_exit 0 '' -- "$IDX2MSGPACK" "$T/images.idx.gz" "$T/labels.idx" "$T/gz1.mp"
same "$T/gz1.mp" "$T/bin.expected" "gzip images"
expect_exit 0 '' -- "$IDX2MSGPACK" --features map "$T/images.idx.gz" "$T/labels.idx.gz" "$T/gz2.mp"
same "$T/gz2.mp" "$T/map.expected" "gzip images and labels"
"$IDX2MSGPACK" --features array "$T/images.idx.gz" "$T/labels.idx.gz" - > "$T/stdout.mp" 2> "$T/err" &&
    grep -q 'to stdout$' "$T/err" && ok || fail "OUT - : $(cat "$T/err")"
same "$T/stdout.mp" "$T/array.expected" "OUT - writes to stdout"

# --limit: the first N examples; more than there are is all of them
expect_exit 0 '^idx2msgpack: wrote 1 examples \(11 bytes\)' -- \
    "$IDX2MSGPACK" --limit 1 --features array "$T/images.idx" "$T/labels.idx" "$T/lim1.mp"
same "$T/lim1.mp" "$T/array.1" "--limit 1"
expect_exit 0 'wrote 0 examples \(0 bytes\)' -- "$IDX2MSGPACK" --limit=0 "$T/images.idx" "$T/labels.idx" "$T/lim0.mp"
[ -f "$T/lim0.mp" ] && [ ! -s "$T/lim0.mp" ] && ok || fail "--limit 0 writes an empty file"
expect_exit 0 'wrote 2 examples' -- "$IDX2MSGPACK" --limit 99 "$T/images.idx" "$T/labels.idx" "$T/lim99.mp"
same "$T/lim99.mp" "$T/bin.expected" "--limit beyond the count"
# --limit also stops before a truncated rest
head -c 22 "$T/images.idx" > "$T/short.idx"
expect_exit 0 'wrote 1 examples' -- "$IDX2MSGPACK" --limit 1 "$T/short.idx" "$T/labels.idx" "$T/lim1b.mp"
same "$T/lim1b.mp" "$T/bin.1" "--limit 1 of a truncated file"

# weir reads the records back
if "$WEIR" run -q "msgpack path=$T/out.array ! lines path=$T/array.txt" &&
    "$WEIR" run -q "msgpack path=$T/out.map ! lines path=$T/map.txt" &&
    "$WEIR" run -q "msgpack path=$T/out.mp ! lines path=$T/bin.txt"; then
    printf '[3,[0,1,127,128,255,0]]\n[200,[0,0,0,0,0,5]]\n' > "$T/array.txt.expected"
    printf '[3,{"2":1,"3":127,"4":128,"5":255}]\n[200,{"6":5}]\n' > "$T/map.txt.expected"
    same "$T/array.txt" "$T/array.txt.expected" "weir reads the array form"
    same "$T/map.txt" "$T/map.txt.expected" "weir reads the map form"
    [ "$(wc -l < "$T/bin.txt")" -eq 2 ] && ok || fail "weir reads the bin form: $(cat "$T/bin.txt")"
else
    fail "weir cannot read the converted records"
fi

# Malformed input: exit 1, one line naming the file, and no OUT left behind
bad () {
    pattern=$1
    shift
    rm -f "$T/bad.mp"
    expect_exit 1 "$pattern" -- "$IDX2MSGPACK" "$@" "$T/bad.mp"
    [ "$(wc -l < "$T/err")" -eq 1 ] && ok || fail "more than one line: $(cat "$T/err")"
    [ ! -e "$T/bad.mp" ] && ok || fail "a partial output was left: $*"
}
bad "^idx2msgpack: $T/labels.idx: not an IDX image file: magic number 0x00000801, expected 0x00000803 \(a label file\?\)$" \
    "$T/labels.idx" "$T/images.idx"
printf '\000\000\010\002\000\000\000\002' > "$T/magic.idx"
bad "^idx2msgpack: $T/magic.idx: not an IDX label file: magic number 0x00000802, expected 0x00000801$" \
    "$T/images.idx" "$T/magic.idx"
printf '\000\000\010' > "$T/tiny.idx"
bad "^idx2msgpack: $T/tiny.idx: truncated at byte offset 0: expected 4 bytes \(the magic number\), got 3$" \
    "$T/tiny.idx" "$T/labels.idx"
head -c 10 "$T/images.idx" > "$T/header.idx"
bad "^idx2msgpack: $T/header.idx: truncated at byte offset 4: expected 12 bytes \(the dimensions of the header\), got 6$" \
    "$T/header.idx" "$T/labels.idx"
head -c 26 "$T/images.idx" > "$T/data.idx"
bad "^idx2msgpack: $T/data.idx: truncated at byte offset 22: expected 6 bytes \(image 2 of 2\), got 4$" \
    "$T/data.idx" "$T/labels.idx"
head -c 9 "$T/labels.idx" > "$T/labels9.idx"
bad "^idx2msgpack: $T/labels9.idx: truncated at byte offset 9: expected 1 byte \(label 2 of 2\), got 0$" \
    "$T/images.idx" "$T/labels9.idx"
head -c 40 "$T/images.idx.gz" > "$T/cut.gz"
bad "^idx2msgpack: $T/cut.gz: truncated at byte offset [0-9]+ of the uncompressed data: expected [0-9]+ bytes? \(.*\), got [0-9]+ \(the gzip stream is cut short\)$" \
    "$T/cut.gz" "$T/labels.idx"
printf '\000\000\010\001\000\000\000\003\001\002\003' > "$T/three.idx"
bad "^idx2msgpack: $T/three.idx: 3 labels, but $T/images.idx holds 2 images$" "$T/images.idx" "$T/three.idx"
bad "^idx2msgpack: $T/none.idx: cannot open: No such file or directory$" "$T/none.idx" "$T/labels.idx"
bad "^idx2msgpack: $T: read error at byte offset 0: Is a directory$" "$T" "$T/labels.idx"
if [ "$(id -u)" -ne 0 ]; then
    printf 'x' > "$T/secret.idx"
    chmod 000 "$T/secret.idx"
    bad "^idx2msgpack: $T/secret.idx: cannot open: Permission denied$" "$T/images.idx" "$T/secret.idx"
fi

# Output errors
expect_exit 1 "^idx2msgpack: $T/no/dir/out.mp: cannot create: No such file or directory$" -- \
    "$IDX2MSGPACK" "$T/images.idx" "$T/labels.idx" "$T/no/dir/out.mp"
if [ -w /dev/full ]; then
    expect_exit 1 '^idx2msgpack: /dev/full: write error: No space left on device$' -- \
        "$IDX2MSGPACK" "$T/images.idx" "$T/labels.idx" /dev/full
    expect_exit 1 '^idx2msgpack: stdout: write error: No space left on device$' -- \
        sh -c '"$0" "$1" "$2" - > /dev/full' "$IDX2MSGPACK" "$T/images.idx" "$T/labels.idx"
fi

# Usage: exit 2 with the usage line; --help exits 0 with it on stdout
usage='^usage: idx2msgpack \[--limit N\] \[--features bin\|array\|map\] IMAGES LABELS OUT$'
expect_exit 2 "$usage" -- "$IDX2MSGPACK"
expect_exit 2 "expected IMAGES LABELS OUT, got 2 arguments" -- "$IDX2MSGPACK" "$T/images.idx" "$T/labels.idx"
expect_exit 2 "got 4 arguments" -- "$IDX2MSGPACK" "$T/images.idx" "$T/labels.idx" "$T/a" "$T/b"
expect_exit 2 "--features: expected bin, array or map, got 'csv'" -- \
    "$IDX2MSGPACK" --features csv "$T/images.idx" "$T/labels.idx" "$T/u.mp"
expect_exit 2 "--limit: expected a count, got '-1'" -- "$IDX2MSGPACK" --limit -1 "$T/images.idx" "$T/labels.idx" "$T/u.mp"
expect_exit 2 "--limit: expected a count, got '10x'" -- "$IDX2MSGPACK" --limit 10x "$T/images.idx" "$T/labels.idx" "$T/u.mp"
expect_exit 2 "$usage" -- "$IDX2MSGPACK" --limit
expect_exit 2 "$usage" -- "$IDX2MSGPACK" --bogus "$T/images.idx" "$T/labels.idx" "$T/u.mp"
[ ! -e "$T/u.mp" ] && ok || fail "a usage error created the output"
"$IDX2MSGPACK" --help > "$T/out" 2> "$T/err" && grep -Eq "$usage" "$T/out" && [ ! -s "$T/err" ] && ok ||
    fail "--help: $(cat "$T/out" "$T/err")"

finish

#!/bin/sh
# The libsvm reader and writer: canonical files round-trip byte for byte,
# the three forms of features, every malformed line with its file and line
# number (also in a later shard, and after a resume), exactly-once resume,
# and liblinear's train reading what the writer wrote.
. "$(dirname "$0")/lib.sh"

# A canonical file: what the writer writes (integral labels as integers,
# the shortest text of every value, single blanks, ascending indices)
cat > "$T/canon.txt" <<'END'
1 1:0.5 3:2 10:1e-05
-1 2:0.30000000000000004 4:-7.25
0
2.5 1:0.1 2:0.3333333333333333 9223372036854775807:1e+300
17 5:-0 6:0 7:123456789 8:4.94065645841247e-324
-3.0000000000000004 100:0.00392156862745098
END
"$WEIR" run -q "libsvm path=$T/canon.txt ! identity ! libsvm path=$T/out.txt" || fail "libsvm ! identity ! libsvm"
same "$T/canon.txt" "$T/out.txt" "canonical round trip"
# Through msgpack, and through shards of a few bytes
"$WEIR" run -q "libsvm path=$T/canon.txt split=20 ! msgpack path=$T/canon.mp" || fail "libsvm -> msgpack"
"$WEIR" run -q "msgpack path=$T/canon.mp ! libsvm path=$T/out.txt" || fail "msgpack -> libsvm"
same "$T/canon.txt" "$T/out.txt" "round trip through msgpack, split=20"

# Other spellings read as the same values and come out canonical
printf '+1 1:0.50 3:2e0 10:0.00001\r\n  -1\t2:.30000000000000004  4:-7.250 \n0.0\n' > "$T/loose.txt"
"$WEIR" run -q "libsvm path=$T/loose.txt ! libsvm path=$T/out.txt" || fail "loose spellings"
printf '1 1:0.5 3:2 10:1e-05\n-1 2:0.30000000000000004 4:-7.25\n0\n' | cmp -s - "$T/out.txt" && ok \
    || fail "loose spellings: $(cat "$T/out.txt")"

# What the reader yields, as text
"$WEIR" run -q "libsvm path=$T/loose.txt ! lines path=$T/out.txt" || fail "libsvm -> lines"
printf '[1,{"1":0.5,"3":2.0,"10":1e-05}]\n[-1,{"2":0.30000000000000004,"4":-7.25}]\n[0,{}]\n' \
    | cmp -s - "$T/out.txt" && ok || fail "records: $(cat "$T/out.txt")"

# msgpack records with each form of features: a bin, an array, a map
"$MKMSGPACK" features "$T/features.mp"
"$WEIR" run -q "msgpack path=$T/features.mp ! libsvm path=$T/out.txt" || fail "features -> libsvm"
cat > "$T/features.expected" <<'END'
1 2:5 4:255 5:128
-1 2:0.5 3:0.1 5:-3
2.5 2:0.30000000000000004 7:0 10:1e-05
3
END
same "$T/features.expected" "$T/out.txt" "the three forms of features"
"$WEIR" run -q "msgpack path=$T/features.mp ! libsvm path=$T/out.txt scale=1/255" || fail "scale=1/255"
head -n 1 "$T/out.txt" | grep -qx '1 2:0.0196078431372549 4:1 5:0.5019607843137255' && ok \
    || fail "scale=1/255: $(head -n 1 "$T/out.txt")"
expect_exit 2 "libsvm: property 'scale': 'zero' is not a number" -- "$WEIR" run "msgpack path=$T/features.mp ! libsvm path=$T/out.txt scale=zero"

# Records the writer cannot write: exit 1, naming the file and the record
i=0
for message in 'a record must be \[label, features\], not a string' \
               'the label is a string, not a finite number' \
               'the features are nil, not a bin, an array or a map' \
               'the key 0 of the features is not an index' \
               'element 2 of the features is a boolean, not a finite number'; do
    "$MKMSGPACK" svmbad $i "$T/bad.mp"
    expect_exit 1 "^weir run: libsvm: '$T/out.txt': record 2 of a batch of 2 \(.*\): $message" -- \
        "$WEIR" run -q "msgpack path=$T/bad.mp ! libsvm path=$T/out.txt"
    i=$((i + 1))
done

# Malformed lines: exit 1, naming the file, the line number and the byte
check_bad () {
    printf '1 1:1\n2 2:2\n%s\n4 4:4\n' "$1" > "$T/bad.txt"
    expect_exit 1 "^weir run: libsvm: '$T/bad.txt' line 3 \(byte $2\): $3" -- "$WEIR" run -q "libsvm path=$T/bad.txt ! null"
}
check_bad '' 12 'the line is empty'
check_bad '# comment' 12 "'#' comments are not part of the libsvm format"
check_bad '1 1:1 # comment' 18 "'#' comments are not part of the libsvm format"
check_bad '3:1' 12 "the line has no label: it starts with the feature '3:1'"
check_bad 'one 1:1' 12 "label 'one' is not a number"
check_bad '1 abc' 14 "feature 'abc' is not index:value"
check_bad '1 abc:1' 14 "index 'abc' is not a positive integer"
check_bad '1 0:1' 14 "index '0' is not a positive integer"
check_bad '1 -2:1' 14 "index '-2' is not a positive integer"
check_bad '1 qid:2 1:1' 14 "index 'qid' is not a positive integer"
check_bad '1 3:' 14 'index 3 has no value'
check_bad '1 3:x' 16 "value 'x' of index 3 is not a number"
check_bad '1 3:1.5.2' 16 "value '1.5.2' of index 3 is not a number"
check_bad '1 3:1e999' 16 "value '1e999' of index 3 is out of range"
check_bad '1 3:1 3:2' 18 'index 3 appears twice'
check_bad '1 5:1 3:2' 18 'index 3 comes after index 5: indices must ascend'
printf '1 1:1\n%0100d\n' 0 > "$T/long.txt"
expect_exit 1 "libsvm: '$T/long.txt' line 2 \(byte 6\): line longer than max-line=50 bytes" -- "$WEIR" run "libsvm path=$T/long.txt max-line=50 ! null"
expect_exit 1 "libsvm: cannot open '$T/missing.txt'" -- "$WEIR" run "libsvm path=$T/missing.txt ! null"
expect_exit 2 "libsvm: property 'path' is required" -- "$WEIR" run "libsvm ! null"

# A larger file: 2000 examples, one bad line (1234) in the middle
awk 'BEGIN { for (i = 1; i <= 2000; i++) {
    if (i == 1234) print "1 2:0.5 x:1"; else printf "%d 1:%d %d:%d.25 300:-%d\n", i % 2, i, 2 + i % 50, i, i } }' > "$T/big.txt"
bad_byte=$(($(head -n 1233 "$T/big.txt" | wc -c) + 8))
# ... cut into many shards, read by one and by two threads: the error
# names the line, though its shard starts far into the file
for opts in "split=1000" "split=1000 threads=2" "split=7"; do
    expect_exit 1 "libsvm: '$T/big.txt' line 1234 \(byte $bad_byte\): index 'x' is not a positive integer" -- \
        "$WEIR" run -q "libsvm path=$T/big.txt $opts ! null"
done
# ... and after a resume inside a shard: the first run stops before the
# bad line, the resumed one starts past line 1000
expect_exit 0 "" -- "$WEIR" run -q --checkpoint "$T/ckbad" --epoch-records 500 --epochs 2 "libsvm path=$T/big.txt ! null"
expect_exit 1 "libsvm: '$T/big.txt' line 1234 \(byte $bad_byte\): index 'x' is not a positive integer" -- \
    "$WEIR" run -q --checkpoint "$T/ckbad" --epoch-records 500 --resume "libsvm path=$T/big.txt ! null"

# Exactly-once resume: paused after some epochs, garbage appended past the
# committed length, resumed: the same bytes as an uninterrupted run
sed 's/ x:1$/ 3:1/' "$T/big.txt" > "$T/good.txt"
job="libsvm path=$T/good.txt split=3000 ! identity ! libsvm path=$T/out.txt"
"$WEIR" run -q "$job" || fail "uninterrupted run"
same "$T/good.txt" "$T/out.txt" "2000 examples round trip"
cp "$T/out.txt" "$T/whole.txt"
"$WEIR" run -q --checkpoint "$T/ck" --epoch-records 300 --epochs 1 "$job" || fail "first epoch"
[ "$(grep -c '' "$T/out.txt")" -eq 300 ] && ok || fail "after one epoch of 300: $(grep -c '' "$T/out.txt") lines"
echo "1 1:garbage past the committed length" >> "$T/out.txt"
"$WEIR" run -q --checkpoint "$T/ck" --epoch-records 300 --epochs 3 --resume "$job" || fail "resume to epoch 3"
"$WEIR" run -q --checkpoint "$T/ck" --epoch-records 300 --resume "libsvm path=$T/good.txt split=3000 threads=2 ! identity ! libsvm path=$T/out.txt" \
    || fail "resume to the end with two reader threads"
sort "$T/out.txt" > "$T/a"; sort "$T/whole.txt" > "$T/b"
same "$T/a" "$T/b" "resumed run (sorted: the last part was read by two threads)"
rm -rf "$T/ck"
"$WEIR" run -q --checkpoint "$T/ck" --epoch-records 300 --epochs 2 "$job" || fail "two epochs"
"$WEIR" run -q --checkpoint "$T/ck" --epoch-records 300 --resume "$job" || fail "resume to the end"
same "$T/whole.txt" "$T/out.txt" "resumed run, one thread: byte for byte"

# The writer resumes too: bins scaled into libsvm text
"$MKMSGPACK" pixels 600 "$T/pixels.mp"
wjob="msgpack path=$T/pixels.mp ! libsvm path=$T/pixels.txt scale=1/255"
"$WEIR" run -q "$wjob" || fail "pixels -> libsvm"
cp "$T/pixels.txt" "$T/pixels.whole"
"$WEIR" run -q --checkpoint "$T/ckw" --epoch-records 250 --epochs 1 "$wjob" || fail "pixels, first epoch"
"$WEIR" run -q --checkpoint "$T/ckw" --epoch-records 250 --resume "$wjob" || fail "pixels, resumed"
same "$T/pixels.whole" "$T/pixels.txt" "writer resumed"

# Several writer threads share the file: whole lines, each once
"$WEIR" run -q "msgpack path=$T/pixels.mp ! identity threads=2 ! libsvm path=$T/pixels.txt scale=1/255 threads=2" \
    || fail "two writer threads"
sort "$T/pixels.txt" > "$T/a"; sort "$T/pixels.whole" > "$T/b"
same "$T/a" "$T/b" "two writer threads (sorted)"

# liblinear's train reads what the writer wrote
if command -v liblinear-train >/dev/null 2>&1; then
    if liblinear-train -q "$T/pixels.txt" "$T/model" >"$T/train.out" 2>&1 && [ -s "$T/model" ]; then ok
    else fail "liblinear-train refused the writer's output: $(cat "$T/train.out")"; fi
    if liblinear-train -q "$T/whole.txt" "$T/model" >"$T/train.out" 2>&1; then ok
    else fail "liblinear-train refused the sparse file: $(cat "$T/train.out")"; fi
    # ... and learns from it: the model predicts its own training set well
    liblinear-train -q -s 2 "$T/pixels.txt" "$T/model2" >/dev/null 2>&1
    accuracy=$(liblinear-predict "$T/pixels.txt" "$T/model2" "$T/predicted" 2>&1 | sed -n 's/^Accuracy = \([0-9]*\).*/\1/p')
    [ "${accuracy:-0}" -ge 90 ] && ok || fail "liblinear's accuracy on the pixels: ${accuracy:-none}"
else
    fail "liblinear-train is not installed (scripts/install-deps.sh installs liblinear-tools): its check cannot run"
fi

finish

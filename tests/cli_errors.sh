#!/bin/sh
# Every error case of 'weir run' gives its exit code and a message naming
# what was wrong and where.
. "$(dirname "$0")/lib.sh"

# Usage errors: exit 2
expect_exit 2 "usage: weir run" -- "$WEIR"
expect_exit 2 "unknown command 'fly'" -- "$WEIR" fly
expect_exit 2 "no pipeline description" -- "$WEIR" run
expect_exit 2 "unrecognized option" -- "$WEIR" run --bogus 'range count=1 ! null'
expect_exit 2 "empty pipeline description" -- "$WEIR" run ' '
expect_exit 2 "expected an element before '!'" -- "$WEIR" run 'range count=3 ! ! null'
expect_exit 2 "expected an element after '!'" -- "$WEIR" run 'range count=3 !'
expect_exit 2 "expected key=value or '!' after element 'range', not 'count'" -- "$WEIR" run 'range count ! null'
expect_exit 2 "unterminated double quote" -- "$WEIR" run 'range count=3 ! lines path="x'
expect_exit 2 "property 'count' given twice" -- "$WEIR" run 'range count=3 count=4 ! null'
expect_exit 2 "unknown element 'rnage'" -- "$WEIR" run 'rnage count=3 ! null'
expect_exit 2 "unknown property 'cuont'.*known: count, start" -- "$WEIR" run 'range cuont=3 ! null'
expect_exit 2 "range: property 'count': 'ten' is not an integer" -- "$WEIR" run 'range count=ten ! null'
expect_exit 2 "identity: property 'threads': 0 is out of range" -- "$WEIR" run 'range count=3 ! identity threads=0 ! null'
# The limits of every stage property, at both ends
expect_exit 2 "null: property 'threads': 257 is out of range \\[1, 256\\]" -- "$WEIR" run 'range count=3 ! null threads=257'
expect_exit 2 "identity: property 'capacity': 0 is out of range \\[1, 1048576\\]" -- \
    "$WEIR" run 'range count=3 ! identity capacity=0 ! null'
expect_exit 2 "range: property 'batch': 0 is out of range \\[1, 1048576\\]" -- "$WEIR" run 'range count=3 batch=0 ! null'
expect_exit 2 "range: property 'batch': 1048577 is out of range" -- "$WEIR" run 'range count=3 batch=1048577 ! null'
expect_exit 2 "range: property 'passes': 0 is out of range" -- "$WEIR" run 'range count=3 passes=0 ! null'
expect_exit 0 "" -- "$WEIR" run -q 'range count=3 threads=256 batch=1 capacity=1 ! null threads=256'
expect_exit 2 "property 'count' is required" -- "$WEIR" run 'range ! null'
expect_exit 2 "property 'path' is required" -- "$WEIR" run 'range count=3 ! lines'
expect_exit 2 "'null' is a writer, but the first element must be a reader" -- "$WEIR" run 'null ! null'
expect_exit 2 "'range' is a reader, but the last element must be a writer" -- "$WEIR" run 'range count=1 ! range count=1'
expect_exit 2 "at least a reader and a writer" -- "$WEIR" run 'range count=1'

# The caret stands under the offending text
"$WEIR" run 'range count=3 ! idnetity ! null' 2>"$T/caret"
if [ "$(sed -n 3p "$T/caret")" = "                  ^" ]; then ok; else fail "caret misplaced:"; cat "$T/caret" >&2; fi
"$WEIR" run 'range count=3 ! lines pth=x' 2>"$T/caret"
if [ "$(sed -n 3p "$T/caret")" = "                        ^" ]; then ok; else fail "caret misplaced:"; cat "$T/caret" >&2; fi

# Runtime errors: exit 1, naming the element, the file and the offset
expect_exit 1 "lines: cannot open '$T/missing.txt': No such file or directory" -- "$WEIR" run "lines path=$T/missing.txt ! null"
expect_exit 1 "msgpack: no file matches '$T/none-\*.mp'" -- "$WEIR" run "msgpack path=$T/none-*.mp ! null"
expect_exit 1 "lines: cannot read '$T'" -- "$WEIR" run "lines path=$T ! null"
expect_exit 1 "lines: cannot open '$T/no/such/dir/out.txt' for writing" -- "$WEIR" run "range count=3 ! lines path=$T/no/such/dir/out.txt"
"$MKMSGPACK" truncated "$T/trunc.mp"
expect_exit 1 "msgpack: '$T/trunc.mp' at byte 2: truncated record" -- "$WEIR" run "msgpack path=$T/trunc.mp ! null"
"$MKMSGPACK" badbyte "$T/bad.mp"
expect_exit 1 "msgpack: '$T/bad.mp' at byte 2: invalid msgpack type byte 0xc1" -- "$WEIR" run "msgpack path=$T/bad.mp ! null"
"$MKMSGPACK" bomb "$T/bomb.mp"
expect_exit 1 "msgpack: '$T/bomb.mp' at byte 1: truncated record" -- "$WEIR" run "msgpack path=$T/bomb.mp ! null"
"$MKMSGPACK" deep 40 "$T/deep.mp"
expect_exit 1 "msgpack: '$T/deep.mp' at byte 32: record nested deeper than 32 levels" -- "$WEIR" run "msgpack path=$T/deep.mp ! null"
"$MKMSGPACK" deep 32 "$T/deep32.mp"
expect_exit 0 "" -- "$WEIR" run -q "msgpack path=$T/deep32.mp ! lines path=$T/deep32.txt"
printf 'short\n%0100d\n' 0 > "$T/long.txt"
expect_exit 1 "lines: '$T/long.txt' at byte 6: line longer than max-line=50 bytes" -- "$WEIR" run "lines path=$T/long.txt max-line=50 ! null"
expect_exit 1 "msgpack: '$T/deep32.mp' at byte 0: record larger than max-record=8 bytes" -- "$WEIR" run "msgpack path=$T/deep32.mp max-record=8 ! null"

# A full disk (/dev/full fails every write with ENOSPC) is an error, never silent loss
expect_exit 1 "lines: cannot write '/dev/full' at byte 0: No space left on device" -- "$WEIR" run "range count=1M ! lines path=/dev/full"

# Help and version tell the truth and succeed
expect_exit 0 "" -- "$WEIR" run --help
grep -q -- "--stats FILE" "$T/out" && ok || fail "run --help does not document --stats"
expect_exit 0 "" -- "$WEIR" --version
grep -Eq "^weir [0-9]+\.[0-9]+\.[0-9]+$" "$T/out" && ok || fail "--version output: $(cat "$T/out")"
# Every subcommand has its help, on stdout, and 'weir --help' the overview
for c in run elements plugin checkpoints help; do
    expect_exit 0 "" -- "$WEIR" "$c" --help
    grep -q "^usage: weir $c" "$T/out" && [ ! -s "$T/err" ] && ok || fail "weir $c --help: $(cat "$T/out" "$T/err")"
    expect_exit 0 "" -- "$WEIR" help "$c"
    grep -q "^usage: weir $c" "$T/out" && ok || fail "weir help $c: $(cat "$T/out")"
done
for h in --help -h help; do
    expect_exit 0 "" -- "$WEIR" $h
    grep -q "^Commands:" "$T/out" && grep -q "^  checkpoints " "$T/out" && ok || fail "weir $h is no overview: $(cat "$T/out")"
done
expect_exit 2 "weir help: unknown command 'fly' \(commands: run, elements, graph, plugin, checkpoints, help\)" -- "$WEIR" help fly
expect_exit 2 "weir elements: unknown element 'fly' \(readers: range" -- "$WEIR" elements fly
expect_exit 0 "" -- "$WEIR" elements range
grep -q "^  count  *required " "$T/out" && grep -q "^  start  *0 " "$T/out" && grep -q "^  threads  *1 " "$T/out" \
    && ok || fail "weir elements range: $(cat "$T/out")"
# Messages of a subcommand name it
expect_exit 1 "^weir plugin: plugin '$T/none.so' cannot be loaded" -- "$WEIR" plugin "$T/none.so"
expect_exit 1 "^weir checkpoints: " -- "$WEIR" checkpoints "$T/no-such-dir" --epoch 1
expect_exit 2 "^weir run: unknown element 'rnage'" -- "$WEIR" run 'rnage count=3 ! null'

expect_exit 0 "" -- "$WEIR" elements
for e in range lines msgpack identity null; do
    grep -q "^  $e " "$T/out" && ok || fail "weir elements does not list $e"
done

# Typos get a guess; a '!' inside an unquoted value gets a hint to quote it
expect_exit 2 "unknown element 'idnetity': did you mean 'identity'\\?" -- "$WEIR" run "range count=10 ! idnetity ! null"
expect_exit 2 "unknown element 'lnies': did you mean 'lines'\\?" -- "$WEIR" run "lnies path=x ! null"
expect_exit 2 "unknown property 'cont': did you mean 'count'\\?" -- "$WEIR" run "range cont=10 ! null"
expect_exit 2 "if it is part of a value, quote the value" -- "$WEIR" run "lines path=$T/a!b.txt"
grep -q "^                   \^" "$T/err" 2>/dev/null || true

# LevelDB's own words stay out of the messages
expect_exit 1 "'$T/none' holds no checkpoints" -- "$WEIR" checkpoints "$T/none"
mkdir "$T/empty"
expect_exit 1 "'$T/empty' holds no checkpoints\$" -- "$WEIR" checkpoints "$T/empty"
expect_exit 1 "cannot create checkpoint directory '$T/no/ck': No such file or directory" -- \
    "$WEIR" run --checkpoint "$T/no/ck" "range count=3 ! null"
"$WEIR" run -q --checkpoint "$T/ck" "range count=3 ! null" || fail "a checkpointed run"
rm "$T/ck/CURRENT"
expect_exit 1 "'$T/ck' has lost its CURRENT file" -- "$WEIR" run --resume --checkpoint "$T/ck" "range count=3 ! null"
mkdir "$T/other" && touch "$T/other/notes.txt"
expect_exit 1 "'$T/other' is not a checkpoint directory: it holds other files" -- \
    "$WEIR" run --checkpoint "$T/other" "range count=3 ! null"
expect_exit 1 "leveldb: cannot open '$T/nodb': no LevelDB database there" -- "$WEIR" run "leveldb path=$T/nodb ! null"
expect_exit 1 "leveldb: cannot open '$T/no/db' for writing: No such file or directory" -- \
    "$WEIR" run "range count=2 ! leveldb path=$T/no/db"

# A record of more objects than max-elements is too large, not malformed:
# decoded, 9 M nils would take about 216 MB
"$MKMSGPACK" nils 9000000 "$T/nils.mp"
expect_exit 1 "msgpack: '$T/nils.mp' at byte 1: record too large: more than max-elements=8000000 objects" -- \
    "$WEIR" run "msgpack path=$T/nils.mp ! lines path=$T/nils.txt"
"$WEIR" run -q "msgpack path=$T/nils.mp max-elements=10M ! null" && ok || fail "max-elements=10M refused 9 M nils"

# --- Errors past the reader's first 1 MiB window ------------------------
# 4-byte records (fixstr "abc") after one 5-byte record: the record at byte
# 1,500,001 is the invalid 0xc1
printf '\243abc' > "$T/unit"
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19; do cat "$T/unit" "$T/unit" > "$T/unit2"; mv "$T/unit2" "$T/unit"; done
{ printf '\244abcd'; head -c 1499996 "$T/unit"; printf '\301'; head -c 4000 "$T/unit"; } > "$T/far.mp"
expect_exit 1 "msgpack: '$T/far.mp' at byte 1500001: " -- "$WEIR" run "msgpack path=$T/far.mp ! null"
# The same after a resume, which starts reading in the middle of the file
"$WEIR" run -q --checkpoint "$T/far.ck" --epoch-records 100k --epochs 2 "msgpack path=$T/far.mp ! null" \
    && ok || fail "the first 200k records of far.mp"
expect_exit 1 "msgpack: '$T/far.mp' at byte 1500001: " -- \
    "$WEIR" run --checkpoint "$T/far.ck" --resume --epoch-records 100k "msgpack path=$T/far.mp ! null"
# And a line-oriented reader: the line number counts the lines before the
# resumed offset too
awk 'BEGIN { for (i = 0; i < 200000; i++) printf "%d 1:0.5\n", i % 2; print "1 x:1" }' > "$T/far.svm"
expect_exit 1 "libsvm: '$T/far.svm' line 200001 \\(byte 1600002\\): index" -- "$WEIR" run "libsvm path=$T/far.svm ! null"
"$WEIR" run -q --checkpoint "$T/svm.ck" --epoch-records 100k --epochs 1 "libsvm path=$T/far.svm ! null" \
    && ok || fail "the first 100k lines of far.svm"
expect_exit 1 "libsvm: '$T/far.svm' line 200001 \\(byte 1600002\\): index" -- \
    "$WEIR" run --checkpoint "$T/svm.ck" --resume "libsvm path=$T/far.svm ! null"

finish

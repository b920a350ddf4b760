#!/bin/sh
# The word-count plugins, found by name through WEIR_PLUGIN_PATH.
. "$(dirname "$0")/lib.sh"
: "${WORDCOUNT_DIR:?WORDCOUNT_DIR must point at the built or installed plugins}"

cat > "$T/in.txt" <<'END'
The cat sat on the mat.
the Cat, the HAT -- and the cat's "hat"!
END
cat > "$T/expected" <<'END'
["and",1]
["cat",2]
["cat's",1]
["hat",2]
["mat",1]
["on",1]
["sat",1]
["the",5]
END

for threads in 1 3; do
    WEIR_PLUGIN_PATH="$WORDCOUNT_DIR" "$WEIR" run -q \
        "lines path=$T/in.txt ! tokenize lowercase=1 threads=$threads ! wordcount key=. threads=$threads ! lines path=$T/out.txt" \
        || fail "wordcount threads=$threads failed"
    sort "$T/out.txt" | cmp -s - "$T/expected" && ok || fail "wordcount threads=$threads: $(sort "$T/out.txt")"
done

# Without lowercase=1 case is kept
WEIR_PLUGIN_PATH="$WORDCOUNT_DIR" "$WEIR" run -q "lines path=$T/in.txt ! tokenize ! wordcount key=. ! lines path=$T/out.txt" || fail "case kept"
grep -q '^\["The",1\]$' "$T/out.txt" && grep -q '^\["HAT",1\]$' "$T/out.txt" && ok || fail "case kept: $(cat "$T/out.txt")"

# Many words over several threads: the counts add up
seq 1 20000 | sed 's/.*/alpha beta beta/' > "$T/many.txt"
WEIR_PLUGIN_PATH="$WORDCOUNT_DIR" "$WEIR" run -q \
    "lines path=$T/many.txt split=10000 threads=2 ! tokenize threads=2 ! wordcount key=. threads=2 ! lines path=$T/out.txt" || fail "many words"
printf '["alpha",20000]\n["beta",40000]\n' > "$T/expected"
sort "$T/out.txt" | cmp -s - "$T/expected" && ok || fail "many words: $(cat "$T/out.txt")"

# An ingestion job into LevelDB: words as keys, counts as values
WEIR_PLUGIN_PATH="$WORDCOUNT_DIR" "$WEIR" run -q "lines path=$T/in.txt ! tokenize lowercase=1 ! wordcount key=. ! leveldb path=$T/db" \
    || fail "wordcount into leveldb"
"$WEIR" run -q "leveldb path=$T/db ! lines path=$T/out.txt" || fail "reading the counts back"
cat > "$T/expected.db" <<'END'
["and","1"]
["cat","2"]
["cat's","1"]
["hat","2"]
["mat","1"]
["on","1"]
["sat","1"]
["the","5"]
END
same "$T/out.txt" "$T/expected.db" "wordcount in leveldb"

# The counts are checkpointed: a job stopped after epoch 2 and resumed
# counts exactly what an uninterrupted one does, with other thread counts
seq 1 300 | awk '{ printf "w%d w%d shared\n", $1 % 7, $1 % 13 }' > "$T/long.txt"
WEIR_PLUGIN_PATH="$WORDCOUNT_DIR" "$WEIR" run -q "lines path=$T/long.txt ! tokenize ! wordcount key=. threads=2 ! lines path=$T/once.txt" \
    || fail "uninterrupted count"
WEIR_PLUGIN_PATH="$WORDCOUNT_DIR" "$WEIR" run -q --checkpoint "$T/ck" --epoch-records 40 --epochs 2 \
    "lines path=$T/long.txt ! tokenize ! wordcount key=. threads=2 ! lines path=$T/resumed.txt" || fail "count, first 2 epochs"
[ ! -s "$T/resumed.txt" ] && ok || fail "counts were emitted before the last epoch: $(cat "$T/resumed.txt")"
WEIR_PLUGIN_PATH="$WORDCOUNT_DIR" "$WEIR" run -q --checkpoint "$T/ck" --resume --epoch-records 40 \
    "lines path=$T/long.txt threads=2 ! tokenize threads=3 ! wordcount key=. threads=3 ! lines path=$T/resumed.txt" || fail "count, resumed"
sort "$T/once.txt" > "$T/a"
sort "$T/resumed.txt" > "$T/b"
same "$T/a" "$T/b" "counts after a resume"
grep -q '^\["shared",300\]$' "$T/a" && ok || fail "uninterrupted counts: $(cat "$T/a")"

# Bad properties and records are errors, not silent loss
expect_exit 1 "lowercase=yes: expected 0 or 1" -- env WEIR_PLUGIN_PATH="$WORDCOUNT_DIR" "$WEIR" run "lines path=$T/in.txt ! tokenize lowercase=yes ! null"
expect_exit 1 "wordcount: expected str records \(words\), got a msgpack positive integer" -- \
    env WEIR_PLUGIN_PATH="$WORDCOUNT_DIR" "$WEIR" run "range count=3 ! wordcount key=. ! null"

# The plugins on the search path are elements too: listed, marked as
# plugins, with the properties they declare
WEIR_PLUGIN_PATH="$WORDCOUNT_DIR" "$WEIR" elements > "$T/elements" || fail "weir elements with plugins"
grep -q "^  tokenize  splits text records into words.*  (plugin $WORDCOUNT_DIR/tokenize.so)\$" "$T/elements" \
    && grep -q "^      lowercase=0  *1 folds ASCII letters to lower case\$" "$T/elements" \
    && grep -q "^  wordcount  counts str records.*(plugin $WORDCOUNT_DIR/wordcount.so)\$" "$T/elements" && ok \
    || { fail "weir elements does not list the plugins"; sed -n '/^processors/,/^$/p' "$T/elements" >&2; }
# Listed with the processors, before the writers
sed -n '/^processors:/,/^writers:/p' "$T/elements" | grep -q "^  tokenize " && ok || fail "tokenize is not among the processors"
WEIR_PLUGIN_PATH="$WORDCOUNT_DIR" "$WEIR" elements tokenize > "$T/one" || fail "weir elements tokenize"
grep -q "^  min-length  1  *words shorter than this many bytes are dropped\$" "$T/one" \
    && grep -q "^  a processor plugin: $WORDCOUNT_DIR/tokenize.so\$" "$T/one" && ok \
    || { fail "weir elements tokenize"; cat "$T/one" >&2; }
"$WEIR" plugin "$WORDCOUNT_DIR/tokenize.so" | grep -q "^  lowercase    0 " && ok || fail "weir plugin does not show properties"
# A .so on the path that is no plugin is listed as such, and the rest still are
printf 'not an object' > "$T/junk.so"
WEIR_PLUGIN_PATH="$T:$WORDCOUNT_DIR" "$WEIR" elements > "$T/elements2" || fail "weir elements with a junk .so"
grep -q "^  junk  (plugin $T/junk.so, does not load: " "$T/elements2" && grep -q "^  tokenize " "$T/elements2" && ok \
    || { fail "a junk .so on the plugin path"; sed -n '/^processors/,/^$/p' "$T/elements2" >&2; }

# The builtin count, keyed by the whole record, counts the same words
# without a plugin of its own, over threads that share no table
WEIR_PLUGIN_PATH="$WORDCOUNT_DIR" "$WEIR" run -q \
    "lines path=$T/long.txt threads=2 ! tokenize threads=2 ! count key=. threads=2 ! lines path=$T/builtin.txt" \
    || fail "lines ! tokenize ! count key=."
sort "$T/builtin.txt" > "$T/c"
same "$T/a" "$T/c" "the builtin count and the plugin"

# The vector scan against the byte-by-byte one (the same file built with
# -DTOKENIZE_BYTEWISE) on text of every byte class next to the ranges a
# word's bytes fall in, lines of every length across the 16- and 64-byte
# blocks the scan takes, and words running to a line's end
BYTEWISE_DIR="${PLUGINS_DIR%/.libs}/bytewise/.libs"
if [ -f "$BYTEWISE_DIR/tokenize.so" ]; then
    LC_ALL=C awk 'BEGIN {
        srand(7); n = split("97 122 65 90 113 77 48 57 39 32 32 46 44 64 91 96 123 47 58 38 127 128 195 169 255 9 120 67", c, " ")
        for (l = 0; l < 4000; l++) {
            len = (l % 50 == 0) ? 3000 + l : int(rand() * 200); s = ""
            for (i = 0; i < len; i++) s = s sprintf("%c", c[1 + int(rand() * n)])
            print s
        }
    }' > "$T/mixed.txt"
    for props in "lowercase=1" "min-length=3"; do
        for how in vector bytewise; do
            dir=$WORDCOUNT_DIR
            [ "$how" = bytewise ] && dir=$BYTEWISE_DIR
            WEIR_PLUGIN_PATH="$dir" "$WEIR" run -q \
                "lines path=$T/mixed.txt split=50000 threads=2 ! tokenize $props threads=2 ! count key=. threads=2 ! lines path=$T/words.txt" \
                || fail "tokenize $props from $dir"
            sort "$T/words.txt" > "$T/words-$how"
        done
        same "$T/words-bytewise" "$T/words-vector" "tokenize $props: the vector scan and the bytes"
    done
    # And both against tr: as many words, as many distinct ones
    LC_ALL=C tr -c "A-Za-z0-9'\200-\377" '\n' < "$T/mixed.txt" | awk 'length >= 3' | sort | uniq -c > "$T/tr"
    total=$(awk '{ s += $1 } END { print s }' "$T/tr")
    [ "$(sed 's/.*,\([0-9]*\)\]$/\1/' "$T/words-vector" | awk '{ s += $1 } END { print s }')" = "$total" ] \
        && [ "$(wc -l < "$T/words-vector")" = "$(wc -l < "$T/tr")" ] && [ "$total" -gt 50000 ] && ok \
        || fail "tokenize min-length=3: $(wc -l < "$T/words-vector") words, tr finds $(wc -l < "$T/tr") ($total in all)"
else
    fail "the byte-by-byte tokenize is not built in $BYTEWISE_DIR"
fi

# A plugin may not take a builtin's name: refused, naming both, and its
# path still loads it
cp "$WORDCOUNT_DIR/wordcount.so" "$T/count.so"
expect_exit 1 "'count' names both the builtin processor count and the plugin $T/count.so" -- \
    env WEIR_PLUGIN_PATH="$T" "$WEIR" run "range count=3 ! count key=. ! null"
expect_exit 1 "count.so: expected str records" -- "$WEIR" run "range count=3 ! $T/count.so ! null"

finish

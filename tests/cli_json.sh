#!/bin/sh
# The json reader and writer (JSON Lines).  The fixtures in tests/json/
# are in the spirit of the JSON parsing test suites: y_ must be accepted,
# n_ must be refused, i_ is implementation-defined (what weir does is in
# the README).  Each y_ and i_ file that is accepted has what the json
# writer writes back (.want); each refused one has its bad line second.
#
# Every line the json and lines writers write is read back by a real JSON
# parser: the json reader itself (simdjson), python3's json module and jq.
. "$(dirname "$0")/lib.sh"

D=$(cd "$(dirname "$0")/json" && pwd)
have_python=0
python3 -c 'import json' 2>/dev/null && have_python=1
have_jq=0
command -v jq >/dev/null 2>&1 && have_jq=1
# Both are test dependencies (scripts/install-deps.sh installs them): a
# missing one fails the test rather than quietly checking less
[ $have_python = 1 ] || fail "python3 is not installed (scripts/install-deps.sh installs it): its checks cannot run"
[ $have_jq = 1 ] || fail "jq is not installed (scripts/install-deps.sh installs it): its checks cannot run"

# A strict JSON Lines checker: every line one JSON value (no NaN, no
# Infinity); with a second file, each value equal to the one on the same
# line of it (numbers as numbers)
cat > "$T/check.py" <<'END'
import json, sys
def never(name):
    raise ValueError("not JSON: " + name)
def load(path):
    with open(path, "rb") as f:
        return [json.loads(line.decode("utf-8"), parse_constant=never) for line in f.read().split(b"\n") if line.strip()]
out = load(sys.argv[1])
if len(sys.argv) > 2:
    want = load(sys.argv[2])
    if len(out) != len(want):
        sys.exit("%d values, wanted %d" % (len(out), len(want)))
    for i, (a, b) in enumerate(zip(out, want)):
        if a != b:
            sys.exit("line %d: %r != %r" % (i + 1, a, b))
END

# is_json FILE [ORIGINAL]: every line of FILE is JSON, for every parser
# at hand; with ORIGINAL, the values equal its values
is_json () {
    lines=$(grep -c . "$1")
    if "$WEIR" run -q --stats "$T/read.stats" "json path=$1 ! null" 2>"$T/read.err" \
        && grep -q "\"records\": $lines," "$T/read.stats"; then ok
    else fail "the json reader does not read back all $lines lines of $1: $(cat "$T/read.err")"; fi
    if [ $have_python = 1 ]; then
        if python3 "$T/check.py" "$@" 2>"$T/py.err"; then ok; else fail "python3 on $1: $(tail -1 "$T/py.err")"; fi
    fi
    if [ $have_jq = 1 ]; then
        if jq -c . "$1" > "$T/jq.out" 2>"$T/jq.err"; then ok; else fail "jq on $1: $(cat "$T/jq.err")"; fi
        # jq reads numbers as doubles, on both sides alike (and -0 as 0)
        if [ $# -gt 1 ]; then
            jq -c 'walk(if type == "number" then . + 0 else . end)' "$1" > "$T/jq.out" 2>/dev/null
            jq -c 'walk(if type == "number" then . + 0 else . end)' "$2" > "$T/jq.want" 2>/dev/null
            same "$T/jq.out" "$T/jq.want" "jq's values of $1 and $2"
        fi
    fi
}

# --- Accepted: what the writer writes back, and equal values ------------
# One case is made here rather than kept: an array of 70,000 elements
# (400 KB), which the writer writes back as it was
mkdir "$T/gen"
awk 'BEGIN { printf "["; for (i = 0; i < 70000; i++) printf "%s%d", i ? "," : "", i; print "]" }' > "$T/gen/y_many_elements.jsonl"
cp "$T/gen/y_many_elements.jsonl" "$T/gen/y_many_elements.want"
for want in "$D"/y_*.want "$D"/i_*.want "$T"/gen/y_*.want; do
    f=${want%.want}.jsonl
    name=$(basename "$f" .jsonl)
    "$WEIR" run -q "json path=$f ! json path=$T/$name.out" 2>"$T/err" || fail "$name: $(cat "$T/err")"
    same "$want" "$T/$name.out" "$name: json ! json"
    # y_ values come back equal; i_ ones are lossy by design (documented)
    case $name in
    y_*) is_json "$T/$name.out" "$f" ;;
    *) is_json "$T/$name.out" ;;
    esac
    # Through msgpack, in shards of a few bytes and two threads: the same
    # lines (in another order)
    "$WEIR" run -q "json path=$f split=8 threads=2 ! msgpack path=$T/$name.mp" || fail "$name: json -> msgpack"
    "$WEIR" run -q "msgpack path=$T/$name.mp ! json path=$T/$name.out2" || fail "$name: msgpack -> json"
    sort "$want" > "$T/a"; sort "$T/$name.out2" > "$T/b"
    same "$T/a" "$T/b" "$name: through msgpack, split=8 threads=2"
done

# --- Refused: exit 1, naming the file, line 2, the column, the byte -----
# bad NAME COLUMN WORDS
bad () {
    f=$D/$1.jsonl
    byte=$((4 + $2 - 1))
    expect_exit 1 "^weir run: json: '$f' line 2 column $2 \\(byte $byte\\): $3" -- "$WEIR" run -q "json path=$f ! null"
    # ... and with on-error=skip and a dead letter, the other lines go on
    # and the bad one is in the dead letter, with its reason and column
    rm -f "$T/dead.mp"
    expect_exit 0 "skipped a bad record of '$f' line 2 \\(byte 4\\): $3.* \\(column $2\\)" -- \
        "$WEIR" run "json path=$f dead-letter=$T/dead.mp ! json path=$T/skip.out"
    printf '[0]\n[3]\n' | cmp -s - "$T/skip.out" && ok || fail "$1 skipped: $(cat "$T/skip.out")"
    "$WEIR" run -q "msgpack path=$T/dead.mp ! json path=$T/dead.json" || fail "$1: reading the dead letter"
    # The bad line, as text (a str, JSON-escaped) when it is UTF-8, else
    # its bytes in base64 (a bin)
    if sed -n 2p "$f" | iconv -f UTF-8 -t UTF-8 >/dev/null 2>&1; then
        record=$(sed -n 2p "$f" | sed 's/\\/\\\\/g; s/"/\\"/g; s/\t/\\t/g; s/\x00/\\u0000/g')
    else
        record=$(sed -n 2p "$f" | tr -d '\n' | base64 -w0)
    fi
    # (the reason's words were checked in the warning above)
    grep -Eq "^\\{\"element\":\"json\",\"reason\":\".* \\(column $2\\)\",\"epoch\":1,\"file\":\"$f\",\"offset\":4,\"line\":2,\"size\":[0-9]+,\"record\":\"" "$T/dead.json" \
        && grep -qF ",\"record\":\"$record\"}" "$T/dead.json" \
        && [ "$(grep -c . "$T/dead.json")" -eq 1 ] && ok || { fail "$1: dead letter"; cat "$T/dead.json" >&2; }
}
bad n_trailing_comma 4 "expected a value"
bad n_trailing_comma_object 8 "expected a key"
bad n_missing_colon 6 "expected ':' after a key"
bad n_missing_comma 4 "expected ',' or '\\]' in an array"
bad n_single_quotes 2 "expected a value"
bad n_unquoted_key 2 "expected a key"
bad n_leading_zero 2 "a number may not start with 0"
bad n_plus_sign 2 "expected a value"
bad n_point_first 2 "expected a value"
bad n_point_last 4 "a digit must follow the decimal point"
bad n_exponent_empty 4 "a digit must follow the exponent"
bad n_nan 2 "expected a value"
bad n_infinity 3 "a digit must follow the minus sign"
bad n_unclosed_string 2 "the string is not closed"
bad n_unclosed_array 5 "the line ends inside an array"
bad n_bad_escape 3 "invalid escape in a string"
bad n_short_unicode 3 "\\\\u must be followed by four hexadecimal digits"
bad n_tab_in_string 4 "a control character in a string must be escaped"
bad n_invalid_utf8 3 "invalid UTF-8 in a string"
bad n_overlong_utf8 3 "invalid UTF-8 in a string"
bad n_utf8_surrogate 3 "invalid UTF-8 in a string"
bad n_trailing_garbage 5 "unexpected text after the value"
bad n_two_values 3 "unexpected text after the value"
bad n_comment 5 "unexpected text after the value"
bad n_true_typo 2 "expected a value"
bad n_nul_byte 4 "expected a value"
bad n_bom_not_first 1 "a byte order mark \\(U\\+FEFF\\) is allowed only at the start of a file"
bad i_deep_33 33 "arrays and objects are nested too deep \\(at most 32 levels\\)"
bad i_number_too_large 2 "the number is beyond the range of a double"
bad i_lone_high_surrogate 3 "a lone high surrogate"
bad i_lone_low_surrogate 3 "a lone low surrogate"
# every n_ fixture is in the list above
for f in "$D"/n_*.jsonl; do
    grep -q "^bad $(basename "$f" .jsonl) " "$0" && ok || fail "$(basename "$f") is not checked"
done

# --- The mapping, one record per rule: msgpack -> json, read back -------
"$MKMSGPACK" jsonmap "$T/map.mp"
"$WEIR" run -q "msgpack path=$T/map.mp ! json path=$T/map.json" || fail "jsonmap -> json"
cat > "$T/map.want" <<'END'
"AAH+/w=="
{"ext":5,"base64":"AQI="}
{"1":"a","-2":"b"}
{"null":1,"true":2,"1.5":3}
{"[1,\"b\"]":null}
{"AA==":1}
[null,null,null]
[0.5,2.0,-0.0,0.10000000149011612]
["a�b�"]
["\u0001\n\u007f\"\\"]
[-9223372036854775808,18446744073709551615]
END
same "$T/map.want" "$T/map.json" "the mapping of every msgpack type"
is_json "$T/map.json"
# Each rule is a fixed point: the text read back and written again is itself
"$WEIR" run -q "json path=$T/map.json ! msgpack path=$T/map2.mp" || fail "map.json -> msgpack"
"$WEIR" run -q "msgpack path=$T/map2.mp ! json path=$T/map2.json" || fail "map2.mp -> json"
same "$T/map.json" "$T/map2.json" "the mapping read back and written again"
# ... and what the reader made of it, rule by rule (as the lines writer
# shows it: a str as its bytes)
"$WEIR" run -q "json path=$T/map.json ! lines path=$T/map.lines" || fail "map.json -> lines"
sed -n 1p "$T/map.lines" | grep -qx 'AAH+/w==' && ok || fail "a bin comes back as its base64 string"
sed -n 2p "$T/map.lines" | grep -qx '{"ext":5,"base64":"AQI="}' && ok || fail "an ext comes back as a map"

# The lines writer writes JSON for every record that is not a str or bin
"$MKMSGPACK" mixed "$T/mixed.mp"
"$WEIR" run -q "msgpack path=$T/mixed.mp ! lines path=$T/mixed.txt" || fail "mixed -> lines"
# (records 8 to 10 are two strs and a bin, written as their bytes)
sed '8,10d' "$T/mixed.txt" > "$T/mixed.json"
is_json "$T/mixed.json"
"$WEIR" run -q "msgpack path=$T/map.mp ! lines path=$T/map.txt" || fail "jsonmap -> lines"
sed '1d' "$T/map.txt" > "$T/map.txt.json"
is_json "$T/map.txt.json"

# --- Errors in later shards and after a resume name the right line -------
awk 'BEGIN { for (i = 1; i <= 3000; i++) {
    if (i == 1777) print "{\"seq\":1777,\"msg\":\"bad\" \"x\"}";
    else printf "{\"seq\":%d,\"msg\":\"event \\\"%d\\\"\\n\",\"v\":[%d.5,-%d,true,null],\"n\":{\"k\":\"\\u00e9\"}}\n", i, i, i, i } }' > "$T/big.jsonl"
bad_byte=$(($(head -n 1776 "$T/big.jsonl" | wc -c) + 24))
for opts in "split=1000" "split=1000 threads=2" "split=7"; do
    expect_exit 1 "json: '$T/big.jsonl' line 1777 column 25 \\(byte $bad_byte\\): expected ',' or '\\}' in an object" -- \
        "$WEIR" run -q "json path=$T/big.jsonl $opts ! null"
done
expect_exit 0 "" -- "$WEIR" run -q --checkpoint "$T/ckbad" --epoch-records 500 --epochs 2 "json path=$T/big.jsonl ! null"
expect_exit 1 "json: '$T/big.jsonl' line 1777 column 25 \\(byte $bad_byte\\)" -- \
    "$WEIR" run -q --checkpoint "$T/ckbad" --epoch-records 500 --resume "json path=$T/big.jsonl ! null"

# --- Exactly-once resume mid-file ---------------------------------------
sed 's/"bad" "x"/"fixed"/' "$T/big.jsonl" > "$T/good.jsonl"
job="json path=$T/good.jsonl split=100k ! identity ! json path=$T/out.jsonl"
"$WEIR" run -q "$job" || fail "uninterrupted run"
cp "$T/out.jsonl" "$T/whole.jsonl"
[ "$(grep -c . "$T/whole.jsonl")" -eq 3000 ] && ok || fail "3000 lines in, $(grep -c . "$T/whole.jsonl") out"
is_json "$T/whole.jsonl" "$T/good.jsonl"
"$WEIR" run -q --checkpoint "$T/ck" --epoch-records 700 --epochs 1 "$job" || fail "first epoch"
[ "$(grep -c '' "$T/out.jsonl")" -eq 700 ] && ok || fail "after one epoch of 700: $(grep -c '' "$T/out.jsonl") lines"
echo '{"garbage":"past the committed length"}' >> "$T/out.jsonl"
"$WEIR" run -q --checkpoint "$T/ck" --epoch-records 700 --epochs 3 --resume "$job" || fail "resume to epoch 3"
"$WEIR" run -q --checkpoint "$T/ck" --epoch-records 700 --resume "$job" || fail "resume to the end"
same "$T/whole.jsonl" "$T/out.jsonl" "resumed mid-file: byte for byte"
# with two reader threads for the rest: the same lines
rm -rf "$T/ck"
"$WEIR" run -q --checkpoint "$T/ck" --epoch-records 700 --epochs 2 "$job" || fail "two epochs"
"$WEIR" run -q --checkpoint "$T/ck" --epoch-records 700 --resume \
    "json path=$T/good.jsonl split=100k threads=2 ! identity ! json path=$T/out.jsonl" || fail "resume, two threads"
sort "$T/out.jsonl" > "$T/a"; sort "$T/whole.jsonl" > "$T/b"
same "$T/a" "$T/b" "resumed with two reader threads (sorted)"

# --- Properties, standard input, a line too long ------------------------
expect_exit 2 "json: property 'path' is required" -- "$WEIR" run "json ! null"
expect_exit 2 "json: property 'path' is required" -- "$WEIR" run "range count=1 ! json"
expect_exit 1 "json: cannot open '$T/missing.jsonl'" -- "$WEIR" run "json path=$T/missing.jsonl ! null"
printf '[1]\n["%0100d"]\n[3]\n' 0 > "$T/long.jsonl"
expect_exit 1 "json: '$T/long.jsonl' line 2 \\(byte 4\\): line longer than max-line=50 bytes" -- \
    "$WEIR" run "json path=$T/long.jsonl max-line=50 ! null"
expect_exit 0 "" -- "$WEIR" run -q "json path=$T/long.jsonl max-line=50 on-error=skip ! json path=$T/long.out"
printf '[1]\n[3]\n' | cmp -s - "$T/long.out" && ok || fail "max-line with on-error=skip: $(cat "$T/long.out")"
cat "$D/y_object.jsonl" | "$WEIR" run -q "json path=- ! json path=-" > "$T/stdin.out" || fail "json from standard input"
same "$D/y_object.want" "$T/stdin.out" "standard input to standard output"

finish

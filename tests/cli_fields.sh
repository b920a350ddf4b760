#!/bin/sh
# tests/cli_fields.sh - the field helpers of <weir/plugin.h>, through a
# plugin (tests/plugins/fields.c): weir_field finds values by path, and
# weir_emit_edited emits a map with fields set, added and removed, the
# other pairs as they were, in their order.
. "$(dirname "$0")/lib.sh"

FIELDS="$PLUGINS_DIR/fields.so"
cat > "$T/in.jsonl" <<'JSON'
{"level":"error","user":{"id":7,"name":"ann"},"tags":["a","b"],"a b":1}
{"level":"debug","user":{"id":8},"tags":[]}
{"level":"info","user":"nobody","msg":"x\"y"}
JSON

# get: '.' whole, '.a.b', '[N]', a quoted key; absent values are dropped
# and counted, never an error (a missing key, an index past the end, a
# step into a str)
get () {
    "$WEIR" run -q --stats "$T/stats.json" "json path=$T/in.jsonl ! $FIELDS get='$1' ! json path=$T/out.jsonl" \
        || fail "get $1 failed"
    printf "$2" > "$T/want"
    same "$T/out.jsonl" "$T/want" "get $1"
}
get '.user.id' '7\n8\n'
get '.tags[1]' '"b"\n'
get '.tags[0]' '"a"\n'
get '.level' '"error"\n"debug"\n"info"\n'
get '."a b"' '1\n'
get '.msg' '"x\\"y"\n'
grep -q '"absent": 2' "$T/stats.json" && ok || fail "the records without .msg were not counted: $(cat "$T/stats.json")"
get '.' "$(sed 's/%/%%/g; s/\\/\\\\/g' "$T/in.jsonl" | sed 's/$/\\n/' | tr -d '\n')"

# set replaces in place, adds at the end; remove removes; the rest stays
# in its order, untouched
"$WEIR" run -q "json path=$T/in.jsonl ! $FIELDS set=level=warn remove=tags copy=.user.id ! json path=$T/out.jsonl" \
    || fail "edit failed"
cat > "$T/want" <<'JSON'
{"level":"warn","user":{"id":7,"name":"ann"},"a b":1,"copied":7}
{"level":"warn","user":{"id":8},"copied":8}
{"level":"warn","user":"nobody","msg":"x\"y"}
JSON
same "$T/out.jsonl" "$T/want" "set, remove and copy"
# A key that is not there: set adds it, remove changes nothing
"$WEIR" run -q "json path=$T/in.jsonl ! $FIELDS set=new=1 remove=nothing ! json path=$T/out.jsonl" || fail "add failed"
sed 's/}$/,"new":"1"}/' "$T/in.jsonl" > "$T/want"
same "$T/out.jsonl" "$T/want" "a new field at the end"
# A map with a key twice keeps one pair of it, edited
printf '{"k":1,"k":2,"z":3}\n' > "$T/twice.jsonl"
"$WEIR" run -q "json path=$T/twice.jsonl ! $FIELDS set=k=v ! json path=$T/out.jsonl" || fail "twice failed"
printf '{"k":"v","z":3}\n' > "$T/want"
same "$T/out.jsonl" "$T/want" "a key twice"

# A record that is no map fails the job, naming its type; a malformed
# path is refused before any record
expect_exit 1 "weir_emit_edited: the record is a msgpack positive integer, not a map" -- \
    "$WEIR" run "range count=3 ! $FIELDS set=a=b ! null"
for bad in 'user' '.a..b' '.tags[x]' '.tags[1' '."open' '.a["b"]'; do
    expect_exit 1 "a path is malformed" -- "$WEIR" run "json path=$T/in.jsonl ! $FIELDS get='$bad' ! null"
done

finish

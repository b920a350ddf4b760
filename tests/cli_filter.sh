#!/bin/sh
# filter: the records its expression is true of, the same as jq selects;
# every mistake refused before anything runs, with a caret; exactly once
# under kills with two threads.
. "$(dirname "$0")/lib.sh"
command -v jq > /dev/null || { echo "skipped: jq is not installed (scripts/install-deps.sh installs it)"; exit 77; }

# 3,000 events of three services at four levels, some without a level,
# some with a status that is text
awk 'BEGIN {
    split("debug info warn error", lv, " "); split("api web db", sv, " ")
    for (i = 0; i < 3000; i++) {
        l = (i % 17 == 0) ? "" : sprintf("\"level\": \"%s\", ", lv[i % 4 + 1])
        st = (i % 23 == 0) ? "\"late\"" : (i % 7) * 100
        printf "{%s\"service\": \"%s\", \"status\": %s, \"msg\": \"%s /item/%d\", \"ms\": %.1f}\n", \
            l, sv[i % 3 + 1], st, (i % 5 ? "GET" : "POST"), i, (i % 13) * 1.5
    }
}' > "$T/ev.jsonl"

# check NAME EXPR JQ: filter EXPR keeps what jq's select(JQ) keeps, in order
check () {
    "$WEIR" run -q "json path=$T/ev.jsonl ! filter '$2' ! json path=$T/got.jsonl" 2> "$T/err" \
        || { fail "$1: weir failed: $(cat "$T/err")"; return; }
    jq -c "select($3)" "$T/ev.jsonl" > "$T/want.jsonl"
    jq -c . "$T/got.jsonl" > "$T/got.norm"
    [ -s "$T/want.jsonl" ] || fail "$1: jq selects nothing: the check proves nothing"
    same "$T/got.norm" "$T/want.jsonl" "$1"
}
check "equality" '.level == "error"' '.level == "error"'
check "and, or, not" '(.service == "api" or .service == "db") and not .level == "debug"' \
    '(.service == "api" or .service == "db") and ((.level == "debug") | not)'
check "numbers of two widths" '.ms >= 6 and .status < 300' \
    '.ms >= 6 and (.status | type) == "number" and .status < 300'
check "regular expression" '.msg =~ "^POST /item/[0-9]*5$"' '.msg | test("^POST /item/[0-9]*5$")'
check "exists" 'not exists .level' 'has("level") | not'
check "a missing field is false" '.level != "info"' 'has("level") and .level != "info"'

# Values of different kinds are false, and counted
"$WEIR" run -q --stats "$T/stats.json" "json path=$T/ev.jsonl ! filter '.status >= 0' ! null" \
    || fail "the mismatch count run"
want=$(jq -c 'select((.status | type) == "string")' "$T/ev.jsonl" | grep -c '')
got=$(jq '.stages[1].metrics.mismatched' "$T/stats.json")
[ "$got" = "$want" ] && ok || fail "mismatched: $got, wanted $want"

# The expression as expr=
"$WEIR" run -q "json path=$T/ev.jsonl ! filter expr='.service == \"web\"' ! json path=$T/web.jsonl" \
    || fail "expr="
[ "$(grep -c '' "$T/web.jsonl")" -eq 1000 ] && ok || fail "expr=: $(grep -c '' "$T/web.jsonl") records"

# Mistakes: exit 2 before anything is opened, a caret under the culprit
D="json path=$T/none.jsonl"
expect_exit 2 "filter: expected more: the expression ends too soon" \
    -- "$WEIR" run "$D ! filter '.level == \"error\" and' ! null"
# the caret under the end of the expression: the closing quote
prefix="$D ! filter '.level == \"error\" and"
[ "$(sed -n 3p "$T/err")" = "$(printf '%*s^' $((${#prefix} + 2)) '')" ] && ok \
    || fail "caret of an expression that ends too soon: $(cat "$T/err")"
expect_exit 2 "filter: bad regular expression: missing closing parenthesis, at its byte 2" \
    -- "$WEIR" run "$D ! filter '.msg =~ \"(x\"' ! null"
expect_exit 2 "filter: malformed path" -- "$WEIR" run "$D ! filter expr=.a. ! null"
expect_exit 2 "filter: a condition is required" -- "$WEIR" run "$D ! filter ! null"
expect_exit 2 "property 'expr' given twice" -- "$WEIR" run "$D ! filter '.a' expr=.b ! null"
expect_exit 2 "not the quoted 'x' \(only filter takes a condition there\)" -- "$WEIR" run "lines 'x' ! null"
expect_exit 2 "unknown property 'exp'" -- "$WEIR" run "$D ! filter exp=.a ! null"
"$WEIR" elements filter | grep -q "^  expr  *required" && ok || fail "weir elements filter does not show expr"

# Exactly once with two filter threads, killed at a checkpoint's points and
# resumed with one thread
jq -c 'select(.level == "warn" or .status == 500)' "$T/ev.jsonl" | sort > "$T/want.sorted"
for point in pipe-drained:2 writers-synced:2 after-leveldb-write:3; do
    rm -rf "$T/ck" "$T/out.jsonl"
    job="json path=$T/ev.jsonl ! filter '.level == \"warn\" or .status == 500' threads=2 ! json path=$T/out.jsonl"
    WEIR_KILL_AT=$point "$WEIR_KP" run -q --checkpoint "$T/ck" --epoch-records 400 "$job" 2> "$T/err"
    rc=$?
    [ $rc -eq 137 ] && ok || fail "killed at $point: exit $rc"
    job="json path=$T/ev.jsonl ! filter '.level == \"warn\" or .status == 500' ! json path=$T/out.jsonl"
    "$WEIR" run -q --checkpoint "$T/ck" --resume --epoch-records 400 "$job" || fail "resumed after $point"
    jq -c . "$T/out.jsonl" | sort > "$T/got.sorted"
    same "$T/got.sorted" "$T/want.sorted" "filter killed at $point, resumed"
done

finish

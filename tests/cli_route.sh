#!/bin/sh
# route: each record down the branch of the first condition true of it,
# every output compared with what jq computes; the default branch,
# unmatched records failed, dropped and counted, or kept in the dead
# letter; every mistake refused with a caret; exactly once on every
# branch under kills with thread counts changed on resume; a branch moved
# refused on resume.
. "$(dirname "$0")/lib.sh"
command -v jq > /dev/null || { echo "skipped: jq is not installed (scripts/install-deps.sh installs it)"; exit 77; }

awk 'BEGIN {
    split("debug info warn error", lv, " "); split("api web db", sv, " ")
    for (i = 0; i < 4000; i++)
        printf "{\"level\": \"%s\", \"service\": \"%s\", \"ms\": %d, \"n\": %d}\n", lv[i % 4 + 1], sv[i % 3 + 1], (i * 37) % 1000, i
}' > "$T/ev.jsonl"
E="json path=$T/ev.jsonl"
norm () { jq -c . "$1"; }

# First condition true wins: an error that is slow goes to errors only
ROUTE="route name=r errors='.level == \"error\"' slow='.ms > 500 and .service =~ \"^(api|web)\$\"' default=rest"
"$WEIR" run -q "$E ! $ROUTE  r.errors ! json path=$T/e.out  r.slow ! json path=$T/s.out  r.rest ! json path=$T/r.out" \
    || fail "route into three files"
jq -c 'select(.level == "error")' "$T/ev.jsonl" > "$T/e.want"
jq -c 'select(.level != "error" and .ms > 500 and (.service | test("^(api|web)$")))' "$T/ev.jsonl" > "$T/s.want"
jq -c 'select(.level != "error" and (.ms > 500 and (.service | test("^(api|web)$")) | not))' "$T/ev.jsonl" > "$T/r.want"
norm "$T/e.out" > "$T/got"; same "$T/got" "$T/e.want" "route: the errors branch, in order"
norm "$T/s.out" > "$T/got"; same "$T/got" "$T/s.want" "route: the slow branch, the first condition winning"
norm "$T/r.out" > "$T/got"; same "$T/got" "$T/r.want" "route: the default branch"

# The issue's split by service, two route threads: compared sorted
"$WEIR" run -q --stats "$T/st.json" "$E ! route name=svc threads=2 api='.service == \"api\"' web='.service == \"web\"' db='.service == \"db\"'  svc.db ! json path=$T/db.out  svc.api ! json path=$T/api.out  svc.web ! json path=$T/web.out" \
    || fail "route by service"
for s in api web db; do
    norm "$T/$s.out" | sort > "$T/got"; jq -c "select(.service == \"$s\")" "$T/ev.jsonl" | sort > "$T/want"
    same "$T/got" "$T/want" "route by service, two threads: $s"
done
# --stats names the port of each link, in port order
[ "$(jq -c '[.links[] | select(.from == 1) | [.port, .records]]' "$T/st.json")" = '[["api",1334],["web",1333],["db",1333]]' ] \
    && ok || fail "--stats: the ports of the links: $(jq -c .links "$T/st.json")"

# No default: an unmatched record fails the job, naming it
expect_exit 1 'route: a bad record \{"level":"debug","service":"api","ms":0,"n":0\}: no branch.s condition is true of it' \
    -- "$WEIR" run "$E ! route name=r e='.level == \"error\"'  r.e ! json path=$T/x.out"
# unmatched=drop drops them, counted in the metric 'unmatched'
"$WEIR" run -q --stats "$T/st.json" "$E ! route name=r e='.level == \"error\"' unmatched=drop  r.e ! json path=$T/x.out" \
    || fail "unmatched=drop"
[ "$(jq '.stages[1].metrics.unmatched' "$T/st.json")" = 3000 ] && ok \
    || fail "unmatched=drop: the count: $(jq -c '.stages[1]' "$T/st.json")"
norm "$T/x.out" > "$T/got"; same "$T/got" "$T/e.want" "unmatched=drop: the branch"
# on-error=skip keeps them in the dead letter
"$WEIR" run -q "$E ! route name=r e='.level == \"error\"' on-error=skip dead-letter=$T/dl.mp  r.e ! json path=$T/x.out" \
    2> "$T/err" || fail "on-error=skip"
"$WEIR" run -q "msgpack path=$T/dl.mp ! json path=$T/dl.out" || fail "reading the dead letter"
[ "$(jq -c 'select(.reason | test("no branch")) | .record' "$T/dl.out" | wc -l)" -eq 3000 ] && ok \
    || fail "the dead letter holds the 3000 unmatched records: $(head -c 300 "$T/dl.out")"
jq -c '.record' "$T/dl.out" > "$T/got"; jq -c 'select(.level != "error")' "$T/ev.jsonl" > "$T/want"
same "$T/got" "$T/want" "the dead letter's records"

# A comparison of values of different kinds is false and counted
"$WEIR" run -q --stats "$T/st.json" "$E ! route name=r big='.service > 5' default=other  r.big ! null  r.other ! json path=$T/x.out" \
    || fail "mismatched kinds"
[ "$(jq '.stages[1].metrics.mismatched' "$T/st.json")" = 4000 ] && ok \
    || fail "mismatched: $(jq -c '.stages[1]' "$T/st.json")"

# The same through the switch route runs when every branch is
# PATH == "text" on one path: each condition's mismatch counted
"$WEIR" run -q --stats "$T/st.json" "$E ! route name=r a='.n == \"1\"' b='.n == \"2\"' default=other  r.a ! null  r.b ! null  r.other ! json path=$T/x.out" \
    || fail "mismatched kinds, switch"
[ "$(jq '.stages[1].metrics.mismatched' "$T/st.json")" = 8000 ] && ok \
    || fail "mismatched through the switch: $(jq -c '.stages[1]' "$T/st.json")"

# Every mistake refused, exit 2, nothing written
rm -f "$T/never.out"
N="json path=$T/never.out"
refused "'r.rest' goes nowhere: 'r' \(route\) sends records there; link it, as in 'r.rest ! null'" \
    "$E ! route name=r e='.a' default=rest  r.e ! $N"
refused "'r.rst': 'r' \(route\) has no output named 'rst'; did you mean 'r.rest'\? its outputs: r.e, r.rest" \
    "$E ! route name=r e='.a' default=rest  r.e ! $N  r.rst ! null"
refused "'r' \(route\) sends to named outputs, and this link names none: start each branch from one" \
    "$E ! route name=r e='.a' ! $N"
refused "'r.e' starts 2 branches, and an output feeds one; .*put a tee after it" \
    "$E ! route name=r e='.a'  r.e ! $N  r.e ! null"
refused "route: no branch: give each as BRANCH='CONDITION'" "$E ! route name=r  r.e ! $N"
refused "property 'e' given twice to 'route'" "$E ! route name=r e='.a' e='.b'  r.e ! $N"
refused "route: default=e names a branch that has a condition" "$E ! route name=r e='.a' default=e  r.e ! $N"
refused "route: unmatched='keep' is neither fail nor drop" "$E ! route name=r e='.a' unmatched=keep  r.e ! $N"
refused "route: unmatched= and default= both say where unmatched records go" \
    "$E ! route name=r e='.a' unmatched=drop default=x  r.e ! $N  r.x ! null"
refused "route: a condition goes with the branch it sends to" "$E ! route '.a' ! $N"
refused "route: property 'threads': 0 is out of range" "$E ! route name=r e='.a' threads=0  r.e ! $N"
# A branch named as a property every stage has is that property, and
# its value is judged as the property's, before the route's branches
refused "route: fuse=\.a > 1: expected auto, 0 or 1 \(a property every stage has\)" \
    "$E ! route name=r fuse='.a > 1' default=rest  r.fuse ! $N  r.rest ! null"
# The caret under a condition's mistake
"$WEIR" run "$E ! route name=r e='.level = \"x\"'  r.e ! $N" 2> "$T/err"
prefix="$E ! route name=r e='.level "
grep -q "route: unexpected '='" "$T/err" && [ "$(sed -n 3p "$T/err")" = "$(printf '%*s^' $((${#prefix} + 2)) '')" ] \
    && ok || fail "caret under the condition's '=': $(cat "$T/err")"

# weir graph labels each link with its port
"$WEIR" graph "$E ! $ROUTE  r.errors ! null  r.slow ! null  r.rest ! null" > "$T/dot" || fail "weir graph of a route"
grep -q 's1 -> s3 \[label="slow\\ncapacity=16"' "$T/dot" && ok || fail "weir graph: the port on the link: $(cat "$T/dot")"

# Exactly once on every branch: SIGKILL at a checkpoint's points and at
# random, resumed with other thread counts
awk 'BEGIN { for (i = 0; i < 150000; i++) printf "{\"level\": \"%s\", \"n\": %d}\n", (i % 3 ? (i % 3 == 1 ? "info" : "warn") : "error"), i }' \
    > "$T/big.jsonl"
J="json path=$T/big.jsonl ! route name=r THREADS e='.level == \"error\"' w='.level == \"warn\"' default=o  r.e ! json path=$T/k1.out  r.w ! json path=$T/k2.out  r.o ! json path=$T/k3.out"
for l in error warn info; do jq -c "select(.level == \"$l\")" "$T/big.jsonl" | sort > "$T/$l.sorted"; done
check_outputs () {
    norm "$T/k1.out" | sort > "$T/got"; same "$T/got" "$T/error.sorted" "$1: branch e"
    norm "$T/k2.out" | sort > "$T/got"; same "$T/got" "$T/warn.sorted" "$1: branch w"
    norm "$T/k3.out" | sort > "$T/got"; same "$T/got" "$T/info.sorted" "$1: the default branch"
}
for point in pipe-drained:2 writers-synced:3 after-leveldb-write:2; do
    rm -rf "$T/ck" "$T"/k?.out
    job=$(echo "$J" | sed 's/THREADS/threads=2/')
    WEIR_KILL_AT=$point "$WEIR_KP" run -q --checkpoint "$T/ck" --epoch-records 20000 "$job" 2> "$T/err"
    rc=$?
    [ $rc -eq 137 ] && ok || fail "route killed at $point: exit $rc $(cat "$T/err")"
    job=$(echo "$J" | sed 's/THREADS/threads=1/')
    "$WEIR" run -q --checkpoint "$T/ck" --resume --epoch-records 20000 "$job" || fail "route resumed after $point"
    check_outputs "killed at $point"
done
rm -rf "$T/ck" "$T"/k?.out
kill_rounds "$T/ck" 5000 "$J"
check_outputs "random kills"

# Branches swapped between writers, or a condition changed: refused
rm -rf "$T/ck"
"$WEIR" run -q --checkpoint "$T/ck" --epochs 1 --epoch-records 500 \
    "$E ! route name=r a='.level == \"error\"' default=b  r.a ! json path=$T/c1.out  r.b ! json path=$T/c2.out" \
    || fail "first run of the changed route"
expect_exit 2 "written by another pipeline: the same elements, linked otherwise" -- "$WEIR" run --checkpoint "$T/ck" \
    --resume "$E ! route name=r a='.level == \"error\"' default=b  r.b ! json path=$T/c1.out  r.a ! json path=$T/c2.out"
expect_exit 2 "written by another pipeline" -- "$WEIR" run --checkpoint "$T/ck" \
    --resume "$E ! route name=r a='.level == \"warn\"' default=b  r.a ! json path=$T/c1.out  r.b ! json path=$T/c2.out"
"$WEIR" run -q --checkpoint "$T/ck" --resume \
    "$E ! route name=r threads=2 default=b a='.level == \"error\"'  r.a ! json path=$T/c1.out  r.b ! json path=$T/c2.out" \
    || fail "the same route, its properties in another order, other threads"
norm "$T/c1.out" | sort > "$T/got"; jq -c 'select(.level == "error")' "$T/ev.jsonl" | sort > "$T/want"
same "$T/got" "$T/want" "resumed route: branch a"
norm "$T/c2.out" | sort > "$T/got"; jq -c 'select(.level != "error")' "$T/ev.jsonl" | sort > "$T/want"
same "$T/got" "$T/want" "resumed route: branch b"

finish

#!/bin/sh
# tests/cli_metrics.sh - weir run --metrics: a running job scraped with
# curl, its text checked against the Prometheus format (tests/promtext.py,
# and promtool where it is installed) and its figures against what
# --stats says at exit; only /metrics served, on 127.0.0.1 unless told;
# a bad address refused, a port in use said.
. "$(dirname "$0")/lib.sh"
command -v curl > /dev/null || { echo "skipped: curl is not installed (scripts/install-deps.sh installs it)"; exit 77; }
command -v python3 > /dev/null || { echo "skipped: python3 is not installed (scripts/install-deps.sh installs it)"; exit 77; }
PROMTEXT="$(dirname "$0")/promtext.py"
# LeakSanitizer stops the world at exit through ptrace, and its tracer
# now and then crashes in a process that loaded GnuTLS, which
# libmicrohttpd brings in (loaded only with --metrics): these jobs run
# without it under AddressSanitizer
case "${SANITIZER_CFLAGS:-}" in
*address*) ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"; export ASAN_OPTIONS ;;
esac
: "${PLUGINS_DIR:?PLUGINS_DIR must point at the test plugins}"
PROBE="$PLUGINS_DIR/probe.so"

# url ERR PID: the address the job that writes ERR announced
url_of () {
    limit=$(($(now_ms) + 20000))
    while ! grep -q '^weir: metrics at ' "$1" 2> /dev/null; do
        [ "$(now_ms)" -lt "$limit" ] && kill -0 "$2" 2> /dev/null || return 1
        sleep 0.05
    done
    sed -n 's/^weir: metrics at //p' "$1"
}
# value FILE SERIES: the value of the sample SERIES (name and labels as
# written) in a scraped FILE
value () {
    awk -v s="$2" 'index ($0, s " ") == 1 { print $NF }' "$1"
}
# scraped FILE WHAT: FILE is in the format
scraped () {
    if python3 "$PROMTEXT" "$1" > "$T/promtext.out"; then ok; else fail "$2: $(cat "$T/promtext.out")"; fi
    if command -v promtool > /dev/null; then
        promtool check metrics < "$1" > "$T/promtool.out" 2>&1 && ok || fail "$2: promtool: $(cat "$T/promtool.out")"
    fi
}

# A followed file, counted by key as it grows, with checkpoints every
# 0.2 s: lines appended are counted and scraped a tick later
seq 1 500 | sed 's/^/k/' > "$T/in.log"
"$WEIR" run --metrics 0 --progress-interval 50 --stats "$T/stats.json" --checkpoint "$T/ck" --epoch-seconds 0.2 \
    "lines path=$T/in.log follow=1 ! count key=. emit=epoch ! lines path=$T/out.log" 2> "$T/err" &
pid=$!
url=$(url_of "$T/err" $pid) || fail "no address announced: $(cat "$T/err")"
case $url in http://127.0.0.1:[0-9]*/metrics) ok ;; *) fail "not on 127.0.0.1: '$url'" ;; esac
wait_lines "$T/out.log" 500 || fail "the first 500 lines were not counted"
seq 501 800 | sed 's/^/k/' >> "$T/in.log"
wait_lines "$T/out.log" 800 || fail "the next 300 lines were not counted"
# The figures a tick after the last epoch that emitted them
limit=$(($(now_ms) + 20000))
while :; do
    curl -sf "$url" > "$T/m1.txt" || fail "scrape failed"
    [ "$(value "$T/m1.txt" 'weir_stage_records_out_total{stage="2",element="lines",kind="writer"}')" = 800 ] && break
    [ "$(now_ms)" -lt "$limit" ] || { fail "the writer's count never reached 800: $(grep records_out "$T/m1.txt")"; break; }
    sleep 0.1
done
scraped "$T/m1.txt" "a running job's text"
[ "$(value "$T/m1.txt" 'weir_stage_records_in_total{stage="0",element="lines",kind="reader"}')" = 800 ] && ok \
    || fail "the reader's count: $(grep records_in_total "$T/m1.txt")"
[ "$(value "$T/m1.txt" 'weir_stage_metric{stage="1",element="count",kind="processor",metric="keys"}')" = 800 ] && ok \
    || fail "count's keys: $(grep stage_metric "$T/m1.txt")"
epoch=$(value "$T/m1.txt" weir_epoch)
pauses=$(value "$T/m1.txt" weir_pause_seconds_count)
[ "${epoch:-0}" -ge 2 ] && [ "${pauses:-0}" -ge 2 ] && ok || fail "epoch $epoch, $pauses pauses"
# Epochs go on: the epoch and the pauses only grow, scrape to scrape
sleep 0.5
curl -sf "$url" > "$T/m2.txt" || fail "second scrape"
[ "$(value "$T/m2.txt" weir_epoch)" -gt "$epoch" ] && [ "$(value "$T/m2.txt" weir_pause_seconds_count)" -gt "$pauses" ] && ok \
    || fail "epochs did not move between scrapes: $epoch, then $(value "$T/m2.txt" weir_epoch)"
# Only /metrics, and only GET or HEAD
code=$(curl -s -o /dev/null -w '%{http_code}' "${url%/metrics}/")
[ "$code" = 404 ] && ok || fail "/ answered $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$url")
[ "$code" = 405 ] && ok || fail "POST answered $code"
curl -sf -I "$url" | grep -qi '^content-type: text/plain; version=0.0.4' && ok || fail "no exposition content type"
# A second job on the same port is told it is taken
port=${url##*:}; port=${port%%/*}
expect_exit 1 "weir run: --metrics: cannot listen on 127.0.0.1 port $port: Address already in use" -- \
    "$WEIR" run --metrics "$port" "range count=10 ! null"
# Stopped: the figures at exit are the last scrape's
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 143 ] && ok || fail "SIGTERM: exit $rc, wanted 143: $(cat "$T/err")"
jq -e --argjson n 800 '.stages[0].records_out == $n and .stages[2].records_out == $n' "$T/stats.json" > /dev/null \
    && ok || fail "--stats at exit: $(jq -c '[.stages[].records_out]' "$T/stats.json")"
sp=$(jq '.pauses.count' "$T/stats.json")
[ "$sp" -ge "$(value "$T/m2.txt" weir_pause_seconds_count)" ] && ok || fail "--stats counts $sp pauses, fewer than scraped"
jq -e '[.pauses.buckets[][1]] | add == (.pauses.count)' "$T/stats.json" > /dev/null 2>&1 \
    || jq -e --argjson c "$sp" '([.pauses.buckets[][1]] | add) == $c' "$T/stats.json" > /dev/null \
    && ok || fail "--stats' pause buckets do not add up to its count: $(jq -c .pauses "$T/stats.json")"
jq -e '.checkpoint_failures == 0' "$T/stats.json" > /dev/null && ok || fail "checkpoint_failures: $(jq .checkpoint_failures "$T/stats.json")"

# A reader of files shows how far it went and what is left
seq 1 200000 > "$T/big.txt"
PROBE_SLEEP_US=20 "$WEIR" run --metrics 127.0.0.1:0 --progress-interval 50 "lines path=$T/big.txt ! $PROBE log=$T/probe.log ! null" \
    2> "$T/err2" &
pid=$!
url=$(url_of "$T/err2" $pid) || fail "no address announced: $(cat "$T/err2")"
sleep 0.5
curl -sf "$url" > "$T/m3.txt" || fail "scrape of a reader of files"
total=$(value "$T/m3.txt" 'weir_stage_input_total{stage="0",element="lines",kind="reader"}')
left=$(value "$T/m3.txt" 'weir_stage_input_left{stage="0",element="lines",kind="reader"}')
[ "$total" = "$(stat -c %s "$T/big.txt")" ] && [ "${left:-0}" -gt 0 ] && ok || fail "input: total $total, left $left"
scraped "$T/m3.txt" "a reader of files"
kill -TERM $pid; wait $pid

# A followed file that grows faster than a slow stage takes its lines:
# how far the reader is behind the writer, in bytes, falling back to 0
# once every line went
seq 1 10 > "$T/slow.log"
PROBE_SLEEP_US=100 "$WEIR" run --metrics 0 --progress-interval 50 \
    "lines path=$T/slow.log follow=1 ! $PROBE log=$T/probe2.log capacity=1 batch=64 ! lines path=$T/slow.out" 2> "$T/err3" &
pid=$!
url=$(url_of "$T/err3" $pid) || fail "no address announced: $(cat "$T/err3")"
wait_lines "$T/slow.out" 10 || fail "the first 10 lines"
seq 11 30010 >> "$T/slow.log"
behind_of () {
    curl -sf "$url" > "$T/m4.txt" && value "$T/m4.txt" 'weir_stage_input_behind{stage="0",element="lines",kind="reader"}'
}
# Scraped as the slow stage works: behind, and less and less so
limit=$(($(now_ms) + 15000)); most=0
: > "$T/behinds"
while [ "$(now_ms)" -lt "$limit" ] && [ "$(wc -l < "$T/slow.out")" -lt 30010 ]; do
    b=$(behind_of); [ "${b:-0}" -gt "$most" ] && most=$b
    [ "${b:-0}" -gt 0 ] && echo "$b" >> "$T/behinds"
    sleep 0.05
done
[ "$most" -gt 10000 ] && ok || fail "the reader was never seen behind: at most $most bytes"
[ "$(sort -u "$T/behinds" | wc -l)" -ge 3 ] && ok \
    || fail "how far the reader is behind did not fall as the lines went: $(sort -u "$T/behinds" | tr '\n' ' ')"
wait_lines "$T/slow.out" 30010 || fail "the slow stage did not take every line"
limit=$(($(now_ms) + 10000))
while [ "$(behind_of)" != 0 ] && [ "$(now_ms)" -lt "$limit" ]; do sleep 0.05; done
[ "$(behind_of)" = 0 ] && ok || fail "caught up, still $(behind_of) bytes behind"
kill -TERM $pid; wait $pid

# Bad addresses are usage errors, before anything runs
expect_exit 2 "weir run: --metrics: 'http' is no port" -- "$WEIR" run --metrics http "range count=1 ! null"
expect_exit 2 "weir run: --metrics: '70000' is no port \\(0 to 65535" -- "$WEIR" run --metrics 70000 "range count=1 ! null"
expect_exit 2 "weir run: --metrics: 'localhost' is no IPv4 or IPv6 address" -- "$WEIR" run --metrics localhost:9100 "range count=1 ! null"
finish

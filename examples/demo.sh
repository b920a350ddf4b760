#!/bin/sh
# The demo job of the README: ten million integers through a two-thread
# processor stage into a msgpack file, then back out as text.
set -eu
WEIR=${1:-./weir}
out=${TMPDIR:-/tmp}/weir-demo
mkdir -p "$out"

echo "== weir run 'range count=10M ! identity threads=2 ! msgpack path=$out/ints.msgpack'"
"$WEIR" run --progress --stats "$out/stats.json" \
    "range count=10M ! identity threads=2 ! msgpack path=$out/ints.msgpack"
echo
echo "== weir run 'msgpack path=$out/ints.msgpack ! lines path=$out/ints.txt'"
"$WEIR" run "msgpack path=$out/ints.msgpack ! lines path=$out/ints.txt"
echo
# Not 9999997 to 9999999: identity ran on two threads, and order is kept
# only with one thread per stage
echo "== the last lines of $out/ints.txt (two threads do not keep the order: not the last numbers)"
tail -n 3 "$out/ints.txt"
echo
echo "== statistics of the first job ($out/stats.json)"
cat "$out/stats.json"

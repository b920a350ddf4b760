#!/bin/sh
# tests/faults/cut_inputs.sh - part of the fault-injection suite: valid
# input files cut short at many byte positions, as an interrupted copy or
# a full disk would leave them.
#
# For every cut, of every format: with on-error=fail (the default) weir
# exits 0 (the cut fell between records) or 1 with a message naming the
# file; never a crash, a hang or a silent loss (exit 0 must have read
# every whole record before the cut).  With on-error=skip it exits 0, the
# dead letter holds only bytes before the cut, and the records read or
# rejected never drop as the cut moves later: a reader that stopped early
# would lose some.
#
#   CUTS=N   cuts per format (default 40, 500 with FAULT_LONG=1; spread
#            over the whole file)
. "$(dirname "$0")/../lib.sh"

if [ "${FAULT_LONG:-}" = 1 ]; then CUTS=${CUTS:-500}; else CUTS=${CUTS:-40}; fi

# A msgpack file of mixed records, about 3 KB
"$MKMSGPACK" features "$T/f.mp"
"$MKMSGPACK" pairs 150 "$T/p.mp"
"$MKMSGPACK" mixed "$T/m.mp"
cat "$T/f.mp" "$T/p.mp" "$T/m.mp" > "$T/full.mp"
# libsvm, lines: text
awk 'BEGIN { for (i = 0; i < 300; i++) printf "%d %d:%.3f %d:%g\n", i % 3, i % 7 + 1, i / 7, i % 7 + 9, -i * 1.5 }' > "$T/full.svm"
awk 'BEGIN { for (i = 0; i < 300; i++) printf "line %d of the file, with some text\n", i }' > "$T/full.txt"
awk 'BEGIN { for (i = 0; i < 150; i++) printf "{\"n\":%d,\"s\":\"a \\\"q\\\" \\u00e9\",\"a\":[%d.5,true,null,{\"k\":-%d}]}\n", i, i, i }' > "$T/full.jsonl"

# The records the reader gave and rejected, from --stats FILE: as a cut
# moves later this never drops (a cut line may read as a valid shorter
# one, "1 2:0.5" of "1 2:0.57 9:1", and a byte later be rejected)
read_count () {
    sed -n 's/.*"kind": "reader".*"records_out": \([0-9]*\), "records_rejected": \([0-9]*\).*/\1 \2/p' "$1" \
        | awk '{ print $1 + $2 }'
}

# How many records the whole file holds
whole () {
    "$WEIR" run -q --stats "$T/stats.json" "$1 path=$2 ! null" && read_count "$T/stats.json"
}

cut_test () {
    kind=$1
    full=$2
    size=$(wc -c < "$full")
    all=$(whole "$kind" "$full")
    [ -n "$all" ] && [ "$all" -gt 0 ] || { fail "$kind: the whole file does not read"; return; }
    crashes=0
    silent=0
    prev=0
    clean=0
    refused=0
    i=0
    while [ $i -lt "$CUTS" ]; do
        i=$((i + 1))
        # Spread over the file, and off by a varying byte
        at=$(((size * i) / (CUTS + 1) + (i * 7) % 5))
        [ $at -lt "$size" ] || at=$((size - 1))
        head -c $at "$full" > "$T/cut"
        # fail: exit 0 or 1
        "$WEIR" run -q --stats "$T/cut.json" "$kind path=$T/cut ! msgpack path=$T/cut.out" 2> "$T/err"
        rc=$?
        if [ $rc -ge 2 ]; then
            crashes=$((crashes + 1))
            fail "$kind cut at byte $at: exit $rc"
            sed 's/^/    /' "$T/err" >&2
        elif [ $rc -eq 1 ]; then
            if grep -q "$T/cut" "$T/err"; then refused=$((refused + 1)); ok; else
                fail "$kind cut at byte $at: the message does not name the file"
                sed 's/^/    /' "$T/err" >&2
            fi
        else
            clean=$((clean + 1))
            nfail=$(read_count "$T/cut.json")
        fi
        # skip: always exit 0, and nothing left unaccounted
        rm -f "$T/dead"
        "$WEIR" run -q --stats "$T/skip.json" "$kind path=$T/cut on-error=skip dead-letter=$T/dead ! msgpack path=$T/skip.out" 2> "$T/err"
        rc=$?
        if [ $rc -ne 0 ]; then
            [ $rc -ge 128 ] && crashes=$((crashes + 1))
            fail "$kind cut at byte $at, on-error=skip: exit $rc"
            sed 's/^/    /' "$T/err" >&2
        else
            ok
            n=$(read_count "$T/skip.json")
            if [ "${n:-0}" -lt "$prev" ] || [ "${n:-0}" -gt "$all" ]; then
                silent=$((silent + 1))
                fail "$kind cut at byte $at: $n records read, $prev from an earlier cut, $all from the whole file"
            else
                ok
            fi
            prev=${n:-0}
            # A clean exit without skip read the same records
            if [ -n "${nfail:-}" ]; then
                [ "$nfail" = "$n" ] && ok || fail "$kind cut at byte $at: $nfail records read, $n with on-error=skip"
            fi
            nfail=
            # What was read and what was rejected: the dead letter holds the
            # rejected bytes with their offsets, and they end at the cut
            if [ -s "$T/dead" ]; then
                end=$("$WEIR" run -q "msgpack path=$T/dead ! lines path=-" | sed -n 's/.*"offset":\([0-9]*\),\("line":[0-9]*,\)\{0,1\}"size":\([0-9]*\).*/\1 \3/p' | awk '{ e = $1 + $2 } END { print e }')
                [ "$end" -le "$at" ] && ok || fail "$kind cut at byte $at: the dead letter reaches byte $end"
            fi
        fi
    done
    echo "$kind: $CUTS cuts of a $size-byte file of $all records: $clean read whole, $refused refused naming the file, $crashes crashes, $silent losses"
}

cut_test msgpack "$T/full.mp"
cut_test libsvm "$T/full.svm"
cut_test lines "$T/full.txt"
cut_test json "$T/full.jsonl"

finish

#!/bin/sh
# --stats writes JSON with per-stage counts; --progress draws lines.
. "$(dirname "$0")/lib.sh"

"$WEIR" run -q --stats "$T/stats.json" "range count=100000 ! identity threads=2 ! null" || fail "run with --stats"
grep -q '"records": 100000,' "$T/stats.json" && ok || fail "stats: records"
grep -q '"exit_code": 0,' "$T/stats.json" && ok || fail "stats: exit_code"
grep -q '"error": null,' "$T/stats.json" && ok || fail "stats: error"
grep -q '{"name": "range", "kind": "reader", "threads": 1, "records_in": 100000, "records_out": 100000' "$T/stats.json" && ok || fail "stats: reader"
grep -q '{"name": "identity", "kind": "processor", "threads": 2, "records_in": 100000, "records_out": 100000' "$T/stats.json" && ok || fail "stats: identity"
grep -q '{"name": "null", "kind": "writer", "threads": 1, "records_in": 100000, "records_out": 100000' "$T/stats.json" && ok || fail "stats: writer"
grep -Eq '"records_per_second": [0-9]+\.[0-9]' "$T/stats.json" && ok || fail "stats: records_per_second"

# A failed job still writes its stats, with the error
"$MKMSGPACK" badbyte "$T/bad.mp"
"$WEIR" run -q --stats "$T/stats.json" "msgpack path=$T/bad.mp ! null" 2>/dev/null
grep -q '"exit_code": 1,' "$T/stats.json" && ok || fail "failed stats: exit_code"
grep -q '"error": "msgpack: ' "$T/stats.json" && ok || fail "failed stats: error"

# Progress lines on a non-terminal: one per interval, naming every stage
"$WEIR" run --progress --progress-interval 5 "range count=30M ! identity ! null" 2>"$T/progress" || fail "progress run"
grep -Eq '^range [0-9.]+[kMG]?/s \| identity [0-9.]+[kMG]?/s q [0-9]+/16 \| null [0-9.]+[kMG]?/s q [0-9]+/16 \| [0-9]+ records' "$T/progress" \
    && ok || fail "progress line: $(head -2 "$T/progress")"
grep -Eq '^weir: 30000000 records read, 30000000 written in [0-9.]+ s \([0-9.]+ ([kMG] )?records/s\)' "$T/progress" \
    && ok || fail "summary line: $(tail -1 "$T/progress")"

# A name the pipe has twice says which stage it is
"$WEIR" run --progress --progress-interval 5 "range count=20M ! identity ! identity ! null" 2>"$T/progress2" \
    || fail "progress run"
grep -Eq '^range [0-9.]+[kMG]?/s \| identity#2 [0-9.]+[kMG]?/s q [0-9]+/16 \| identity#3 [0-9.]+[kMG]?/s q [0-9]+/16 \| null ' \
    "$T/progress2" && ok || fail "progress line with a name twice: $(head -2 "$T/progress2")"

# With the size of the input known: percent done and the time left
grep -Eq '\| [0-9]+ records [0-9]+% ETA [0-9]+:[0-9][0-9] [0-9.]+s$' "$T/progress" && ok || fail "no percent and ETA: $(head -2 "$T/progress")"
# Read and written differ when a processor drops records: the summary says both
printf '1\n2\n\n3\n' > "$T/in.txt"
"$WEIR" run "lines path=$T/in.txt ! lines path=$T/copy.txt" 2>"$T/summary" || fail "copy"
grep -q '^weir: 4 records read, 4 written in' "$T/summary" && ok || fail "summary: $(cat "$T/summary")"

# On a terminal the line never wraps: 60 columns, four stages
if command -v script >/dev/null 2>&1; then
    script -qec "stty cols 60 rows 20; '$WEIR' run --progress --progress-interval 5 \
        'range count=30M ! identity ! identity ! null'" /dev/null > "$T/tty.txt" 2>&1
    tr '\r' '\n' < "$T/tty.txt" | sed 's/\x1b\[K//g' | grep ' records' | grep -v '^weir:' > "$T/lines"
    [ -s "$T/lines" ] && awk 'length > 59 { bad = 1 } END { exit bad }' "$T/lines" && ok \
        || fail "progress lines wider than 59 columns: $(awk 'length > 59' "$T/lines" | head -2)"
else
    fail "script (bsdutils) is missing: the terminal width cannot be tested"
fi

# -q prints nothing on success
"$WEIR" run -q "range count=10 ! null" 2>"$T/quiet"
[ ! -s "$T/quiet" ] && ok || fail "-q printed: $(cat "$T/quiet")"

expect_exit 2 "progress-interval wants milliseconds" -- "$WEIR" run --progress-interval 0 "range count=1 ! null"

# An unwritable stats file is refused before the job runs (exit 2): its
# output is not written
expect_exit 2 "cannot write statistics to '$T/no/dir/s.json'" -- \
    "$WEIR" run -q --stats "$T/no/dir/s.json" "range count=10 ! lines path=$T/never.txt"
[ ! -e "$T/never.txt" ] && ok || fail "the job ran although its statistics could not be written"

finish

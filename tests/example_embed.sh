#!/bin/sh
# The embedding example builds a pipe in code with a C callback processor.
. "$(dirname "$0")/lib.sh"
: "${EMBED:?EMBED must point at examples/embed}"

"$EMBED" "$T/out.txt" 100000 >"$T/stdout" 2>"$T/stderr" || fail "embed failed: $(cat "$T/stderr")"
awk 'BEGIN { for (i = 0; i < 100000; i += 2) printf "%.0f\n", i * i }' > "$T/expected"
sort -n "$T/out.txt" | cmp -s - "$T/expected" && ok || fail "embed output is not the squares of the even integers"
grep -q '^square_evens   threads=2 in=100000 out=50000$' "$T/stdout" && ok || fail "embed stats: $(cat "$T/stdout")"
grep -q 'dropped 50000 odd records' "$T/stderr" && ok || fail "embed close callback: $(cat "$T/stderr")"

# Errors from a callback stop the job with the element's name
"$EMBED" "$T/no/such/dir/out.txt" 10 2>"$T/stderr"
[ $? -eq 1 ] && grep -q "lines: cannot open" "$T/stderr" && ok || fail "embed with unwritable output"

finish

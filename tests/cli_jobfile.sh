#!/bin/sh
# weir run -f: a description read from a file or standard input, on
# several lines, with comments; errors name the file's line and column.
. "$(dirname "$0")/lib.sh"

seq 1 1000 > "$T/in.txt"
cat > "$T/job.weir" <<JOB
# every line of the input, kept as it is
lines path=$T/in.txt   # one file, one shard
  ! identity threads=2#not a comment: no blank before it
  ! lines path=$T/out.txt
JOB
expect_exit 2 "identity: unknown property 'threads'|threads=2#not" -- "$WEIR" run -q -f "$T/job.weir"
sed -i 's/threads=2#not a comment: no blank before it/threads=2 # a comment/' "$T/job.weir"
"$WEIR" run -q -f "$T/job.weir" || fail "a job from a file"
# two identity threads keep no order
sort -n "$T/out.txt" > "$T/sorted.txt"
same "$T/sorted.txt" "$T/in.txt" "a job from a file"

# Standard input, and '#' inside quotes is no comment
rm -f "$T/out.txt"
printf 'lines path="%s" # the input\n ! lines path=%s\n' "$T/in.txt" "$T/out.txt" | "$WEIR" run -q -f - \
    || fail "a job from standard input"
same "$T/out.txt" "$T/in.txt" "a job from standard input"
printf 'a#b\n' > "$T/hash#.txt"
"$WEIR" run -q -f - <<JOB || fail "a '#' inside quotes"
lines path='$T/hash#.txt' ! lines path=$T/hash.out
JOB
same "$T/hash.out" "$T/hash#.txt" "a '#' inside quotes and inside a line"

# An error names the line and the column, with the line and a caret
cat > "$T/bad.weir" <<JOB
# a typo on line 3
lines path=$T/in.txt
  ! identiti
  ! null
JOB
expect_exit 2 "unknown element 'identiti': did you mean 'identity'" -- "$WEIR" run -f "$T/bad.weir"
grep -q "^  $T/bad.weir:3:5:\$" "$T/err" && sed -n 3p "$T/err" | grep -q '^    ! identiti$' \
    && [ "$(sed -n 4p "$T/err")" = "      ^" ] && ok || fail "the caret of an error in a file: $(cat "$T/err")"
printf 'range count=3 ! filter ".x ==" ! null' > "$T/expr.weir"
expect_exit 2 "filter: expected more: the expression ends too soon" -- "$WEIR" run -f - < "$T/expr.weir"
grep -q "^  (standard input):1:30:\$" "$T/err" && ok || fail "standard input's line and column: $(cat "$T/err")"

# Refusals
expect_exit 2 "a description in '$T/job.weir' \(-f\) and one in the arguments \('range count=1 ! null'\): give one" \
    -- "$WEIR" run -f "$T/job.weir" "range count=1 ! null"
expect_exit 2 "cannot open the description '$T/none.weir': No such file or directory" -- "$WEIR" run -f "$T/none.weir"
printf 'range count=1\0 ! null' > "$T/nul.weir"
expect_exit 2 "holds a NUL byte at byte 13: it is no text" -- "$WEIR" run -f "$T/nul.weir"
expect_exit 2 "" -- "$WEIR" run -f
weir_help=$("$WEIR" run --help)
echo "$weir_help" | grep -q -- "-f, --file FILE" && ok || fail "weir run --help does not show -f"

# A checkpointed job resumes from its file written otherwise: comments and
# line breaks are no part of the pipeline
rm -f "$T/out.txt"
"$WEIR" run -q --checkpoint "$T/ck" --epochs 1 --epoch-records 300 -f "$T/job.weir" || fail "first epoch"
printf '# the same job, on one line\nlines path=%s ! identity threads=2 ! lines path=%s\n' "$T/in.txt" "$T/out.txt" \
    > "$T/again.weir"
"$WEIR" run -q --checkpoint "$T/ck" --resume -f "$T/again.weir" || fail "resumed from a file written otherwise"
sort -n "$T/out.txt" > "$T/sorted.txt"
same "$T/sorted.txt" "$T/in.txt" "resumed from a file written otherwise"

finish

#!/bin/sh
# The conventions of a Unix tool, and no silent loss: '-' is standard input
# and output, standard output is never truncated, a pipe destroys none of
# its own input, and options that could skip input are refused.
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1

# Output equal to input: refused before anything is written (exit 2), the
# file left as it was, whatever the writer and however the path is spelled
seq 5 > 1.log
cp 1.log kept.log
for writer in lines msgpack libsvm; do
    expect_exit 2 "is also an input of the reader 'lines'" -- "$WEIR" run "lines path=1.log ! identity ! $writer path=1.log"
    cmp -s 1.log kept.log && ok || fail "$writer: the input was changed"
done
expect_exit 2 "'./sub/../1.log' is also an input" -- sh -c "mkdir -p sub && \"\$0\" run 'lines path=1.log ! lines path=./sub/../1.log'" "$WEIR"
ln -s 1.log link.log
expect_exit 2 "is also an input of the reader 'lines' \\('1.log'\\)" -- "$WEIR" run "lines path=1.log ! lines path=link.log"
expect_exit 2 "'2.log' is also an input" -- sh -c "seq 3 > 2.log && \"\$0\" run \"lines path='*.log' ! lines path=2.log\"" "$WEIR"
cmp -s 1.log kept.log && ok || fail "the input was changed"
# Another file in the same folder is fine
"$WEIR" run -q "lines path=1.log ! lines path=out.log" && cmp -s out.log 1.log && ok || fail "a plain copy"

# '-' is standard input for readers and standard output for writers
seq 3 | "$WEIR" run -q "lines path=- ! lines path=-" > out.txt && printf '1\n2\n3\n' | cmp -s - out.txt \
    && ok || fail "lines from - to -: $(cat out.txt)"
seq 3 | "$WEIR" run -q "lines path=- ! msgpack path=-" | "$WEIR" run -q "msgpack path=- ! lines path=-" > out.txt \
    && printf '1\n2\n3\n' | cmp -s - out.txt && ok || fail "msgpack through a pipe: $(cat out.txt)"

# Standard output is written where it stands: appended to with >>, between
# what others write around it, never truncated
echo old > app.txt
"$WEIR" run -q "range count=2 ! lines path=/dev/stdout" >> app.txt
printf 'old\n0\n1\n' | cmp -s - app.txt && ok || fail ">> app.txt: $(cat app.txt)"
"$WEIR" run -q "range count=2 ! lines path=-" >> app.txt
printf 'old\n0\n1\n0\n1\n' | cmp -s - app.txt && ok || fail ">> app.txt with -: $(cat app.txt)"
(echo header; "$WEIR" run -q "range count=3 ! lines path=-"; echo footer) > around.txt
printf 'header\n0\n1\n2\nfooter\n' | cmp -s - around.txt && ok || fail "header and footer: $(od -c around.txt | head -3)"

# A FIFO is opened as it is: its reader gets every record
mkfifo out.fifo
cat out.fifo > from-fifo.txt &
reader=$!
"$WEIR" run -q "range count=1000 ! lines path=out.fifo" || fail "writing a FIFO"
wait $reader
[ "$(wc -l < from-fifo.txt)" -eq 1000 ] && ok || fail "the FIFO's reader got $(wc -l < from-fifo.txt) lines"

# A checkpointed job cannot write to standard output or a pipe: refused,
# and the checkpoint directory is not even made
expect_exit 2 "cannot be cut back to what a checkpoint committed" -- "$WEIR" run --checkpoint ck "range count=3 ! lines path=-"
[ ! -e ck ] && ok || fail "a refused job made its checkpoint directory"
expect_exit 2 "cannot be cut back" -- "$WEIR" run --checkpoint ck "range count=3 ! lines path=out.fifo"

# --epochs without --checkpoint would skip the rest of the input
expect_exit 2 "--epochs stops the job after epoch 2 so that --resume goes on later, which needs a checkpoint" -- \
    "$WEIR" run --epochs 2 "range count=3 ! null"

# A glob in a folder that does not exist
expect_exit 1 "no file matches 'nodir/\\*.log' \\(a folder in it does not exist\\)" -- "$WEIR" run "lines path='nodir/*.log' ! null"

finish

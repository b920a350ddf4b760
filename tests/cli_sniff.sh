#!/bin/sh
# tests/cli_sniff.sh - a file in the wrong format is caught by its first
# bytes: a file compressed as weir does not read is refused, naming its
# compression and the way to read it; text given to msgpack and binary given to a text reader are
# said (sniff=warn), refused (sniff=fail), or read as they are (sniff=off).
. "$(dirname "$0")/lib.sh"

printf '{"a":1}\n{"b":2}\n' > "$T/a.jsonl"
# Compressed files weir does not read, by their magic numbers (no
# compressor needed): refused, naming the compression and the way to
# read them; gzip and zstd files are read decompressed (cli_compress.sh),
# and one cut short is an error naming where
printf '\037\213\010\000\000\000\000\000\000\003rest' > "$T/a.jsonl.gz"
printf 'BZh91AY&SYrest' > "$T/a.bz2"
printf '\375\067zXZ\000\000\004rest' > "$T/a.xz"
for f in "$T/a.bz2:bzip2:bzcat" "$T/a.xz:xz:xzcat"; do
    path=${f%%:*}
    rest=${f#*:}
    kind=${rest%%:*}
    cat=${rest#*:}
    for reader in lines json msgpack; do
        expect_exit 1 "^weir run: $reader: '$path' is $kind-compressed \\(its first bytes say so\\): weir reads gzip and zstd files, not $kind ones; decompress it first, or feed it decompressed: $cat '$path' \\| weir run '$reader path=- \\.\\.\\.'" -- \
            "$WEIR" run -q "$reader path=$path ! lines path=$T/out"
    done
done
for reader in lines json msgpack; do
    expect_exit 1 "^weir run: $reader: '$T/a.jsonl.gz' ends at compressed byte 14 inside a gzip member: the file is cut short$" -- \
        "$WEIR" run -q "$reader path=$T/a.jsonl.gz ! lines path=$T/out"
done
# sniff=off reads it as it is: the gzip bytes as lines
{ cat "$T/a.jsonl.gz"; echo; } > "$T/off.want"
"$WEIR" run -q "lines path=$T/a.jsonl.gz sniff=off ! lines path=$T/off.out" && cmp -s "$T/off.out" "$T/off.want" && ok \
    || fail "sniff=off did not read the compressed file as it is"

# Text given to msgpack: a warning naming what it looks like, the records
# read all the same (ASCII bytes are valid msgpack)
expect_exit 0 "^weir run: warning: msgpack: '$T/a.jsonl' looks like JSON Lines \\(json path=\\.\\.\\.\\), not msgpack; read as it is \\(sniff=fail would refuse it\\)\$" -- \
    "$WEIR" run -q "msgpack path=$T/a.jsonl ! lines path=$T/out"
[ "$(wc -l < "$T/out")" -eq 16 ] && ok || fail "msgpack of a text file: $(wc -l < "$T/out") records, wanted 16 (one a byte)"
printf 'GET /index.html 200\n' > "$T/access.log"
expect_exit 0 "looks like text \\(lines path=\\.\\.\\.\\), not msgpack" -- "$WEIR" run -q "msgpack path=$T/access.log ! null"
expect_exit 1 "^weir run: msgpack: '$T/a.jsonl' looks like JSON Lines \\(json path=\\.\\.\\.\\), not msgpack: sniff=fail refuses it \\(sniff=off reads it as it is\\)\$" -- \
    "$WEIR" run -q "msgpack path=$T/a.jsonl sniff=fail ! null"
expect_exit 0 "" -- "$WEIR" run -q "msgpack path=$T/a.jsonl sniff=off ! null"
[ ! -s "$T/err" ] && ok || fail "sniff=off still warned: $(cat "$T/err")"

# Binary given to a text reader
"$WEIR" run -q "range count=100 ! msgpack path=$T/r.mp" || fail "writing r.mp"
expect_exit 0 "^weir run: warning: lines: '$T/r.mp' does not look like text \\(NUL or control characters in its first bytes; msgpack path=\\.\\.\\. reads msgpack\\); read as it is" -- \
    "$WEIR" run -q "lines path=$T/r.mp ! null"
expect_exit 1 "^weir run: json: '$T/r.mp' does not look like text .*: sniff=fail refuses it" -- \
    "$WEIR" run -q "json path=$T/r.mp sniff=fail ! null"
# ... and a real msgpack file is no text to msgpack, nor a log in Latin-1
# (bytes of no UTF-8 sequence) binary to lines: no warning
expect_exit 0 "" -- "$WEIR" run -q "msgpack path=$T/r.mp ! null"
[ ! -s "$T/err" ] && ok || fail "a msgpack file warned: $(cat "$T/err")"
printf 'caf\351 au lait\nna\357ve\n' > "$T/latin1.txt"
expect_exit 0 "" -- "$WEIR" run -q "lines path=$T/latin1.txt ! null"
[ ! -s "$T/err" ] && ok || fail "a Latin-1 text warned: $(cat "$T/err")"

# Only a file's start is looked at: a shard inside a file, and a pipe
# (whose bytes cannot be read twice), are read without a look
expect_exit 0 "" -- sh -c "cat '$T/a.jsonl' | '$WEIR' run -q 'msgpack path=- ! null'"
[ ! -s "$T/err" ] && ok || fail "a pipe was sniffed: $(cat "$T/err")"

# A bad value is a usage error pointing at it
expect_exit 2 "json: sniff=maybe is none of warn, fail, off" -- "$WEIR" run "json path=$T/a.jsonl sniff=maybe ! null"

finish

#!/bin/sh
# lines -> msgpack -> lines preserves content byte for byte; msgpack ->
# msgpack preserves bytes; other records print as JSON.
. "$(dirname "$0")/lib.sh"

{
    echo "plain ascii"
    echo ""
    printf 'caf\303\251 \342\202\254 \360\237\230\200\n'   # UTF-8
    printf 'tab\there "quotes" \\backslash\n'
    printf 'carriage return\r\n'
    head -c 100000 /dev/zero | tr '\0' 'x'; echo
    seq 1 20000
} > "$T/in.txt"

"$WEIR" run -q "lines path=$T/in.txt ! identity ! msgpack path=$T/mid.mp" || fail "lines -> msgpack"
"$WEIR" run -q "msgpack path=$T/mid.mp ! identity ! lines path=$T/out.txt" || fail "msgpack -> lines"
same "$T/in.txt" "$T/out.txt" "lines -> msgpack -> lines"

"$WEIR" run -q "msgpack path=$T/mid.mp ! msgpack path=$T/mid2.mp" || fail "msgpack -> msgpack"
same "$T/mid.mp" "$T/mid2.mp" "msgpack -> msgpack"

# Several threads: same content as a multiset
"$WEIR" run -q "lines path=$T/in.txt split=5000 threads=2 ! identity threads=2 ! msgpack path=$T/mid.mp threads=2" || fail "threaded lines -> msgpack"
"$WEIR" run -q "msgpack path=$T/mid.mp ! lines path=$T/out.txt threads=2" || fail "threaded msgpack -> lines"
sort "$T/in.txt" > "$T/a"; sort "$T/out.txt" > "$T/b"
same "$T/a" "$T/b" "threaded round trip (sorted)"

# Records that are not strings or bins print as JSON
"$MKMSGPACK" mixed "$T/mixed.mp"
"$WEIR" run -q "msgpack path=$T/mixed.mp ! lines path=$T/mixed.txt" || fail "mixed -> lines"
cat > "$T/mixed.expected" <<'END'
null
true
false
-42
-9223372036854775808
18446744073709551615
0.5
plain text
tab	quote"
raw
[1,"two",null]
{"k":7,"8":[]}
{"ext":5,"base64":"AQI="}
END
same "$T/mixed.expected" "$T/mixed.txt" "mixed records as text"

finish

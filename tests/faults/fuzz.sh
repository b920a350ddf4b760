#!/bin/sh
# tests/faults/fuzz.sh - part of the fault-injection suite: the libFuzzer
# targets of tests/fuzz/, each run briefly
# from its corpus in tests/fuzz/corpus/.  They need clang with its
# libFuzzer runtime (Debian: clang); without it the test says so and is
# skipped (exit 77).  The sources are compiled again here, instrumented
# for coverage and AddressSanitizer, into a scratch folder.
#
#   FUZZ_SECONDS=N   seconds per target (default 10; 120 with FAULT_LONG=1,
#                    as make check-faults sets)
#   FUZZ_KEEP=DIR    keep the instrumented build and the corpora grown in
#                    DIR (to fuzz for longer, run DIR/fuzz_NAME by hand)
. "$(dirname "$0")/../lib.sh"
: "${TOP_SRCDIR:?TOP_SRCDIR must point at the source tree}"
SRC=$TOP_SRCDIR
BUILD=$(dirname "$WEIR")
if [ "${FAULT_LONG:-}" = 1 ]; then SECONDS_EACH=${FUZZ_SECONDS:-120}; else SECONDS_EACH=${FUZZ_SECONDS:-10}; fi
CC=${FUZZ_CC:-clang}
CXX=${FUZZ_CXX:-clang++}

if ! command -v "$CC" >/dev/null 2>&1; then
    echo "SKIP: no $CC: install clang to run the fuzz targets" >&2
    exit 77
fi
echo 'int LLVMFuzzerTestOneInput (const char *d, unsigned long n) { (void) d; return (int) n * 0; }' > "$T/probe.c"
if ! "$CC" -fsanitize=fuzzer "$T/probe.c" -o "$T/probe" 2>"$T/err"; then
    echo "SKIP: $CC has no libFuzzer runtime (-fsanitize=fuzzer fails): install clang's full package" >&2
    exit 77
fi

W=${FUZZ_KEEP:-$T/fuzz}
mkdir -p "$W/obj"
FLAGS="-g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
# msgpack-c's pkg-config name depends on its version; configure found it
MSGPACK_PC=${MSGPACK_PC:-msgpack}
INC="-I$BUILD -I$SRC -I$BUILD/include -I$SRC/include $(pkg-config --cflags "$MSGPACK_PC")"
LIBS="$(pkg-config --libs "$MSGPACK_PC") -lleveldb -lz -lzstd -lm -lpthread"

# The code under test, as an archive: a target takes only what it calls
objs=
for f in "$SRC"/lib/*.c "$SRC"/readers/*.c "$SRC"/pipeline/parse.c; do
    o="$W/obj/$(basename "$(dirname "$f")")_$(basename "$f" .c).o"
    # lib/queue.c alone speaks ZeroMQ, which no target needs
    case $f in */lib/queue.c) continue ;; esac
    $CC $FLAGS -DHAVE_CONFIG_H $INC -c "$f" -o "$o" 2>>"$T/cc.err" || { fail "compile $f"; cat "$T/cc.err" >&2; exit 1; }
    objs="$objs $o"
done
for f in "$SRC"/lib/*.cc; do
    [ -f "$f" ] || continue
    o="$W/obj/lib_$(basename "$f" .cc).o"
    $CXX $FLAGS -std=c++17 -DHAVE_CONFIG_H $INC -c "$f" -o "$o" 2>>"$T/cc.err" || { fail "compile $f"; cat "$T/cc.err" >&2; exit 1; }
    objs="$objs $o"
    LIBS="$LIBS -lsimdjson"
done
rm -f "$W/libcode.a"
ar rcs "$W/libcode.a" $objs

for src in "$SRC"/tests/fuzz/fuzz_*.c; do
    name=$(basename "$src" .c)
    corpus="$SRC/tests/fuzz/corpus/${name#fuzz_}"
    [ -d "$corpus" ] || { fail "$name: no corpus folder $corpus"; continue; }
    # Linked as C++, for the archive may hold the one C++ file
    { $CC $FLAGS -DHAVE_CONFIG_H $INC -c "$src" -o "$W/$name.o" \
        && $CXX $FLAGS -fsanitize=fuzzer "$W/$name.o" "$W/libcode.a" $LIBS -o "$W/$name"; } 2>"$T/cc.err" \
        || { fail "$name: build"; cat "$T/cc.err" >&2; continue; }
    # The first folder takes what the run finds, so the repository's
    # corpus is only read
    mkdir -p "$W/grown-$name"
    if (cd "$W" && ASAN_OPTIONS=detect_leaks=1 "./$name" -max_total_time="$SECONDS_EACH" -timeout=10 \
        -artifact_prefix="$BUILD/tests/$name-" \
        -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 "grown-$name" "$corpus" >"$T/$name.log" 2>&1); then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$T/$name.log")
        echo "$name: ${runs:-?} inputs in ${SECONDS_EACH} s, no failure"
        ok
    else
        fail "$name: a failure; the input that caused it is kept as $BUILD/tests/$name-crash-* (or -leak-, -timeout-)"
        tail -40 "$T/$name.log" >&2
    fi
done

finish

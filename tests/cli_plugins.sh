#!/bin/sh
# Processor plugins compiled the way users compile them, loaded by path
# and by name: callbacks in order and count, errors, ABI and symbol checks.
. "$(dirname "$0")/lib.sh"
: "${PLUGIN_CFLAGS:?PLUGIN_CFLAGS must hold the compile flags of <weir/plugin.h>}"
: "${PLUGINS_SRC:?PLUGINS_SRC must point at tests/plugins}"

for p in probe wrong_abi old_abi no_symbol no_process exits crashes frozen/first_api frozen/small_table frozen/full_table; do
    # shellcheck disable=SC2086
    ${CC:-cc} -std=c99 -Wall -Wextra -Werror -shared -fPIC $PLUGIN_CFLAGS "$PLUGINS_SRC/$p.c" -o "$T/${p#frozen/}.so" \
        || fail "plugin $p does not compile"
done

# The public headers compile cleanly as C99 and as C++, warnings on
printf '#include <weir/weir.h>\n#include <weir/plugin.h>\nint main (void) { return WEIR_PLUGIN_ABI - 1; }\n' > "$T/h.c"
# shellcheck disable=SC2086
${CC:-cc} -std=c99 -pedantic -Wall -Wextra -Werror -fsyntax-only $PLUGIN_CFLAGS "$T/h.c" && ok || fail "headers are not clean C99"
cp "$T/h.c" "$T/h.cc"
# shellcheck disable=SC2086
${CXX:-c++} -std=c++11 -Wall -Wextra -Werror -fsyntax-only $PLUGIN_CFLAGS "$T/h.cc" && ok || fail "headers are not clean C++"

# <weir/weir.h> alone needs no msgpack: a program that only runs pipes
printf '#include <weir/weir.h>\nint main (void) { weir_stage_stats st = WEIR_STAGE_STATS_INIT; return (int) st.size; }\n' > "$T/w.c"
# shellcheck disable=SC2086
${CC:-cc} -std=c99 -pedantic -Wall -Wextra -Werror -E -H $PLUGIN_CFLAGS "$T/w.c" 2>"$T/includes" >/dev/null \
    && ! grep -q msgpack "$T/includes" && ok || fail "weir.h pulls in: $(grep msgpack "$T/includes" | head -3)"

# The ABI these headers declare, for the messages below
printf '#include <stdio.h>\n#include <weir/plugin.h>\nint main (void) { printf ("%%d\\n", WEIR_PLUGIN_ABI); return 0; }\n' > "$T/abi.c"
# shellcheck disable=SC2086
${CC:-cc} $PLUGIN_CFLAGS "$T/abi.c" -o "$T/abi" && abi=$("$T/abi") || { fail "cannot read WEIR_PLUGIN_ABI"; abi=0; }

# Callbacks in their documented order and count
check_calls () {
    threads=$1
    rm -f "$T/log"
    "$WEIR" run -q "range count=10000 ! $T/probe.so log=$T/log threads=$threads ! lines path=$T/out.txt" \
        || fail "probe threads=$threads failed"
    [ "$(head -1 "$T/log")" = "open 00" ] && ok || fail "threads=$threads: first call is not open"
    [ "$(sed -n 2p "$T/log")" = "init 00" ] && ok || fail "threads=$threads: second call is not init"
    [ "$(tail -1 "$T/log")" = "close 00" ] && ok || fail "threads=$threads: last call is not close"
    [ "$(grep -c '^thread_open [0-9]* of '"$threads"'$' "$T/log")" -eq "$threads" ] && ok || fail "threads=$threads: thread_open count"
    [ "$(grep -c '^epoch_end [0-9]* 1$' "$T/log")" -eq "$threads" ] && ok || fail "threads=$threads: epoch_end count"
    [ "$(grep -c '^thread_close' "$T/log")" -eq "$threads" ] && ok || fail "threads=$threads: thread_close count"
    total=$(sed -n 's/^thread_close [0-9]* processed //p' "$T/log" | awk '{s += $1} END {print s}')
    [ "$total" -eq 10000 ] && ok || fail "threads=$threads: processed $total records, not 10000"
    [ "$(wc -l < "$T/log")" -eq $((3 + 3 * threads)) ] && ok || fail "threads=$threads: unexpected calls: $(cat "$T/log")"
    seq 0 9999 | sort > "$T/expected"
    sort "$T/out.txt" | cmp -s - "$T/expected" && ok || fail "threads=$threads: records changed"
}
check_calls 1
check_calls 4

# init runs on a fresh start only: not when a checkpointed job resumes
rm -f "$T/log"
"$WEIR" run -q --checkpoint "$T/ck" --epoch-records 4000 --epochs 1 "range count=10000 ! $T/probe.so log=$T/log threads=2 ! null" \
    || fail "probe, first epoch"
grep -q '^init' "$T/log" && ok || fail "fresh start without init: $(cat "$T/log")"
rm -f "$T/log"
"$WEIR" run -q --checkpoint "$T/ck" --resume --epoch-records 4000 "range count=10000 ! $T/probe.so log=$T/log threads=2 ! null" \
    || fail "probe, resumed"
! grep -q '^init' "$T/log" && ok || fail "init ran on resume: $(cat "$T/log")"
[ "$(grep -c '^epoch_end [0-9] 2$' "$T/log")" -eq 2 ] && [ "$(grep -c '^epoch_end [0-9] 3$' "$T/log")" -eq 2 ] \
    && ok || fail "resumed epochs: $(cat "$T/log")"
total=$(sed -n 's/^thread_close [0-9]* processed //p' "$T/log" | awk '{s += $1} END {print s}')
[ "$total" -eq 6000 ] && ok || fail "resumed run processed $total records, not the 6000 left"

# Properties reach the plugin; by name through WEIR_PLUGIN_PATH
WEIR_PLUGIN_PATH="/nonexistent:$T" "$WEIR" run -q "range count=5 ! probe log=$T/log scale=3 ! lines path=$T/out.txt" \
    || fail "probe by name"
printf '0\n3\n6\n9\n12\n' | cmp -s - "$T/out.txt" && ok || fail "scale=3: $(cat "$T/out.txt")"

# A property the plugin never reads is reported
"$WEIR" run -q "range count=5 ! $T/probe.so log=$T/log scael=3 ! null" 2>"$T/err" || fail "typo run failed"
grep -q "warning: $T/probe.so: property 'scael' was never read by the processor" "$T/err" && ok || fail "no warning for scael: $(cat "$T/err")"

# Errors from each callback stop the job with the plugin's message
for cb in open init thread_open process epoch_end; do
    expect_exit 1 "probe.so: $cb fails as asked" -- "$WEIR" run "range count=1000 ! $T/probe.so log=$T/log fail=$cb threads=2 ! null"
done
# ... tagged with the epoch only when there was one: open and init run before
for cb in open init; do
    expect_exit 1 "probe.so: $cb fails as asked\$" -- "$WEIR" run "range count=10 ! $T/probe.so log=$T/log fail=$cb ! null"
done
expect_exit 1 "probe.so: process fails as asked at record 99 \\(epoch 1\\)" -- "$WEIR" run "range count=1000 ! $T/probe.so log=$T/log fail=process ! null"

# Loading errors: exit 1, naming the file and what is wrong
expect_exit 1 "was built for processor ABI $((abi + 1)), but this weir has ABI $abi" -- "$WEIR" run "range count=1 ! $T/wrong_abi.so ! null"
# An older ABI is refused as well: its table means something else
expect_exit 1 "was built for processor ABI $((abi - 1)), but this weir has ABI $abi" -- "$WEIR" run "range count=1 ! $T/old_abi.so ! null"
# An older revision of this ABI's table (fewer callbacks) runs, without what it lacks
"$WEIR" run -q "range count=100 ! $T/small_table.so ! lines path=$T/small.txt" && [ "$(wc -l < "$T/small.txt")" -eq 100 ] \
    && ok || fail "an older table of the same ABI does not run"
# A plugin written to the first documented API (no size) runs too, and
# one with every callback and every function
"$WEIR" run -q "range count=10 start=-5 ! $T/first_api.so min=2 ! lines path=$T/first.txt" \
    && printf '2\n3\n4\n' | cmp -s - "$T/first.txt" && ok || fail "a plugin of the first API does not run: $(cat "$T/first.txt")"
"$WEIR" run -q --epoch-records 40 "range count=100 ! $T/full_table.so scale=2 threads=2 ! lines path=$T/full.txt" \
    && [ "$(wc -l < "$T/full.txt")" -eq 101 ] && [ "$(grep -c '^[0-9]' "$T/full.txt")" -eq 100 ] \
    && grep -qx '\["end",3\]' "$T/full.txt" && ok || fail "the full-table plugin: $(tail -3 "$T/full.txt")"
expect_exit 1 "is not a weir processor: it exports no weir_plugin_processor" -- "$WEIR" run "range count=1 ! $T/no_symbol.so ! null"
expect_exit 1 "has no process callback" -- "$WEIR" run "range count=1 ! $T/no_process.so ! null"
expect_exit 1 "plugin '$T/missing.so' cannot be loaded" -- "$WEIR" run "range count=1 ! $T/missing.so ! null"
echo "not an object" > "$T/text.so"
expect_exit 1 "plugin '$T/text.so' cannot be loaded" -- "$WEIR" run "range count=1 ! $T/text.so ! null"
expect_exit 2 "unknown element 'nosuch': no builtin of that name, and no nosuch.so" -- "$WEIR" run "range count=1 ! nosuch ! null"
expect_exit 2 "is a plugin, and plugins are processors, but the first element must be a reader" -- "$WEIR" run "$T/probe.so ! null"
# A plugin by name where a writer goes: a pipeline ended with a processor
expect_exit 2 "'probe' is a plugin \($T/probe.so\), and plugins are processors, but the last element must be a writer: end the pipeline with one, '! null' to keep no output" -- \
    env WEIR_PLUGIN_PATH="$T" "$WEIR" run "range count=1 ! probe"
expect_exit 2 "'probe' is a plugin \($T/probe.so\), and plugins are processors, but the first element must be a reader \(readers: " -- \
    env WEIR_PLUGIN_PATH="$T" "$WEIR" run "probe ! null"

# weir plugin describes one
expect_exit 0 "" -- "$WEIR" plugin "$T/probe.so"
grep -q "^name:        probe$" "$T/out" && grep -q "^abi:         $abi$" "$T/out" && grep -q "^path:        $T/probe.so$" "$T/out" \
    && ok || fail "weir plugin output: $(cat "$T/out")"
WEIR_PLUGIN_PATH="$T" "$WEIR" plugin probe >"$T/out" 2>&1 && grep -q "^description: logs every callback" "$T/out" && ok || fail "weir plugin by name"
expect_exit 1 "was built for processor ABI $((abi + 1))" -- "$WEIR" plugin "$T/wrong_abi.so"

# A constructor that exits or crashes ends the process before any input is
# read or the checkpoint directory touched; an exit(0) does not pass for
# success
expect_exit 1 "weir: plugin '$T/exits.so' called exit\\(\\) while it was being loaded" -- \
    "$WEIR" run --checkpoint "$T/ck.exits" "range count=3 ! $T/exits.so ! lines path=$T/exits.txt"
[ ! -e "$T/ck.exits" ] && [ ! -e "$T/exits.txt" ] && ok || fail "a plugin that exits left a checkpoint or an output"
"$WEIR" run --checkpoint "$T/ck.crash" "range count=3 ! $T/crashes.so ! lines path=$T/crash.txt" 2>/dev/null
rc=$?
[ $rc -ne 0 ] && [ ! -e "$T/ck.crash" ] && [ ! -e "$T/crash.txt" ] && ok \
    || fail "a plugin that crashes: exit $rc, or it left a checkpoint or an output"

finish

#!/bin/sh
# The fence: the command and the examples are clients of the public API.
# Compiled as make compiles each of them (its very flags, from the build
# folder), the public headers as installed compile, and no other header
# of the tree is found: not an internal one (pipeline/stage.h, lib/error.h,
# ...), not config.h, not the source folder's include/.  In a build in the
# tree and out of it alike.
. "$(dirname "$0")/lib.sh"
: "${TOP_SRCDIR:?TOP_SRCDIR must point at the source tree}"
: "${FENCE_CC:?FENCE_CC must name the C compiler of the build}"
: "${FENCED:?FENCED must list each fenced target as TARGET=FLAGS, separated by ;}"

# Every header of the tree that is not installed, as the tree names it,
# and by its bare name where that is no system header
(cd "$TOP_SRCDIR" && find lib pipeline checkpoint cluster readers writers cmd examples tests -name '*.h') \
    | sort > "$T/internal"
[ -s "$T/internal" ] && grep -qx pipeline/stage.h "$T/internal" && ok || fail "no internal headers found"
while IFS= read -r h; do
    printf '#include "%s"\n' "${h##*/}" > "$T/bare.c"
    # shellcheck disable=SC2086
    $FENCE_CC -E "$T/bare.c" > /dev/null 2>&1 < /dev/null || echo "${h##*/}"
done < "$T/internal" | sort -u > "$T/bare"
{ cat "$T/internal" "$T/bare"; echo config.h; echo include/weir/weir.h; echo weir/version.h.in; } > "$T/unreachable"

printf '#include <weir/weir.h>\n#include <weir/plugin.h>\n#include <weir/version.h>\nint fence_probe;\n' \
    > "$T/public.c"
printf '%s\n' "$FENCED" | tr ';' '\n' | sed 's/^ *//' | grep . > "$T/fenced"
grep -q '^weir=' "$T/fenced" && grep -q '^examples/' "$T/fenced" && ok \
    || fail "FENCED lists neither the command nor the examples: $FENCED"

while IFS= read -r entry; do
    target=${entry%%=*}
    flags="${FENCE_COMMON:-} ${entry#*=} ${FENCE_TAIL:-}"
    # shellcheck disable=SC2086
    if $FENCE_CC $flags -fsyntax-only "$T/public.c" 2> "$T/err" < /dev/null; then
        ok
    else
        fail "$target: the public headers do not compile with its flags ($flags): $(cat "$T/err")"
    fi
    while IFS= read -r h; do
        printf '#include "%s"\n' "$h" > "$T/probe.c"
        # shellcheck disable=SC2086
        if $FENCE_CC $flags -E "$T/probe.c" > /dev/null 2>&1 < /dev/null; then
            fail "$target reaches \"$h\" with its flags: $flags"
        else
            ok
        fi
    done < "$T/unreachable"
done < "$T/fenced"

finish

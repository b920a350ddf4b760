#!/bin/sh
# tests/mutants.sh - mutation testing: do the tests catch the bugs they are
# there to catch?
#
# Each tests/mutants/NN-name.patch plants one small, realistic bug and
# names, on its 'Tests:' line, the tests that must catch it (values for
# make check's TESTS=).  This script copies the tree to a scratch folder
# (with 'make distdir', so git is not needed and the copy is what a
# release holds), configures it as BUILDDIR was configured and builds it
# once.  It runs the tests the mutants name on the unchanged copy first:
# a test that fails there would make every mutant look caught (one that
# fails once and then passes is only said to be flaky).  Then, for each
# patch:
#
#   STALE           the patch no longer applies (patch --dry-run, no fuzz):
#                   the code it targets changed, refresh the patch
#   does not build  the mutant fails to compile: fix the patch
#   CAUGHT          the tests fail with the bug in, as they should
#   SURVIVED        the tests pass with the bug in: a test is missing
#
# and the patch is reversed before the next one.  The last line sums it
# up with a score (caught / all, rounded down).  The exit status is 1 when
# any mutant survived, was stale or did not build, 2 when the harness
# itself could not run.
#
# Usage: tests/mutants.sh [BUILDDIR]    ('make check-mutants' runs it)
#   MUTANTS="03 07"  only the patches whose names start with these numbers
#   KEEP=DIR         make the scratch tree in DIR (new or empty) and keep
#                    it, with each mutant's logs in DIR/mutant-logs/
#   JOBS=N           make -jN for the builds (default 2); tests run one at
#                    a time, as some of them measure time and CPU
#   TEST_TIMEOUT=S   a test still running after S seconds fails (default
#                    120, not make check's 300): a mutant that hangs is
#                    caught sooner, and the baseline shows that S is enough
#
# Not part of 'make check' or CI: on 2 cores a full run takes a while (see
# the README's developer section).
set -u

# All of it is read before any of it runs: a run takes many minutes, and
# a checkout that changes this file meanwhile must not change what runs
{
build=${1:-.}
build=$(cd "$build" 2>/dev/null && pwd) || { echo "mutants: no build folder '${1:-.}'" >&2; exit 2; }
[ -f "$build/config.status" ] || { echo "mutants: '$build' is not a configured build folder" >&2; exit 2; }
src=$(sed -n 's/^abs_top_srcdir = //p' "$build/Makefile")
[ -n "$src" ] && [ -d "$src/tests/mutants" ] || { echo "mutants: no tests/mutants/ in the source folder" >&2; exit 2; }
MAKE=${MAKE:-make}
JOBS=${JOBS:-2}
TEST_TIMEOUT=${TEST_TIMEOUT:-120}
# Called from make: its jobserver and flags are not for the scratch builds
unset MAKEFLAGS MFLAGS MAKELEVEL

if [ -n "${KEEP:-}" ]; then
    mkdir -p "$KEEP" && scratch=$(cd "$KEEP" && pwd) || { echo "mutants: cannot make '$KEEP'" >&2; exit 2; }
    [ -z "$(ls -A "$scratch")" ] || { echo "mutants: KEEP folder '$KEEP' is not empty" >&2; exit 2; }
else
    scratch=$(mktemp -d "${TMPDIR:-/tmp}/weir-mutants-XXXXXX") || exit 2
    trap 'rm -rf "$scratch"' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
fi
tree="$scratch/weir"
logs="$scratch/mutant-logs"
mkdir -p "$logs"

now () {
    date +%s
}
started=$(now)

# The patches asked for, in order
patches=
for p in "$src"/tests/mutants/[0-9]*.patch; do
    [ -f "$p" ] || continue
    name=$(basename "$p" .patch)
    if [ -n "${MUTANTS:-}" ]; then
        want=
        for m in $MUTANTS; do
            case $name in "$m"-*) want=1 ;; esac
        done
        [ -n "$want" ] || continue
    fi
    patches="$patches $name"
done
[ -n "$patches" ] || { echo "mutants: no patch matches MUTANTS='${MUTANTS:-}'" >&2; exit 2; }

# tests_of NAME: the tests its 'Tests:' line names
tests_of () {
    sed -n 's/^Tests:[[:space:]]*//p' "$src/tests/mutants/$1.patch" | head -1
}

# The scratch tree: what a release holds, configured as BUILDDIR was
echo "mutants: copying the tree to $tree"
if ! (cd "$build" && $MAKE distdir distdir="$tree" top_distdir="$tree") > "$logs/distdir.log" 2>&1; then
    echo "mutants: 'make distdir' failed; see $logs/distdir.log" >&2
    tail -20 "$logs/distdir.log" >&2
    exit 2
fi
# A patch that is not in the release would not be run from a tarball
missing=
for name in $patches; do
    [ -f "$tree/tests/mutants/$name.patch" ] || missing="$missing $name"
done
if [ -n "$missing" ]; then
    echo "mutants: not in MUTANT_PATCHES of Makefile.am (so not shipped):$missing" >&2
    exit 2
fi
echo "mutants: configuring and building it once (make -j$JOBS)"
eval "set -- $("$build/config.status" --config)"
if ! (cd "$tree" && ./configure -q "$@" && $MAKE -j"$JOBS" check TESTS=) > "$logs/build.log" 2>&1; then
    echo "mutants: the unchanged tree does not build; see $logs/build.log" >&2
    tail -20 "$logs/build.log" >&2
    exit 2
fi

# run_tests LOG TESTS...: make check with those tests; 0 when they pass
run_tests () {
    _log=$1
    shift
    (cd "$tree" && $MAKE -j1 check TESTS="$*" LOG_COMPILER="timeout $TEST_TIMEOUT" \
        SH_LOG_COMPILER="timeout $TEST_TIMEOUT \$(SHELL)") > "$_log" 2>&1
}

# failed_tests LOG: the tests that failed, as make check said
failed_tests () {
    sed -n 's/^\(FAIL\|ERROR\): \([^ ]*\).*/\2/p' "$1" | sort -u | tr '\n' ' ' | sed 's/ $//'
}

# The baseline: every test named, on the unchanged tree
all_tests=$(for name in $patches; do tests_of "$name"; done | tr ' ' '\n' | sed '/^$/d' | sort -u | tr '\n' ' ')
echo "mutants: baseline: $all_tests"
if ! run_tests "$logs/baseline.log" $all_tests; then
    # Once more, the ones that failed: a test that passes then is flaky,
    # which is worth a word but need not stop the run
    flaky=$(failed_tests "$logs/baseline.log")
    if [ -z "$flaky" ] || ! run_tests "$logs/baseline-again.log" $flaky; then
        echo "mutants: these tests fail without any mutant: ${flaky:-(make check failed)}" >&2
        echo "mutants: a mutant could not be told caught; fix them first (KEEP=DIR keeps the logs)" >&2
        exit 2
    fi
    echo "mutants: warning: $flaky failed once on the unchanged tree, then passed: flaky"
fi

caught=0 survived=0 stale=0 broken=0 total=0
for name in $patches; do
    total=$((total + 1))
    p="$src/tests/mutants/$name.patch"
    t0=$(now)
    tests=$(tests_of "$name")
    if [ -z "$tests" ]; then
        echo "$name: STALE (no 'Tests:' line)"
        stale=$((stale + 1))
        continue
    fi
    if ! (cd "$tree" && patch -p1 -s -N --fuzz=0 --dry-run < "$p") > "$logs/$name.patch.log" 2>&1; then
        echo "$name: STALE (the patch no longer applies)"
        sed 's/^/    /' "$logs/$name.patch.log"
        stale=$((stale + 1))
        continue
    fi
    (cd "$tree" && patch -p1 -s -N --fuzz=0 --no-backup-if-mismatch < "$p") > "$logs/$name.patch.log" 2>&1
    if ! (cd "$tree" && $MAKE -j"$JOBS" check TESTS=) > "$logs/$name.build.log" 2>&1; then
        echo "$name: does not build"
        grep -m 5 'error' "$logs/$name.build.log" | sed 's/^/    /'
        broken=$((broken + 1))
    elif run_tests "$logs/$name.test.log" $tests; then
        echo "$name: SURVIVED ($tests passed) in $(($(now) - t0)) s"
        survived=$((survived + 1))
    else
        by=$(failed_tests "$logs/$name.test.log")
        echo "$name: CAUGHT by ${by:-make check (no test named; see its log)} in $(($(now) - t0)) s"
        # What the failing tests said, for KEEP=DIR
        cp "$tree/test-suite.log" "$logs/$name.test-suite.log" 2>/dev/null
        caught=$((caught + 1))
    fi
    if ! (cd "$tree" && patch -R -p1 -s --fuzz=0 --no-backup-if-mismatch < "$p") >> "$logs/$name.patch.log" 2>&1; then
        echo "mutants: cannot reverse $name; the scratch tree is no longer the original" >&2
        exit 2
    fi
done

took=$(($(now) - started))
echo "mutants: $caught caught, $survived survived, $stale stale, $broken broken of $total" \
    "(score $((caught * 100 / total))%) in $((took / 60)) min $((took % 60)) s"
[ -n "${KEEP:-}" ] && echo "mutants: the scratch tree and its logs are in $scratch"
[ $survived -eq 0 ] && [ $stale -eq 0 ] && [ $broken -eq 0 ]
exit
}

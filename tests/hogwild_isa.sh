#!/bin/sh
# tests/hogwild_isa.sh - the hogwild model built for AVX-512 (x86-64-v4)
# and for AVX2 with FMA (v3) learns the very same bits, as kernels.h
# promises, and the build the plugin loads (one clone per level, picked
# when it loads) learns what the level of this CPU does.
. "$(dirname "$0")/lib.sh"
: "${HOGWILD_ISA:?HOGWILD_ISA must point at tests/hogwild_isa}"

if [ ! -x "${HOGWILD_ISA}_v3" ]; then
    echo "skipped: the compiler does not compile for x86-64-v3 and v4 (configure checked)"
    exit 77
fi
flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
has () {
    for f; do
        case $flags in *" $f "*) ;; *) return 1 ;; esac
    done
}
if ! has avx2 fma bmi1 bmi2 movbe f16c; then
    echo "skipped: this CPU is not x86-64-v3 (AVX2 and FMA), so neither level build runs here"
    exit 77
fi

# The checksums, without the first line (whether the build has clones)
"${HOGWILD_ISA}_v3" | tail -n +2 > "$T/v3" || fail "the x86-64-v3 build failed"
[ "$(grep -c ' dense \| sparse \| scattered ' "$T/v3")" -eq 72 ] \
    || fail "the x86-64-v3 build printed $(wc -l < "$T/v3") lines, not 72 checksums"
level=v3
if has avx512f avx512bw avx512cd avx512dq avx512vl; then
    level=v4
    "${HOGWILD_ISA}_v4" | tail -n +2 > "$T/v4" || fail "the x86-64-v4 build failed"
    same "$T/v3" "$T/v4" "x86-64-v3 and v4 builds learn the same bits"
else
    echo "note: this CPU has no AVX-512: the v4 build is not run, v3 only"
fi
# Sparse examples dense enough are learned as dense ones: without L2,
# the very bits of the dense examples with the same values, for every
# shape and mini-batch (whole tiles, parts of one, several)
awk '$4 == 0 && $5 == "dense" { d[$1 " " $2 " " $3] = $6 }
     $4 == 0 && $5 == "sparse" { s[$1 " " $2 " " $3] = $6 }
     END { n = 0; for (k in d) { n++; if (s[k] != d[k]) { print k; bad = 1 } } exit bad || n != 12 }' "$T/v3" \
    || fail "sparse examples learned as dense differ from dense ones: $(cat "$T/v3")"
# Other configurations differ: a checksum of nothing would repeat
[ "$(cut -d' ' -f6 "$T/v3" | sort -u | wc -l)" -ge 50 ] || fail "the checksums repeat: $(cat "$T/v3")"

"$HOGWILD_ISA" > "$T/clones" || fail "the build with clones failed"
if [ "$(head -1 "$T/clones")" = "clones 1" ]; then
    tail -n +2 "$T/clones" > "$T/cloned"
    same "$T/$level" "$T/cloned" "the cloned build picks the $level version on this CPU"
else
    echo "note: this build has no clones (ThreadSanitizer, or not GCC on x86-64 ELF): it runs the default version"
fi
finish

#!/bin/sh
# The bash completion, sourced in bash and driven as readline drives it:
# COMP_WORDS split at blanks and at '=' as bash splits them, COMP_CWORD,
# COMP_LINE and COMP_POINT.  Subcommands, options, elements, plugins, the
# properties of the element being typed, paths.
. "$(dirname "$0")/lib.sh"
: "${COMPLETION:?COMPLETION must point at the bash completion script}"
if ! command -v bash >/dev/null 2>&1; then
    echo "skipped: no bash to source the completion in"
    exit 77
fi

cat > "$T/drive.bash" <<'END'
. "$COMPLETION" || exit 1
# LINE WORD...: the line up to the cursor and its words as readline has
# them, the last one being completed
line=$1
shift
COMP_LINE=$line COMP_POINT=${#line} COMP_WORDS=("$@") COMP_CWORD=$(($# - 1)) COMPREPLY=()
_weir
printf '%s\n' "${COMPREPLY[@]}"
END

# expect WANTED LINE WORD...: the candidates, blank-separated
expect () {
    want=$1
    shift
    got=$(COMPLETION="$COMPLETION" bash "$T/drive.bash" "$@" 2>"$T/err" | tr '\n' ' ' | sed 's/ $//')
    if [ "$got" = "$want" ]; then ok; else fail "completing '$1': got '$got', wanted '$want' $(cat "$T/err")"; fi
}

W=$WEIR
# Subcommands, and not the hidden one
expect "checkpoints elements graph help plugin run" "$W " "$W" ""
expect "checkpoints" "$W ch" "$W" "ch"
expect "" "$W comp" "$W" "comp"
# Options of each subcommand, and their arguments
expect "--checkpoint --checkpoint-failures" "$W run --checkp" "$W" run --checkp
expect "--epoch" "$W checkpoints ck --ep" "$W" checkpoints ck --ep
expect "--help" "$W elements --h" "$W" elements --h
mkdir "$T/ckdir" "$T/outdir"
: > "$T/ckfile"
expect "$T/ckdir/" "$W run --checkpoint $T/ck" "$W" run --checkpoint "$T/ck"
expect "$T/ckdir/ $T/ckfile" "$W run --stats $T/ck" "$W" run --stats "$T/ck"
expect "$T/ckdir/ $T/ckfile" "$W run --stats=$T/ck" "$W" run --stats = "$T/ck"
expect "$T/ckdir/" "$W checkpoints $T/ck" "$W" checkpoints "$T/ck"
# The description: readers first, then processors and writers
expect "leveldb libsvm lines" "$W run l" "$W" run l
expect "range" "$W run -q --progress-interval 100 r" "$W" run -q --progress-interval 100 r
expect "identity" "$W run range count=1 ! id" "$W" run range count = 1 ! id
expect "lines" "$W run range count=1 ! lin" "$W" run range count = 1 ! lin
expect "route" "$W run range count=1 ! ro" "$W" run range count = 1 ! ro
# route's branches are names the user makes up: its own properties only
expect "dead-letter= default=" "$W run range count=1 ! route d" "$W" run range count = 1 ! route d
# Plugins by name, from WEIR_PLUGIN_PATH
: > "$T/myplugin.so"
WEIR_PLUGIN_PATH=$T
export WEIR_PLUGIN_PATH
expect "myplugin" "$W run range count=1 ! myp" "$W" run range count = 1 ! myp
unset WEIR_PLUGIN_PATH
# The properties of the element being typed, and the ones every element or reader takes
expect "cache= capacity= count=" "$W run range c" "$W" run range c
expect "passes= path=" "$W run lines p" "$W" run lines p
expect "path=" "$W run range count=1 ! lines p" "$W" run range count = 1 ! lines p
expect "! batch= capacity= key= name= threads=" "$W run range count=1 ! null " "$W" run range count = 1 ! null ""
# ... but none given already
expect "! batch= cache= capacity= dead-letter= linger= name= on-error= passes= start= threads=" "$W run range count=3 " "$W" run range count = 3 ""
# A path after path=
expect "$T/outdir/" "$W run range count=1 ! lines path=$T/out" "$W" run range count = 1 ! lines path = "$T/out"
# A quoted description: readline replaces the text after the quote
expect "range count=1 ! identity" "$W run 'range count=1 ! id" "$W" run "'range count=1 ! id"
# weir elements NAME, weir help COMMAND
expect "msgpack" "$W elements ms" "$W" elements ms
expect "checkpoints" "$W help che" "$W" help che

finish

#!/bin/sh
# The manual page and the --help texts miss nothing.  The lists come from
# the command itself: the subcommands from its overview, each one's options
# from its table as the completion prints it ('weir complete'), the
# elements and properties from 'weir elements'.  Every option must be in
# its command's --help and in the page, every element and property in the
# page, and the page must render without a warning.
. "$(dirname "$0")/lib.sh"
: "${MANPAGE:?MANPAGE must point at the built or installed weir.1}"

[ -s "$MANPAGE" ] && ok || fail "no manual page at $MANPAGE"
"$WEIR" help --man > "$T/fresh.1" && ok || fail "weir help --man failed"
same "$T/fresh.1" "$MANPAGE" "'weir help --man' and the manual page"

# roff's escapes and font changes undone
plain () {
    sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\e/\\/g' -e 's/\\&//g' "$@"
}

# The subcommands: each has its section, its help two ways, the same
"$WEIR" help > "$T/overview" || fail "weir help failed"
commands=$(sed -n '/^Commands:$/,/^$/p' "$T/overview" | awk 'NR > 1 && NF {print $1}')
[ -n "$commands" ] && ok || fail "no commands in the overview: $(cat "$T/overview")"
for c in $commands; do
    grep -q "^\.SS \"weir $c\"$" "$MANPAGE" && ok || fail "the manual page has no section for 'weir $c'"
    "$WEIR" help "$c" > "$T/help.$c" && "$WEIR" "$c" --help > "$T/dashhelp" && ok || fail "no help for $c"
    same "$T/help.$c" "$T/dashhelp" "'weir help $c' and 'weir $c --help'"
    grep -q "^usage: weir $c" "$T/help.$c" && ok || fail "weir $c --help has no usage line"

    # Every option of the table: in --help and in the command's section of the page
    "$WEIR" complete -- "weir $c -" > "$T/options" || fail "weir complete failed for $c"
    [ -s "$T/options" ] && ok || fail "weir $c has no options, not even --help"
    awk -v c="$c" '$0 == ".SS \"weir " c "\"" {on = 1; next} /^\.S[SH] / {on = 0} on' "$MANPAGE" | plain > "$T/section"
    while read -r option; do
        case $option in
            --*) label="^  (-., )?$option( |\$)"; tag="^(-., )?$option( |\$)" ;;
            *) label="^  $option, --"; tag="^$option, --" ;;
        esac
        grep -Eq -- "$label" "$T/help.$c" && ok || fail "weir $c --help does not list $option"
        grep -Eq -- "$tag" "$T/section" && ok || fail "the manual page does not list $option of weir $c"
    done < "$T/options"
done
grep -q '^usage: weir run' "$T/overview" && ok || fail "the overview has no usage"

# Every element and property, with its default, and the same ones:
# "KIND ELEMENT [PROPERTY DEFAULT]" from 'weir elements' and from the page.
# The page documents the builtins; the plugins 'weir elements' finds on
# the search path (an installed weir has the examples' in its plugin
# folder) are marked '(plugin PATH)' and left out here
"$WEIR" elements > "$T/elements" || fail "weir elements failed"
awk '
    /^readers:$/ {kind = "reader"} /^processors:$/ {kind = "processor"} /^writers:$/ {kind = "writer"}
    /^every element also takes:$/ {kind = "common"; element = "*"; plugin = 0}
    /^readers also take:$/ {kind = "reader-common"; element = "*"; plugin = 0}
    /^processors also take:$/ {kind = "processor-common"; element = "*"; plugin = 0}
    /^  [^ ]/ {plugin = /  \(plugin /; if (!plugin) {element = $1; print kind, element}}
    /^      [^ ]/ && !plugin {eq = index($1, "="); print kind, element, substr($1, 1, eq - 1), substr($1, eq + 1)}
' "$T/elements" | sort > "$T/from-elements"
plain "$MANPAGE" | awk '
    /^\.SH ELEMENTS/ {on = 1; next}
    /^\.SH / {on = 0}
    !on {next}
    /^\.SS Readers/ {kind = "reader"} /^\.SS Processors/ {kind = "processor"} /^\.SS Writers/ {kind = "writer"}
    /^\.SS "Properties of every element"/ {kind = "common"; element = "*"}
    /^\.SS "Properties of every reader"/ {kind = "reader-common"; element = "*"}
    /^\.SS "Properties of every processor"/ {kind = "processor-common"; element = "*"}
    /^\.TP/ {tag = 1; next}
    tag && /^\.B / {element = $2; print kind, element; tag = 0; next}
    tag && / \(required\)$/ {print kind, element, $1, "..."; tag = 0; next}
    tag && / \(optional, no default\)$/ {print kind, element, $1, ""; tag = 0; next}
    tag {eq = index($1, "="); print kind, element, substr($1, 1, eq - 1), substr($1, eq + 1); tag = 0}
' | sort > "$T/from-page"
grep -q '^reader range count \.\.\.$' "$T/from-elements" && grep -q '^common \* threads 1$' "$T/from-elements" \
    && grep -q '^reader-common \* passes 1$' "$T/from-elements" && ok \
    || fail "weir elements was not read: $(cat "$T/from-elements")"
if diff "$T/from-elements" "$T/from-page" > "$T/diff"; then ok; else
    fail "the manual page and 'weir elements' differ (< weir elements, > the page):"
    cat "$T/diff" >&2
fi

# 'weir elements NAME' shows each element's properties, common ones included
for element in $(awk '$2 != "*" {print $2}' "$T/from-elements" | sort -u); do
    "$WEIR" elements "$element" > "$T/one" || fail "weir elements $element failed"
    for p in $(awk -v e="$element" '$2 == e && NF == 4 {print $3}' "$T/from-elements") threads capacity batch; do
        grep -q "^  $p " "$T/one" && ok || fail "weir elements $element does not show $p"
    done
done
expect_exit 2 "unknown element 'nosuch' \(readers: range" -- "$WEIR" elements nosuch

# Exit codes, environment, files: the overview's and the page's
for code in $(sed -n '/^Exit codes:$/,/^$/p' "$T/overview" | awk '$1 ~ /^[0-9]+$/ {print $1}'); do
    awk -v c="$code" '/^\.SH "EXIT STATUS"/ {on = 1} on && $0 == ".B " c {found = 1} END {exit !found}' "$MANPAGE" \
        && ok || fail "exit code $code is not in the manual page"
done
grep -q '^\.B WEIR_PLUGIN_PATH$' "$MANPAGE" && ok || fail "the manual page does not describe WEIR_PLUGIN_PATH"
folder=$(sed -n '/plugin folder:$/{n;s/^ *//p;}' "$T/overview")
[ -n "$folder" ] && plain "$MANPAGE" | grep -qxF ".I $folder" && ok \
    || fail "the plugin folder '$folder' is not under FILES in the manual page"

# Rendered without a warning, by man or else by groff: the one check that
# needs them
if command -v man >/dev/null 2>&1; then
    MANWIDTH=80 man --warnings -l "$MANPAGE" 2>"$T/warnings" >/dev/null
    [ ! -s "$T/warnings" ] && ok || fail "man warns: $(cat "$T/warnings")"
elif command -v groff >/dev/null 2>&1; then
    groff -man -ww -z "$MANPAGE" 2>"$T/warnings"
    [ ! -s "$T/warnings" ] && ok || fail "groff warns: $(cat "$T/warnings")"
else
    fail "neither man nor groff is installed (scripts/install-deps.sh installs groff-base): the page cannot be rendered"
fi

finish

#!/bin/sh
# The documents show only what works.  Every command of the ```sh blocks
# of README.md and docs/plugins.md runs here with this build's weir and
# plugins: each README section in a scratch folder of its own, the plugin
# tutorial in one, as a reader would run them.  The few that cannot run
# here are listed in 'excluded' with the reason, and checked another way.
# Every long option the two documents name exists, and so does every
# builtin element and property of the README's tables, with its default.
. "$(dirname "$0")/lib.sh"
: "${TOP_SRCDIR:?TOP_SRCDIR must point at the source tree}"
: "${PLUGIN_CFLAGS:?PLUGIN_CFLAGS must hold the compile flags of <weir/plugin.h>}"
: "${WORDCOUNT_DIR:?WORDCOUNT_DIR must point at the word-count plugins}"
: "${HOGWILD_DIR:?HOGWILD_DIR must point at the softmax plugin}"
: "${IDX2MSGPACK:?IDX2MSGPACK must point at examples/hogwild/idx2msgpack}"

dataset=/usr/share/datasets/fashion-mnist
# The PostgreSQL section's commands reach a server of the test's own,
# through libpq's PG* variables as a reader's would reach theirs
. "$(dirname "$0")/pg.sh"
if pg_available; then
    pg_start
fi
# And the Kafka section's a mock cluster of librdkafka's, with the topic
# events: its commands name localhost:9092, which becomes the cluster's
# address
. "$(dirname "$0")/kafka.sh"
kafka_start events 3
seq 1 3000 | sed 's/.*/{"id":&,"event":"click"}/' > "$T/events.msgs"
kafka_produce "$T/events.msgs"
trap 'kafka_stop; pg_stop' EXIT
# The README's mpirun lines under AddressSanitizer: see tests/mpi.sh
export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}fast_unwind_on_malloc=0"

# excluded LINE: the reason LINE is not run here, or false
excluded () {
    case $1 in
        scripts/install-deps.sh*) echo "installs Debian packages as root; this build needed them" ;;
        ./autogen.sh*) echo "builds weir and runs this very test suite" ;;
        make\ -j2\ check*) echo "runs this very test suite" ;;
        make\ install*) echo "installs into the system; make installcheck tests the installed weir" ;;
        ./configure*) echo "would reconfigure the build; its options are checked in configure --help" ;;
        make\ distcheck*) echo "builds and tests a tarball for minutes; .ci/run runs it" ;;
        make\ check-faults*) echo "the long fault suite takes most of an hour; make check runs it short" ;;
        make\ bench*) echo "benchmarks take minutes and no test runs them" ;;
        make\ check-mutants*) echo "builds the tree once per mutant, about a quarter of an hour" ;;
        examples/hogwild/run-fashion-mnist*) echo "trains for a minute; tests/example_hogwild.sh runs it" ;;
        liblinear-train*) echo "liblinear is the comparison, not weir, and trains for half a minute" ;;
        psql*|*" postgres "*)
            pg_available && return 1
            echo "$PG_WHY; tests/cli_postgres.sh runs such jobs where a server can run"
            ;;
        mpirun*)
            [ "${WEIR_MPI:-no}" = yes ] && return 1
            echo "this weir was built without MPI"
            ;;
        *) return 1 ;;
    esac
}

# check_excluded LINE: what can be checked of an excluded line
check_excluded () {
    case $1 in
        *"make -j2 demo"*)
            # The demo target runs examples/demo.sh
            TMPDIR="$T" sh "$TOP_SRCDIR/examples/demo.sh" "$WEIR" > "$T/demo.out" 2>&1 \
                && grep -q '^== the last lines' "$T/demo.out" && ok || fail "the demo: $(tail -5 "$T/demo.out")"
            ;;
    esac
    case $1 in
        ./configure*)
            for option in $(printf '%s\n' "${1%%#*}" | grep -o -- '--[a-z][a-z-]*'); do
                "$TOP_SRCDIR/configure" --help | grep -q -- "$option" && ok || fail "configure has no $option"
            done
            ;;
        make\ *)
            target=$(printf '%s\n' "$1" | awk '{for (i = 2; i <= NF; i++) if ($i !~ /^-/) {print $i; exit}}')
            case $target in
                check | install | distcheck) ok ;;
                *) grep -q "^$target:" "$TOP_SRCDIR/Makefile.am" && ok || fail "make has no target $target" ;;
            esac
            ;;
        scripts/* | examples/* | ./autogen.sh*)
            [ -x "$TOP_SRCDIR/${1%% *}" ] && ok || fail "$TOP_SRCDIR/${1%% *} is no program"
            ;;
    esac
}

# The blocks of DOC into $T/blocks/NAME: NNN.sh, NNN.c and an index of
# "KIND NNN SECTION LINE" (SECTION counts '## ' headings)
extract () {
    mkdir -p "$T/blocks/$2"
    awk -v dir="$T/blocks/$2" '
        /^## / && !fence {section++}
        /^```/ {
            if (fence) {
                if (kind) {close(file); printf "%s %03d %d %d\n", kind, n, section, start > (dir "/index")}
                fence = 0; kind = ""; next
            }
            fence = 1; lang = substr($0, 4)
            if (lang == "sh" || lang == "c") {
                kind = lang; n++; start = NR + 1
                file = sprintf("%s/%03d.%s", dir, n, lang); printf "" > file
            }
            next
        }
        kind {print > file}
    ' "$1"
}
extract "$TOP_SRCDIR/README.md" readme
extract "$TOP_SRCDIR/docs/plugins.md" plugins
[ -s "$T/blocks/readme/index" ] && [ -s "$T/blocks/plugins/index" ] && ok || fail "no blocks found in the documents"

# The tutorial's finished plugin: its last C block that is a whole file
finished=$(awk '$1 == "c" {print $2}' "$T/blocks/plugins/index" | while read -r n; do
    grep -q weir_plugin_processor "$T/blocks/plugins/$n.c" && echo "$T/blocks/plugins/$n.c"
done | tail -1)
[ -n "$finished" ] && ok || fail "docs/plugins.md shows no finished plugin"

# Its pieces are in it, line by line, so the steps and the end agree; a
# statement fragment (step 4) compiles in a callback's body
for n in $(awk '$1 == "c" {print $2}' "$T/blocks/plugins/index"); do
    block="$T/blocks/plugins/$n.c"
    if grep -q weir_plugin_processor "$block"; then
        continue
    elif head -1 "$block" | grep -Eq '^(#include|static|typedef|const)'; then
        while IFS= read -r line; do
            grep -qxF -- "$line" "$finished" || fail "docs/plugins.md: the finished plugin lacks '$line' of a step"
        done < "$block"
        ok
    else
        { printf '#include <weir/plugin.h>\nint f (weir_stage *st, const msgpack_object *rec);\n'
          printf 'int f (weir_stage *st, const msgpack_object *rec)\n{\n'; cat "$block"; printf '}\n'; } > "$T/fragment.c"
        # shellcheck disable=SC2086
        ${CC:-cc} -std=c11 -Wall -Werror -fsyntax-only $PLUGIN_CFLAGS "$T/fragment.c" 2>"$T/err" && ok \
            || fail "docs/plugins.md: a fragment does not compile: $(cat "$T/err")"
    fi
done
# The README's C compiles
for n in $(awk '$1 == "c" {print $2}' "$T/blocks/readme/index"); do
    # shellcheck disable=SC2086
    ${CC:-cc} -std=c11 -Wall -Werror -fsyntax-only $PLUGIN_CFLAGS -x c "$T/blocks/readme/$n.c" 2>"$T/err" && ok \
        || fail "README.md: the C at block $n does not compile: $(cat "$T/err")"
done

# A scratch folder as a reader's: ./weir and weir, pkg-config that knows
# weir before it is installed, the examples' plugins and programs, inputs
setup () {
    mkdir -p "$1/bin" "$1/logs" "$1/books" "$1/examples/wordcount" "$1/examples/hogwild"
    printf '#!/bin/sh\nexec "%s" "$@"\n' "$WEIR" > "$1/bin/weir"
    cp "$1/bin/weir" "$1/weir"
    printf '#!/bin/sh\nif [ "$*" = "--cflags weir" ]; then echo "%s"; else exec "%s" "$@"; fi\n' \
        "$PLUGIN_CFLAGS" "$(command -v pkg-config || echo false)" > "$1/bin/pkg-config"
    printf '#!/bin/sh\nexec "%s" "$@"\n' "$IDX2MSGPACK" > "$1/examples/hogwild/idx2msgpack"
    chmod +x "$1/bin/weir" "$1/weir" "$1/bin/pkg-config" "$1/examples/hogwild/idx2msgpack"
    ln -s "$WORDCOUNT_DIR" "$1/examples/wordcount/.libs"
    ln -s "$HOGWILD_DIR" "$1/examples/hogwild/.libs"
    # 450,000 lines: epochs of 100k end at 5, and --keep 3 keeps 3 to 5
    seq 1 200000 | sed 's/^/GET \/index.html 200 /' > "$1/logs/a.log"
    seq 1 250000 | sed 's/^/POST \/form 302 /' > "$1/logs/b.log"
    seq 1 3000 | sed 's/.*/{"id":&,"event":"click","tags":["a","b"],"ms":1.5}/' > "$1/logs/c.jsonl"
    printf 'It was the best of times, it was the worst of times\n' > "$1/books/a.txt"
    printf 'Call me Ishmael. Some years ago\n' > "$1/books/b.txt"
    cp "$TOP_SRCDIR/README.md" "$1/README.md"
    cp "$finished" "$1/myproc.c"
}

# Runs the blocks of DOC (NAME in $T/blocks), each section in a folder of
# its own when PER_SECTION, and with ENV
run_doc () {
    doc=$1 name=$2 per_section=$3 env=$4
    script=
    current=
    pieces_since_whole=0 whole=
    while read -r kind n section line; do
        if [ "$kind" = c ]; then
            if grep -q weir_plugin_processor "$T/blocks/$name/$n.c"; then
                whole="$T/blocks/$name/$n.c" pieces_since_whole=0
            else
                pieces_since_whole=1
            fi
            continue
        fi
        key=$name
        [ "$per_section" = 1 ] && key=$name-$section
        if [ "$key" != "$current" ]; then
            [ -n "$script" ] && run_script "$script" "$doc" "$current"
            current=$key
            setup "$T/run/$key"
            script="$T/run/$key.sh"
            printf 'cd "%s"\nPATH="%s/bin:$PATH"\n%s\n' "$T/run/$key" "$T/run/$key" "$env" > "$script"
        fi
        # The tutorial's threshold.c: the whole file shown last, or the
        # finished one once the steps changed it by pieces
        if [ -n "$whole" ]; then
            if [ "$pieces_since_whole" = 1 ]; then src=$finished; else src=$whole; fi
            printf 'cp "%s" threshold.c\n' "$src" >> "$script"
        fi
        # Blocks that need the data set cannot run without it, nor can the
        # rest of their section: a failure, for the data set is a test
        # dependency
        if grep -q "$dataset" "$T/blocks/$name/$n.sh" && [ ! -d "$dataset" ]; then
            fail "$doc, line $line on cannot run: $dataset is missing (scripts/install-deps.sh installs dataset-fashion-mnist)"
            printf 'exit 0\n' >> "$script"
        fi
        printf 'echo "== %s, line %s" >&2\n' "$doc" "$line" >> "$script"
        awk '{ if (sub(/\\$/, "")) { acc = acc $0; next } print acc $0; acc = "" }' "$T/blocks/$name/$n.sh" \
            > "$T/lines"
        while IFS= read -r command; do
            trimmed=$(printf '%s\n' "$command" | sed 's/^ *//')
            if reason=$(excluded "$trimmed"); then
                echo "not run: $trimmed: $reason"
                check_excluded "$trimmed"
                printf ': excluded\n' >> "$script"
            else
                printf '%s\n' "$command" | sed "s/localhost:9092/$BROKERS/g" >> "$script"
            fi
        done < "$T/lines"
    done < "$T/blocks/$name/index"
    [ -n "$script" ] && run_script "$script" "$doc" "$current"
}

run_script () {
    if sh -e "$1" < /dev/null > "$1.out" 2> "$1.err"; then ok; else
        fail "$2: a command fails in $(grep '^== ' "$1.err" | tail -1 | sed 's/^== //'):"
        tail -15 "$1.err" >&2
    fi
}

run_doc README.md readme 1 ""
# The tutorial assumes weir installed, with the word-count plugins in its folder
run_doc docs/plugins.md plugins 0 "WEIR_PLUGIN_PATH='$WORDCOUNT_DIR'; export WEIR_PLUGIN_PATH"

# Every long option the documents name is an option of weir (the tables
# as 'weir complete' prints them), or of configure, pkg-config or
# idx2msgpack where the documents use those
for c in $("$WEIR" help | sed -n '/^Commands:$/,/^$/p' | awk 'NR > 1 && NF {print $1}'); do
    "$WEIR" complete -- "weir $c --"
done > "$T/weir-options"
printf -- '--help\n--version\n' >> "$T/weir-options"
# (configure's --with-X has its --without-X; srun, whose --mpi the
# cluster section names, is Slurm's and not installed here)
{ "$TOP_SRCDIR/configure" --help | sed 'p; s/--with-/--without-/'; pkg-config --help 2>&1; "$IDX2MSGPACK" 2>&1
  [ "${WEIR_MPI:-no}" = yes ] && OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "$MPIRUN" --help all 2>&1
  printf -- '--mpi (srun)\n'; } > "$T/other-options"
for doc in README.md docs/plugins.md; do
    for option in $(grep -o -- '--[a-z][a-z-]*' "$TOP_SRCDIR/$doc" | sort -u); do
        if grep -qxF -- "$option" "$T/weir-options" || grep -q -- "$option\b" "$T/other-options"; then ok; else
            fail "$doc names $option, which neither weir nor the tools it shows have"
        fi
    done
done

# The README's tables: every builtin element of its kind, every property
# with its default or required, as the command has them
"$WEIR" elements > "$T/elements"
awk '
    /^\| property \| default \| meaning \|/ {table = "common"; next}
    /^\| `softmax` property/ {table = "softmax"; next}
    /^\| element \| kind \|/ {table = "elements"; next}
    !/^\|/ {table = ""}
    table == "elements" && /^\| `[a-z]+` \| (reader|processor|writer) \|/ {
        split($0, col, "|"); name = col[2]; gsub(/[ `]/, "", name); kind = col[3]; gsub(/ /, "", kind)
        print "element", name, kind
        props = col[4]
        while (match(props, /`[a-z-]+=[^`]*`( \(required)?/)) {
            item = substr(props, RSTART, RLENGTH); props = substr(props, RSTART + RLENGTH)
            required = item ~ /\(required$/
            sub(/ \(required$/, "", item); gsub(/`/, "", item)
            eq = index(item, "=")
            print "property", name, kind, substr(item, 1, eq - 1), required ? "required" : substr(item, eq + 1)
        }
    }
    table == "common" && /^\| `[a-z-]+=/ {
        split($0, col, "|"); item = col[2]; gsub(/[ `]/, "", item); value = col[3]; gsub(/ /, "", value)
        print "common", substr(item, 1, index(item, "=") - 1), value
    }
    table == "softmax" && /^\| `[a-z-]+=/ {
        split($0, col, "|"); item = col[2]; gsub(/[ `]/, "", item)
        print "softmax", substr(item, 1, index(item, "=") - 1)
    }
' "$TOP_SRCDIR/README.md" > "$T/tables"
grep -q '^element range reader$' "$T/tables" && grep -q '^common threads 1$' "$T/tables" \
    && grep -q '^property range reader count required$' "$T/tables" && ok || fail "the README's tables were not read: $(cat "$T/tables")"
while read -r what a b c d; do
    case $what in
        element)
            "$WEIR" elements "$a" > "$T/one" 2>/dev/null && grep -qx "$a ($b)" "$T/one" && ok \
                || fail "README.md shows the $b '$a', which weir elements does not have"
            ;;
        property)
            # The element's own section of 'weir elements NAME'
            "$WEIR" elements "$a" 2>/dev/null | awk -v head="$a ($b)" '$0 == head {on = 1; next} /^[^ ]/ {on = 0} on' > "$T/one"
            # Property lines are indented by two; deeper ones wrap a description
            got=$(awk -v p="$c" '/^  [^ ]/ && $1 == p {print $2}' "$T/one")
            case $d in
                # A placeholder not marked (required): a value of one's own, no default
                [A-Z]*) want="(none)" ;;
                *) want=$d ;;
            esac
            [ -n "$got" ] && [ "$got" = "$want" ] && ok \
                || fail "README.md shows $c=$d for the $b '$a'; weir has: ${got:-no such property}"
            ;;
        common)
            got=$(awk -v p="$a" '/^(every element|readers|processors) also take/ {on = 1; next} on && $1 ~ ("^" p "=") {sub(/^[^=]*=/, "", $1); print "=" $1; exit}' "$T/elements")
            # "=" before the default: a property without one still shows
            [ -n "$got" ] && [ "$got" = "=$b" ] && ok || fail "README.md shows $a with default '$b'; weir has: ${got:-no such property}"
            ;;
        softmax)
            grep -q "\"$a\"" "$TOP_SRCDIR/examples/hogwild/softmax.c" && ok || fail "README.md shows softmax's $a=, which softmax.c never reads"
            ;;
    esac
done < "$T/tables"

finish

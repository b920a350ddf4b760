#!/bin/sh
# Part 5 of the fault-injection suite: damaged checkpoints.  A paused job's
# checkpoint folder is damaged, file by file (CURRENT, the manifest, the
# logs, the tables): a byte flipped at the start, the middle and the end,
# the file cut to half, to nothing, or deleted.  Then --resume must either
# refuse it (exit 1 or 2) with a message naming the epoch or the file (or
# the folder, with LevelDB's reason, when LevelDB does not say which
# file), or go on exactly from a checkpoint, with a warning when it is an
# older one than the latest.  Never a silent start from zero, never a
# crash or a hang.
PART=corrupt
. "$(dirname "$0")/common.sh"

IN="$T/in"
make_inputs "$IN" 2 1500
refused=0
refused_folder=0
recovered=0
from_zero=0
unharmed=0
left_damaged=0

# A store whose checkpoints are all in its log, and one with a table
# too: 8 MB checkpoints fill LevelDB's 64 MB memtable in eight
STORES="small padded"
for store in $STORES; do
    case $store in
        small) pad= epochs=4 ;;
        padded) pad="pad=8000000" epochs=10 ;;
    esac
    DESC="lines path='$IN/*.txt' ! $PROC slots=4 $pad ! lines path=$T/work.out"
    rm -rf "$T/pristine" "$T/pristine.out" "$T/ref.out" "$T/ref.ck"
    "$WEIR" run -q --checkpoint "$T/ref.ck" --epoch-records 250 "$(echo "$DESC" | sed "s|$T/work.out|$T/ref.out|")" \
        || fail "$store: reference"
    "$WEIR" run -q --checkpoint "$T/pristine" --epoch-records 250 --epochs $epochs "$DESC" || fail "$store: paused run"
    mv "$T/work.out" "$T/pristine.out"
    latest=$("$WEIR" checkpoints "$T/pristine" | awk '/latest/ { print $1 }')
    files=$(cd "$T/pristine" && ls | grep -E '^(CURRENT|MANIFEST-[0-9]+|[0-9]+\.(log|ldb))$')
    echo "$store: checkpoints up to $latest in $(echo $files)"
    for f in $files; do
        DAMAGES="flip-start flip-middle flip-end half empty delete"
        # Long: bytes flipped at six more offsets drawn at random.  Short
        # (make check): three of the six damages, drawn from the seed, so
        # that the part stays inside a minute or two on a slow machine
        if long; then
            DAMAGES="$DAMAGES flip-random flip-random flip-random flip-random flip-random flip-random"
        else
            drawn=
            for d in $DAMAGES; do
                rand 1000
                drawn="$drawn $R:$d"
            done
            DAMAGES=$(echo $drawn | tr ' ' '\n' | sort -n | head -3 | cut -d: -f2)
        fi
        for damage in $DAMAGES; do
            name="$store: $f $damage"
            # Tables and logs are never written again: linked, not copied
            rm -rf "$T/work" "$T/work.out"
            mkdir "$T/work"
            for g in $(ls "$T/pristine"); do
                case $g in
                    *.ldb | *.log) [ "$g" != "$f" ] && ln "$T/pristine/$g" "$T/work/$g" || cp "$T/pristine/$g" "$T/work/$g" ;;
                    *) cp "$T/pristine/$g" "$T/work/$g" ;;
                esac
            done
            cp "$T/pristine.out" "$T/work.out"
            size=$(wc -c < "$T/work/$f")
            case $damage in
                flip-start) "$FCHECK" flip "$T/work/$f" 0 ;;
                flip-middle) "$FCHECK" flip "$T/work/$f" $((size / 2)) ;;
                flip-end) "$FCHECK" flip "$T/work/$f" -1 ;;
                flip-random)
                    rand "$size"
                    damage="flip-at-$R"
                    name="$store: $f $damage"
                    "$FCHECK" flip "$T/work/$f" "$R"
                    ;;
                half) truncate -s $((size / 2)) "$T/work/$f" ;;
                empty) truncate -s 0 "$T/work/$f" ;;
                delete) rm "$T/work/$f" ;;
            esac
            cycles=$((cycles + 1))
            timed 120 "$WEIR" run --no-progress --checkpoint "$T/work" --resume --epoch-records 250 "$DESC" \
                2>"$T/err"
            if [ $RC -ge 128 ]; then
                [ $RC -eq 137 ] || crashes=$((crashes + 1))
                fail "$name: exit $RC"
                sed 's/^/    /' "$T/err" >&2
                continue
            fi
            if [ $RC -eq 1 ] || [ $RC -eq 2 ]; then
                # Refused: the message names the epoch or the file, or at
                # least the checkpoint folder with LevelDB's reason (LevelDB
                # does not say which of its files a checksum failed in)
                if grep -Eq "(checkpoint|epoch) [0-9]+|$f" "$T/err"; then
                    refused=$((refused + 1))
                    ok
                elif grep -q "'$T/work'.*Corruption: " "$T/err"; then
                    refused_folder=$((refused_folder + 1))
                    ok
                else
                    fail "$name: refused (exit $RC) without naming the epoch, the file or the folder"
                    sed 's/^/    /' "$T/err" >&2
                fi
                continue
            fi
            if [ $RC -ne 0 ]; then
                fail "$name: exit $RC"
                sed 's/^/    /' "$T/err" >&2
                continue
            fi
            from=$(sed -n 's/.*resuming from checkpoint \([0-9]*\) of.*/\1/p' "$T/err")
            if [ -z "$from" ]; then
                # Every checkpoint gone (the log that held them all): a
                # start from zero, only with the warning that the store
                # went back in time
                if grep -q "warning: .* had written epoch $latest but holds only nothing" "$T/err"; then
                    from=none
                    from_zero=$((from_zero + 1))
                    ok
                else
                    fail "$name: exit 0 without resuming: a silent start from zero"
                    sed 's/^/    /' "$T/err" >&2
                    continue
                fi
            elif [ "$from" -lt "$latest" ]; then
                if grep -q 'warning' "$T/err"; then
                    recovered=$((recovered + 1))
                    ok
                else
                    fail "$name: went on from checkpoint $from, older than $latest, without a warning"
                    sed 's/^/    /' "$T/err" >&2
                fi
            else
                unharmed=$((unharmed + 1))
            fi
            cycles=$((cycles - 1))
            # The job went on from a checkpoint it could read; older ones
            # may stay damaged, and a listing, which reads them, refuses
            # the store: then only the latest is checked
            which=all
            if ! "$WEIR" checkpoints "$T/work" > /dev/null 2>"$T/list.err"; then
                grep -q 'Corruption' "$T/list.err" && ok || fail "$name: the listing: $(cat "$T/list.err")"
                which=latest
                left_damaged=$((left_damaged + 1))
            fi
            verify "$name (from checkpoint $from)" lines "$T/ref.out" "$T/work.out" "$T/work" $which
        done
    done
done
echo "$PART: $refused refused naming the epoch or the file, $refused_folder refused naming the folder and LevelDB's reason only," \
    "$recovered went on from an older checkpoint with a warning, $from_zero started from zero with a warning (every checkpoint lost)," \
    "$unharmed went on from the latest; after going on, $left_damaged stores could not be listed (older checkpoints damaged)"

summary
finish

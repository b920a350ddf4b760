#!/bin/sh
# Part 3 of the fault-injection suite: power cuts.  weir runs under the
# LD_PRELOAD shim tests/faults/faultfs.c, which journals each file's
# length at every fsync and fdatasync and each folder's entries at every
# sync of it.  After a SIGKILL, tests/faults/powercut puts the checkpoint
# folder and the outputs back as a power cut would leave them under a
# strict model (a name is durable only once its folder was synced; bytes
# only up to the last sync), and the job resumes.  Asserted: a finished
# checkpoint survives the cut, and in the end the output and every
# checkpoint are exact.
PART=power-cuts
. "$(dirname "$0")/common.sh"
: "${POWERCUT:?POWERCUT must point at tests/faults/powercut}"

ROOT="$T/root"
IN="$T/in"
mkdir -p "$ROOT"
export FAULTFS_ROOT="$ROOT" FAULTFS_JOURNAL="$T/journal" FAULTFS_GRAVES="$T/graves"

if long; then
    SWEEP="1 2 3 4 5 6 7 8 9 10 11 12"
    CUTS=6
    PER=3000
else
    SWEEP="4 5 6"
    CUTS=2
    PER=1500
fi
make_inputs "$IN" 2 $PER

# latest DIR: the latest epoch, -1 when there is none
latest () {
    _e=$("$WEIR" checkpoints "$1" 2>/dev/null | awk '/latest/ { print $1 }')
    echo "${_e:--1}"
}

# cut: put ROOT back as a power cut would leave it
power_cut () {
    if "$POWERCUT" restore "$ROOT" "$T/journal" "$T/graves" > "$T/cut.out"; then
        ok
    else
        fail "$1: the power-cut model cannot put the files back"
        sed 's/^/    /' "$T/cut.out" >&2
    fi
}

# shimmed CMD...: run CMD under the shim, RC its exit
shimmed () {
    LD_PRELOAD="$SHIM" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" timed 120 "$@"
}

# --- A finished checkpoint survives a power cut -------------------------
# A 16 MB blob in every checkpoint makes LevelDB start a new log every few
# checkpoints (its memtable holds 64 MB): the checkpoint written to a new
# log is durable only once the folder is synced.  Killed as the threads
# go into epoch n+1, checkpoint n is finished and must survive.
DESC_PAD="lines path='$IN/*.txt' ! $PROC slots=4 pad=16000000 ! lines path=$ROOT/out"
for n in $SWEEP; do
    rm -rf "$ROOT"/* && "$POWERCUT" baseline "$ROOT" "$T/journal" "$T/graves"
    WEIR_KILL_AT=readers-resumed:$n shimmed "$WEIR_KP" run -q --checkpoint "$ROOT/ck" --epoch-records 400 \
        "$DESC_PAD" 2>"$T/err"
    [ $RC -eq 137 ] && ok || { fail "pad $n: exit $RC, wanted 137"; sed 's/^/    /' "$T/err" >&2; }
    power_cut "pad $n"
    got=$(latest "$ROOT/ck")
    [ "$got" -ge $n ] && ok || fail "pad $n: checkpoint $n was finished, a power cut left only up to $got"
    timed 120 "$WEIR" run -q --checkpoint "$ROOT/ck" --resume --epoch-records 400 "$DESC_PAD" 2>"$T/err"
    [ $RC -eq 0 ] && ok || { fail "pad $n: resume exit $RC"; sed 's/^/    /' "$T/err" >&2; }
    seq 0 $((2 * PER - 1)) > "$T/pad.ref"
    verify "pad $n" lines "$T/pad.ref" "$ROOT/out" "$ROOT/ck"
done

# --- --resume-from, cut after the rollback ------------------------------
# A finished job goes back to epoch E (--resume-from), is killed right
# after the rollback's own write, or once the first epoch after E is
# synced in the output but not yet checkpointed, and the power goes.  The
# rollback must survive the cut (latest is E, not the abandoned newest):
# otherwise a plain --resume would cut the output, which holds this run's
# bytes, to the abandoned run's lengths.
job lines "$T/rf.out"
rm -rf "$T/rf.out" "$T/rf.ck"
"$WEIR" run -q --checkpoint "$T/rf.ck" --epoch-records 300 "$JOB" || fail "resume-from: reference"
for point in after-leveldb-write:1 writers-synced:1; do
    rm -rf "$ROOT"/*
    job lines "$ROOT/out"
    "$WEIR" run -q --checkpoint "$ROOT/ck" --epoch-records 300 "$JOB" || fail "resume-from $point: first run"
    "$POWERCUT" baseline "$ROOT" "$T/journal" "$T/graves"
    top=$(latest "$ROOT/ck")
    E=$((top / 2))
    WEIR_KILL_AT=$point shimmed "$WEIR_KP" run -q --checkpoint "$ROOT/ck" --resume-from $E --epoch-records 300 \
        "$JOB" 2>"$T/err"
    [ $RC -eq 137 ] && ok || { fail "resume-from $E ($point): exit $RC, wanted 137"; sed 's/^/    /' "$T/err" >&2; }
    power_cut "resume-from $E ($point)"
    got=$(latest "$ROOT/ck")
    [ "$got" -eq $E ] && ok \
        || fail "resume-from $E ($point): the rollback did not survive a power cut: latest is $got, of $top before"
    timed 120 "$WEIR" run -q --checkpoint "$ROOT/ck" --resume --epoch-records 300 "$JOB" 2>"$T/err"
    [ $RC -eq 0 ] && ok || { fail "resume-from $E ($point): resume exit $RC"; sed 's/^/    /' "$T/err" >&2; }
    verify "resume-from $E, cut at $point" lines "$T/rf.out" "$ROOT/out" "$ROOT/ck"
done

# --- A job without a checkpoint replaces its output whole --------------
# The new file is written beside the old one and renamed over it at the
# end.  Killed once the new file is synced but not renamed, or renamed
# but the folder not synced, a power cut leaves the old file or the new
# one, each whole: never an empty or a partial file.
seq 0 $((2 * PER - 1)) > "$T/replace.new"
for point in output-synced output-renamed; do
    rm -rf "$ROOT"/*
    echo "the old output, kept whole" > "$ROOT/out"
    "$POWERCUT" baseline "$ROOT" "$T/journal" "$T/graves"
    WEIR_KILL_AT=$point:1 shimmed "$WEIR_KP" run -q --epoch-records 300 "lines path='$IN/*.txt' ! lines path=$ROOT/out" \
        2>"$T/err"
    [ $RC -eq 137 ] && ok || { fail "replace ($point): exit $RC, wanted 137"; sed 's/^/    /' "$T/err" >&2; }
    power_cut "replace ($point)"
    sort -n "$ROOT/out" > "$T/replace.got"
    if [ "$(cat "$ROOT/out")" = "the old output, kept whole" ] || cmp -s "$T/replace.got" "$T/replace.new"; then
        ok
    else
        fail "replace ($point): after a power cut the output is neither the old file nor the new one: $(wc -c < "$ROOT/out") bytes"
    fi
done
# Run to its end, the replacement survives a power cut
rm -rf "$ROOT"/*
echo "the old output" > "$ROOT/out"
"$POWERCUT" baseline "$ROOT" "$T/journal" "$T/graves"
shimmed "$WEIR_KP" run -q --epoch-records 300 "lines path='$IN/*.txt' ! lines path=$ROOT/out" 2>"$T/err"
[ $RC -eq 0 ] && ok || { fail "replace: exit $RC"; sed 's/^/    /' "$T/err" >&2; }
power_cut "replace, finished"
sort -n "$ROOT/out" > "$T/replace.got"
same "$T/replace.got" "$T/replace.new" "replace: a finished job's output after a power cut"

# --- Incremental ingest, cut ---------------------------------------------
# A finished job over a glob resumes after a file grew and a new one came
# (checkpoint/replan.h).  Killed at a point of that run's epochs and cut,
# then resumed: every line once.  The inputs live outside the cut folder:
# what was appended to them before the run is on disk.
INC="$T/inc"
IDESC="lines path='$INC/*.log' split=4000 ! lines path=$ROOT/out"
for point in pipe-drained:2 writers-synced:1 writers-synced:3 after-leveldb-write:1 after-leveldb-write:2 \
    readers-resumed:2; do
    rm -rf "$ROOT"/* "$INC" && mkdir -p "$INC"
    seq 1 2000 > "$INC/a.log"
    seq 10001 10500 > "$INC/b.log"
    "$WEIR" run -q --checkpoint "$ROOT/ck" --epoch-records 300 "$IDESC" || fail "incremental ($point): day one"
    "$POWERCUT" baseline "$ROOT" "$T/journal" "$T/graves"
    seq 2001 4000 >> "$INC/a.log"
    seq 20001 20700 > "$INC/c.log"
    WEIR_KILL_AT=$point shimmed "$WEIR_KP" run -q --checkpoint "$ROOT/ck" --resume --epoch-records 300 "$IDESC" \
        2>"$T/err"
    [ $RC -eq 137 ] && ok || { fail "incremental ($point): exit $RC, wanted 137"; sed 's/^/    /' "$T/err" >&2; }
    power_cut "incremental ($point)"
    timed 120 "$WEIR" run -q --checkpoint "$ROOT/ck" --resume --epoch-records 300 "$IDESC" 2>"$T/err"
    [ $RC -eq 0 ] && ok || { fail "incremental ($point): resume exit $RC"; sed 's/^/    /' "$T/err" >&2; }
    cat "$INC"/*.log | sort > "$T/inc.ref"
    sort "$ROOT/out" > "$T/inc.got"
    same "$T/inc.got" "$T/inc.ref" "incremental ingest killed at $point, cut, resumed"
done

# cut_at POINT DESC WHAT: DESC (THREADS standing for threads=) killed at
# POINT with threads=2 under the shim, cut, and resumed with threads=1
cut_at () {
    rm -rf "$ROOT"/* && "$POWERCUT" baseline "$ROOT" "$T/journal" "$T/graves"
    WEIR_KILL_AT=$1 shimmed "$WEIR_KP" run -q --checkpoint "$ROOT/ck" --epoch-records 300 \
        "$(echo "$2" | sed 's/THREADS/threads=2/g')" 2>"$T/err"
    [ $RC -eq 137 ] && ok || { fail "$3 ($1): exit $RC, wanted 137"; sed 's/^/    /' "$T/err" >&2; }
    power_cut "$3 ($1)"
    timed 120 "$WEIR" run -q --checkpoint "$ROOT/ck" --resume --epoch-records 300 \
        "$(echo "$2" | sed 's/THREADS/threads=1/g')" 2>"$T/err"
    [ $RC -eq 0 ] && ok || { fail "$3 ($1): resume exit $RC"; sed 's/^/    /' "$T/err" >&2; }
}

# --- A graph, cut ---------------------------------------------------------
# Two readers merged, teed into a writer and a route of two writers.
# Killed at a checkpoint's points and cut, then resumed with other thread
# counts: each of the three outputs exact.
GDESC="lines path='$IN/*.txt' THREADS ! m.  range count=500 start=100000 ! m.  tee name=m
    m. ! lines path=$ROOT/all
    m. ! route name=r big='. >= 100000' default=small  r.big ! lines path=$ROOT/big  r.small ! lines path=$ROOT/small"
{ seq 0 $((2 * PER - 1)); seq 100000 100499; } | sort > "$T/g.all"
seq 100000 100499 > "$T/g.big"
seq 0 $((2 * PER - 1)) | sort > "$T/g.small"
for point in pipe-drained:2 writers-synced:2 after-leveldb-write:3 readers-resumed:1; do
    cut_at $point "$GDESC" graph
    for o in all big small; do
        sort "$ROOT/$o" > "$T/g.got"
        same "$T/g.got" "$T/g.$o" "graph killed at $point, cut, resumed: output '$o'"
    done
done

# --- A keyed aggregation, cut -------------------------------------------
# Words of 37 keys counted by a keyed stage whose state is kept per key
# group in every checkpoint.  Killed at a checkpoint's points (and as the
# producers send what their combiners folded), cut, resumed
# with another thread count: every key's count exact, emitted once.
awk -v n=$((2 * PER)) 'BEGIN { for (i = 0; i < n; i++) printf "k%d\n", (i * 7) % 37 }' > "$T/kin.txt"
sort "$T/kin.txt" | uniq -c | awk '{ printf "[\"%s\",%d]\n", $2, $1 }' | sort > "$T/k.ref"
KDESC="lines path=$T/kin.txt split=2000 THREADS ! count key=. THREADS ! lines path=$ROOT/kout"
# shuffle-part-sent:5 comes as a producer flushes the partial aggregates
# its combiner held for the epoch, before its barrier
for point in pipe-drained:2 writers-synced:2 after-leveldb-write:3 readers-resumed:1 shuffle-part-sent:5; do
    cut_at $point "$KDESC" keyed
    sort "$ROOT/kout" > "$T/k.got"
    same "$T/k.got" "$T/k.ref" "keyed count killed at $point, cut, resumed on 1 thread"
done

# --- A keyed count across ranks, cut -----------------------------------------
# The same count on 2 ranks, each record crossing to the rank that owns
# its key; one rank dies at a point (MPI then takes the other down), the
# power goes on both, and the job resumes on 3 ranks: every key's count
# exact, emitted once.  Rank 0's checkpoint holds the groups rank 1 owns:
# cut before rank 0's synced write, rank 1's part of the epoch is lost
# with rank 0's.
if [ "${WEIR_MPI:-no}" = yes ] && [ -n "${MPIRUN:-}" ]; then
    FAULT_SEED=$seed
    . "$(dirname "$0")/../mpi.sh"
    RDESC="lines path=$T/kin.txt split=2000 threads=2 ! count key=. threads=2 ! lines path=$ROOT/rout-{rank}"
    for spec in shuffle-part-sent:7:1 keyed-epoch-ended:4:1 after-leveldb-write:3:0; do
        point=${spec%:*} rank=${spec##*:}
        rm -rf "$ROOT"/* && "$POWERCUT" baseline "$ROOT" "$T/journal" "$T/graves"
        MPI_WRAP="env LD_PRELOAD=$SHIM ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
        mpi_kill_at "$point" "$rank" 2 "$T/err" run -q --checkpoint "$ROOT/ck" --epoch-records 300 "$RDESC"
        MPI_WRAP=
        [ $RC -ne 0 ] && ok || fail "keyed on 2 ranks ($point on rank $rank): the job was not ended"
        power_cut "keyed on 2 ranks ($point on rank $rank)"
        [ -d "$ROOT/ck" ] && ok || fail "keyed on 2 ranks ($point on rank $rank): no checkpoint survived the cut"
        expect_exit 0 "" -- mpi 3 "$WEIR" run -q --checkpoint "$ROOT/ck" --resume --epoch-records 300 "$RDESC"
        cat "$ROOT"/rout-* | sort > "$T/k.got"
        same "$T/k.got" "$T/k.ref" "keyed count on 2 ranks killed at $point on rank $rank, cut, resumed on 3"
    done
else
    echo "keyed across ranks not cut: this weir was configured without MPI"
fi

# --- Windows, cut ----------------------------------------------------------
# Events 10 ms apart counted per key and 1 s window by their event time;
# windows close as the input flows (lateness=10s: 1,000 events, more than
# the 4-batch queues let one thread run ahead of the other).  Killed,
# cut and resumed on another thread count: every window exact, once.
awk -v n=$((2 * PER)) 'BEGIN { for (i = 0; i < n; i++) printf "{\"k\":\"k%d\",\"t\":%d.%02d}\n", (i * 7) % 37, i / 100, i % 100 }' > "$T/win.jsonl"
awk -v n=$((2 * PER)) 'BEGIN { for (i = 0; i < n; i++) c[sprintf ("k%d %d", (i * 7) % 37, int (i / 100))]++
    for (w in c) { split (w, p, " "); s = p[2]
        printf "[\"%s\",%d,\"1970-01-01T00:%02d:%02dZ\",\"1970-01-01T00:%02d:%02dZ\"]\n", p[1], c[w], s / 60, s % 60, (s + 1) / 60, (s + 1) % 60 } }' \
    | sort > "$T/w.ref"
WDESC="json path=$T/win.jsonl ! count key=.k window=1s time=.t lateness=10s capacity=4 THREADS ! lines path=$ROOT/wout"
for point in pipe-drained:3 writers-synced:3 after-leveldb-write:4 keyed-epoch-ended:5; do
    cut_at $point "$WDESC" windows
    sort "$ROOT/wout" > "$T/w.got"
    same "$T/w.got" "$T/w.ref" "windowed count killed at $point, cut, resumed on 1 thread"
done

# --- Compressed in and out, cut --------------------------------------------
# A gzip input (one shard, offsets in the bytes it stands for) into a
# writer with compress=gzip: each epoch's bytes end as a whole member
# before the sync, so the committed length is a whole gzip file.  Killed
# at a checkpoint's points, cut (what was written after the last sync
# dropped), resumed on another thread count: the output decompresses to
# every line once.
seq 0 $((2 * PER - 1)) | sort > "$T/z.ref"
seq 0 $((2 * PER - 1)) | gzip -c > "$T/zin.gz"
ZDESC="lines path=$T/zin.gz THREADS ! lines path=$ROOT/zout compress=gzip level=1 THREADS"
for point in pipe-drained:2 writers-synced:2 after-leveldb-write:3 readers-resumed:1; do
    cut_at $point "$ZDESC" compressed
    if gzip -dc < "$ROOT/zout" > "$T/z.out" 2> "$T/z.err"; then
        ok
    else
        fail "compressed output killed at $point, cut, resumed: not a valid gzip file: $(cat "$T/z.err")"
    fi
    sort "$T/z.out" > "$T/z.got"
    same "$T/z.got" "$T/z.ref" "compressed in and out killed at $point, cut, resumed on 1 thread"
done

# --- Cuts at kill points and at random instants, every writer ---------
POINTS="readers-stopped pipe-drained writers-synced blobs-copied before-leveldb-write after-leveldb-write readers-resumed"
for writer in lines msgpack leveldb-flush leveldb-sync; do
    for mode in sync async; do
        async=
        [ $mode = async ] && async=--async-checkpoint
        job $writer "$T/ref.out" 2 2 2
        rm -rf "$T/ref.out" "$T/ref.ck"
        start=$(now_ms)
        "$WEIR" run -q --checkpoint "$T/ref.ck" --epoch-records 300 $async "$JOB" || fail "$writer $mode: reference"
        took=$(($(now_ms) - start))
        rm -rf "$ROOT"/* && "$POWERCUT" baseline "$ROOT" "$T/journal" "$T/graves"
        i=0
        while [ $i -lt $CUTS ]; do
            i=$((i + 1))
            rand 3
            job $writer "$ROOT/out" $((R + 1)) 2 $((3 - R))
            before=$(latest "$ROOT/ck")
            rand 2
            if [ $R -eq 0 ]; then
                rand 7
                point=$(echo $POINTS | cut -d' ' -f$((R + 1)))
                [ $point = blobs-copied ] && [ $mode = sync ] && point=pipe-drained
                rand 4
                n=$((R + 1))
                what="$point:$n"
                WEIR_KILL_AT=$what shimmed "$WEIR_KP" run -q --checkpoint "$ROOT/ck" --resume \
                    --epoch-records 300 $async "$JOB" 2>"$T/err"
            else
                # A delay within the uninterrupted run's time
                rand $((took + 1))
                what="after ${R} ms"
                point=
                LD_PRELOAD="$SHIM" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
                    "$WEIR_KP" run -q --checkpoint "$ROOT/ck" --resume --epoch-records 300 $async "$JOB" \
                    2>"$T/err" &
                pid=$!
                sleep "$(awk -v ms="$R" 'BEGIN { printf "%.3f", ms / 1000 }')"
                kill -9 $pid 2>/dev/null
                wait $pid
                RC=$?
            fi
            name="$writer $mode cut $i ($what)"
            case $RC in
                0 | 137) ok ;;
                *) [ $RC -gt 128 ] && crashes=$((crashes + 1))
                   fail "$name: exit $RC"; sed 's/^/    /' "$T/err" >&2 ;;
            esac
            power_cut "$name"
            # Which checkpoint was finished when the kill came: the one
            # before the n-th write began; with sync checkpoints, the one of
            # the epoch the threads were released from
            want=-1
            first=$((before < 0 ? 0 : before + 1))
            [ "$point" = after-leveldb-write ] && want=$((first + n - 2))
            [ "$point" = readers-resumed ] && [ $mode = sync ] && want=$((before < 0 ? n : before + n))
            if [ $RC -eq 137 ] && [ $want -ge 0 ]; then
                got=$(latest "$ROOT/ck")
                [ "$got" -ge $want ] && ok \
                    || fail "$name: checkpoint $want was finished, a power cut left only up to $got"
            fi
        done
        job $writer "$ROOT/out" 2 2 2
        timed 120 "$WEIR" run -q --checkpoint "$ROOT/ck" --resume --epoch-records 300 $async "$JOB" 2>"$T/err"
        [ $RC -eq 0 ] && ok || { fail "$writer $mode: final resume exit $RC"; sed 's/^/    /' "$T/err" >&2; }
        verify "$writer $mode after $CUTS power cuts" $writer "$T/ref.out" "$ROOT/out" "$ROOT/ck"
    done
done

summary
finish

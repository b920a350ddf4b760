# tests/mpi.sh - what the tests of jobs of several ranks share (sourced
# after tests/lib.sh): skipping where weir has no MPI, Open MPI's settings
# for one machine, a seeded rnd, and reap, rank_of, working, exact, blob,
# mpi_kill_at and kill_cycles;
# the accumulate plugin is built into $T and found through
# WEIR_PLUGIN_PATH.

if [ "${WEIR_MPI:-no}" != yes ]; then
    echo "skipped: this weir was configured without MPI (install openmpi-bin libopenmpi-dev)"
    exit 77
fi
: "${MPIRUN:?MPIRUN must name mpirun}"
# Open MPI refuses root without these; ranks outnumber the cores here, and
# binding would pin every rank and its threads to one core
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_hwloc_base_binding_policy=none
# One machine: shared memory between ranks, no network, no warnings
export OMPI_MCA_btl=self,vader OMPI_MCA_oob_tcp_if_include=lo
export OMPI_MCA_btl_base_warn_component_unused=0
# AddressSanitizer builds: MPI's libraries have no frame pointers, so only
# the slow unwinder sees through them to the frames tests/lsan.supp names
export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}fast_unwind_on_malloc=0"

seed=${FAULT_SEED:-$$}
echo "seed=$seed (FAULT_SEED=$seed replays this run)"
# rnd N: a pseudo-random number in 0..N-1, from the seed
rnd_state=$seed
rnd () {
    rnd_state=$(((rnd_state * 1103515245 + 12345) % 2147483648))
    echo $(((rnd_state / 65536) % $1))
}

mpi () {
    n=$1
    shift
    "$MPIRUN" -n "$n" "$@"
}

# reap PID: wait for the mpirun PID, RC=its exit.  Open MPI's mpirun
# (4.1, Debian 12) sometimes never returns once one of its ranks was
# killed: every rank is gone (a zombie it has not reaped) and it sleeps on
# a lock of its own.  Such an mpirun is killed after 5 s of that, HUNG=1,
# and counted in mpirun_hangs; a rank of weir's still alive after 120 s is a
# hang of weir's, and fails the test.  Before any rank was seen, mpirun
# may still be launching them (slowly, on a loaded machine or in a
# chroot): it gets 30 s for that.
mpirun_hangs=0
reap () {
    quiet=0 busy=0 HUNG=0 seen=0
    while :; do
        state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)
        [ -z "$state" ] || [ "$state" = Z ] && break
        alive=0
        for c in $(pgrep -P "$1"); do
            [ "$(awk '{ print $3 }' "/proc/$c/stat" 2>/dev/null)" = Z ] || alive=1
        done
        if [ $alive -eq 1 ]; then
            seen=1
            quiet=0
            busy=$((busy + 1))
            if [ $busy -ge 1200 ]; then
                fail "a rank was still running after 120 s"
                pkill -KILL -P "$1"
                kill -KILL "$1"
                break
            fi
        else
            quiet=$((quiet + 1))
            if [ $quiet -ge $((seen ? 50 : 300)) ]; then
                mpirun_hangs=$((mpirun_hangs + 1))
                HUNG=1
                kill -KILL "$1"
                break
            fi
        fi
        sleep 0.1
    done
    wait "$1"
    RC=$?
}

# rank_of PID R: the process of rank R among mpirun PID's children, once
# it runs (empty after 10 s)
rank_of () {
    for i in $(seq 1 100); do
        for p in $(pgrep -P "$1"); do
            if tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2"; then
                echo "$p"
                return
            fi
        done
        sleep 0.1
    done
}

# working N PREFIX: wait (60 s at most) until PREFIX-0.txt .. PREFIX-(N-1).txt
# have bytes: every rank is past MPI's start, in its epochs.  A rank
# stopped before that would hold the others in MPI_Init, where nothing of
# weir's runs yet (under AddressSanitizer, on a loaded machine, MPI's
# start takes seconds).
working () {
    for i in $(seq 1 600); do
        all=1
        for r in $(seq 0 $(($1 - 1))); do
            # Without a checkpoint a job writes each file beside it (a
            # hidden .NAME.weir-PID-N) until it ends
            [ -s "$2-$r.txt" ] \
                || [ -n "$(find "$(dirname "$2")" -maxdepth 1 -name ".$(basename "$2")-$r.txt.weir-*" -size +0c)" ] \
                || all=0
        done
        [ $all -eq 1 ] && return 0
        sleep 0.1
    done
    return 1
}

# exact DIR N: the union of DIR/out-*.txt is 0 .. N-1, each once
exact () {
    sort -n "$1"/out-*.txt > "$T/union"
    seq 0 $(($2 - 1)) > "$T/want"
    if cmp -s "$T/union" "$T/want"; then
        ok
    else
        dup=$(uniq -d "$T/union" | wc -l)
        got=$(sort -nu "$T/union" | wc -l)
        fail "$3: the ranks' outputs hold $(wc -l < "$T/union") records, $got distinct, $dup repeated; wanted 0..$(($2 - 1)) once each"
    fi
}

# mpi_kill_at POINT:K RANK N ERR ARGS...: "$WEIR_KP" ARGS on N ranks, rank
# RANK dying at kill point POINT's K-th pass (MPMD: only it is given
# WEIR_KILL_AT); its stderr in ERR, mpirun's exit in RC.  MPI_WRAP, when
# set, comes before "$WEIR_KP" in each rank's command (an env with an
# LD_PRELOAD meant for weir, not for mpirun)
mpi_kill_at () {
    at=$1 rank=$2 n=$3 err=$4
    shift 4
    if [ "$rank" -eq 0 ]; then
        "$MPIRUN" -n 1 env WEIR_KILL_AT="$at" ${MPI_WRAP:-} "$WEIR_KP" "$@" \
            : -n $((n - 1)) ${MPI_WRAP:-} "$WEIR_KP" "$@" > /dev/null 2> "$err" &
    else
        "$MPIRUN" -n "$rank" ${MPI_WRAP:-} "$WEIR_KP" "$@" : -n 1 env WEIR_KILL_AT="$at" ${MPI_WRAP:-} "$WEIR_KP" "$@" \
            : -n $((n - rank - 1)) ${MPI_WRAP:-} "$WEIR_KP" "$@" > /dev/null 2> "$err" &
    fi
    reap $!
}

# kill_cycles LIMIT MAX_RANKS ERR ARGS...: "$WEIR" ARGS (a run with
# --resume) on 1 to MAX_RANKS ranks, drawn each time, again and again: the
# first LIMIT runs have one rank, drawn too, killed 0.3 to 1 s after their
# start; then runs to the end.  A run that fails without a kill's trace
# fails the test.  FINISHED (1 when the last run ended well), CYCLES and
# KILLS say how it went.
kill_cycles () {
    limit=$1 most=$2 err=$3
    shift 3
    cycles=0 kills=0 FINISHED=0
    while [ $FINISHED -eq 0 ] && [ $cycles -lt $((limit + 10)) ]; do
        n=$(($(rnd "$most") + 1))
        cycles=$((cycles + 1))
        "$MPIRUN" -n $n "$WEIR" "$@" > /dev/null 2> "$err" &
        pid=$!
        if [ $cycles -le "$limit" ]; then
            sleep "0.$(($(rnd 7) + 3))$(rnd 10)"
            victims=$(pgrep -P $pid)
            count=$(echo "$victims" | wc -w)
            if [ "$count" -gt 0 ]; then
                victim=$(echo "$victims" | tr ' ' '\n' | sed -n "$(($(rnd "$count") + 1))p")
                kill -KILL "$victim" 2>/dev/null && kills=$((kills + 1))
            fi
        fi
        reap $pid
        if [ $RC -eq 0 ]; then
            FINISHED=1
        elif [ $HUNG -eq 0 ] && ! grep -q -E "killed|signal|exited|aborted|terminated|ABORT" "$err"; then
            fail "cycle $cycles ($n ranks): exit $RC without a kill's trace"
            sed 's/^/    /' "$err" | head -20 >&2
        fi
    done
    CYCLES=$cycles KILLS=$kills
    echo "kills: cycles=$cycles kills=$kills mpirun_hangs=$mpirun_hangs"
}

# blob DIR: blob 'total' of DIR's latest checkpoint, as a decimal
blob () {
    latest=$("$WEIR" checkpoints "$1" | awk '/latest/ {print $1}')
    "$WEIR" checkpoints "$1" --epoch "$latest" --blob total | od -An -td8 | tr -d ' '
}

${CC:-cc} -std=c11 -O2 -shared -fPIC $PLUGIN_CFLAGS "$PLUGINS_SRC/accumulate.c" -o "$T/accumulate.so" \
    || fail "accumulate plugin does not compile"
export WEIR_PLUGIN_PATH="$T"


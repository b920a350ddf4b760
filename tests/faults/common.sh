# tests/faults/common.sh - what the parts of the fault-injection suite
# share.  Source it after setting PART (a short name).  It sources
# tests/lib.sh (ok, fail, same, expect_exit, finish and $T), chooses the
# seed, and gives:
#
#   long             true with FAULT_LONG=1 (make check-faults)
#   rand N           R=a number in 0..N-1, from the seed
#   make_inputs DIR FILES PER   FILES text files DIR/in-K.txt of disjoint
#                    integers, PER each, FILES*PER in all
#   job WRITER OUT [READER_THREADS PROC_THREADS WRITER_THREADS]
#                    JOB=the description: lines reader over $IN, the
#                    faultproc plugin, and WRITER: lines, msgpack,
#                    leveldb-flush or leveldb-sync
#   as_lines WRITER OUT FILE    the output as one record a line
#   verify NAME WRITER REF_OUT OUT CKDIR [WHICH]   the output against the
#                    uninterrupted reference (records lost, duplicated,
#                    extra) and every checkpoint of CKDIR (or WHICH:
#                    latest) against its own offsets; adds to the totals
#   timed LIMIT CMD...  runs CMD, RC=its exit, MS=its milliseconds; a run
#                    that reaches LIMIT seconds is killed and counted a hang
#   summary          the part's line of figures
. "$(dirname "$0")/../lib.sh"
: "${WEIR_KP:?WEIR_KP must point at tests/faults/weir-kp}"
: "${FCHECK:?FCHECK must point at tests/faults/fcheck}"
: "${FAULTS_DIR:?FAULTS_DIR must point at the folder of faultproc.so and faultfs.so}"
PROC="$FAULTS_DIR/faultproc.so"
SHIM="$FAULTS_DIR/faultfs.so"
[ -f "$PROC" ] || { echo "no $PROC: build it with make check" >&2; exit 1; }

seed=${FAULT_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "seed=$seed (FAULT_SEED=$seed replays this run)"
_state=$((seed % 2147483648))

long () {
    [ "${FAULT_LONG:-}" = 1 ]
}

# A linear congruential generator, in shell arithmetic: the same seed
# gives the same draws in any shell
rand () {
    _state=$(((_state * 1103515245 + 12345) % 2147483648))
    R=$((_state / 65536 % $1))
}

# Totals of the part
cycles=0
lost=0
duplicated=0
extra=0
crashes=0
hangs=0

make_inputs () {
    mkdir -p "$1"
    awk -v dir="$1" -v files="$2" -v per="$3" 'BEGIN {
        for (f = 0; f < files; f++) {
            name = sprintf ("%s/in-%d.txt", dir, f)
            for (i = 0; i < per; i++) print f * per + i > name
            close (name)
        }
    }'
}

job () {
    _w=$1
    _out=$2
    _rt=${3:-1}
    _pt=${4:-1}
    _wt=${5:-1}
    case $_w in
        lines | msgpack) _o=int _writer="$_w path=$_out" ;;
        leveldb-flush) _o=pair _writer="leveldb path=$_out durability=flush" ;;
        leveldb-sync) _o=pair _writer="leveldb path=$_out durability=sync" ;;
        *) echo "job: unknown writer $_w" >&2; exit 1 ;;
    esac
    JOB="lines path='$IN/*.txt' threads=$_rt ! $PROC slots=4 out=$_o threads=$_pt ! $_writer threads=$_wt"
}

as_lines () {
    case $1 in
        lines) cp "$2" "$3" ;;
        msgpack) "$WEIR" run -q "msgpack path=$2 ! lines path=$3" ;;
        leveldb-*) "$WEIR" run -q "leveldb path=$2 ! lines path=$3" ;;
    esac
}

verify () {
    _name=$1
    cycles=$((cycles + 1))
    if ! as_lines "$2" "$3" "$T/verify.ref" || ! as_lines "$2" "$4" "$T/verify.got"; then
        fail "$_name: the output cannot be read back"
        return
    fi
    _line=$("$FCHECK" output "$T/verify.ref" "$T/verify.got")
    _rc=$?
    _l=$(echo "$_line" | sed -n 's/.* lost=\([0-9]*\).*/\1/p')
    _d=$(echo "$_line" | sed -n 's/.* duplicated=\([0-9]*\).*/\1/p')
    _x=$(echo "$_line" | sed -n 's/.* extra=\([0-9]*\).*/\1/p')
    lost=$((lost + ${_l:-0}))
    duplicated=$((duplicated + ${_d:-0}))
    extra=$((extra + ${_x:-0}))
    [ $_rc -eq 0 ] && ok || fail "$_name: output: $_line"
    if "$FCHECK" state "$5" "${6:-all}" > "$T/verify.state"; then
        ok
    else
        fail "$_name: a checkpoint's state differs from the one its offsets give:"
        grep -v ': ok,' "$T/verify.state" | sed 's/^/    /' >&2
    fi
}

now_ms () {
    echo $(($(date +%s%N) / 1000000))
}

timed () {
    _limit=$1
    shift
    _start=$(now_ms)
    timeout -s KILL "$_limit" "$@"
    RC=$?
    MS=$(($(now_ms) - _start))
    if [ $RC -eq 137 ] && [ $MS -ge $((_limit * 1000)) ]; then
        hangs=$((hangs + 1))
        fail "hung for $_limit s: $*"
    fi
}

summary () {
    echo "$PART: cycles=$cycles lost=$lost duplicated=$duplicated extra=$extra crashes=$crashes hangs=$hangs"
}

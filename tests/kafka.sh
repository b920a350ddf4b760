# tests/kafka.sh - a Kafka cluster of the test's own: librdkafka's mock
# cluster (tests/kafka_mock), in-process brokers speaking the real
# protocol on 127.0.0.1.  Source it after tests/lib.sh.
#
#   kafka_require                  skip where weir cannot read Kafka
#   kafka_start TOPIC PARTITIONS [TOPIC PARTITIONS...]   start it, with
#                                  the topics; BROKERS says where it
#                                  listens; it stops at exit
#   kafka_produce FILE [FIRST [N]] every line of FILE a message, line i into
#                                  partition (FIRST + i) mod N of the first
#                                  topic (N: all its PARTITIONS unless given)
#   kafka_committed GROUP          the offsets GROUP committed for the first
#                                  topic's partitions: "P:OFFSET ..."
#                                  (-1001: none)
#   kafka_refuse N                 the next N offset commits fail
#   kafka_down, kafka_up           every broker stops answering, and again
#   kafka_use NAME                 a test with several clusters: the one
#                                  the functions above start and talk to
#                                  (a, the first, unless told; b, c...)
: "${KAFKA_MOCK:?KAFKA_MOCK must point at tests/kafka_mock}"

# kafka_require: skip (exit 77) where weir cannot read Kafka.  Under
# ThreadSanitizer (GCC 12's) weir crashes as soon as librdkafka's own
# threads touch their thread-local storage (a SEGV in the sanitizer's
# allocator, from __tls_get_addr in an uninstrumented library), whatever
# weir does; the kafka tests run without sanitizers and under
# AddressSanitizer.
kafka_require () {
    case "${SANITIZER_CFLAGS:-}" in
        *sanitize=thread*)
            echo "SKIP: ThreadSanitizer crashes in librdkafka's own threads (see tests/kafka.sh)"
            exit 77
            ;;
    esac
}

# The cluster the functions talk to: its files in $T are kafka-NAME.*,
# its input the file descriptor in kafka_fd_NAME
KAFKA_NAME=a
KAFKA_NAMES=
kafka_use () {
    KAFKA_NAME=$1
}

# Every cluster's input closed first: a cluster started after another
# holds the other's input open too, and ends only once all are closed
kafka_stop () {
    for k_name in $KAFKA_NAMES; do
        eval "k_fd=\$kafka_fd_$k_name"
        eval "exec $k_fd>&-"
    done
    for k_name in $KAFKA_NAMES; do
        eval "wait \$kafka_pid_$k_name" 2>/dev/null
    done
    rm -rf "$T"
}

# kafka_say COMMAND: send it, wait (60 s at most) for its answer
kafka_say () {
    eval "k_said=\$((kafka_said_$KAFKA_NAME + 1)); kafka_said_$KAFKA_NAME=\$k_said"
    k_out=$T/kafka-$KAFKA_NAME.out
    eval "k_fd=\${kafka_fd_$KAFKA_NAME}"
    echo "$1" >&"$k_fd"
    for k_i in $(seq 1 600); do
        [ "$(grep -c '^ok$' "$k_out")" -ge "$k_said" ] && return 0
        grep -q '^error' "$k_out" && break
        sleep 0.1
    done
    echo "FAIL: the mock cluster did not do '$1': $(cat "$k_out" "$T/kafka-$KAFKA_NAME.err")" >&2
    exit 1
}

kafka_start () {
    k_fd=$((7 + $(echo $KAFKA_NAMES | wc -w)))
    k_in=$T/kafka-$KAFKA_NAME.in
    k_out=$T/kafka-$KAFKA_NAME.out
    mkfifo "$k_in"
    # Its own leaks are librdkafka's, not weir's
    ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=0" \
        "$KAFKA_MOCK" "$@" < "$k_in" > "$k_out" 2> "$T/kafka-$KAFKA_NAME.err" &
    eval "kafka_pid_$KAFKA_NAME=$!; kafka_fd_$KAFKA_NAME=$k_fd; kafka_said_$KAFKA_NAME=0"
    eval "exec $k_fd> \"\$k_in\""
    KAFKA_NAMES="$KAFKA_NAMES $KAFKA_NAME"
    trap kafka_stop EXIT
    for k_i in $(seq 1 300); do
        [ -s "$k_out" ] && break
        sleep 0.1
    done
    BROKERS=$(head -1 "$k_out")
    case $BROKERS in
        127.0.0.1:*) ;;
        *) echo "FAIL: the mock cluster did not start: $(cat "$T/kafka-$KAFKA_NAME.err")" >&2; exit 1 ;;
    esac
}

# kafka_produce FILE [FIRST [N]]: N partitions of the first topic (all
# unless given) take the lines in turn
kafka_produce () {
    kafka_say "produce $1 ${2:-0} ${3:-}"
}

kafka_committed () {
    kafka_say "committed $1"
    grep '^committed ' "$T/kafka-$KAFKA_NAME.out" | tail -1 | cut -d' ' -f2-
}

kafka_refuse () {
    kafka_say "refuse $1"
}

kafka_down () {
    kafka_say down
}

kafka_up () {
    kafka_say up
}

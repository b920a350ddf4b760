# tests/kafka.sh - a Kafka cluster of the test's own: librdkafka's mock
# cluster (tests/kafka_mock), in-process brokers speaking the real
# protocol on 127.0.0.1.  Source it after tests/lib.sh.
#
#   kafka_require                  skip where weir cannot read Kafka
#   kafka_start TOPIC PARTITIONS [TOPIC PARTITIONS...]   start it, with
#                                  the topics; BROKERS says where it
#                                  listens; it stops at exit
#   kafka_produce FILE [FIRST]     every line of FILE a message, line i into
#                                  partition (FIRST + i) mod PARTITIONS of
#                                  the first topic
#   kafka_down, kafka_up           every broker stops answering, and again
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

kafka_stop () {
    [ -n "${KAFKA_PID:-}" ] && exec 7>&- && wait "$KAFKA_PID" 2>/dev/null
    rm -rf "$T"
}

# kafka_say COMMAND: send it, wait (60 s at most) for its answer
kafka_say () {
    kafka_said=$((kafka_said + 1))
    echo "$1" >&7
    for i in $(seq 1 600); do
        [ "$(grep -c '^ok$' "$T/kafka.out")" -ge "$kafka_said" ] && return 0
        grep -q '^error' "$T/kafka.out" && break
        sleep 0.1
    done
    echo "FAIL: the mock cluster did not do '$1': $(cat "$T/kafka.out" "$T/kafka.err")" >&2
    exit 1
}

kafka_start () {
    mkfifo "$T/kafka.in"
    # Its own leaks are librdkafka's, not weir's
    ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=0" \
        "$KAFKA_MOCK" "$@" < "$T/kafka.in" > "$T/kafka.out" 2> "$T/kafka.err" &
    KAFKA_PID=$!
    exec 7> "$T/kafka.in"
    trap kafka_stop EXIT
    kafka_said=0
    for i in $(seq 1 300); do
        [ -s "$T/kafka.out" ] && break
        sleep 0.1
    done
    BROKERS=$(head -1 "$T/kafka.out")
    case $BROKERS in
        127.0.0.1:*) ;;
        *) echo "FAIL: the mock cluster did not start: $(cat "$T/kafka.err")" >&2; exit 1 ;;
    esac
}

kafka_produce () {
    kafka_say "produce $1 ${2:-0}"
}

kafka_down () {
    kafka_say down
}

kafka_up () {
    kafka_say up
}

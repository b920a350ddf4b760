#!/bin/sh
# Partitions added to a Kafka topic (tests/kafka.sh): a resume whose
# checkpoint does not know them reads them from their first message, and
# a follow=1 job finds them while it runs (discover=); every message once.
#
# librdkafka's mock cluster cannot add partitions to a topic, so a topic
# that grew is a second cluster whose topic has more partitions and whose
# first ones hold the very same messages at the same offsets.  The jobs
# name both clusters in brokers= (which may not change on resume); the
# second is down until the topic is to have grown: then the first goes
# down and the second comes up, under the same broker id, and the client
# follows it as it follows a broker that moved.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kafka.sh"
kafka_require

# msgs FROM TO FILE: JSON messages {"n": N}
msgs () {
    seq "$1" "$2" | awk '{ print "{\"n\":" $1 "}" }' > "$3"
}
numbers () {
    jq -r .n "$1" | sort -n
}
msgs 1 3000 "$T/m1"
msgs 3001 4000 "$T/m2"
msgs 4001 4500 "$T/m3"

# --- A resume finds the partitions added since its checkpoint ----------
kafka_use a
kafka_start events 2
A=$BROKERS
kafka_produce "$T/m1" 0 2
kafka_use b
kafka_start events 5
B=$BROKERS
kafka_produce "$T/m1" 0 2
kafka_produce "$T/m2" 0 5
kafka_down

# Killed in the middle of its bounded read of the two partitions, resumed
# on the grown topic: the rest of the first two, all of the three new
JOB="kafka brokers=$A,$B topic=events value=json THREADS ! json path=$T/k.jsonl"
WEIR_KILL_AT=readers-stopped:3 "$WEIR_KP" run -q --checkpoint "$T/ck" --epoch-records 500 \
    "$(echo "$JOB" | sed s/THREADS/threads=2/)" 2> "$T/err"
rc=$?
[ $rc -eq 137 ] && ok || fail "killed at readers-stopped:3: exit $rc $(cat "$T/err")"
kafka_use a
kafka_down
kafka_use b
kafka_up
"$WEIR" run --checkpoint "$T/ck" --resume --epoch-records 500 "$(echo "$JOB" | sed s/THREADS/threads=3/)" \
    > /dev/null 2> "$T/err" \
    || fail "the resume on the grown topic: $(cat "$T/err")"
grep -q "3 shards are new (read from the start)" "$T/err" && ok \
    || fail "the resume did not say the partitions were new: $(cat "$T/err")"
numbers "$T/k.jsonl" > "$T/k.got"
seq 1 4000 > "$T/k.want"
same "$T/k.want" "$T/k.got" "killed, resumed on a topic grown from 2 partitions to 5: every message once"

# The checkpoint now knows five: a resume over new messages reads them,
# and a kill and resume in the middle of that too
kafka_produce "$T/m3" 1 5
WEIR_KILL_AT=writers-synced:2 "$WEIR_KP" run -q --checkpoint "$T/ck" --resume --epoch-records 100 \
    "$(echo "$JOB" | sed s/THREADS/threads=2/)" 2> "$T/err"
rc=$?
[ $rc -eq 137 ] && ok || fail "killed at writers-synced:2 after the growth: exit $rc $(cat "$T/err")"
"$WEIR" run -q --checkpoint "$T/ck" --resume --epoch-records 100 \
    "$(echo "$JOB" | sed s/THREADS//)" || fail "the last resume"
numbers "$T/k.jsonl" > "$T/k.got"
seq 1 4500 > "$T/k.want"
same "$T/k.want" "$T/k.got" "then new messages in all five, killed and resumed: every message once"

# --- follow=1 finds them while it runs ----------------------------------
kafka_use c
kafka_start events 2
C=$BROKERS
kafka_produce "$T/m1" 0 2
kafka_use d
kafka_start events 4
D=$BROKERS
kafka_produce "$T/m1" 0 2
kafka_down
FJOB="kafka brokers=$C,$D topic=events value=json follow=1 discover=1 timeout=30 ! json path=$T/f.jsonl"
"$WEIR" run -q --checkpoint "$T/fck" --epoch-seconds 0.2 "$FJOB" 2> "$T/f.err" &
pid=$!
wait_lines "$T/f.jsonl" 3000 || fail "follow=1 did not read the two partitions: $(cat "$T/f.err")"
kafka_use c
kafka_down
kafka_use d
kafka_up
kafka_produce "$T/m2" 0 4
wait_lines "$T/f.jsonl" 4000 || fail "follow=1 did not find the partitions added: $(wc -l < "$T/f.jsonl") lines"
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 143 ] && ok || fail "follow=1 stopped by SIGTERM: exit $rc $(cat "$T/f.err")"
# Its checkpoint knows all four: the resume reads on in them
kafka_produce "$T/m3" 3 4
"$WEIR" run -q --checkpoint "$T/fck" --resume --epoch-seconds 0.2 "$FJOB" 2> "$T/f.err" &
pid=$!
wait_lines "$T/f.jsonl" 4500 || fail "the resumed follow=1 did not read the new messages of all four"
kill -TERM $pid
wait $pid
numbers "$T/f.jsonl" > "$T/f.got"
same "$T/k.want" "$T/f.got" "follow=1: partitions found while running, stopped, resumed: every message once"

expect_exit 2 "discover=-1" -- "$WEIR" run -q "kafka brokers=$D topic=events discover=-1 ! null"

finish

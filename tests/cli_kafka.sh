#!/bin/sh
# The kafka reader against librdkafka's mock cluster (tests/kafka.sh):
# every message once, with its metadata, in every value format; the errors
# a user meets; exactly once across kills and resumes with other thread
# counts, a resume that reads what came since; follow=1, stopped and
# resumed; brokers gone in the middle; and several ranks.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kafka.sh"
kafka_require
kafka_start events 4 out 3 raw 1 keyed 4

# 20,000 JSON messages {"n": N}, line i into partition i mod 4
seq 1 20000 | awk '{ print "{\"n\":" $1 "}" }' > "$T/a.msgs"
kafka_produce "$T/a.msgs"
seq 1 20000 > "$T/a.want"

# numbers FILE: the n of every record of a JSON Lines file, sorted
numbers () {
    jq -r .n "$1" | sort -n
}

# --- Every message once, in every format ------------------------------
"$WEIR" run -q "kafka brokers=$BROKERS topic=events value=json threads=2 ! json path=$T/a.jsonl" \
    || fail "a bounded read"
numbers "$T/a.jsonl" > "$T/a.got"
same "$T/a.want" "$T/a.got" "every message once, threads=2"
# Within a partition, in offset order: partition 1 holds 2, 6, 10, ...
"$WEIR" run -q "kafka brokers=$BROKERS topic=events value=json meta=1 ! json path=$T/meta.jsonl" || fail "meta=1"
jq -c 'select(.partition == 1) | .value.n' "$T/meta.jsonl" > "$T/p1.got"
seq 2 4 20000 > "$T/p1.want"
same "$T/p1.want" "$T/p1.got" "partition 1 in offset order"
jq -c 'select(.partition == 2 and .offset == 3) | [.topic, .key, .value.n, (.timestamp > 1600000000000)]' \
    "$T/meta.jsonl" > "$T/one.got"
echo '["events","k14",15,true]' > "$T/one.want"
same "$T/one.want" "$T/one.got" "meta=1: topic, key, value, timestamp of one message"
"$WEIR" run -q "kafka brokers=$BROKERS topic=events value=str ! lines path=$T/str.txt" || fail "value=str"
sort "$T/str.txt" > "$T/str.got"
sort "$T/a.msgs" > "$T/str.want"
same "$T/str.want" "$T/str.got" "value=str: the messages' text"
"$WEIR" run -q "kafka brokers=$BROKERS topic=events ! json path=$T/bin.jsonl" || fail "value=bin"
[ "$(head -1 "$T/bin.jsonl")" = '"eyJuIjoxfQ=="' ] && ok || fail "value=bin: $(head -1 "$T/bin.jsonl")"

# --- group=: every checkpoint's offsets told to a consumer group --------
# offsets_of CK EPOCH: the reader offsets checkpoint EPOCH holds, "P:OFFSET ..."
offsets_of () {
    "$WEIR" checkpoints "$1" --epoch "$2" | sed -n 's|^  kafka:events/\([0-9]*\)@[^:]*: \([0-9]*\)$|\1:\2|p' \
        | sort -n | tr '\n' ' ' | sed 's/ $//'
}
# Killed once checkpoint 3 is written, before it is told: the group has
# checkpoint 2's offsets, never more than a checkpoint holds
rm -rf "$T/gck"
GJOB="kafka brokers=$BROKERS topic=events value=json group=watchers threads=2 ! null"
WEIR_KILL_AT=after-leveldb-write:3 "$WEIR_KP" run -q --checkpoint "$T/gck" --epoch-records 3000 "$GJOB" 2> "$T/err"
[ $? -eq 137 ] && ok || fail "group=: not killed at after-leveldb-write:3: $(cat "$T/err")"
# The commits go out after each checkpoint and are not waited for: the
# group has checkpoint 0's, 1's or 2's offsets (or none yet), never 3's
got=$(kafka_committed watchers)
case $got in
    "$(offsets_of "$T/gck" 2)" | "$(offsets_of "$T/gck" 1)" | "$(offsets_of "$T/gck" 0)" \
        | "0:-1001 1:-1001 2:-1001 3:-1001") ok ;;
    *) fail "group=: killed before checkpoint 3 was told, the group has '$got', checkpoints 1, 2 and 3: $(offsets_of "$T/gck" 1), $(offsets_of "$T/gck" 2), $(offsets_of "$T/gck" 3)" ;;
esac
# Resumed to the end: each partition's end
"$WEIR" run --checkpoint "$T/gck" --resume --epoch-records 3000 "$GJOB" 2> "$T/err" || fail "group=: the resume"
# The last commit may be answered after weir is gone (it is sent as the
# client closes): asked again for 5 s
for i in 1 2 3 4 5 6; do
    got=$(kafka_committed watchers)
    [ "$got" = "0:5000 1:5000 2:5000 3:5000" ] && break
    sleep 1
done
[ "$got" = "0:5000 1:5000 2:5000 3:5000" ] && ok || fail "group=: at the end the group has '$got'"
grep -q "warning" "$T/err" && fail "group=: a warning: $(cat "$T/err")" || ok
# Commits the brokers refuse: a warning, said once, and the job goes on
# to the end, its output whole; then they are accepted again
kafka_refuse 3
"$WEIR" run --checkpoint "$T/gck2" --epoch-records 3000 \
    "kafka brokers=$BROKERS topic=events value=json group=refused ! json path=$T/g.jsonl" 2> "$T/err" \
    || fail "group=: commits refused failed the job: $(cat "$T/err")"
[ "$(grep -c "weir run: warning: kafka: group 'refused' refused the offsets of a checkpoint: .*uthorization" "$T/err")" -eq 1 ] \
    && ok || fail "group=: commits refused, not said once: $(cat "$T/err")"
numbers "$T/g.jsonl" > "$T/g.got"
same "$T/a.want" "$T/g.got" "group=: commits refused, every message once all the same"
"$WEIR" run -q --checkpoint "$T/gck2" --resume "kafka brokers=$BROKERS topic=events value=json group=refused ! json path=$T/g.jsonl" \
    || fail "group=: the resume"
got=$(kafka_committed refused)
[ "$got" = "0:5000 1:5000 2:5000 3:5000" ] && ok || fail "group=: commits accepted again, the group has '$got'"
# Every commit of a job refused, the last one too: the close sends the
# last again, and the group has the end all the same (refused once per
# checkpoint: at most one more than the commits the job sends)
kafka_refuse "$("$WEIR" checkpoints "$T/gck2" | awk 'NR > 1' | wc -l)"
"$WEIR" run --checkpoint "$T/gck3" --epoch-records 3000 \
    "kafka brokers=$BROKERS topic=events value=json group=last ! null" 2> "$T/err" \
    || fail "group=: every commit refused failed the job: $(cat "$T/err")"
got=$(kafka_committed last)
[ "$got" = "0:5000 1:5000 2:5000 3:5000" ] && ok || fail "group=: the last commit refused, the group has '$got'"

# --- What a user gets wrong, said clearly -----------------------------
expect_exit 1 "kafka: topic 'nope' does not exist on the brokers $BROKERS" -- \
    "$WEIR" run -q "kafka brokers=$BROKERS topic=nope ! null"
expect_exit 1 "kafka: cannot reach the brokers 127.0.0.1:1 in 1 s: .*Connection refused" -- \
    "$WEIR" run -q "kafka brokers=127.0.0.1:1 topic=events timeout=1 ! null"
expect_exit 2 "kafka: property 'brokers' is required" -- "$WEIR" run -q "kafka topic=events ! null"
expect_exit 2 "kafka: value=xml: wants bin, str, json or msgpack" -- \
    "$WEIR" run -q "kafka brokers=$BROKERS topic=events value=xml ! null"
expect_exit 2 "kafka: kafka.bogus=1: No such configuration property" -- \
    "$WEIR" run -q "kafka brokers=$BROKERS topic=events kafka.bogus=1 ! null"
expect_exit 1 "the message at offset 0: its value is not msgpack \(byte 1: bytes after the msgpack object\)" -- \
    "$WEIR" run -q "kafka brokers=$BROKERS topic=events value=msgpack ! null"

# --- Exactly once across kills ----------------------------------------
JOB="kafka brokers=$BROKERS topic=events value=json THREADS ! json path=$T/k.jsonl"
for point in readers-stopped:2 writers-synced:3 after-leveldb-write:2 readers-resumed:4; do
    rm -rf "$T/ck" "$T/k.jsonl"
    killed_at "$point" "$T/ck" 1500 "$JOB" "kafka"
    numbers "$T/k.jsonl" > "$T/k.got"
    same "$T/a.want" "$T/k.got" "killed at $point, resumed with another thread count"
done
rm -rf "$T/ck" "$T/k.jsonl"
kill_rounds "$T/ck" 700 "$JOB"
numbers "$T/k.jsonl" > "$T/k.got"
same "$T/a.want" "$T/k.got" "random kills"
# A resume reads what came since, and only that
seq 20001 21000 | awk '{ print "{\"n\":" $1 "}" }' > "$T/b.msgs"
kafka_produce "$T/b.msgs"
"$WEIR" run -q --checkpoint "$T/ck" --resume --epoch-records 700 "$(echo "$JOB" | sed s/THREADS//)" \
    || fail "the resume over new messages"
numbers "$T/k.jsonl" > "$T/k.got"
seq 1 21000 > "$T/b.want"
same "$T/b.want" "$T/k.got" "the resume read the new messages once"

# brokers= may change on resume (brokers move): a list with one more, and
# the resume says what changed
rm -rf "$T/ck" "$T/k.jsonl"
WEIR_KILL_AT=writers-synced:3 "$WEIR_KP" run -q --checkpoint "$T/ck" --epoch-records 1500 \
    "$(echo "$JOB" | sed s/THREADS//)" 2> "$T/err"
[ $? -eq 137 ] && ok || fail "not killed at writers-synced:3: $(cat "$T/err")"
"$WEIR" run --checkpoint "$T/ck" --resume --epoch-records 1500 \
    "$(echo "$JOB" | sed "s/THREADS/threads=2/; s|brokers=$BROKERS|brokers=127.0.0.1:1,$BROKERS|")" > /dev/null 2> "$T/err" \
    || fail "the resume with other brokers: $(cat "$T/err")"
grep -Eq "kafka \(stage 1\): brokers= was '$BROKERS', is now '127.0.0.1:1,$BROKERS' since checkpoint [0-9]+: going on there" \
    "$T/err" && ok || fail "the resume with other brokers did not say so: $(cat "$T/err")"
numbers "$T/k.jsonl" > "$T/k.got"
same "$T/b.want" "$T/k.got" "killed, resumed with other brokers: every message once"

# --- The kafka writer: at least once ---------------------------------
# A whole job: every record once; then read back with the reader
"$WEIR" run -q "json path=$T/a.jsonl threads=2 ! kafka brokers=$BROKERS topic=out threads=2" || fail "the writer"
"$WEIR" run -q "kafka brokers=$BROKERS topic=out value=json ! json path=$T/w.jsonl" || fail "reading back"
numbers "$T/w.jsonl" > "$T/w.got"
same "$T/a.want" "$T/w.got" "the writer: every record once, read back"
# Killed after its messages were acknowledged and before the checkpoint,
# resumed: every record at least once, and only that epoch's again
rm -rf "$T/ck"
WEIR_KILL_AT=writers-synced:3 "$WEIR_KP" run -q --checkpoint "$T/ck" --epoch-records 2000 \
    "json path=$T/a.jsonl ! kafka brokers=$BROKERS topic=raw format=msgpack" 2> /dev/null
[ $? -eq 137 ] && ok || fail "the writer was not killed"
"$WEIR" run -q --checkpoint "$T/ck" --resume --epoch-records 2000 \
    "json path=$T/a.jsonl ! kafka brokers=$BROKERS topic=raw format=msgpack" || fail "the writer resumed"
"$WEIR" run -q "kafka brokers=$BROKERS topic=raw value=msgpack ! json path=$T/r.jsonl" || fail "reading back raw"
numbers "$T/r.jsonl" | sort -nu > "$T/r.got"
same "$T/a.want" "$T/r.got" "the writer killed and resumed: every record at least once"
[ "$(wc -l < "$T/r.jsonl")" -eq 22000 ] && ok || fail "the resume wrote again more or less than the one epoch acknowledged and not checkpointed (2,000): $(wc -l < "$T/r.jsonl") in all"
# key=: each message's key, and every message of a key in one partition
awk '{ printf "{\"user\":\"u%d\",\"n\":%d,\"id\":[%d]}\n", $1 % 7, $1, $1 % 3 }' "$T/a.want" > "$T/u.jsonl"
echo '{"n":0}' >> "$T/u.jsonl"
"$WEIR" run -q "json path=$T/u.jsonl threads=2 ! kafka brokers=$BROKERS topic=keyed key=.user threads=2" \
    || fail "the writer, key=.user"
"$WEIR" run -q "kafka brokers=$BROKERS topic=keyed value=json meta=1 ! json path=$T/km.jsonl" || fail "reading keys back"
[ "$(jq -c 'select(.key != .value.user)' "$T/km.jsonl" | wc -l)" -eq 0 ] && ok \
    || fail "key=.user: a message whose key is not its user: $(jq -c 'select(.key != .value.user)' "$T/km.jsonl" | head -3)"
[ "$(jq -r 'select(.key == null) | .value.n' "$T/km.jsonl")" = 0 ] && ok || fail "key=.user: a record without one has no key"
[ "$(jq -r '[.key, .partition] | @tsv' "$T/km.jsonl" | sort -u | cut -f1 | uniq -d | wc -l)" -eq 0 ] && ok \
    || fail "key=.user: a key in several partitions"
[ "$(jq -r .partition "$T/km.jsonl" | sort -u | wc -l)" -gt 1 ] && ok || fail "key=.user: one partition for every key"
# Java's partitioner (murmur2, positive, mod 4) puts key "u0" in partition 2
[ "$(jq -r 'select(.key == "u0") | .partition' "$T/km.jsonl" | sort -u)" = 2 ] && ok \
    || fail "key=.user: u0 not in the partition Java clients put it in"
"$WEIR" run -q "json path=$T/u.jsonl ! kafka brokers=$BROKERS topic=raw key=.id format=msgpack" || fail "key=.id"
"$WEIR" run -q "kafka brokers=$BROKERS topic=raw value=msgpack meta=1 ! json path=$T/kid.jsonl" || fail "reading key=.id back"
[ "$(jq -r 'select(.value.n == 5 and .value.id != null) | .key' "$T/kid.jsonl")" = "[2]" ] && ok || fail "key=.id: an array's key is its JSON text"
expect_exit 2 "kafka: key=\.us\[: " -- "$WEIR" run -q "range count=3 ! kafka brokers=$BROKERS topic=out key=.us["
expect_exit 1 "kafka: format=raw writes str and bin records" -- \
    "$WEIR" run -q "range count=3 ! kafka brokers=$BROKERS topic=out format=raw"
expect_exit 1 "kafka: topic 'gone' does not exist on the brokers" -- \
    "$WEIR" run -q "range count=3 ! kafka brokers=$BROKERS topic=gone"

# --- follow=1: the job runs until stopped -----------------------------
FJOB="kafka brokers=$BROKERS topic=events value=json follow=1 timeout=3 ! json path=$T/f.jsonl"
rm -rf "$T/ck"
"$WEIR" run -q --checkpoint "$T/ck" --epoch-seconds 0.2 "$FJOB" 2> "$T/f.err" &
pid=$!
wait_lines "$T/f.jsonl" 21000 || fail "follow=1 did not read what was there"
seq 21001 22000 | awk '{ print "{\"n\":" $1 "}" }' > "$T/c.msgs"
kafka_produce "$T/c.msgs"
wait_lines "$T/f.jsonl" 22000 || fail "follow=1 did not read the new messages"
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 143 ] && ok || fail "follow=1 stopped by SIGTERM: exit $rc $(cat "$T/f.err")"
# Brokers gone while it follows: it fails once timeout= passed, and the
# resume, with the brokers back, goes on
seq 22001 23000 | awk '{ print "{\"n\":" $1 "}" }' > "$T/d.msgs"
kafka_produce "$T/d.msgs"
"$WEIR" run -q --checkpoint "$T/ck" --resume --epoch-seconds 0.2 "$FJOB" 2> "$T/f.err" &
pid=$!
wait_lines "$T/f.jsonl" 23000 || fail "the resumed follow=1 did not read the new messages"
kafka_down
wait $pid
rc=$?
[ $rc -eq 1 ] && grep -q "kafka: every broker of $BROKERS has been unreachable for 3 s" "$T/f.err" && ok \
    || fail "brokers gone: exit $rc, $(cat "$T/f.err")"
kafka_up
seq 23001 24000 | awk '{ print "{\"n\":" $1 "}" }' > "$T/e.msgs"
kafka_produce "$T/e.msgs"
"$WEIR" run -q --checkpoint "$T/ck" --resume --epoch-seconds 0.2 "$FJOB" 2> "$T/f.err" &
pid=$!
wait_lines "$T/f.jsonl" 24000 || fail "the follow=1 resumed after the brokers came back did not read on"
kill -TERM $pid
wait $pid
numbers "$T/f.jsonl" > "$T/f.got"
seq 1 24000 > "$T/f.want"
same "$T/f.want" "$T/f.got" "follow=1: stopped, resumed, brokers gone and back: every message once"

finish

#!/bin/sh
# tests/cli_mpi_keyed.sh - keyed stages in a job of several ranks: every
# record of a key goes to one thread of one rank, whatever rank read it,
# over ZeroMQ tcp between the ranks.
#
# Checked: keys on one (rank, thread) across 3 ranks, in both socket
# modes of the local queue; the aggregations on 1 to 3 ranks against
# awk's plain sums; the bytes that crossed; a plugin's msgpack values; the changelog; event-time windows against
# tests/windows.py with the watermark agreed across ranks; a kill of one
# rank at the shuffle's and the commit's points, resumed on another rank
# count; random SIGKILLs of one rank with the rank count changed every
# run; the key groups too few for threads x ranks refused; the network
# to use named by WEIR_EXCHANGE_NET, and a wrong one refused.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mpi.sh"
command -v jq > /dev/null || { echo "skipped: jq is not installed (scripts/install-deps.sh installs it)"; exit 77; }
command -v python3 > /dev/null || { echo "skipped: python3 is not installed (scripts/install-deps.sh installs it)"; exit 77; }
: "${PLUGINS_DIR:?PLUGINS_DIR must point at the test plugins}"
WHOSE="$PLUGINS_DIR/whose.so"

# 60,000 records of 97 users, integer bytes from -30,000 on
awk 'BEGIN { for (i = 0; i < 60000; i++)
    printf "{\"u\": \"user%d\", \"b\": %d}\n", (i * 7919) % 97, i - 30000 }' > "$T/in.jsonl"
# The plain results, one line per user as the json writer writes them
awk -F'"' '{ u = $4; split($0, f, ": "); b = f[3] + 0; sub(/}.*/, "", b)
    n[u]++; s[u] += b; if (!(u in m) || b > m[u]) m[u] = b }
    END { for (u in n) { printf "[\"%s\",%d]\n", u, n[u] > "'"$T"'/want.count"
                         printf "[\"%s\",%d]\n", u, s[u] > "'"$T"'/want.sum"
                         printf "[\"%s\",%d]\n", u, m[u] > "'"$T"'/want.max" } }' "$T/in.jsonl"
for f in count sum max; do sort "$T/want.$f" -o "$T/want.$f"; done
[ "$(wc -l < "$T/want.sum")" -eq 97 ] && ok || fail "the reference has $(wc -l < "$T/want.sum") users, not 97"

# union PREFIX: every rank's PREFIX-R.out as sorted compact JSON
union () {
    cat "$1"-*.out | jq -c . | sort
}

# --- every key on one thread of one rank ----------------------------------
# whose emits [record, thread]; the rank is the output's.  3 ranks of 2
# threads of identity into 3 of whose: 18 producers for 3 consumers
# (a socket per pair), then 20 threads of identity (180 pairs: the
# producers of a consumer share its socket)
for ids in 2 20; do
    rm -f "$T"/w-*.out
    expect_exit 0 "" -- mpi 3 "$WEIR" run -q \
        "json path=$T/in.jsonl split=200k ! identity threads=$ids ! $WHOSE key=.u threads=3 ! json path=$T/w-{rank}.out"
    for r in 0 1 2; do
        jq -r --arg r "$r" '"\(.[0].u) \($r).\(.[1])"' "$T/w-$r.out"
    done | sort -u > "$T/pairs"
    [ "$(wc -l < "$T/pairs")" -eq 97 ] && ok \
        || fail "identity threads=$ids: keys on several threads: $(cut -d' ' -f1 "$T/pairs" | uniq -d | head -3 | tr '\n' ' ')"
    [ "$(cut -d' ' -f2 "$T/pairs" | cut -d. -f1 | sort -u | wc -l)" -eq 3 ] && ok \
        || fail "identity threads=$ids: the keys did not reach every rank: $(cut -d' ' -f2 "$T/pairs" | sort | uniq -c | tr '\n' ' ')"
    [ "$(cat "$T"/w-*.out | wc -l)" -eq 60000 ] && ok || fail "identity threads=$ids: $(cat "$T"/w-*.out | wc -l) records, not 60000"
done

# --- the aggregations, on 1, 2 and 3 ranks ----------------------------------
# Each on 2 ranks, sum on 1 and 3 too
for run in 1:sum 2:count 2:sum 2:max 3:sum; do
    n=${run%:*} op=${run#*:}
    value=; [ $op = count ] || value=value=.b
    rm -f "$T"/a-*.out
    expect_exit 0 "" -- mpi $n "$WEIR" run -q --epoch-records 7000 \
        "json path=$T/in.jsonl split=300k threads=2 ! $op key=.u $value threads=2 ! json path=$T/a-{rank}.out"
    union "$T/a" > "$T/got"
    same "$T/got" "$T/want.$op" "$op on $n ranks"
done

# What crossed between the ranks, in each rank's --stats: what rank 0
# sent rank 1 is what rank 1 received, and the other way round
expect_exit 0 "" -- mpi 2 "$WEIR" run -q --stats "$T/st-{rank}.json" \
    "json path=$T/in.jsonl split=300k threads=2 ! count key=.u threads=2 ! null"
jq -e -n --slurpfile a "$T/st-0.json" --slurpfile b "$T/st-1.json" \
    '$a[0].stages[1].metrics as $x | $b[0].stages[1].metrics as $y
     | $x.bytes_to_ranks > 0 and $x.bytes_to_ranks == $y.bytes_from_ranks and $y.bytes_to_ranks == $x.bytes_from_ranks' \
    > /dev/null && ok || fail "bytes between the ranks: $(jq -c '.stages[1].metrics' "$T"/st-*.json | tr '\n' ' ')"

# The changelog: each epoch, every key that changed with its value; the
# last value of each key is its sum
rm -f "$T"/cl-*.out
expect_exit 0 "" -- mpi 2 "$WEIR" run -q --epoch-records 5000 \
    "json path=$T/in.jsonl split=300k ! sum key=.u value=.b emit=epoch threads=2 ! json path=$T/cl-{rank}.out"
cat "$T"/cl-*.out | jq -c -s 'group_by(.[0]) | map(.[-1]) | .[]' | sort > "$T/got"
same "$T/got" "$T/want.sum" "the changelog's last value per key, 2 ranks"
[ "$(cat "$T"/cl-*.out | wc -l)" -gt 97 ] && ok || fail "the changelog has no more than one line per key"

# --- windows: the watermark is the latest time any rank saw ---------------
# One shard, read by rank 0 in order (but for 40 s of disorder): shards
# of other times read side by side would make each other's records late
# (the watermark is the latest time seen, less lateness=)
REF="python3 $(dirname "$0")/windows.py"
$REF events 40000 0 > "$T/ev.jsonl"
$REF expect count 10 1200 < "$T/ev.jsonl" 2> /dev/null | jq -c . | sort > "$T/want.win"
rm -f "$T"/win-*.out
expect_exit 0 "" -- mpi 3 "$WEIR" run -q --epoch-records 4000 \
    "json path=$T/ev.jsonl ! count key=.u window=10s time=.t lateness=20m threads=2 ! json path=$T/win-{rank}.out"
union "$T/win" > "$T/got"
same "$T/got" "$T/want.win" "count per 10 s window on 3 ranks"

# --- a rank killed at a point, resumed on another rank count ----------------
# J's THREADS is each stage's threads=; RANK of N dies at POINT:K, the job
# resumes on M ranks and must give the plain sums
J="json path=$T/in.jsonl split=200k threads=2 ! sum key=.u value=.b threads=2 ! json path=$T/k-{rank}.out"
point () {
    name=$1 rank=$2 n=$3 k=$4 m=$5
    rm -rf "$T/ck" "$T"/k-*.out
    mpi_kill_at "$name:$k" "$rank" "$n" "$T/kp.err" run -q --checkpoint "$T/ck" --epoch-records 3000 "$J"
    [ $RC -ne 0 ] && ok || fail "kill point $name:$k on rank $rank of $n did not end the job"
    [ -d "$T/ck" ] && ok || fail "killed at $name:$k: no checkpoint was written before"
    expect_exit 0 "" -- mpi "$m" "$WEIR_KP" run -q --checkpoint "$T/ck" --resume --epoch-records 3000 "$J"
    union "$T/k" > "$T/got"
    same "$T/got" "$T/want.sum" "sums killed at $name:$k on rank $rank of $n, resumed on $m"
}
point shuffle-part-sent 1 3 40 2
point keyed-epoch-ended 2 3 9 1
point ranks-prepared 0 2 4 3
point writers-synced 1 2 5 3

# A plugin's msgpack value per key (tests/plugins/collect.c), across
# ranks: killed on rank 1 of 2 as a keyed thread stored its groups,
# resumed on 3
COLLECT="$PLUGINS_DIR/collect.so"
awk 'BEGIN { for (i = 0; i < 30000; i++)
    printf "{\"u\": \"user%d\", \"v\": %d, \"t\": \"%c\"}\n", (i * 7919) % 97, i % 1000, 97 + i % 26 }' > "$T/col.jsonl"
jq -c -s 'group_by(.u) | map([.[0].u, length, (map(.v) | add), (map(.t) | sort | join(""))]) | .[]' "$T/col.jsonl" \
    | sort > "$T/want.col"
C="json path=$T/col.jsonl split=200k threads=2 ! $COLLECT key=.u threads=2 ! json path=$T/c-{rank}.out"
rm -rf "$T/ck" "$T"/c-*.out
mpi_kill_at keyed-epoch-ended:5 1 2 "$T/kp.err" run -q --checkpoint "$T/ck" --epoch-records 2000 "$C"
[ $RC -ne 0 ] && ok || fail "collect: the kill of rank 1 did not end the job"
expect_exit 0 "" -- mpi 3 "$WEIR" run -q --checkpoint "$T/ck" --resume --epoch-records 2000 "$C"
cat "$T"/c-*.out | jq -c '[.[0], .[1].n, .[1].sum, (.[1].s | split("") | sort | join(""))]' | sort > "$T/got"
same "$T/got" "$T/want.col" "msgpack values per key on 2 ranks killed on rank 1, resumed on 3"

# Stopped by --epochs and resumed: the first checkpoint after a resume
# holds the groups each rank changed, not the copies every rank got back
# from the checkpoint (a rank must send rank 0 only the groups it owns)
rm -rf "$T/ck" "$T"/k-*.out
expect_exit 0 "" -- mpi 2 "$WEIR" run -q --checkpoint "$T/ck" --epoch-records 3000 --epochs 3 "$J"
expect_exit 0 "" -- mpi 2 "$WEIR" run -q --checkpoint "$T/ck" --resume --epoch-records 3000 --epochs 4 "$J"
expect_exit 0 "" -- mpi 3 "$WEIR" run -q --checkpoint "$T/ck" --resume --epoch-records 3000 --epochs 5 "$J"
expect_exit 0 "" -- "$WEIR" run -q --checkpoint "$T/ck" --resume --epoch-records 3000 "$J"
union "$T/k" > "$T/got"
same "$T/got" "$T/want.sum" "sums stopped after 3, 4 and 5 epochs on 2, 2 and 3 ranks, ended on 1"

# --- random SIGKILLs of one rank, another rank count each run ---------------
# About 1,200 epochs, 2 to 3 s on 2 cores: a kill 0.3 to 1 s in lands in
# the middle.  Under a sanitizer a sixth of that, or the last run alone
# outlasts the 120 s a rank may take.
N=600000
[ -n "${SANITIZER_CFLAGS:-}" ] && N=100000
awk -v n=$N 'BEGIN { for (i = 0; i < n; i++)
    printf "{\"u\": \"k%d\", \"b\": %d}\n", (i * 7919) % 5003, i % 1000 }' > "$T/big.jsonl"
awk -F'"' '{ split($0, f, ": "); b = f[3] + 0; s[$4] += b }
    END { for (u in s) printf "[\"%s\",%d]\n", u, s[u] }' "$T/big.jsonl" | sort > "$T/want.big"
B="json path=$T/big.jsonl split=2M threads=2 ! sum key=.u value=.b threads=2 ! json path=$T/r-{rank}.out"
rm -rf "$T/rck"
limit=${MPI_KILL_CYCLES:-4}
[ -n "${FAULT_LONG:-}" ] && limit=30
kill_cycles $limit 3 "$T/kill.err" run -q --checkpoint "$T/rck" --resume --epoch-records 500 "$B"
[ $FINISHED -eq 1 ] && ok || fail "the killed keyed job never finished in $CYCLES runs"
union "$T/r" > "$T/got"
same "$T/got" "$T/want.big" "sums of 5,003 keys over $N records after $KILLS kills in $CYCLES runs of 1 to 3 ranks"

# --- refusals ----------------------------------------------------------------
expect_exit 2 "count has threads=3 on each of 2 ranks and the job 4 key groups: .*2 of its 6 would own none" -- \
    mpi 2 "$WEIR" run --key-groups 4 "json path=$T/in.jsonl ! count key=.u threads=3 ! null"
# The network the ranks reach each other on, when told
rm -f "$T"/n-*.out
expect_exit 0 "" -- mpi 2 -x WEIR_EXCHANGE_NET=127.0.0.0/8 "$WEIR" run -q \
    "json path=$T/in.jsonl split=300k ! count key=.u threads=2 ! json path=$T/n-{rank}.out"
union "$T/n" > "$T/got"
same "$T/got" "$T/want.count" "counts with WEIR_EXCHANGE_NET=127.0.0.0/8"
expect_exit 1 "WEIR_EXCHANGE_NET=0.0.0.0/32: this host .* has no address on it" -- \
    mpi 2 -x WEIR_EXCHANGE_NET=0.0.0.0/32 "$WEIR" run "json path=$T/in.jsonl ! count key=.u ! null"
expect_exit 1 "WEIR_EXCHANGE_NET=10.1 is not a network" -- \
    mpi 2 -x WEIR_EXCHANGE_NET=10.1 "$WEIR" run "json path=$T/in.jsonl ! count key=.u ! null"

finish

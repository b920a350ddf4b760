#!/bin/sh
# tests/cli_mpi_tcp.sh - one job on two "nodes" that talk TCP.
#
# Two Linux network namespaces joined by a veth pair stand for two hosts:
# mpirun starts in the first, and its launcher (plm_rsh_agent, which would
# be ssh across real hosts) starts the second host's ranks with 'ip netns
# exec'.  The ranks of different namespaces reach each other only over
# TCP between 10.77.x.1 and 10.77.x.2.  The filesystem is shared, as a
# cluster's shared folder would be.  Checked: every record once across the
# hosts, a keyed count whose records cross between the hosts by key, a
# summed blob, and a rank of the second host killed, then the job
# resumed with another rank count across both.  Needs root with the right
# to make network namespaces; skipped (77) with a message otherwise.
. "$(dirname "$0")/lib.sh"

if [ "${WEIR_MPI:-no}" != yes ]; then
    echo "skipped: this weir was configured without MPI"
    exit 77
fi
: "${MPIRUN:?MPIRUN must name mpirun}"
if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null; then
    echo "skipped: making network namespaces needs root and ip (iproute2)"
    exit 77
fi
# A subnet and names of this run's own
net=10.77.$(($$ % 250 + 1))
a=weir-a-$$ b=weir-b-$$ va=wva$$ vb=wvb$$
cleanup () {
    ip netns del "$a" 2>/dev/null
    ip netns del "$b" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
if ! ip netns add "$a" 2>"$T/err"; then
    echo "skipped: network namespaces are not allowed here: $(cat "$T/err")"
    exit 77
fi
# Entering one remounts /sys, which a chroot (where Debian's package
# builders run make check) refuses: "mount --make-rslave /" fails there
if ! ip netns exec "$a" true 2>"$T/err"; then
    echo "skipped: a network namespace cannot be entered here: $(head -c 300 "$T/err")"
    exit 77
fi
ip netns add "$b" && ip link add "$va" type veth peer name "$vb" \
    && ip link set "$va" netns "$a" && ip link set "$vb" netns "$b" \
    && ip -n "$a" addr add "$net.1/24" dev "$va" && ip -n "$b" addr add "$net.2/24" dev "$vb" \
    && ip -n "$a" link set lo up && ip -n "$b" link set lo up \
    && ip -n "$a" link set "$va" up && ip -n "$b" link set "$vb" up \
    || { fail "the two namespaces could not be joined"; finish; exit 1; }

# The launcher, as ssh would be called: [options] HOST COMMAND
cat > "$T/agent" <<AGENT
#!/bin/sh
while [ \$# -gt 0 ]; do case \$1 in -*) shift ;; *) break ;; esac; done
host=\$1
shift
case \$host in
    $net.1) exec ip netns exec $a sh -c "\$*" ;;
    $net.2) exec ip netns exec $b sh -c "\$*" ;;
esac
echo "agent: no host \$host" >&2
exit 255
AGENT
chmod +x "$T/agent"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_hwloc_base_binding_policy=none
# TCP only: both "hosts" have this machine's name, so shared memory
# between them would mix up their segments
export OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=$net.0/24 OMPI_MCA_oob_tcp_if_include=$net.0/24
export OMPI_MCA_plm_rsh_agent="$T/agent" OMPI_MCA_btl_base_warn_component_unused=0
export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}fast_unwind_on_malloc=0"

${CC:-cc} -std=c11 -O2 -shared -fPIC $PLUGIN_CFLAGS "$PLUGINS_SRC/accumulate.c" -o "$T/accumulate.so" \
    || fail "accumulate plugin does not compile"
export WEIR_PLUGIN_PATH="$T"

# cluster HOSTS N ARGS: weir run on N ranks over HOSTS, from the first host
cluster () {
    hosts=$1 n=$2
    shift 2
    timeout 300 ip netns exec "$a" "$MPIRUN" -H "$hosts" -n "$n" "$WEIR" run "$@"
}

N=400000
WANT=$((N * (N - 1) / 2))
JOB="range count=$N ! accumulate reduce=sum ! lines path=$T/out-{rank}.txt"

# Two ranks on each host
expect_exit 0 "" -- cluster "$net.1:2,$net.2:2" 4 -q --checkpoint "$T/ck1" --epoch-records 20000 \
    "range count=100000 ! identity ! lines path=$T/one-{rank}.txt"
sort -n "$T"/one-*.txt | cmp -s - "$(seq 0 99999 > "$T/want1"; echo "$T/want1")" && ok \
    || fail "4 ranks on two hosts: the outputs are not the input once"

# A keyed count across the hosts: each record goes to the rank that owns
# its key over tcp between the namespaces (the ranks find the address of
# each other's host: loopback within a namespace, 10.77.x.y across)
awk 'BEGIN { for (i = 0; i < 40000; i++) printf "{\"u\": \"user%d\"}\n", (i * 7919) % 97 }' > "$T/users.jsonl"
awk -F'"' '{ n[$4]++ } END { for (u in n) printf "[\"%s\",%d]\n", u, n[u] }' "$T/users.jsonl" | sort > "$T/want.users"
expect_exit 0 "" -- cluster "$net.1:2,$net.2:2" 4 -q --checkpoint "$T/ckk" --epoch-records 3000 \
    "json path=$T/users.jsonl split=300k ! count key=.u threads=2 ! json path=$T/users-{rank}.out"
sort "$T"/users-*.out > "$T/got.users"
cmp -s "$T/got.users" "$T/want.users" && ok \
    || fail "a keyed count on two hosts: $(wc -l < "$T/got.users") keys, $(diff "$T/got.users" "$T/want.users" | head -3)"

# Told a network they do not share (each host's own loopback): the ranks
# cannot reach each other, and say so within --epoch-timeout instead of
# waiting for ever
timeout 120 ip netns exec "$a" "$MPIRUN" -H "$net.1:1,$net.2:1" -n 2 -x WEIR_EXCHANGE_NET=127.0.0.0/8 \
    "$WEIR" run --epoch-timeout 3 "json path=$T/users.jsonl ! count key=.u ! null" > /dev/null 2> "$T/unreached.err"
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "heard nothing from rank . in 3 s on keyed link 0 (rank . listens at tcp://127.0.0.1:[0-9]*): the ranks cannot reach each other there; set WEIR_EXCHANGE_NET" "$T/unreached.err" \
    && ok || fail "ranks that cannot reach each other: exit $rc, $(head -c 600 "$T/unreached.err")"

# Killed on the second host, resumed on 3 ranks across both
cluster "$net.1:2,$net.2:2" 4 -q --checkpoint "$T/ck" --epoch-records 5000 "$JOB" > /dev/null 2> "$T/kill.err" &
pid=$!
victim=
for i in $(seq 1 100); do
    for p in $(ip netns pids "$b" 2>/dev/null); do
        [ "$(cat /proc/$p/comm 2>/dev/null)" = weir ] && victim=$p
    done
    [ -n "$victim" ] && break
    sleep 0.05
done
sleep 0.4
[ -n "$victim" ] && kill -KILL "$victim" 2>/dev/null && ok || fail "no rank of the second host to kill"
wait $pid
rc=$?
[ $rc -ne 0 ] && ok || fail "the job went on, or had ended, after a rank of the second host was killed (exit $rc)"
expect_exit 0 "" -- cluster "$net.1:1,$net.2:2" 3 -q --checkpoint "$T/ck" --resume --epoch-records 5000 "$JOB"
sort -n "$T"/out-*.txt > "$T/union"
seq 0 $((N - 1)) | cmp -s - "$T/union" && ok \
    || fail "after a kill on the second host: $(wc -l < "$T/union") records, $(uniq -d "$T/union" | wc -l) repeated; wanted $N once each"
latest=$("$WEIR" checkpoints "$T/ck" | awk '/latest/ {print $1}')
total=$("$WEIR" checkpoints "$T/ck" --epoch "$latest" --blob total | od -An -td8 | tr -d ' ')
[ "$total" = "$WANT" ] && ok || fail "the summed blob is $total, wanted $WANT"

finish

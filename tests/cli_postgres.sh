#!/bin/sh
# The postgres writer against a real PostgreSQL server that the test
# starts (tests/pg.sh): rows of every kind, the errors a user meets,
# a failed batch job that leaves the table as it was, exactly once across
# kills at every point of the two-phase commit, upserts, and a server
# without prepared transactions.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg.sh"
pg_require
pg_start

# --- Rows of every kind -----------------------------------------------
psql_q "CREATE TABLE kinds (id bigserial PRIMARY KEY, name text, n int, big bigint, f float8, ok bool,
        tags text[], nums int[], doc jsonb, raw bytea, day date, at timestamptz DEFAULT now())"
cat > "$T/kinds.jsonl" <<'JSON'
{"name":"plain","n":1,"big":-9007199254740993,"f":1.5,"ok":true,"tags":["x","y z","q\"uote"],"nums":[1,null,3],"doc":{"k":[1,2],"s":"t"},"raw":"hi","day":"2026-11-28"}
{"name":"tab\there\nnewline\\back","n":-2,"f":-0.25,"ok":false}
{"name":null,"n":null,"doc":"a string","nums":[]}
{"name":"ünïcødé ☃","f":1e300}
JSON
"$WEIR" run -q "json path=$T/kinds.jsonl ! postgres conninfo='$CONNINFO' table=kinds" || fail "rows of every kind"
psql_q "SELECT id, name, n, big, f, ok, tags, nums, doc, encode (raw, 'escape'), day, at IS NOT NULL
        FROM kinds ORDER BY id" > "$T/kinds.out"
cat > "$T/kinds.want" <<'ROWS'
1	plain	1	-9007199254740993	1.5	t	{x,"y z","q\"uote"}	{1,NULL,3}	{"k": [1, 2], "s": "t"}	hi	2026-11-28	t
2	tab	here
newline\back	-2		-0.25	f						t
3							{}	"a string"			t
4	ünïcødé ☃			1e+300							t
ROWS
same "$T/kinds.want" "$T/kinds.out" "every kind of value as its column has it"

# --- What a user gets wrong, said clearly -----------------------------
printf '{"name":"a","n":1}\n' > "$T/one.jsonl"
expect_exit 1 'table nosuch: relation "nosuch" does not exist' -- \
    "$WEIR" run -q "json path=$T/one.jsonl ! postgres conninfo='$CONNINFO' table=nosuch"
printf '{"name":"a","nn":1}\n' > "$T/bad.jsonl"
expect_exit 1 "record \{\"name\":\"a\",\"nn\":1\}: key 'nn' is no column of table kinds; on-error=skip would skip it" -- \
    "$WEIR" run -q "json path=$T/bad.jsonl ! postgres conninfo='$CONNINFO' table=kinds"
printf '{"name":"a","at":"2026-01-01"}\n' > "$T/bad.jsonl"
expect_exit 1 "sets column 'at' of table kinds, which has a default .* name it in columns=" -- \
    "$WEIR" run -q "json path=$T/bad.jsonl ! postgres conninfo='$CONNINFO' table=kinds"
printf '[1,2]\n' > "$T/bad.jsonl"
expect_exit 1 "record \[1,2\]: table kinds takes maps .*, not a msgpack array" -- \
    "$WEIR" run -q "json path=$T/bad.jsonl ! postgres conninfo='$CONNINFO' table=kinds"
printf '{"n":{"a":1}}\n' > "$T/bad.jsonl"
expect_exit 1 "column 'n' of table kinds is integer, which takes no msgpack map" -- \
    "$WEIR" run -q "json path=$T/bad.jsonl ! postgres conninfo='$CONNINFO' table=kinds"
printf '{"n":1}\n{"n":2}\n{"n":"x"}\n' > "$T/bad.jsonl"
expect_exit 1 'invalid input syntax for type integer: "x" \(COPY kinds, line 3, column n: "x"\)' -- \
    "$WEIR" run -q "json path=$T/bad.jsonl ! postgres conninfo='$CONNINFO' table=kinds"
expect_exit 1 'cannot connect to the server: .*/nonexistent' -- \
    "$WEIR" run -q "json path=$T/one.jsonl ! postgres conninfo='host=/nonexistent password=secret' table=kinds"
grep -q secret "$T/err" && fail "a connection error shows the password" || ok
expect_exit 2 'mode=merge: wants copy or upsert' -- \
    "$WEIR" run -q "json path=$T/one.jsonl ! postgres conninfo='$CONNINFO' table=kinds mode=merge"
expect_exit 2 'mode=upsert needs conflict=COLUMNS' -- \
    "$WEIR" run -q "json path=$T/one.jsonl ! postgres conninfo='$CONNINFO' table=kinds mode=upsert"
expect_exit 2 'conflict= is for mode=upsert' -- \
    "$WEIR" run -q "json path=$T/one.jsonl ! postgres conninfo='$CONNINFO' table=kinds conflict=id"
expect_exit 2 "columns=name,nope: 'nope' is no column of table kinds" -- \
    "$WEIR" run -q "json path=$T/one.jsonl ! postgres conninfo='$CONNINFO' table=kinds columns=name,nope"
expect_exit 2 "property 'table' is required" -- \
    "$WEIR" run -q "json path=$T/one.jsonl ! postgres conninfo='$CONNINFO'"
# --- map=: columns from paths into any record ---------------------------
psql_q "CREATE TABLE mapped (id bigserial PRIMARY KEY, uid bigint, who text, first_tag text, raw jsonb,
        note text DEFAULT 'default')"
cat > "$T/events.jsonl" <<'JSON'
{"user":{"id":7,"name":"ann"},"tags":["a","b"],"extra":1}
{"user":{"id":8},"tags":[]}
[1,2,3]
JSON
"$WEIR" run -q "json path=$T/events.jsonl ! postgres conninfo='$CONNINFO' table=mapped map='uid=.user.id, who=.user.name,first_tag=.tags[0],raw=.'" \
    || fail "map="
psql_q "SELECT uid, who, first_tag, raw, note FROM mapped ORDER BY id" > "$T/mapped.out"
cat > "$T/mapped.want" <<'ROWS'
7	ann	a	{"tags": ["a", "b"], "user": {"id": 7, "name": "ann"}, "extra": 1}	default
8			{"tags": [], "user": {"id": 8}}	default
			[1, 2, 3]	default
ROWS
same "$T/mapped.want" "$T/mapped.out" "map=: each column from its path, NULL where it leads nowhere"
printf '{"user":{"id":{"x":1}}}\n' > "$T/bad.jsonl"
expect_exit 1 "record \{\"user\":\{\"id\":\{\"x\":1\}\}\}: column 'uid' of table mapped is bigint, which takes no msgpack map" -- \
    "$WEIR" run -q "json path=$T/bad.jsonl ! postgres conninfo='$CONNINFO' table=mapped map=uid=.user.id"
expect_exit 2 "map=uid=.user.id,nope=.x: 'nope' is no column of table mapped" -- \
    "$WEIR" run -q "json path=$T/one.jsonl ! postgres conninfo='$CONNINFO' table=mapped map=uid=.user.id,nope=.x"
expect_exit 2 "map= names the columns written, and so does columns=: give one" -- \
    "$WEIR" run -q "json path=$T/one.jsonl ! postgres conninfo='$CONNINFO' table=mapped map=uid=.user.id columns=uid"
expect_exit 2 "map=uid: 'uid' is not COLUMN=PATH" -- \
    "$WEIR" run -q "json path=$T/one.jsonl ! postgres conninfo='$CONNINFO' table=mapped map=uid"
expect_exit 2 "the path of column 'uid' is not a path: 'user.id'" -- \
    "$WEIR" run -q "json path=$T/one.jsonl ! postgres conninfo='$CONNINFO' table=mapped map=uid=user.id"
expect_exit 2 "column 'uid' is mapped twice" -- \
    "$WEIR" run -q "json path=$T/one.jsonl ! postgres conninfo='$CONNINFO' table=mapped map=uid=.a,uid=.b"

# on-error=skip and dead-letter=: the records the table cannot take are
# skipped and kept with their reasons, the others written
printf '%s\n' '{"name":"good1","n":1}' '{"name":"bad","nn":2}' '[3]' '{"name":"bad","n":{"x":4}}' \
    '{"name":"good2","n":5}' > "$T/mixed.jsonl"
"$WEIR" run --checkpoint "$T/mixed.ck" "json path=$T/mixed.jsonl ! postgres conninfo='$CONNINFO' table=kinds dead-letter=$T/mixed.dead" \
    2> "$T/mixed.err" || fail "on-error=skip: $(cat "$T/mixed.err")"
grep -q "5 records read, 5 written, 3 bad skipped" "$T/mixed.err" && ok || fail "the skipped records are not counted: $(cat "$T/mixed.err")"
[ "$(psql_q "SELECT string_agg (name || ':' || n, ',' ORDER BY id) FROM kinds WHERE name LIKE 'good%'")" = "good1:1,good2:5" ] \
    && ok || fail "on-error=skip: the good records are not the table's rows"
"$WEIR" run -q "msgpack path=$T/mixed.dead ! lines path=-" > "$T/mixed.dead.json"
[ "$(jq -r .reason "$T/mixed.dead.json" | tr '\n' '|')" = \
    "key 'nn' is no column of table kinds|table kinds takes maps (one per row, keys naming columns), not a msgpack array|column 'n' of table kinds is integer, which takes no msgpack map|" ] \
    && ok || fail "the dead letter's reasons: $(cat "$T/mixed.dead.json")"
psql_q "DELETE FROM kinds WHERE name LIKE 'good%'"
expect_exit 2 "unknown property 'on-error'" -- "$WEIR" run -q "range count=1 ! lines path=$T/x on-error=skip"

# columns= writes a column that has a default
printf '{"name":"set","at":"2001-02-03 04:05:06+00"}\n' > "$T/at.jsonl"
"$WEIR" run -q "json path=$T/at.jsonl ! postgres conninfo='$CONNINFO' table=kinds columns=name,at" \
    || fail "columns= with a defaulted column"
[ "$(psql_q "SELECT extract (epoch FROM at)::bigint FROM kinds WHERE name = 'set'")" = 981173106 ] && ok \
    || fail "columns=name,at did not write at"
psql_q "SELECT count(*) FROM kinds" > "$T/count"
[ "$(cat "$T/count")" = 5 ] && ok || fail "the refused jobs wrote rows: $(cat "$T/count") rows, not 5"

# --- A batch job without checkpoints is all or nothing ---------------
psql_q "CREATE TABLE nums (n bigint NOT NULL)"
seq 1 20000 | awk '{ print "{\"n\":" $1 "}" }' > "$T/nums.jsonl"
( cat "$T/nums.jsonl"; echo '{"n":null}' ) > "$T/nums-bad.jsonl"
expect_exit 1 'null value in column "n"' -- \
    "$WEIR" run -q --epoch-records 1000 "json path=$T/nums-bad.jsonl ! postgres conninfo='$CONNINFO' table=nums threads=2"
[ "$(psql_q "SELECT count(*) FROM nums")" = 0 ] && ok || fail "a failed batch job left rows"
"$WEIR" run -q --epoch-records 1000 "json path=$T/nums.jsonl ! postgres conninfo='$CONNINFO' table=nums threads=2" \
    || fail "the batch job"
[ "$(psql_q "SELECT count(*), count(DISTINCT n), sum(n) FROM nums")" = "20000	20000	200010000" ] && ok \
    || fail "the batch job's rows: $(psql_q "SELECT count(*), count(DISTINCT n), sum(n) FROM nums")"

# --- Exactly once across kills (two-phase commit) --------------------
# check TABLE WHAT: every n of nums.jsonl exactly once, nothing prepared
check () {
    got=$(psql_q "SELECT count(*), count(DISTINCT n), sum(n) FROM $1")
    [ "$got" = "20000	20000	200010000" ] && ok || fail "$2: rows, distinct, sum = $got"
    left=$(psql_q "SELECT count(*) FROM pg_prepared_xacts")
    [ "$left" = 0 ] && ok || fail "$2: $left transactions left prepared"
}
JOB="json path=$T/nums.jsonl ! postgres conninfo='$CONNINFO' table=nums THREADS"
for point in postgres-prepared:2 postgres-settling:2 writers-synced:3 after-leveldb-write:2 \
    before-leveldb-write:3 readers-resumed:4; do
    psql_q "TRUNCATE nums"
    rm -rf "$T/ck"
    killed_at "$point" "$T/ck" 1500 "$JOB" "two-phase commit"
    check nums "killed at $point, resumed"
done
# With --async-checkpoint the checkpoint is written as the next epoch
# runs: its rows are committed once it is
psql_q "TRUNCATE nums"
rm -rf "$T/ck"
WEIR_KILL_AT=postgres-settling:3 "$WEIR_KP" run -q --async-checkpoint --checkpoint "$T/ck" --epoch-records 1500 \
    "$(echo "$JOB" | sed s/THREADS/threads=2/)" 2> /dev/null
[ $? -eq 137 ] && ok || fail "async: not killed at postgres-settling"
"$WEIR" run -q --async-checkpoint --checkpoint "$T/ck" --resume --epoch-records 1500 \
    "$(echo "$JOB" | sed s/THREADS//)" || fail "async: the resume"
check nums "async checkpoints, killed while settling"
# Random kills
psql_q "TRUNCATE nums"
rm -rf "$T/ck"
kill_rounds "$T/ck" 700 "$JOB"
check nums "random kills"
# conninfo= may change on resume (a failover, a new password): killed with
# prepared transactions, resumed through another conninfo to the same
# server, which settles them
psql_q "TRUNCATE nums"
rm -rf "$T/ck"
WEIR_KILL_AT=postgres-settling:2 "$WEIR_KP" run -q --checkpoint "$T/ck" --epoch-records 1500 \
    "$(echo "$JOB" | sed s/THREADS/threads=2/)" 2> /dev/null
[ $? -eq 137 ] && ok || fail "conninfo: not killed at postgres-settling"
"$WEIR" run --checkpoint "$T/ck" --resume --epoch-records 1500 \
    "$(echo "$JOB" | sed "s/THREADS//; s|conninfo='$CONNINFO'|conninfo='$CONNINFO connect_timeout=10'|")" \
    > /dev/null 2> "$T/err" || fail "conninfo: the resume: $(cat "$T/err")"
grep -q "postgres (stage 2): conninfo= changed (its values are not shown) since checkpoint" "$T/err" \
    && ! grep -q "connect_timeout" "$T/err" && ok \
    || fail "conninfo: the resume did not say it changed: $(cat "$T/err")"
check nums "killed, resumed through another conninfo"
# A resume refused for another change shows both descriptions: never the
# conninfo's values, which may hold a password
expect_exit 2 "postgres \(stage 2\): table= was 'nums', is now 'kinds'" -- "$WEIR" run --checkpoint "$T/ck" --resume \
    "json path=$T/nums.jsonl ! postgres conninfo='$CONNINFO password=hunter2' table=kinds"
grep -q "\*\*\*\*' table=kinds" "$T/err" && ! grep -q "hunter2" "$T/err" && ok \
    || fail "a refused resume showed the conninfo: $(cat "$T/err")"

# --- The server gone in the middle of a job --------------------------
# It crashes (an immediate stop) after the first checkpoint: the job fails
# naming the connection; the server back, --resume finishes the table
psql_q "TRUNCATE nums"
rm -rf "$T/ck"
# The probe plugin slows the job, so that the crash comes in its middle
PROBE_SLEEP_US=300 "$WEIR" run -q --checkpoint "$T/ck" --epoch-records 1000 \
    "json path=$T/nums.jsonl ! $PLUGINS_DIR/probe.so log=$T/probe.log ! postgres conninfo='$CONNINFO' table=nums" \
    2> "$T/gone.err" &
pid=$!
wait_checkpointed "$T/ck" $pid || fail "the job made no checkpoint before the server went"
as_pg "$PG_BIN/pg_ctl" -D "$PGSOCK/data" -m immediate -w stop > /dev/null 2>&1
wait $pid
rc=$?
[ $rc -eq 1 ] && grep -q 'postgres: .*\(server closed the connection\|terminating connection\|no connection\|connection\)' "$T/gone.err" \
    && ok || fail "the server gone: exit $rc, $(cat "$T/gone.err")"
as_pg "$PG_BIN/pg_ctl" -D "$PGSOCK/data" -o "-c listen_addresses= -k $PGSOCK -c fsync=off -c max_prepared_transactions=32" \
    -l "$PGSOCK/server.log" -w -t 60 start > /dev/null 2>&1 || fail "restarting the server"
"$WEIR" run -q --checkpoint "$T/ck" --resume --epoch-records 1000 \
    "json path=$T/nums.jsonl ! $PLUGINS_DIR/probe.so log=$T/probe.log ! postgres conninfo='$CONNINFO' table=nums" \
    || fail "resumed once the server was back"
check nums "the server crashed in the middle, resumed"

# --- Upserts: exactly once for a keyed table -------------------------
psql_q "CREATE TABLE last (k int PRIMARY KEY, v bigint, note text)"
seq 1 20000 | awk '{ printf "{\"k\":%d,\"v\":%d,\"note\":\"n%d\"}\n", $1 % 997, $1, $1 }' > "$T/keyed.jsonl"
UJOB="json path=$T/keyed.jsonl ! postgres conninfo='$CONNINFO' table=last mode=upsert conflict=k"
"$WEIR" run -q --epoch-records 3000 "$UJOB" || fail "upsert"
# The last record of each key wins: 1 writer thread keeps their order
awk -F'[:,}]' '{ last[$2] = $4 } END { for (k in last) print k "\t" last[k] }' "$T/keyed.jsonl" | sort -n > "$T/last.want"
psql_q "SELECT k, v FROM last ORDER BY k" > "$T/last.out"
same "$T/last.want" "$T/last.out" "upsert: the last value of every key"
psql_q "TRUNCATE last"
rm -rf "$T/ck"
killed_at writers-synced:3 "$T/ck" 2500 "$UJOB" "upsert" 1 1
psql_q "SELECT k, v FROM last ORDER BY k" > "$T/last.out"
same "$T/last.want" "$T/last.out" "upsert killed and resumed: the last value of every key"
expect_exit 1 'there is no unique or exclusion constraint matching the ON CONFLICT' -- \
    "$WEIR" run -q "json path=$T/keyed.jsonl ! postgres conninfo='$CONNINFO' table=last mode=upsert conflict=v"

# --- A server without prepared transactions --------------------------
as_pg "$PG_BIN/pg_ctl" -D "$PGSOCK/data" -o "-c listen_addresses= -k $PGSOCK -c fsync=off -c max_prepared_transactions=0" \
    -l "$PGSOCK/server.log" -w -t 60 restart > /dev/null 2>&1 || fail "restarting the server"
psql_q "TRUNCATE nums"
rm -rf "$T/ck"
expect_exit 2 "allows 0 prepared transactions .* set max_prepared_transactions = 4 or more .* or write with mode=upsert conflict=COLUMNS" -- \
    "$WEIR" run -q --checkpoint "$T/ck" "json path=$T/nums.jsonl ! postgres conninfo='$CONNINFO' table=nums threads=2"
"$WEIR" run -q "json path=$T/nums.jsonl ! postgres conninfo='$CONNINFO' table=nums" \
    || fail "without checkpoints no transaction is prepared"
rm -rf "$T/ck"
"$WEIR" run -q --checkpoint "$T/ck" "$UJOB" || fail "upsert needs no prepared transaction"

finish

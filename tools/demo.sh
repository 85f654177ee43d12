#!/usr/bin/env bash
# The Tandem demo (tools/run.sh demo builds first, then runs this with BUILD set).
# Starts a two-runtime replica with default settings, feeds it a heavy changing load, reads it
# while maintenance runs (peeks, one-shot queries, table writes, subscribes), drives a second replica
# beside it through one controller (tandem-ctl --endpoint A,B), shows the
# shared-memory registry, and shuts everything down.
set -euo pipefail
BUILD=${BUILD:-build/ci}
SUP=$BUILD/bin/tandem-supervisor
CTL=$BUILD/bin/tandem-ctl
SHM=$BUILD/bin/tandem-shm
REPLICA=${TANDEM_DEMO_REPLICA:-demo}
HTTP_PORT=6878
work=$(mktemp -d /tmp/tandem-demo-XXXXXX)
sup_pid=""
sup2_pid=""

say() { printf '\n\033[1m%s\033[0m\n' "$*"; }
http_get() {  # http_get PATH [PORT] → prints the body; uses bash's /dev/tcp, no curl needed
  exec 3<>"/dev/tcp/127.0.0.1/${2:-$HTTP_PORT}" || return 1
  printf 'GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n' "$1" >&3
  sed '1,/^\r$/d' <&3
  exec 3<&-
}
cleanup() {
  for pid in "$sup_pid" "$sup2_pid"; do
    if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid"
      wait "$pid" || true
    fi
  done
  rm -rf "$work"
}
trap cleanup EXIT

for port in 2101 $HTTP_PORT 2111 6889; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "demo: port $port is in use (another replica?); stop it first" >&2
    exit 69
  fi
done

say "1. Start a replica: tandem-supervisor with default settings (two runtimes, 2 workers each)."
echo "   It creates /dev/shm/tandem.$REPLICA, spawns a maintenance and an interactive runtime,"
echo "   and fronts them with one controller endpoint, tcp://127.0.0.1:2101. Tables are kept in"
echo "   its --data-dir (a temporary directory here, removed at the end)."
"$SUP" --replica-id "$REPLICA" --workers 2 --runtime-dir "$work" --data-dir "$work/data" \
  >"$work/supervisor.log" 2>&1 &
sup_pid=$!
for _ in $(seq 100); do
  [[ "$(http_get /readyz 2>/dev/null || true)" == ready* ]] && break
  if ! kill -0 "$sup_pid" 2>/dev/null; then
    echo "demo: the supervisor exited:" >&2
    cat "$work/supervisor.log" >&2
    exit 1
  fi
  sleep 0.1
done
http_get /readyz | sed 's/^/   \/readyz: /'

ctl() { "$CTL" --state "$work/ctl.state" "$@"; }
say "2. Define dataflows with tandem-ctl (it keeps its history and replays it whenever it changes the
   replica; its reads are read-only observer sessions)."
echo "   u1: key_value source, 100,000 keys, 200 values replaced every millisecond (steady load)"
echo "   u2: a view over u1 — count, sum, min and max of all values — indexed as u3"
echo "   u4: key_value source, 10,000 keys; u5: an index on u4 by key, for point lookups"
ctl create-source u1 --generator key_value --keys 100000 --updates-per-tick 200 --tick-interval-us 1000 --seed 7
ctl create-view u2 --on u1 --aggregate count --aggregate sum:value --aggregate min:value \
  --aggregate max:value --index-id u3
ctl create-source u4 --generator key_value --keys 10000 --updates-per-tick 100 --tick-interval-us 1000 --seed 11
ctl create-index u5 --on u4 --key key

say "3. Read while maintenance runs: peeks are served by the interactive runtime, in place from"
echo "   shared memory, so they do not wait behind the maintenance work. Latency is per peek."
for _ in $(seq 50); do  # until both indexes have a complete time
  ctl peek u5 --key 42 >/dev/null 2>&1 && ctl peek u3 >/dev/null 2>&1 && break
  sleep 0.2
done
for i in 1 2 3 4 5; do
  sleep 1
  echo "   -- round $i"
  ctl peek u2 | sed 's/^/   /'
  ctl peek u5 --key 42 | sed 's/^/   /'
  # Like a real controller, let the replica compact what no one will read any more.
  t=$(ctl --json peek u5 --key 42 | sed -n 's/.*"time":\([0-9]*\).*/\1/p')
  if [[ -n "$t" ]]; then
    ctl allow-compaction u5 "$t" >/dev/null
    ctl allow-compaction u3 "$t" >/dev/null
    ctl allow-compaction u1 "$t" >/dev/null
    echo "   (allowed compaction of u3, u5 and u1's index s1 up to time $t)"
  fi
done

say "3b. A one-shot query: tandem-ctl query builds a ONE_SHOT_READ dataflow that imports u1's index,
   which the interactive runtime computes at one time from the shared batches in place (no copy),
   peeks its transient index and drops it. Maintenance never waits for it."
for i in 1 2 3; do
  ctl query --on u1 --aggregate count --aggregate sum:value --aggregate max:value | sed 's/^/   /'
done
ctl query --on u4 --group-by key --aggregate count --at latest --json | cut -c1-160 | sed 's/^/   /'
echo "   …"

say "3c. Joins and top-k over the shared indexes: u6 joins u4 with u1 on key, maintained by the
   maintenance runtime. Both sides are indexes already arranged by the join key (u4's s4, u1's s1),
   so the join reads them in place from shared memory and arranges neither a second time (the
   render log says so). u8 keeps the three largest values of u1; a one-shot query joins and
   ranks once, on the interactive runtime."
ctl create-view u6 --on u4 --join u1 --join-on key=key --index-id u7
ctl create-view u8 --on u1 --top 3 --by value:desc --index-id u9
for _ in $(seq 50); do  # until both have a complete time
  ctl peek u9 >/dev/null 2>&1 && ctl peek u7 --key 42 >/dev/null 2>&1 && break
  sleep 0.2
done
ctl peek u7 --key 42 | sed 's/^/   /'
ctl peek u9 | sed 's/^/   /'
grep -o 'dataflow [^:]*: join 1: .*' "$work/supervisor.log" | head -1 | sed 's/^/   log: /'
ctl query --on u4 --join u1 --join-on key=key --top 3 --by value:desc | sed 's/^/   /'

say "3d. Real data in: u10 is a table with an upsert key (k), kept durably in the replica's
   --data-dir. tandem-ctl write sends one WriteTable in a writer session (no replay) and prints the
   time the write was made durable at (the wall clock, in ms): a peek at that time sees it (read
   your writes). An upsert replaces the row with its key; a delete removes it."
ctl create-source u10 --table --schema "k:int64,item:string,qty:int64" --upsert-key k
t1=$(ctl write u10 --upsert '1,"apple",3' --upsert '2,"pear",5' --upsert '3,"plum",1' |
  sed -n 's/^written at //p')
echo "   written at $t1: three rows"
t2=$(ctl write u10 --upsert '2,"pear",7' | sed -n 's/^written at //p')
echo "   written at $t2: an upsert of key 2 (qty 5 -> 7)"
t3=$(ctl write u10 --delete 3 | sed -n 's/^written at //p')
echo "   written at $t3: a delete of key 3"
echo "   -- peek u10 --at $t1"
ctl peek u10 --at "$t1" | sed 's/^/   /'
echo "   -- peek u10 --at $t3"
ctl peek u10 --at "$t3" | sed 's/^/   /'
echo "   the table's log: $(ls "$work/data/tables")"

say "3e. Subscribe: tandem-ctl subscribe streams an index — its contents at a time (the snapshot),
   then every change as the replica publishes it, one line per update: TIME DIFF ROW, until
   --up-to (or --for, or ^C). It reads u10 in place on the interactive runtime and holds it at its
   progress. From t1 up to t3: the three rows at t1, the upsert of key 2 (a retraction and an
   insertion) at t2, the delete of key 3 at t3; the end's reason goes to stderr."
ctl subscribe u10 --as-of "$t1" --up-to $((t3 + 1)) 2>&1 | sed 's/^/   /'
t=$(ctl --json peek u3 | sed -n 's/.*"time":\([0-9]*\).*/\1/p')
echo "   -- u3 (count, sum, min, max of u1) from its latest time $t for three ticks, live:"
ctl subscribe u3 --as-of "$t" --up-to $((t + 3)) 2>&1 | sed 's/^/   /' ||
  echo "   (subscribe u3 failed)"

say "3f. Read locally: a program on this host reads the indexes in place, without the endpoint —
   tandem::LocalReader maps the segment read-only and announces what it reads in the replica's
   reader table (/dev/shm/tandem.$REPLICA.readers), so the publisher never frees a batch under it
   and never waits for it. tandem-shm read is that library on the command line:"
"$SHM" read "tandem.$REPLICA" u5 --key 42 | sed 's/^/   /'
if [[ -d "$BUILD/python" ]]; then
  echo "   -- and from Python (import tandem), 100,000 lookups of random keys of u5 while u4 churns:"
  PYTHONPATH="$BUILD/python" python3 - "tandem.$REPLICA" <<'PY' | sed 's/^/   /'
import random, sys, time
import tandem
r = tandem.LocalReader(sys.argv[1])
keys = [random.randrange(10000) for _ in range(100000)]
start = time.perf_counter()
for k in keys:
    t, rows = r.lookup("u5", [k])
took = time.perf_counter() - start
print(f"{len(keys)} lookups in {took:.2f} s: {took / len(keys) * 1e6:.2f} us each, "
      f"Python included; the last at time {t}: {rows}")
PY
fi

# The second replica of 3g and 3h (its data dir kept across its restart); sets sup2_pid once ready.
start_second() {
  "$SUP" --replica-id "${REPLICA}2" --workers 1 --controller-listen-addr tcp://127.0.0.1:2111 \
    --internal-http-listen-addr 127.0.0.1:6889 --runtime-dir "$work" --data-dir "$work/data2" \
    >>"$work/supervisor2.log" 2>&1 &
  sup2_pid=$!
  for _ in $(seq 100); do
    [[ "$(http_get /readyz 6889 2>/dev/null || true)" == ready* ]] && break
    sleep 0.1
  done
}

say "3g. Many replicas behind one controller (DESIGN §13): a second replica, ${REPLICA}2, starts on
   ports 2111/6889 with nothing in it. tandem-ctl --endpoint A,B sends every command to both —
   replaying its history to the new one first — takes the first answer of each peek, and shows
   each replica's state. Then ${REPLICA}2 is SIGKILLed: peeks go on, answered by the one left."
start_second
both=tcp://127.0.0.1:2101,tcp://127.0.0.1:2111
ctl --endpoint "$both" create-index u11 --on u4 --key value | sed 's/^/   /'
for _ in $(seq 50); do  # until the new replica has caught up with u5
  ctl --endpoint "$both" --replica 1 peek u5 --key 42 >/dev/null 2>&1 && break
  sleep 0.2
done
ctl --endpoint "$both" status | sed 's/^/   /' || true
ctl --endpoint "$both" peek u5 --key 42 | sed 's/^/   /'
ctl --endpoint "$both" --replica 1 peek u5 --key 42 | sed 's/^/   /'
kill -KILL "$sup2_pid"
wait "$sup2_pid" 2>/dev/null || true
sup2_pid=""
echo "   -- ${REPLICA}2 SIGKILLed"
ctl --endpoint "$both" status 2>&1 | sed 's/^/   /' || true
ctl --endpoint "$both" peek u5 --key 42 2>&1 | sed 's/^/   /'
echo "   its stale segment, removed by tandem-shm gc (once its runtimes, which follow their"
echo "   supervisor by the parent-death signal, are gone too):"
for _ in $(seq 50); do
  [[ -e "/dev/shm/tandem.${REPLICA}2" ]] || break
  "$SHM" gc --prefix "tandem.${REPLICA}2" | sed 's/^/   /'
  [[ -e "/dev/shm/tandem.${REPLICA}2" ]] && sleep 0.1
done

say "3h. A replica restarted with its --data-dir runs nothing until a controller replays its history
   to it: a read or write session never replays, so it is refused — and says so, naming the
   command. tandem-ctl replay replays the state file's history and changes nothing else; then
   ${REPLICA}2's table u10 takes writes again."
start_second
second=tcp://127.0.0.1:2111
ctl --endpoint "$second" write u10 --upsert '4,"fig",2' 2>&1 | fold -s -w 96 | sed 's/^/   /' || true
ctl --endpoint "$second" replay | sed 's/^/   /'
t4=$(ctl --endpoint "$second" write u10 --upsert '4,"fig",2' | sed -n 's/^written at //p')
echo "   written at $t4 on ${REPLICA}2"
ctl --endpoint "$second" peek u10 --at "$t4" | sed 's/^/   /'
kill -TERM "$sup2_pid"
wait "$sup2_pid" 2>/dev/null || true
sup2_pid=""

say "4. The sharing registry, as tandem-shm sees it (one row per worker ordinal). SINCE is"
echo "   min(OWN, PEER_HOLD, IMPORT_HOLD): the compaction allowed above, once both runtimes have"
echo "   applied it; HELD_BY says which hold keeps it back."
"$SHM" slots "tandem.$REPLICA" | sed 's/^/   /'

say "5. Supervisor metrics (excerpt):"
http_get /metrics | grep -E '^tandem_(peek_latency_seconds_(count|sum)|runtime_up|segment_bytes|commands_total|writes_total|peek_ring_records_total)' | sed 's/^/   /'

say "6. Shut down: SIGTERM to the supervisor stops both runtimes and removes the segment."
kill -TERM "$sup_pid"
code=0
wait "$sup_pid" || code=$?
sup_pid=""
echo "   tandem-supervisor exited with $code"
for seg in "tandem.$REPLICA" "tandem.${REPLICA}2"; do
  if [[ -e "/dev/shm/$seg" ]]; then
    echo "demo: the segment $seg was left behind" >&2
    exit 1
  fi
done
echo "   /dev/shm/tandem.$REPLICA is gone; nothing is left behind."
exit "$code"

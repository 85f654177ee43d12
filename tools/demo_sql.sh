#!/usr/bin/env bash
# The SQL part of the Tandem demo (tools/run.sh demo runs it after tools/demo.sh, with BUILD set):
# tandem-frontend with its own local replica, driven with psql — tables, a materialized view with
# a join and an aggregate, writes, a SELECT served by a peek and one by a one-shot dataflow, a
# SUBSCRIBE streaming the view's changes, and the replica SIGKILLed: the frontend restarts and
# replays it, and the same queries answer again without anyone doing anything.
set -euo pipefail
BUILD=${BUILD:-build/ci}
FRONTEND=$BUILD/bin/tandem-frontend
PSQL=/usr/lib/postgresql/15/bin/psql
[[ -x $PSQL ]] || PSQL=psql
REPLICA=${TANDEM_DEMO_REPLICA:-demo}-sql
work=$(mktemp -d /tmp/tandem-demo-sql-XXXXXX)
fe_pid=""
sub_pid=""

say() { printf '\n\033[1m%s\033[0m\n' "$*"; }
cleanup() {
  for pid in "$sub_pid" "$fe_pid"; do
    if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid"
      wait "$pid" 2>/dev/null || true
    fi
  done
  rm -rf "$work"
}
trap cleanup EXIT
for v in PGHOST PGPORT PGUSER PGDATABASE PGOPTIONS PSQLRC; do unset "$v"; done

say "7. SQL: tandem-frontend --data-dir D is a whole system — a pgwire listener (psql, psycopg2),"
echo "   a durable catalog in D, and its own local replica (tandem-supervisor, its child)."
"$FRONTEND" --data-dir "$work/fe" --sql-listen-addr 127.0.0.1:0 \
  --endpoints-file "$work/fe.endpoints" --replica-id "$REPLICA" >"$work/frontend.log" 2>&1 &
fe_pid=$!
for _ in $(seq 300); do
  [[ -s "$work/fe.endpoints" ]] && break
  if ! kill -0 "$fe_pid" 2>/dev/null; then
    echo "demo: tandem-frontend exited:" >&2
    cat "$work/frontend.log" >&2
    exit 1
  fi
  sleep 0.1
done
port=$(sed -n 's/^sql_listen_addr=.*://p' "$work/fe.endpoints")
echo "   listening on 127.0.0.1:$port (database tandem, any user on loopback)"
sql() { "$PSQL" -X -h 127.0.0.1 -p "$port" -d tandem -U demo -v ON_ERROR_STOP=1 "$@"; }

say "7a. Tables, writes, and a materialized view with a join and an aggregate:"
sql -e <<'SQL' | sed 's/^/   /'
CREATE TABLE customers (id bigint PRIMARY KEY, name text NOT NULL);
CREATE TABLE orders (id bigint PRIMARY KEY, customer bigint NOT NULL, amount double precision);
INSERT INTO customers VALUES (1, 'ada'), (2, 'grace'), (3, 'edsger');
INSERT INTO orders VALUES (10, 1, 12.5), (11, 1, 7.5), (12, 2, 30), (13, 3, 4.25);
CREATE MATERIALIZED VIEW revenue AS
  SELECT c.name, count(*) AS orders, sum(o.amount) AS total
  FROM orders o JOIN customers c ON o.customer = c.id GROUP BY c.name;
SELECT * FROM revenue ORDER BY name;
SQL

say "7b. A SELECT one index answers is a peek; any other is a one-shot dataflow (EXPLAIN says which):"
sql -e <<'SQL' | sed 's/^/   /'
EXPLAIN SELECT name FROM customers WHERE id = 2;
SELECT name FROM customers WHERE id = 2;
EXPLAIN SELECT c.name, max(o.amount) FROM customers c JOIN orders o ON o.customer = c.id GROUP BY c.name;
SELECT c.name, max(o.amount) AS largest FROM customers c JOIN orders o ON o.customer = c.id GROUP BY c.name ORDER BY 1;
SQL

say "7c. SUBSCRIBE streams the view's changes (time, diff, row) as psql prints them; an UPDATE and"
echo "    an INSERT elsewhere show up as retractions and insertions:"
stdbuf -oL "$PSQL" -X -h 127.0.0.1 -p "$port" -d tandem -U demo -c "SUBSCRIBE revenue" \
  >"$work/subscribe.out" 2>"$work/subscribe.err" &
sub_pid=$!
for _ in $(seq 100); do [[ $(wc -l <"$work/subscribe.out") -ge 3 ]] && break; sleep 0.1; done
sql -q -c "UPDATE orders SET amount = 40 WHERE id = 12" -c "INSERT INTO orders VALUES (14, 3, 1.75)"
for _ in $(seq 100); do [[ $(wc -l <"$work/subscribe.out") -ge 7 ]] && break; sleep 0.1; done
kill -INT "$sub_pid" 2>/dev/null || true
wait "$sub_pid" 2>/dev/null || true
sub_pid=""
sed 's/^/   /' "$work/subscribe.out"

say "7d. PostgreSQL's types: exact numeric money, dates and timestamps, date_trunc, and a sliding"
echo "    window — a view over the last 2 seconds (tandem_now(), a temporal filter) that lets a row go"
echo "    when its window passes, with no write in between:"
now=$(date -u '+%Y-%m-%d %H:%M:%S+00')
sql -e <<SQL | sed 's/^/   /'
CREATE TABLE payments (id int4 PRIMARY KEY, amount numeric(12,2), paid_at timestamptz, due date);
INSERT INTO payments VALUES (1, 19.99, '$now', '2026-12-31'), (2, 0.01, '$now', '2027-01-15'),
  (3, 1234567890.10, '2026-12-06 09:30:00+01', '2026-12-06');
SELECT sum(amount) AS total, avg(amount) AS mean, min(due) AS first_due FROM payments;
SELECT date_trunc('hour', paid_at) AS hour, count(*) FROM payments GROUP BY 1 ORDER BY 1;
SELECT id, due - DATE '2026-12-06' AS days_left, amount * 1.0825 AS with_tax FROM payments ORDER BY id;
CREATE MATERIALIZED VIEW just_paid AS
  SELECT id FROM payments WHERE tandem_now() < paid_at + INTERVAL '2 seconds';
SELECT id FROM just_paid ORDER BY id;
SQL
for _ in $(seq 100); do
  [[ $(sql -At -c "SELECT count(*) FROM just_paid") == 0 ]] && break
  sleep 0.1
done
sql -e -c "SELECT id FROM just_paid" | sed 's/^/   /'

say "7e. The drivers' protocol: pgbench -M prepared (Parse once, then Bind/Execute with a parameter)"
echo "    reads customers by key for 2 s, each read in place from the replica's segment in the"
echo "    frontend's own process (SHOW tandem_in_place_reads counts them):"
PGBENCH=/usr/lib/postgresql/15/bin/pgbench
if [[ -x $PGBENCH ]]; then
  printf '\\set id random(1, 3)\nSELECT name FROM customers WHERE id = :id;\n' >"$work/point.sql"
  "$PGBENCH" -n -M prepared -f "$work/point.sql" -T 2 -h 127.0.0.1 -p "$port" -U demo tandem 2>&1 |
    grep -E "query mode|tps|latency average" | sed 's/^/   /'
  sql -At -c "SHOW tandem_in_place_reads" | sed 's/^/   in-place reads: /'
else
  echo "   (pgbench is not installed: skipped)"
fi

say "7f. The replica is SIGKILLed. The frontend restarts it and replays its catalog to it; the"
echo "    tables keep their rows (the replica's --data-dir) and the view is maintained again:"
replica=$(pgrep -P "$fe_pid" -f tandem-supervisor)
kill -KILL "$replica"
echo "   killed tandem-supervisor $replica"
for _ in $(seq 300); do
  grep -q "replayed the history .*: replay 2" "$work/frontend.log" && break
  sleep 0.1
done
grep "replayed the history .*: replay 2" "$work/frontend.log" | sed 's/^.*frontend\[[0-9]*\] /   frontend: /'
sql -c "INSERT INTO orders VALUES (15, 2, 2.5)" -c "SELECT * FROM revenue ORDER BY name" | sed 's/^/   /'

say "7g. SIGTERM to the frontend stops its replica too; its catalog stays in its data dir."
kill -TERM "$fe_pid"
code=0
wait "$fe_pid" || code=$?
fe_pid=""
echo "   tandem-frontend exited with $code"
if [[ -e "/dev/shm/tandem.$REPLICA" ]]; then
  echo "demo: the segment tandem.$REPLICA was left behind" >&2
  exit 1
fi
exit "$code"

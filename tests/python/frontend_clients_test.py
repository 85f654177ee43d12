"""psycopg2 (default transaction mode) against tandem-frontend: every statement kind it takes,
each answer checked, and the errors' SQLSTATEs (e.pgcode).

Run by tests/integration/frontend_clients_test.cc:
    frontend_clients_test.py --port P --user U --csv /abs/products.csv [--postgres]
--postgres runs it against PostgreSQL 15 instead (the check that the expectations are
PostgreSQL's): the CSV source is a table given the CSV's rows, Tandem's SHOW and EXPLAIN texts are
not asked, the materialized view is REFRESHed before it is read (PostgreSQL's are snapshots), and
the window function (which PostgreSQL has) is not asked.

Prints "all checks passed" and exits 0, or prints every failed check and exits 1.
"""

import argparse
import sys
import time
from decimal import Decimal

import psycopg2

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--user", required=True)
parser.add_argument("--csv", required=True)
parser.add_argument("--postgres", action="store_true")
args = parser.parse_args()
tandem = not args.postgres

conn = psycopg2.connect(host="127.0.0.1", port=args.port, dbname="tandem", user=args.user,
                        connect_timeout=10)
cur = conn.cursor()
failures = []


def fail(what):
    failures.append(what)
    print("FAILED:", what, flush=True)


def normal(value):
    # sum(bigint) is numeric in PostgreSQL (Decimal), maybe int8 in Tandem (int): one number.
    if isinstance(value, Decimal) and value == value.to_integral_value():
        return int(value)
    return value


def rows_of(sql):
    cur.execute(sql)
    return [tuple(normal(v) for v in row) for row in cur.fetchall()]


def check(sql, expected, names=None, ordered=True):
    """Runs sql (in the open transaction), then commits; the rows must be `expected`."""
    try:
        got = rows_of(sql)
        if names is not None:
            got_names = [d.name for d in cur.description]
            if got_names != names:
                fail("%s: columns %r, expected %r" % (sql, got_names, names))
        conn.commit()
    except psycopg2.Error as e:
        conn.rollback()
        fail("%s: error %s %s" % (sql, e.pgcode, e.diag.message_primary))
        return
    if not ordered:
        got, expected = sorted(got, key=repr), sorted(expected, key=repr)
    if got != expected:
        fail("%s: rows %r, expected %r" % (sql, got, expected))


def run(sql, rowcount=None):
    """Runs a statement without rows, then commits; rowcount: what cur.rowcount must be."""
    try:
        cur.execute(sql)
        count = cur.rowcount
        conn.commit()
    except psycopg2.Error as e:
        conn.rollback()
        fail("%s: error %s %s" % (sql, e.pgcode, e.diag.message_primary))
        return
    if rowcount is not None and count != rowcount:
        fail("%s: rowcount %r, expected %r" % (sql, count, rowcount))


def error(sql, sqlstate):
    """The statement must fail with `sqlstate`; the transaction is rolled back."""
    try:
        cur.execute(sql)
        cur.fetchall() if cur.description else None
        fail("%s: answered, expected the error %s" % (sql, sqlstate))
    except psycopg2.Error as e:
        if e.pgcode != sqlstate:
            fail("%s: error %s (%s), expected %s" % (sql, e.pgcode, e.diag.message_primary,
                                                     sqlstate))
        if conn.get_transaction_status() != psycopg2.extensions.TRANSACTION_STATUS_INERROR:
            fail("%s: transaction status %d after the error, expected INERROR"
                 % (sql, conn.get_transaction_status()))
    conn.rollback()


# ---- DDL
run("CREATE TABLE customers (id bigint PRIMARY KEY, name text NOT NULL, city text)")
run("CREATE TABLE orders (id bigint PRIMARY KEY, customer bigint NOT NULL, amount bigint, "
    "paid boolean)")
if tandem:
    run("CREATE TABLE products (id bigint, name text, price double precision) "
        "WITH (source = 'csv', path = %s)" % psycopg2.extensions.adapt(args.csv).getquoted()
        .decode())
    # The source tails the file: its rows come when the replica has read it.
    deadline = time.monotonic() + 30
    while True:
        try:
            n = rows_of("SELECT count(*) FROM products")[0][0]
            conn.commit()
        except psycopg2.Error as e:
            conn.rollback()
            n = "error %s %s" % (e.pgcode, e.diag.message_primary)
        if n == 3:
            break
        if time.monotonic() > deadline:
            fail("the CSV source's rows never came (last: %r)" % (n,))
            break
        time.sleep(0.1)
else:
    run("CREATE TABLE products (id bigint, name text, price double precision)")
    run("INSERT INTO products VALUES (1, 'apple', 0.5), (2, 'pear', 1.25), (3, 'plum', 2.5)")

run("INSERT INTO customers VALUES (1, 'ann', 'oslo'), (2, 'bob', 'rome'), (3, 'cy', NULL), "
    "(4, 'dee', 'oslo')", 4)
run("INSERT INTO orders VALUES (10, 1, 5, true), (11, 1, 7, false), (12, 2, 3, true), "
    "(13, 3, NULL, NULL), (14, 9, 1, true)", 5)
run("CREATE VIEW big_orders AS SELECT id, customer, amount FROM orders WHERE amount > 4")
run("CREATE MATERIALIZED VIEW spend AS SELECT c.name, count(*) AS n, max(o.amount) AS top "
    "FROM customers AS c JOIN orders AS o ON o.customer = c.id GROUP BY c.name")
run("CREATE INDEX orders_by_customer ON orders (customer)")

if tandem:
    tables = set(r[0] for r in rows_of("SHOW TABLES"))
    conn.commit()
    if not {"customers", "orders", "products"} <= tables:
        fail("SHOW TABLES: %r" % sorted(tables))
    check("SHOW VIEWS", [("big_orders",)])
    check("SHOW MATERIALIZED VIEWS", [("spend",)])
    indexes = rows_of("SHOW INDEXES")
    conn.commit()
    if ("orders_by_customer", "orders", "customer") not in indexes:
        fail("SHOW INDEXES: %r" % indexes)
    check("SHOW COLUMNS FROM orders",
          [("id", "bigint", "NO"), ("customer", "bigint", "NO"), ("amount", "bigint", "YES"),
           ("paid", "boolean", "YES")])
    plan = "\n".join(r[0] for r in rows_of("EXPLAIN SELECT * FROM orders WHERE id = 10"))
    conn.commit()
    if "Peek" not in plan:
        fail("EXPLAIN of a key lookup: %r" % plan)
    plan = "\n".join(r[0] for r in rows_of(
        "EXPLAIN SELECT c.name, o.amount FROM customers AS c JOIN orders AS o "
        "ON o.customer = c.id"))
    conn.commit()
    if "One-shot" not in plan:
        fail("EXPLAIN of a join: %r" % plan)

# ---- writes
run("INSERT INTO orders SELECT id + 100, customer, amount * 2, paid FROM orders "
    "WHERE amount IS NOT NULL", 4)
run("UPDATE orders SET amount = amount + 1 WHERE customer = 1", 4)
run("DELETE FROM orders WHERE paid = false", 2)
# A write and a read in one transaction block: the read sees the write; COMMIT keeps it.
cur.execute("INSERT INTO customers VALUES (6, 'eve', NULL)")
if rows_of("SELECT name FROM customers WHERE id = 6") != [("eve",)]:
    fail("a transaction's read did not see its write")
conn.commit()

# ---- reads
check("SELECT * FROM orders WHERE id = 10", [(10, 1, 6, True)])
check("SELECT * FROM orders ORDER BY id",
      [(10, 1, 6, True), (12, 2, 3, True), (13, 3, None, None), (14, 9, 1, True),
       (110, 1, 11, True), (112, 2, 6, True), (114, 9, 2, True)],
      names=["id", "customer", "amount", "paid"])
check("SELECT c.name, count(*) AS n FROM customers AS c JOIN orders AS o "
      "ON o.customer = c.id GROUP BY c.name HAVING count(*) > 1 ORDER BY c.name",
      [("ann", 2), ("bob", 2)], names=["name", "n"])
check("SELECT c.name, o.id FROM customers AS c LEFT JOIN orders AS o "
      "ON o.customer = c.id AND o.amount > 5 ORDER BY c.name, o.id",
      [("ann", 10), ("ann", 110), ("bob", 112), ("cy", None), ("dee", None), ("eve", None)])
check("SELECT o.id, c.name FROM customers AS c RIGHT JOIN orders AS o "
      "ON o.customer = c.id ORDER BY o.id",
      [(10, "ann"), (12, "bob"), (13, "cy"), (14, None), (110, "ann"), (112, "bob"),
       (114, None)])
check("SELECT c.name, o.id FROM customers AS c FULL JOIN orders AS o ON o.customer = c.id "
      "WHERE c.id IS NULL OR o.id IS NULL",
      [("dee", None), ("eve", None), (None, 14), (None, 114)], ordered=False)
check("SELECT count(*) FROM customers CROSS JOIN products", [(15,)])
check("SELECT DISTINCT customer FROM orders", [(1,), (2,), (3,), (9,)], ordered=False)
check("SELECT city FROM customers WHERE city IS NOT NULL UNION "
      "SELECT name FROM customers WHERE id = 1 ORDER BY 1", [("ann",), ("oslo",), ("rome",)])
check("SELECT customer FROM orders WHERE customer = 1 UNION ALL "
      "SELECT id FROM customers WHERE id = 1", [(1,), (1,), (1,)])
check("SELECT customer FROM orders EXCEPT SELECT id FROM customers", [(9,)])
check("SELECT customer FROM orders EXCEPT ALL SELECT id FROM customers",
      [(1,), (2,), (9,), (9,)], ordered=False)
check("SELECT customer FROM orders INTERSECT SELECT id FROM customers",
      [(1,), (2,), (3,)], ordered=False)
check("SELECT customer FROM orders INTERSECT ALL SELECT customer FROM orders WHERE paid",
      [(1,), (1,), (2,), (2,), (9,), (9,)], ordered=False)
check("SELECT id, amount FROM orders ORDER BY id DESC LIMIT 2 OFFSET 1", [(112, 6), (110, 11)])
check("SELECT t.customer, t.n FROM (SELECT customer, count(*) AS n FROM orders "
      "GROUP BY customer) AS t WHERE t.n > 1 ORDER BY t.customer", [(1, 2), (2, 2), (9, 2)])
check("WITH paid_orders AS (SELECT customer, amount FROM orders WHERE paid) "
      "SELECT customer, count(*), max(amount) FROM paid_orders GROUP BY customer "
      "ORDER BY customer", [(1, 2, 11), (2, 2, 6), (9, 2, 2)])
check("SELECT name FROM customers WHERE id IN (SELECT customer FROM orders WHERE amount > 5) "
      "ORDER BY name", [("ann",), ("bob",)])
check("SELECT name FROM customers WHERE id NOT IN (SELECT customer FROM orders) ORDER BY name",
      [("dee",), ("eve",)])
check("SELECT c.name FROM customers AS c WHERE EXISTS (SELECT 1 FROM orders AS o "
      "WHERE o.customer = c.id AND o.paid) ORDER BY c.name", [("ann",), ("bob",)])
check("SELECT c.name FROM customers AS c WHERE NOT EXISTS (SELECT 1 FROM orders AS o "
      "WHERE o.customer = c.id) ORDER BY c.name", [("dee",), ("eve",)])
check("SELECT count(*), count(amount), min(amount), max(amount), sum(amount) FROM orders",
      [(7, 6, 1, 11, 29)])
check("SELECT * FROM big_orders ORDER BY id", [(10, 1, 6), (110, 1, 11), (112, 2, 6)])
if not tandem:
    run("REFRESH MATERIALIZED VIEW spend")
# Made before the INSERT … SELECT, UPDATE and DELETE: maintained through them.
check("SELECT * FROM spend ORDER BY name", [("ann", 2, 11), ("bob", 2, 6), ("cy", 1, None)],
      names=["name", "n", "top"])
check("SELECT id, name, price FROM products ORDER BY id",
      [(1, "apple", 0.5), (2, "pear", 1.25), (3, "plum", 2.5)])
check("SELECT p.name, o.id FROM products AS p JOIN orders AS o ON o.customer = p.id "
      "ORDER BY o.id", [("apple", 10), ("pear", 12), ("plum", 13), ("apple", 110),
                        ("pear", 112)])

# ---- errors, each with its SQLSTATE; none changes anything
error("SELECT * FROM missing", "42P01")
error("SELECT nope FROM orders", "42703")
error("SELEC 1", "42601")
error("INSERT INTO orders VALUES (10, 1, 1, true)", "23505")
error("INSERT INTO customers VALUES (7, NULL, 'x')", "23502")
error("SELECT count(*) FROM orders FOR UPDATE", "0A000")
if tandem:
    error("SELECT id, row_number() OVER (ORDER BY id) FROM orders", "0A000")
check("SELECT count(*) FROM orders", [(7,)])
check("SELECT * FROM orders WHERE id = 10", [(10, 1, 6, True)])
check("SELECT count(*) FROM customers", [(5,)])

# ---- DROP INDEX; a table's indexes go with it (no CASCADE needed), as in PostgreSQL
run("CREATE TABLE scratch (a bigint, b text)")
run("CREATE INDEX scratch_by_a ON scratch (a)")
run("CREATE INDEX scratch_by_b ON scratch (b)")
run("INSERT INTO scratch VALUES (1, 'x'), (2, 'y')", 2)
check("SELECT b FROM scratch WHERE a = 2", [("y",)])
run("DROP INDEX scratch_by_a")
check("SELECT b FROM scratch WHERE b = 'x'", [("x",)])
run("DROP TABLE scratch")
error("SELECT * FROM scratch", "42P01")
if tandem:
    names = [r[0] for r in rows_of("SHOW INDEXES")]
    conn.commit()
    if any(n.startswith("scratch") for n in names):
        fail("SHOW INDEXES after DROP TABLE scratch: %r" % names)

# ---- DROP: refused naming the dependants without CASCADE, then with it
try:
    cur.execute("DROP TABLE orders")
    fail("DROP TABLE orders with dependants: answered")
except psycopg2.Error as e:
    if e.pgcode != "2BP01":
        fail("DROP TABLE orders: error %s, expected 2BP01" % e.pgcode)
    detail = e.diag.message_detail or ""
    for dependant in ("big_orders", "spend"):
        if dependant not in detail:
            fail("DROP TABLE orders: the detail %r does not name %s" % (detail, dependant))
conn.rollback()
run("DROP TABLE orders CASCADE")
if tandem:
    check("SHOW VIEWS", [])
    check("SHOW MATERIALIZED VIEWS", [])
error("SELECT * FROM spend", "42P01")
error("SELECT * FROM big_orders", "42P01")
check("SELECT count(*) FROM customers", [(5,)])
conn.close()

if failures:
    print("%d checks failed" % len(failures))
    sys.exit(1)
print("all checks passed")

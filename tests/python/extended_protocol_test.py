"""The extended query protocol through the real drivers: psycopg 3 (server-side binding, text and
binary parameters and results, prepared statements, pipelines, streaming) and asyncpg (binary
everywhere, inferred parameter types, named statements, executemany, a cursor's portal read in
chunks) against tandem-frontend — every value of every type of DESIGN §16 read back equal to what
was written, and the errors' SQLSTATEs.

Run by tests/integration/frontend_clients_test.cc:
    extended_protocol_test.py --port P --user U [--postgres]
--postgres runs it against PostgreSQL 15 instead (the check that the expectations are
PostgreSQL's): every check runs on both.

Prints "all checks passed" and exits 0, or prints every failed check and exits 1.
"""

import argparse
import asyncio
import datetime as dt
import math
import struct
import sys
import uuid
from decimal import ROUND_HALF_UP, Decimal

import asyncpg
import psycopg
from psycopg import pq

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--user", required=True)
parser.add_argument("--postgres", action="store_true")
args = parser.parse_args()
tandem = not args.postgres

failures = []


def fail(what):
    failures.append(what)
    print("FAILED:", what, flush=True)


# ---- the table: a key and a column of every type of DESIGN §16

COLUMNS = [
    ("k", "int4 PRIMARY KEY", "int4", 23),
    ("i2", "int2", "int2", 21),
    ("i8", "int8", "int8", 20),
    ("f4", "float4", "float4", 700),
    ("f8", "float8", "float8", 701),
    ("n", "numeric(12,2)", "numeric", 1700),
    ("nn", "numeric", "numeric", 1700),
    ("t", "text", "text", 25),
    ("v", "varchar(10)", "varchar", 1043),
    ("ch", "char(3)", "bpchar", 1042),
    ("by", "bytea", "bytea", 17),
    ("d", "date", "date", 1082),
    ("ti", "time", "time", 1083),
    ("ts", "timestamp", "timestamp", 1114),
    ("tz", "timestamptz", "timestamptz", 1184),
    ("iv", "interval", "interval", 1186),
    ("u", "uuid", "uuid", 2950),
    ("bo", "bool", "bool", 16),
]
NAMES = [c[0] for c in COLUMNS]
CREATE = "CREATE TABLE every_type (%s)" % ", ".join("%s %s" % (c[0], c[1]) for c in COLUMNS)
SELECT_ONE = "SELECT %s FROM every_type WHERE k = %%s" % ", ".join(NAMES)
SELECT_ONE_DOLLAR = "SELECT %s FROM every_type WHERE k = $1" % ", ".join(NAMES)


def tz(hours, minutes=0):
    return dt.timezone(dt.timedelta(hours=hours, minutes=minutes))


# The values written, the key left out (each row is written under several keys). Negative
# numbers, numeric scales, extremes, UTF-8, microseconds, negative intervals, a row of NULLs.
VALUES = [
    (7, 123456789, 0.1, 2.5, Decimal("1.5"), Decimal("-12.340"), "héllo wörld ✓ 日本語 🎉",
     "abc", "x", b"\x00\xff\x01'\\", dt.date(2000, 2, 29), dt.time(23, 59, 59, 999999),
     dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
     dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=tz(2)),
     dt.timedelta(days=-3, seconds=3600, microseconds=5),
     uuid.UUID("12345678-1234-5678-1234-567812345678"), True),
    (-32768, -9223372036854775808, -2.5, -1e308, Decimal("-9999999999.99"),
     Decimal("-12345678901234567890123456789.123456789"), "it's a \"quote\", a \\ and a\ttab\n",
     "日本語日本語日本語日", "日本", bytes(range(256)), dt.date(1, 1, 2), dt.time(0, 0),
     dt.datetime(1999, 12, 31, 23, 59, 59, 999999),
     dt.datetime(1900, 6, 30, 12, 0, 0, 1, tzinfo=tz(-5, -30)),
     dt.timedelta(microseconds=-1), uuid.UUID("00000000-0000-0000-0000-000000000000"), False),
    (32767, 9223372036854775807, float("-inf"), float("inf"), Decimal("2.345"),
     Decimal("0.000001"), "", "", "abc", b"", dt.date(9999, 12, 30),
     dt.time(12, 30, 0, 500000), dt.datetime(2024, 2, 29, 12, 34, 56, 789012),
     dt.datetime(2038, 1, 19, 3, 14, 8, tzinfo=dt.timezone.utc),
     dt.timedelta(days=1000, hours=25, microseconds=999999),
     uuid.UUID("ffffffff-ffff-ffff-ffff-ffffffffffff"), None),
    (0, 0, -0.0, float("nan"), Decimal("-2.345"), Decimal("1E+3"), "NULL", "null", "   ",
     b"\\x00", dt.date(1970, 1, 1), dt.time(0, 0, 0, 1), dt.datetime(2000, 1, 1),
     dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc), dt.timedelta(0),
     uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), False),
    (None,) * 17,
]


def float4(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def expected(values, binary):
    """What a read of `values` answers: numeric(12,2) at scale 2 (rounded half away from zero),
    a plain numeric at the scale written (1E+3 is 1000), char(3) padded with spaces, float4 in
    binary as the float4 it is (in text its shortest spelling, which is the value written)."""
    out = list(values)
    if out[4] is not None:
        out[4] = out[4].quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    if out[5] is not None and out[5].as_tuple().exponent > 0:
        out[5] = out[5].quantize(Decimal(1))
    if out[8] is not None:
        out[8] = out[8].ljust(3)
    if out[2] is not None and binary:
        out[2] = float4(out[2])
    return tuple(out)


def same(got, want):
    if want is None:
        return got is None
    if isinstance(want, float):
        if math.isnan(want):
            return isinstance(got, float) and math.isnan(got)
        # -0.0 == 0.0: the sign too — but a Tandem row keeps -0.0 as 0.0 (its row encoding is
        # ordered; docs/frontend.md "Differences from PostgreSQL").
        if tandem and want == 0.0:
            return isinstance(got, float) and got == 0.0
        return isinstance(got, float) and got == want and math.copysign(1, got) == math.copysign(
            1, want)
    if isinstance(want, Decimal):
        # The scale too: 1.50 is not 1.5 here.
        return isinstance(got, Decimal) and str(got) == str(want)
    if isinstance(want, uuid.UUID):
        return str(got) == str(want)  # asyncpg's UUID is its own type
    if isinstance(want, dt.datetime):
        # timestamptz: an aware datetime equal to the one written (whatever its zone);
        # timestamp: a naive one.
        return (isinstance(got, dt.datetime) and (got.tzinfo is None) == (want.tzinfo is None)
                and got == want)
    return type(got) is type(want) and got == want


def check_row(what, got, key, values, binary):
    want = (key,) + expected(values, binary)
    if got is None:
        fail("%s: no row, expected %r" % (what, want))
        return
    got = tuple(got)
    if len(got) != len(want):
        fail("%s: %d columns, expected %d" % (what, len(got), len(want)))
        return
    for name, g, w in zip(NAMES, got, want):
        if not same(g, w):
            wrong_value(what, name, g, w)


# A wrong value is reported at its first read; the other reads that met it are counted.
wrong_values = {}


def wrong_value(what, name, got, want):
    key = (name, repr(got), repr(want))
    if key not in wrong_values:
        wrong_values[key] = 0
        fail("%s: column %s is %r, expected %r" % (what, name, got, want))
    else:
        wrong_values[key] += 1


# Keys: psycopg writes VALUES[i] with text parameters under TEXT_KEYS[i], with binary ones under
# BINARY_KEYS[i] (one by one and with executemany), with automatic ones under AUTO_KEYS[i];
# asyncpg under ASYNCPG_KEYS[i].
TEXT_KEYS = [1, 2, 3, 4, 5]
BINARY_KEYS = [11, 12, 13, 14, 15]
AUTO_KEYS = [21, 22, 23, 24, 25]
ASYNCPG_KEYS = [31, 32, 33, 34, 35]
WRITTEN = {}  # key → values


# ---- psycopg 3

def psycopg_error(conn, what, sqlstate, call):
    """`call(cursor)` must fail with `sqlstate`; the connection (autocommit) answers after it."""
    try:
        with conn.cursor() as cur:
            call(cur)
        fail("%s: answered, expected the error %s" % (what, sqlstate))
    except psycopg.Error as e:
        if e.sqlstate != sqlstate:
            fail("%s: error %s (%s), expected %s" % (what, e.sqlstate, e, sqlstate))
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT k FROM every_type WHERE k = %s", (1,))
            if cur.fetchall() != [(1,)]:
                fail("%s: the session's next read answered wrongly" % what)
    except psycopg.Error as e:
        fail("%s: the session's next read failed: %s %s" % (what, e.sqlstate, e))


def run_psycopg():
    conn = psycopg.connect(host="127.0.0.1", port=args.port, dbname="tandem", user=args.user,
                           connect_timeout=10, autocommit=True)
    cur = conn.cursor()
    cur.execute("DROP TABLE IF EXISTS every_type")
    cur.execute(CREATE)

    # Writes: text parameters (%t), binary (%b), automatic (%s), binary through executemany.
    def insert(placeholder, key, values):
        cur.execute("INSERT INTO every_type VALUES (%s)" % ", ".join([placeholder] * 18),
                    (key,) + values)
        if cur.rowcount != 1:
            fail("INSERT with %s parameters: rowcount %r" % (placeholder, cur.rowcount))
        WRITTEN[key] = values

    for key, values in zip(TEXT_KEYS, VALUES):
        try:
            insert("%t", key, values)
        except psycopg.Error as e:
            fail("INSERT key %d with text parameters: %s %s" % (key, e.sqlstate, e))
    for key, values in list(zip(BINARY_KEYS, VALUES))[:2]:
        try:
            insert("%b", key, values)
        except psycopg.Error as e:
            fail("INSERT key %d with binary parameters: %s %s" % (key, e.sqlstate, e))
    try:
        rest = list(zip(BINARY_KEYS, VALUES))[2:]
        cur.executemany("INSERT INTO every_type VALUES (%s)" % ", ".join(["%b"] * 18),
                        [(key,) + values for key, values in rest])
        WRITTEN.update(rest)
    except psycopg.Error as e:
        fail("executemany INSERT with binary parameters: %s %s" % (e.sqlstate, e))
    for key, values in zip(AUTO_KEYS, VALUES):
        try:
            insert("%s", key, values)
        except psycopg.Error as e:
            fail("INSERT key %d with automatic parameters: %s %s" % (key, e.sqlstate, e))

    # Reads: WHERE k = %s in text and binary results; the key as a text and a binary parameter;
    # then as a prepared statement, several times.
    for key, values in sorted(WRITTEN.items()):
        for binary in (False, True):
            for placeholder in ("%t", "%b"):
                sql = SELECT_ONE.replace("%s", placeholder)
                what = "psycopg %s key %d (%s results)" % (sql[-6:], key,
                                                           "binary" if binary else "text")
                try:
                    cur.execute(sql, (key,), binary=binary)
                    check_row(what, cur.fetchone(), key, values, binary)
                except psycopg.Error as e:
                    fail("%s: %s %s" % (what, e.sqlstate, e))
            for attempt in range(3):
                what = "psycopg prepared key %d (%s results, run %d)" % (
                    key, "binary" if binary else "text", attempt + 1)
                try:
                    cur.execute(SELECT_ONE, (key,), binary=binary, prepare=True)
                    check_row(what, cur.fetchone(), key, values, binary)
                except psycopg.Error as e:
                    fail("%s: %s %s" % (what, e.sqlstate, e))

    # The result's columns: the declared types, numeric(12,2)'s precision and scale and
    # varchar(10)'s length (RowDescription's type OIDs and modifiers).
    cur.execute(SELECT_ONE, (1,))
    got = [(d.name, d.type_code) for d in cur.description]
    want = [(c[0], c[3]) for c in COLUMNS]
    if got != want:
        fail("psycopg description: %r, expected %r" % (got, want))
    n, v = cur.description[NAMES.index("n")], cur.description[NAMES.index("v")]
    if (n.precision, n.scale) != (12, 2):
        fail("psycopg description of numeric(12,2): precision %r scale %r" % (n.precision,
                                                                                 n.scale))
    if v.display_size != 10:
        fail("psycopg description of varchar(10): display size %r" % v.display_size)

    # A pipeline: several statements sent before any answer is read.
    try:
        with conn.pipeline():
            cursors = []
            for key in (1, 12, 23):
                c = conn.cursor()
                c.execute(SELECT_ONE, (key,), binary=key % 2 == 0)
                cursors.append((key, c))
        for key, c in cursors:
            check_row("psycopg pipeline key %d" % key, c.fetchone(), key, WRITTEN[key],
                      key % 2 == 0)
    except psycopg.Error as e:
        fail("psycopg pipeline: %s %s" % (e.sqlstate, e))

    # Every row at once: in key order, streamed (single-row mode), in binary. After the pipeline:
    # psycopg 3.1.7 cannot open a pipeline on a connection that streamed (its own InternalError,
    # on PostgreSQL too).
    try:
        got = list(cur.stream("SELECT %s FROM every_type WHERE k > %%s ORDER BY k"
                              % ", ".join(NAMES), (0,), binary=True))
        keys = [row[0] for row in got]
        if keys != sorted(WRITTEN):
            fail("psycopg stream: keys %r, expected %r" % (keys, sorted(WRITTEN)))
        else:
            for row in got:
                check_row("psycopg stream key %d" % row[0], row, row[0], WRITTEN[row[0]], True)
    except psycopg.Error as e:
        fail("psycopg stream: %s %s" % (e.sqlstate, e))

    # UPDATE and DELETE through parameters; their row counts.
    try:
        cur.execute("UPDATE every_type SET t = %s, n = %s WHERE k = %s OR k = %s",
                    ("updated ✓", Decimal("-0.5"), 5, 15))
        if cur.rowcount != 2:
            fail("UPDATE with parameters: rowcount %r, expected 2" % cur.rowcount)
        cur.execute("SELECT t, n FROM every_type WHERE k = %s", (15,), binary=True)
        got = cur.fetchall()
        if got != [("updated ✓", Decimal("-0.50"))] or str(got[0][1]) != "-0.50":
            fail("after UPDATE with parameters: %r" % got)
        cur.execute("DELETE FROM every_type WHERE k = %s", (25,))
        if cur.rowcount != 1:
            fail("DELETE with parameters: rowcount %r, expected 1" % cur.rowcount)
        del WRITTEN[25]
        for key in (5, 15):
            WRITTEN[key] = (None,) * 4 + (Decimal("-0.5"), None, "updated ✓") + (None,) * 10
    except psycopg.Error as e:
        fail("UPDATE/DELETE with parameters: %s %s" % (e.sqlstate, e))

    # A transaction block of extended-protocol statements (a fresh session: nothing prepared);
    # its read sees its write, ROLLBACK undoes it.
    txn = psycopg.connect(host="127.0.0.1", port=args.port, dbname="tandem", user=args.user,
                          connect_timeout=10)
    try:
        with txn.cursor() as c:
            c.execute("INSERT INTO every_type (k, t) VALUES (%s, %s)", (99, "rolled back"))
            c.execute("SELECT t FROM every_type WHERE k = %s", (99,))
            if c.fetchall() != [("rolled back",)]:
                fail("a transaction's read did not see its write")
        txn.rollback()
        with txn.cursor() as c:
            c.execute("SELECT count(*) FROM every_type WHERE k = %s", (99,))
            # Tandem applies each write when it runs: a ROLLBACK after one says so with a WARNING
            # and keeps it (docs/frontend.md "Differences from PostgreSQL").
            kept = 1 if tandem else 0
            if c.fetchone()[0] != kept:
                fail("ROLLBACK of the transaction's INSERT (made with parameters): expected %d "
                     "rows after it" % kept)
        txn.commit()
    except psycopg.Error as e:
        fail("a transaction over the extended protocol: %s %s" % (e.sqlstate, e))
    txn.close()
    # A write the ROLLBACK kept (failed above) must not change what the later checks read.
    cur.execute("DELETE FROM every_type WHERE k = %s", (99,))

    # After an error in a transaction block: failed (25P02) until ROLLBACK, then usable.
    txn = psycopg.connect(host="127.0.0.1", port=args.port, dbname="tandem", user=args.user,
                          connect_timeout=10)
    c = txn.cursor()
    try:
        c.execute("SELECT k FROM every_type WHERE k = %s", ("abc",))
        fail("WHERE k = %s given 'abc' in a transaction: answered")
    except psycopg.Error as e:
        if e.sqlstate != "22P02":
            fail("WHERE k = %%s given 'abc' in a transaction: %s" % e.sqlstate)
    if txn.info.transaction_status != pq.TransactionStatus.INERROR:
        fail("after an error in a transaction: status %r, expected INERROR"
             % txn.info.transaction_status)
    try:
        c.execute("SELECT k FROM every_type WHERE k = %s", (1,))
        fail("a statement in a failed transaction: answered")
    except psycopg.Error as e:
        if e.sqlstate != "25P02":
            fail("a statement in a failed transaction: %s, expected 25P02" % e.sqlstate)
    try:
        txn.rollback()
        c.execute("SELECT k FROM every_type WHERE k = %s", (2,))
        if c.fetchall() != [(2,)]:
            fail("after ROLLBACK: the read answered wrongly")
        txn.commit()
    except psycopg.Error as e:
        fail("after an error in a transaction, ROLLBACK: %s %s" % (e.sqlstate, e))
    txn.close()

    # ROLLBACK in a session with prepared statements: psycopg follows it with DEALLOCATE ALL (a
    # statement prepared in a rolled-back transaction may be gone, as far as it knows), then
    # prepares its statements again.
    conn.autocommit = False
    try:
        cur.execute(SELECT_ONE, (1,), prepare=True)
        cur.fetchall()
        conn.rollback()
    except psycopg.Error as e:
        fail("psycopg's ROLLBACK then DEALLOCATE ALL: %s %s" % (e.sqlstate, e))
    try:
        for key in (1, 2):
            cur.execute(SELECT_ONE, (key,), prepare=True)
            check_row("psycopg prepared again after DEALLOCATE ALL, key %d" % key,
                      cur.fetchone(), key, WRITTEN[key], False)
        conn.commit()
    except psycopg.Error as e:
        fail("psycopg prepared again after DEALLOCATE ALL: %s %s" % (e.sqlstate, e))
        try:
            conn.rollback()
        except psycopg.Error:
            pass  # DEALLOCATE ALL again: failed above already
    conn.autocommit = True

    # More statements prepared than psycopg keeps (prepared_max): it DEALLOCATEs the oldest by
    # name before it prepares the next.
    evicting = psycopg.connect(host="127.0.0.1", port=args.port, dbname="tandem",
                               user=args.user, connect_timeout=10, autocommit=True)
    evicting.prepared_max = 2
    for column in ("i2", "i8", "t", "d", "i2"):
        what = "psycopg prepared_max 2, SELECT %s" % column
        try:
            got = evicting.execute("SELECT %s FROM every_type WHERE k = %%s" % column, (1,),
                                   prepare=True).fetchall()
            if got != [(WRITTEN[1][NAMES.index(column) - 1],)]:
                fail("%s: %r" % (what, got))
        except psycopg.Error as e:
            fail("%s: %s %s" % (what, e.sqlstate, e))
    evicting.close()

    # Errors, each with its SQLSTATE; the session answers after each.
    psycopg_error(conn, "WHERE k = %s given 'abc'", "22P02",
                  lambda c: c.execute("SELECT k FROM every_type WHERE k = %s", ("abc",)))
    psycopg_error(conn, "SELECT %s::int4 given 'abc'", "22P02",
                  lambda c: c.execute("SELECT %s::int4", ("abc",)))
    psycopg_error(conn, "SELECT %s::date given 'tomorrow-ish'", "22007",
                  lambda c: c.execute("SELECT %s::date", ("tomorrow-ish",)))
    psycopg_error(conn, "two statements with a parameter", "42601",
                  lambda c: c.execute("SELECT %s; SELECT 2", (1,)))
    psycopg_error(conn, "two statements prepared", "42601",
                  lambda c: c.execute("SELECT 1; SELECT 2", prepare=True))
    psycopg_error(conn, "varchar(10) given 11 characters", "22001",
                  lambda c: c.execute("INSERT INTO every_type (k, v) VALUES (%s, %s)",
                                      (100, "abcdefghijk")))
    psycopg_error(conn, "int2 given 40000", "22003",
                  lambda c: c.execute("INSERT INTO every_type (k, i2) VALUES (%s, %s)",
                                      (100, 40000)))
    psycopg_error(conn, "duplicate key through a parameter", "23505",
                  lambda c: c.execute("INSERT INTO every_type (k) VALUES (%s)", (1,)))
    psycopg_error(conn, "unknown column in a prepared statement", "42703",
                  lambda c: c.execute("SELECT nope FROM every_type WHERE k = %s", (1,),
                                      prepare=True))

    # Errors of the Bind message itself, through libpq (psycopg checks its own parameters).
    def exec_params(query, values, types, formats):
        def call(c):
            result = conn.pgconn.exec_params(query, values, types, formats)
            if result.status == pq.ExecStatus.FATAL_ERROR:
                raise psycopg.errors.lookup(
                    result.error_field(pq.DiagnosticField.SQLSTATE).decode())(
                        result.error_message.decode())
        return call

    psycopg_error(conn, "Bind with too few parameters", "08P01",
                  exec_params(b"SELECT k FROM every_type WHERE k = $1", [], [], []))
    psycopg_error(conn, "a binary int4 of 5 bytes", "22P03",
                  exec_params(b"SELECT $1::int4", [b"\x00\x00\x00\x01\x00"], [23], [1]))
    psycopg_error(conn, "a binary int4 of 3 bytes", "08P01",
                  exec_params(b"SELECT $1::int4", [b"\x00\x00\x01"], [23], [1]))
    psycopg_error(conn, "text that is not UTF-8", "22021",
                  exec_params(b"SELECT $1::text", [b"\xff\xfe"], [25], [0]))

    conn.close()


# ---- asyncpg: binary parameters and results everywhere, named statements

async def asyncpg_error(conn, what, sqlstate, coroutine):
    try:
        await coroutine
        fail("%s: answered, expected the error %s" % (what, sqlstate))
    except asyncpg.PostgresError as e:
        if e.sqlstate != sqlstate:
            fail("%s: error %s (%s), expected %s" % (what, e.sqlstate, e, sqlstate))
    try:
        if await conn.fetchval("SELECT k FROM every_type WHERE k = $1", 1) != 1:
            fail("%s: the session's next read answered wrongly" % what)
    except asyncpg.PostgresError as e:
        fail("%s: the session's next read failed: %s %s" % (what, e.sqlstate, e))


async def run_asyncpg():
    conn = await asyncpg.connect(host="127.0.0.1", port=args.port, user=args.user,
                                 database="tandem", timeout=10, command_timeout=60)

    # The parameter types a Parse infers (ParameterDescription), as PostgreSQL infers them.
    inferred = [
        ("SELECT k FROM every_type WHERE k = $1", ["int4"]),
        ("SELECT k FROM every_type WHERE i2 = $1", ["int2"]),
        ("SELECT k FROM every_type WHERE i8 = $1", ["int8"]),
        ("SELECT k FROM every_type WHERE k = $1 + 1", ["int4"]),
        ("SELECT k FROM every_type WHERE n = $1", ["numeric"]),
        ("SELECT k FROM every_type WHERE nn > $1", ["numeric"]),
        ("SELECT k FROM every_type WHERE f4 = $1", ["float4"]),
        ("SELECT k FROM every_type WHERE t = $1", ["text"]),
        ("SELECT k FROM every_type WHERE t LIKE $1", ["text"]),
        ("SELECT k FROM every_type WHERE v = $1", ["text"]),
        ("SELECT k FROM every_type WHERE ch = $1", ["bpchar"]),
        ("SELECT k FROM every_type WHERE by = $1", ["bytea"]),
        ("SELECT k FROM every_type WHERE d = $1", ["date"]),
        ("SELECT k FROM every_type WHERE ti = $1", ["time"]),
        ("SELECT k FROM every_type WHERE ts > $1", ["timestamp"]),
        ("SELECT k FROM every_type WHERE tz = $1", ["timestamptz"]),
        ("SELECT k FROM every_type WHERE iv < $1", ["interval"]),
        ("SELECT k FROM every_type WHERE u = $1", ["uuid"]),
        ("SELECT k FROM every_type WHERE bo = $1", ["bool"]),
        ("SELECT k FROM every_type WHERE k IN ($1, $2)", ["int4", "int4"]),
        ("SELECT $1::numeric(12,2)", ["numeric"]),
        ("SELECT $1::text::int4", ["text"]),
        ("SELECT $1", ["text"]),
        ("SELECT length($1)", ["text"]),
        ("SELECT k FROM every_type ORDER BY k LIMIT $1", ["int8"]),
        ("UPDATE every_type SET t = $1 WHERE k = $2", ["text", "int4"]),
        ("DELETE FROM every_type WHERE i8 = $1", ["int8"]),
        ("INSERT INTO every_type VALUES (%s)" % ", ".join("$%d" % (i + 1) for i in range(18)),
         [c[2] for c in COLUMNS]),
    ]
    for sql, want in inferred:
        try:
            stmt = await conn.prepare(sql)
            got = [t.name for t in stmt.get_parameters()]
            if got != want:
                fail("asyncpg parameter types of %s: %r, expected %r" % (sql, got, want))
        except asyncpg.PostgresError as e:
            fail("asyncpg prepare %s: %s %s" % (sql, e.sqlstate, e))

    # The result's columns (RowDescription): names and types, a parameter's column named as
    # PostgreSQL names it.
    described = [
        (SELECT_ONE_DOLLAR, [(c[0], c[2]) for c in COLUMNS]),
        ("SELECT $1 + 1", [("?column?", "int4")]),
        ("SELECT $1::int8, k FROM every_type WHERE k = $2", [("int8", "int8"), ("k", "int4")]),
        ("SELECT $1", [("?column?", "text")]),
    ]
    for sql, want in described:
        try:
            stmt = await conn.prepare(sql)
            got = [(a.name, a.type.name) for a in stmt.get_attributes()]
            if got != want:
                fail("asyncpg columns of %s: %r, expected %r" % (sql, got, want))
        except asyncpg.PostgresError as e:
            fail("asyncpg prepare %s: %s %s" % (sql, e.sqlstate, e))

    # Writes: executemany (one Bind/Execute per row, one Sync).
    insert = "INSERT INTO every_type VALUES (%s)" % ", ".join("$%d" % (i + 1) for i in range(18))
    try:
        await conn.executemany(insert, [(key,) + values
                                        for key, values in zip(ASYNCPG_KEYS, VALUES)])
        WRITTEN.update(zip(ASYNCPG_KEYS, VALUES))
    except asyncpg.PostgresError as e:
        fail("asyncpg executemany: %s %s" % (e.sqlstate, e))

    # Reads of every row written by either driver: conn.fetch (its statement cache: a named
    # statement Bound again), a prepared statement's fetchrow, several times.
    stmt = await conn.prepare(SELECT_ONE_DOLLAR)
    for key, values in sorted(WRITTEN.items()):
        for attempt in range(2):
            try:
                rows = await conn.fetch(SELECT_ONE_DOLLAR, key)
                if len(rows) != 1:
                    fail("asyncpg fetch key %d: %d rows" % (key, len(rows)))
                else:
                    check_row("asyncpg fetch key %d" % key, rows[0], key, values, True)
                check_row("asyncpg fetchrow key %d" % key, await stmt.fetchrow(key), key,
                          values, True)
            except asyncpg.PostgresError as e:
                fail("asyncpg read of key %d: %s %s" % (key, e.sqlstate, e))

    # A parameter as a value of every type, answered in binary: what was sent.
    for key, values in [(31, VALUES[0]), (32, VALUES[1]), (33, VALUES[2])]:
        sql = "SELECT %s" % ", ".join("$%d::%s" % (i + 1, c[1].replace(" PRIMARY KEY", ""))
                                      for i, c in enumerate(COLUMNS))
        try:
            row = await conn.fetchrow(sql, key, *values)
            check_row("asyncpg parameters echoed (%s)" % key, row, key, values, True)
        except asyncpg.PostgresError as e:
            fail("asyncpg parameters echoed: %s %s" % (e.sqlstate, e))

    # A cursor in a transaction: one portal, Execute with a row limit (PortalSuspended) across
    # Syncs until the rows run out.
    keys = sorted(WRITTEN)
    try:
        async with conn.transaction():
            cur = await conn.cursor(
                "SELECT %s FROM every_type WHERE k >= $1 ORDER BY k" % ", ".join(NAMES), 0)
            got = []
            while True:
                chunk = await cur.fetch(2)
                if len(chunk) > 2:
                    fail("asyncpg cursor fetch(2): %d rows" % len(chunk))
                if not chunk:
                    break
                got.extend(chunk)
            if [r[0] for r in got] != keys:
                fail("asyncpg cursor fetch(2): keys %r, expected %r" % ([r[0] for r in got],
                                                                        keys))
            for row in got:
                if row[0] in WRITTEN:
                    check_row("asyncpg cursor key %d" % row[0], row, row[0], WRITTEN[row[0]],
                              True)
            cur = await conn.cursor("SELECT k FROM every_type WHERE k > $1 ORDER BY k", 10)
            row = await cur.fetchrow()
            rest = await cur.fetch(100)
            got = [row[0]] + [r[0] for r in rest]
            if got != [k for k in keys if k > 10]:
                fail("asyncpg cursor fetchrow then fetch: %r" % got)
            got = [r[0] async for r in conn.cursor("SELECT k FROM every_type ORDER BY k",
                                                   prefetch=3)]
            if got != keys:
                fail("asyncpg cursor iterated (prefetch 3): %r, expected %r" % (got, keys))
    except asyncpg.PostgresError as e:
        fail("asyncpg cursor: %s %s" % (e.sqlstate, e))

    # executemany is one implicit transaction (one Sync): on PostgreSQL a row refused refuses
    # them all; Tandem applies each Execute's write when it runs, so the rows before it stay
    # (docs/frontend.md "Differences from PostgreSQL").
    try:
        await conn.executemany("INSERT INTO every_type (k, t) VALUES ($1, $2)",
                               [(40, "first"), (1, "duplicate"), (41, "third")])
        fail("asyncpg executemany with a duplicate key: answered, expected 23505")
    except asyncpg.PostgresError as e:
        if e.sqlstate != "23505":
            fail("asyncpg executemany with a duplicate key: %s %s" % (e.sqlstate, e))
    got = await conn.fetchval("SELECT count(*) FROM every_type WHERE k >= $1 AND k <= $2", 40, 41)
    if got != (1 if tandem else 0):
        fail("asyncpg executemany with a duplicate key in its second row wrote %d rows" % got)
    await conn.execute("DELETE FROM every_type WHERE k >= $1 AND k <= $2", 40, 41)

    # asyncpg sends date.max and datetime.max as infinity, date.min and datetime.min as
    # -infinity, and reads them back so.
    for sql, value in [("SELECT $1::date", dt.date.max), ("SELECT $1::date", dt.date.min),
                       ("SELECT $1::timestamp", dt.datetime.max),
                       ("SELECT $1::timestamp", dt.datetime.min)]:
        try:
            got = await conn.fetchval(sql, value)
            if tandem:
                fail("asyncpg %s given %r: answered %r, expected 0A000" % (sql, value, got))
            elif got != value:
                fail("asyncpg %s given %r: %r" % (sql, value, got))
        except asyncpg.PostgresError as e:
            # Tandem's dates and timestamps are finite: an infinity is refused, never stored as
            # a date it is not (docs/frontend.md "Differences from PostgreSQL").
            if not tandem or e.sqlstate != "0A000":
                fail("asyncpg %s given %r (sent as an infinity): %s %s" % (sql, value,
                                                                           e.sqlstate, e))

    # Writes with a row count.
    try:
        status = await conn.execute("UPDATE every_type SET bo = $1 WHERE k = $2 OR k = $3",
                                    True, 33, 34)
        if status != "UPDATE 2":
            fail("asyncpg UPDATE: %r, expected 'UPDATE 2'" % status)
        if await conn.fetchval("SELECT count(*) FROM every_type WHERE bo = $1", True) != 6:
            fail("asyncpg count of bo = true after the UPDATE")
        for key in (33, 34):
            WRITTEN[key] = WRITTEN[key][:-1] + (True,)
    except asyncpg.PostgresError as e:
        fail("asyncpg UPDATE: %s %s" % (e.sqlstate, e))

    # A statement cache of 2: asyncpg Closes the statements it evicts (the Close message) and
    # Parses them again when they come back.
    small = await asyncpg.connect(host="127.0.0.1", port=args.port, user=args.user,
                                  database="tandem", timeout=10, command_timeout=60,
                                  statement_cache_size=2)
    for attempt in range(3):
        for column in ("i2", "i8", "t", "d"):
            sql = "SELECT %s FROM every_type WHERE k = $1" % column
            try:
                got = await small.fetchval(sql, 1)
                if got != WRITTEN[1][NAMES.index(column) - 1]:
                    fail("asyncpg statement cache 2, %s: %r" % (sql, got))
            except asyncpg.PostgresError as e:
                fail("asyncpg statement cache 2, %s: %s %s" % (sql, e.sqlstate, e))
    await small.close()

    # Errors, each with its SQLSTATE; the session answers after each.
    await asyncpg_error(conn, "asyncpg $1::text::int4 given 'abc'", "22P02",
                        conn.fetchval("SELECT $1::text::int4", "abc"))
    await asyncpg_error(conn, "asyncpg two statements with a parameter", "42601",
                        conn.fetch("SELECT $1::int4; SELECT 2", 1))
    await asyncpg_error(conn, "asyncpg unknown table", "42P01",
                        conn.fetch("SELECT * FROM missing WHERE k = $1", 1))
    await asyncpg_error(conn, "asyncpg duplicate key", "23505",
                        conn.execute("INSERT INTO every_type (k) VALUES ($1)", 31))
    await asyncpg_error(conn, "asyncpg int2 overflow", "22003",
                        conn.fetchval("SELECT $1::int2 * 2::int2", 20000))
    await asyncpg_error(conn, "asyncpg division by zero", "22012",
                        conn.fetchval("SELECT k / $1 FROM every_type WHERE k = 1", 0))
    await conn.close()


# ---- lookups by value: each column compared with a parameter of its type

def equal_for_sql(column, stored, value):
    if stored is None:
        return False
    if column == "ch":
        return stored.rstrip(" ") == value.rstrip(" ")  # char(n): trailing spaces do not count
    return stored == value


def expected_keys(column, value):
    i = NAMES.index(column) - 1
    return sorted(k for k, values in WRITTEN.items() if equal_for_sql(column, values[i], value))


# Not the floats: a float8 parameter against a float4 column compares the float4 widened.
LOOKUP_COLUMNS = ["i2", "i8", "n", "nn", "t", "v", "ch", "by", "d", "ti", "ts", "tz", "iv",
                  "u", "bo"]


def run_psycopg_lookups():
    conn = psycopg.connect(host="127.0.0.1", port=args.port, dbname="tandem", user=args.user,
                           connect_timeout=10, autocommit=True)
    for column in LOOKUP_COLUMNS:
        for values in VALUES[:2]:
            value = values[NAMES.index(column) - 1]
            for placeholder in ("%t", "%b"):
                sql = "SELECT k FROM every_type WHERE %s = %s ORDER BY k" % (column, placeholder)
                try:
                    got = [r[0] for r in conn.execute(sql, (value,)).fetchall()]
                    if got != expected_keys(column, value):
                        fail("psycopg %s given %r: keys %r, expected %r"
                             % (sql, value, got, expected_keys(column, value)))
                except psycopg.Error as e:
                    fail("psycopg %s given %r: %s %s" % (sql, value, e.sqlstate, e))
    conn.close()


async def run_asyncpg_lookups():
    conn = await asyncpg.connect(host="127.0.0.1", port=args.port, user=args.user,
                                 database="tandem", timeout=10, command_timeout=60)
    for column in LOOKUP_COLUMNS:
        sql = "SELECT k FROM every_type WHERE %s = $1 ORDER BY k" % column
        for values in VALUES[:2]:
            value = values[NAMES.index(column) - 1]
            try:
                got = [r[0] for r in await conn.fetch(sql, value)]
                if got != expected_keys(column, value):
                    fail("asyncpg %s given %r: keys %r, expected %r"
                         % (sql, value, got, expected_keys(column, value)))
            except asyncpg.PostgresError as e:
                fail("asyncpg %s given %r: %s %s" % (sql, value, e.sqlstate, e))
    await conn.close()


run_psycopg()
asyncio.run(run_asyncpg())
run_psycopg_lookups()
asyncio.run(run_asyncpg_lookups())

if failures:
    for (name, got, want), more in wrong_values.items():
        if more:
            print("column %s read as %s instead of %s in %d more reads" % (name, got, want, more))
    print("%d checks failed" % len(failures))
    sys.exit(1)
print("all checks passed")

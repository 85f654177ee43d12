// Hostile SQL against tandem-frontend: what a careless or malicious client sends must be
// answered — an ErrorResponse with a SQLSTATE, or a valid answer where the input happens to be a
// valid statement — and never cost the frontend or its replica their service.
//
//   RandomAndMutatedStatementsAreAnsweredAndTheFrontendKeepsServing
//       10,000 inputs (TANDEM_HOSTILE_SQL_CASES), half random bytes (1–255: a NUL ends a
//       simple Query's string), half valid statements over small tables mutated 1–4 times
//       (bytes changed, spans deleted or repeated, tokens inserted, cut short; one in 40% of them),
//       from a seed printed first (TANDEM_HOSTILE_SQL_SEED replays it), sent round-robin over 4
//       connections. Each connection stays up; every answer is rows or an error with a SQLSTATE
//       that is not XX000 (an internal error is a bug, not an answer); an input PostgreSQL's
//       grammar rejects (sql::Parse, libpg_query: 42601, 22021, 54000, 54001) is an error.
//       Afterwards SELECT 1, the mutated tables and an untouched table (its rows exactly) are
//       answered.
//   DeepHugeAndExplosiveStatementsAreClearErrors
//       1+1+…+1 (100,000 terms), 100,000 nested parentheses, NOT ×100,000, a 2 MiB statement,
//       CTEs whose plan doubles at each level, 1,200 FROM items: each an error of class 54
//       (program limit), as the planner documents (frontend/plan/planner.h). An IN list of
//       100,000 constants: the right count or a class-54 error. A 10-way cross join of a 1,000-row
//       table (10^30 rows): an error (the statement timeout, a memory bound, a refusal), within
//       a bounded time. After each, SELECT 1 and a read of the table are answered.
//   HostileInputsAgreeWithPostgres
//       The same inputs against PostgreSQL 15: every input the test requires to fail also fails
//       there, and PostgreSQL stays up — the test's expectations are PostgreSQL's.
#include <gtest/gtest.h>
#include <postgresql/libpq-fe.h>  // Debian libpq-dev

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "frontend/sql/parse.h"
#include "frontend_harness.h"
#include "pg_connection.h"
#include "postgres_server.h"
#include "sql_oracle/random.h"
#include "sql_rows.h"

namespace tandem::testing {
namespace {

using namespace std::chrono_literals;
using sql_oracle::Random;

std::uint64_t HostileSeed() {
  if (const char* v = std::getenv("TANDEM_HOSTILE_SQL_SEED")) return std::strtoull(v, nullptr, 10);
  return 20261207;
}

int HostileCases() {
  if (const char* v = std::getenv("TANDEM_HOSTILE_SQL_CASES")) return std::atoi(v);
  return 10000;
}

// The tables the inputs read and write (h, h2) and one none of them names (kept_rows_z9).
constexpr char kSetup[] =
    "CREATE TABLE h (k bigint PRIMARY KEY, s text, f double precision, b boolean);"
    "CREATE TABLE h2 (a bigint, k bigint);"
    "CREATE TABLE kept_rows_z9 (id bigint PRIMARY KEY, v text NOT NULL);"
    "INSERT INTO h VALUES (1, 'one', '0.5'::float8, true), (2, NULL, '1.5'::float8, false), "
    "(3, 'three', NULL, NULL), (4, 'four', '2.25'::float8, true), (5, 'x', '-1'::float8, true);"
    "INSERT INTO h2 VALUES (1, 1), (2, 2), (2, 3), (NULL, 4), (7, NULL);"
    "INSERT INTO kept_rows_z9 VALUES (1, 'alpha'), (2, 'beta'), (3, 'gamma');";
const std::vector<SqlRow> kKeptRows = {{"1", "alpha"}, {"2", "beta"}, {"3", "gamma"}};

const std::vector<std::string>& ValidStatements() {
  static const std::vector<std::string> statements = {
      "SELECT k, s FROM h WHERE k > 3 ORDER BY k LIMIT 5",
      "SELECT count(*), sum(k), max(s) FROM h GROUP BY b HAVING count(*) > 1",
      "SELECT h.k, h2.a FROM h JOIN h2 ON h2.k = h.k WHERE h.f > '1.5'::float8",
      "SELECT DISTINCT s FROM h UNION SELECT 'x' ORDER BY 1",
      "SELECT k FROM h WHERE k IN (SELECT k FROM h2) AND EXISTS (SELECT 1 FROM h2 WHERE "
      "h2.a = h.k)",
      "WITH w AS (SELECT k, s FROM h WHERE b) SELECT * FROM w WHERE s IS NOT NULL",
      "SELECT CASE WHEN k > 2 THEN 'big' ELSE 'small' END, COALESCE(s, 'none') FROM h",
      "SELECT * FROM h LEFT JOIN h2 ON h2.k = h.k FULL JOIN h2 AS x ON x.a = h2.a",
      "SELECT a, count(*) FROM h2 GROUP BY a EXCEPT ALL SELECT k, 1 FROM h",
      "SELECT k FROM h WHERE NOT EXISTS (SELECT 1 FROM h2 WHERE h2.k = h.k) OFFSET 1",
      "SELECT 1; SELECT 2",
      "INSERT INTO h2 VALUES (1, 2), (3, 4)",
      "INSERT INTO h2 SELECT k, k FROM h WHERE k < 2",
      "UPDATE h2 SET a = a + 1 WHERE k = 2",
      "DELETE FROM h2 WHERE a > 100",
      "CREATE VIEW hv AS SELECT k, s FROM h WHERE k < 5",
      "DROP VIEW hv",
      "SHOW COLUMNS FROM h",
      "EXPLAIN SELECT * FROM h WHERE k = 1",
  };
  return statements;
}

// Inserted by mutations. Not SUBSCRIBE, COPY or BEGIN: a valid SUBSCRIBE streams until
// canceled, a COPY leaves the connection in its own state, and an open transaction block would
// answer every later input 25P02 — the inputs are to reach the parser and the planner.
const std::vector<std::string>& Tokens() {
  static const std::vector<std::string> tokens = {"SELECT",
                                                  "FROM",
                                                  "WHERE",
                                                  "(",
                                                  ")",
                                                  ",",
                                                  ";",
                                                  "--",
                                                  "/*",
                                                  "*/",
                                                  "'",
                                                  "\"",
                                                  "NULL",
                                                  "*",
                                                  "/",
                                                  "0",
                                                  "1.5",
                                                  "1e308",
                                                  "9223372036854775807",
                                                  "-9223372036854775808",
                                                  "UNION",
                                                  "JOIN",
                                                  "ON",
                                                  "GROUP BY",
                                                  "ORDER BY",
                                                  "HAVING",
                                                  "DISTINCT",
                                                  "LIMIT",
                                                  "IN",
                                                  "EXISTS",
                                                  "NOT",
                                                  "AND",
                                                  "OR",
                                                  "CASE",
                                                  "END",
                                                  "'a'",
                                                  "true",
                                                  "$1",
                                                  "::",
                                                  "::int4",
                                                  "\\",
                                                  "E'\\x00'",
                                                  "\xc3\x28",
                                                  "\xff",
                                                  "\xe2\x82",
                                                  "é",
                                                  "AS OF",
                                                  "h",
                                                  "h2",
                                                  "k",
                                                  " ",
                                                  "\n",
                                                  "\t"};
  return tokens;
}

// One random byte, never NUL.
char RandomByte(Random& random) { return static_cast<char>(random.Between(1, 255)); }

std::string Mutate(Random& random, std::string s) {
  // Often one mutation, which keeps more statements valid (the planner's inputs); up to four.
  const int mutations = random.Percent(40) ? 1 : static_cast<int>(random.Between(2, 4));
  for (int m = 0; m < mutations; ++m) {
    const std::size_t at = s.empty() ? 0 : random.Below(s.size() + 1);
    switch (random.Below(6)) {
      case 0:  // a byte changed
        if (!s.empty()) s[std::min(at, s.size() - 1)] = RandomByte(random);
        break;
      case 1:  // a span deleted
        s.erase(at, static_cast<std::size_t>(random.Between(1, 12)));
        break;
      case 2:  // a token inserted
        s.insert(at, " " + random.Pick(Tokens()) + " ");
        break;
      case 3: {  // a span repeated
        const std::string span = s.substr(at, static_cast<std::size_t>(random.Between(1, 20)));
        s.insert(at, span);
        break;
      }
      case 4:  // cut short
        s.resize(at);
        break;
      default:  // a printable byte inserted
        s.insert(at, 1, static_cast<char>(random.Between(32, 126)));
        break;
    }
  }
  return s;
}

// Input i of a run from `seed`: random bytes (even i's draw) or a mutated valid statement.
std::string HostileInput(std::uint64_t seed, int i) {
  Random random(sql_oracle::MixSeed(seed, static_cast<std::uint64_t>(i)));
  if (random.Percent(50)) {
    std::string bytes(static_cast<std::size_t>(random.Between(1, 200)), ' ');
    for (char& c : bytes) c = RandomByte(random);
    return bytes;
  }
  return Mutate(random, random.Pick(ValidStatements()));
}

// Whether PostgreSQL's grammar (libpg_query, through the frontend's own Parse) rejects `sql`:
// then every server must answer it with an error.
bool GrammarRejects(const std::string& sql) { return !sql::Parse(sql).ok(); }

struct HostileTally {
  int errors = 0;
  int answered = 0;
  int must_fail = 0;
};

// Runs every input over `connections`, round-robin. "" when each was answered as the header
// says, else the first failure with the seed, the input's number and the input.
std::string RunHostileInputs(std::vector<PgConnection>& connections, std::uint64_t seed, int count,
                             HostileTally* tally) {
  for (int i = 0; i < count; ++i) {
    const std::string input = HostileInput(seed, i);
    PgConnection& connection = connections[static_cast<std::size_t>(i) % connections.size()];
    const bool must_fail = GrammarRejects(input);
    const PgAnswer answer = connection.Execute(input);
    const std::string where = "seed " + std::to_string(seed) + ", input #" + std::to_string(i) +
                              ": " + FormatValue(input) + "\n  answered: ";
    if (!connection.ok()) {
      return where + (answer.ok() ? "rows" : answer.error->ToString()) +
             "\n  and the connection is lost: " + connection.error();
    }
    if (answer.ok()) {
      ++tally->answered;
      if (must_fail) return where + "rows, but PostgreSQL's grammar rejects it";
      continue;
    }
    ++tally->errors;
    tally->must_fail += must_fail ? 1 : 0;
    if (answer.sqlstate().size() != 5 || answer.sqlstate() == "XX000") {
      return where + answer.error->ToString() + "\n  (not an error a client can act on)";
    }
  }
  return "";
}

// Runs `sql` on `connection`, canceling it (PQcancel) if it has not been answered after
// `limit`: a bounded wait whatever the server does.
PgAnswer ExecuteBounded(PgConnection& connection, const std::string& sql,
                        std::chrono::seconds limit, bool* canceled) {
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  *canceled = false;
  PGcancel* cancel = PQgetCancel(connection.raw());
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(mutex);
    if (!done_cv.wait_for(lock, limit, [&] { return done; }) && cancel != nullptr) {
      char why[256];
      *canceled = true;
      PQcancel(cancel, why, sizeof why);
    }
  });
  PgAnswer answer = connection.Execute(sql);
  {
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
  }
  done_cv.notify_all();
  watchdog.join();
  if (cancel != nullptr) PQfreeCancel(cancel);
  return answer;
}

// The frontend still serves: SELECT 1, and `table` read (its row count `rows`, or any when -1).
void ExpectServing(FrontendServer& frontend, const std::string& table, int rows,
                   const std::string& after) {
  PgConnection fresh(frontend.conninfo());
  ASSERT_TRUE(fresh.ok()) << "after " << after << ": " << fresh.error() << "\n"
                          << frontend.LogTail();
  bool canceled = false;
  const PgAnswer one = ExecuteBounded(fresh, "SELECT 1", 60s, &canceled);
  ASSERT_TRUE(one.ok()) << "after " << after << ": " << one.error->ToString() << "\n"
                        << frontend.LogTail();
  EXPECT_EQ(one.rows, (std::vector<SqlRow>{{"1"}}));
  // A statement the replica was still computing when its client was answered (an exploding
  // one-shot, dropped once the frontend gave up) may keep the interactive runtime busy a while —
  // minutes under a sanitizer: the frontend answers meanwhile (57P03), and reads again after.
  const auto give_up = std::chrono::steady_clock::now() +
                       (std::getenv("TANDEM_TEST_SANITIZER") != nullptr ? 300s : 60s);
  PgAnswer read = ExecuteBounded(fresh, "SELECT count(*) FROM " + table, 60s, &canceled);
  while (!read.ok() && read.error->sqlstate == "57P03" &&
         std::chrono::steady_clock::now() < give_up) {
    read = ExecuteBounded(fresh, "SELECT count(*) FROM " + table, 60s, &canceled);
  }
  ASSERT_TRUE(read.ok()) << "after " << after << ": " << read.error->ToString() << "\n"
                         << frontend.LogTail();
  if (rows >= 0) {
    EXPECT_EQ(read.rows, (std::vector<SqlRow>{{std::to_string(rows)}})) << after;
  }
}

std::string Repeat(const std::string& s, int n) {
  std::string out;
  out.reserve(s.size() * static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// ---- the inputs against PostgreSQL: the expectations are PostgreSQL's

TEST(FrontendHostileSqlTest, HostileInputsAgreeWithPostgres) {
  TANDEM_SKIP_UNLESS_POSTGRES();
  PostgresServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  ASSERT_TRUE(server
                  .Execute("CREATE DATABASE tandem TEMPLATE template0 ENCODING 'UTF8' "
                           "LC_COLLATE 'C' LC_CTYPE 'C'")
                  .ok());
  std::vector<PgConnection> connections;
  for (int c = 0; c < 4; ++c) {
    connections.emplace_back(server.conninfo("tandem"));
    ASSERT_TRUE(connections.back().ok()) << connections.back().error();
    ASSERT_TRUE(connections.back().Execute("SET statement_timeout = 20000").ok());
  }
  const PgAnswer setup = connections[0].Execute(kSetup);
  ASSERT_TRUE(setup.ok()) << setup.error->ToString();
  const std::uint64_t seed = HostileSeed();
  std::cout << "hostile SQL seed " << seed << " (TANDEM_HOSTILE_SQL_SEED replays it)\n";
  HostileTally tally;
  EXPECT_EQ(RunHostileInputs(connections, seed, HostileCases(), &tally), "");
  std::cout << "PostgreSQL: " << tally.errors << " errors (" << tally.must_fail
            << " rejected by the grammar), " << tally.answered << " answered\n";
  EXPECT_GT(tally.answered, 100) << "the mutations keep some statements valid";
  const PgAnswer kept = connections[0].Execute("SELECT * FROM kept_rows_z9 ORDER BY id");
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept.rows, kKeptRows);
}

// ---- tandem-frontend

TEST(FrontendHostileSqlTest, RandomAndMutatedStatementsAreAnsweredAndTheFrontendKeepsServing) {
  FrontendServer frontend({"--statement-timeout-ms", "20000"});
  ASSERT_GT(frontend.Port(), 0) << frontend.LogTail();
  std::vector<PgConnection> connections;
  for (int c = 0; c < 4; ++c) {
    connections.emplace_back(frontend.conninfo());
    ASSERT_TRUE(connections.back().ok()) << connections.back().error();
  }
  const PgAnswer setup = connections[0].Execute(kSetup);
  ASSERT_TRUE(setup.ok()) << setup.error->ToString() << "\n" << frontend.LogTail();
  const std::uint64_t seed = HostileSeed();
  std::cout << "hostile SQL seed " << seed << " (TANDEM_HOSTILE_SQL_SEED replays it)\n";
  HostileTally tally;
  const std::string failure = RunHostileInputs(connections, seed, HostileCases(), &tally);
  EXPECT_EQ(failure, "") << frontend.LogTail();
  std::cout << "tandem-frontend: " << tally.errors << " errors (" << tally.must_fail
            << " rejected by the grammar), " << tally.answered << " answered\n";
  ASSERT_FALSE(frontend.Exited()) << "status " << frontend.exit_status() << "\n"
                                  << frontend.LogTail();
  ExpectServing(frontend, "h", -1, "the hostile inputs");
  ExpectServing(frontend, "h2", -1, "the hostile inputs");
  PgConnection check(frontend.conninfo());
  ASSERT_TRUE(check.ok()) << check.error();
  const PgAnswer kept = check.Execute("SELECT * FROM kept_rows_z9 ORDER BY id");
  ASSERT_TRUE(kept.ok()) << kept.error->ToString();
  EXPECT_EQ(kept.rows, kKeptRows);
}

TEST(FrontendHostileSqlTest, DeepHugeAndExplosiveStatementsAreClearErrors) {
  FrontendServer frontend({"--statement-timeout-ms", "20000"});
  ASSERT_GT(frontend.Port(), 0) << frontend.LogTail();
  PgConnection connection(frontend.conninfo());
  ASSERT_TRUE(connection.ok()) << connection.error();
  std::string values;
  for (int i = 0; i < 1000; ++i) values += (i == 0 ? "(" : ", (") + std::to_string(i) + ")";
  const PgAnswer setup = connection.Execute(
      "CREATE TABLE big (k bigint PRIMARY KEY); INSERT INTO big VALUES " + values + ";");
  ASSERT_TRUE(setup.ok()) << setup.error->ToString() << "\n" << frontend.LogTail();
  ExpectServing(frontend, "big", 1000, "the setup");

  // Each must be an error of class 54 (program limit exceeded), answered promptly.
  std::string ctes = "WITH c0 AS (SELECT k FROM big)";
  for (int level = 1; level <= 24; ++level) {
    ctes += ", c" + std::to_string(level) + " AS (SELECT x.k FROM c" + std::to_string(level - 1) +
            " AS x UNION ALL SELECT y.k FROM c" + std::to_string(level - 1) + " AS y)";
  }
  ctes += " SELECT count(*) FROM c24";
  std::string from_items = "SELECT count(*) FROM big AS b0";
  for (int i = 1; i < 1200; ++i) from_items += " JOIN big AS b" + std::to_string(i) + " USING (k)";
  // What: the statement, and the SQLSTATE (or its class) it must be answered with. PostgreSQL
  // itself answers a parser stack overflow (nested parentheses, NOT …) 42601 "memory exhausted",
  // a deep tree 54001.
  struct Limit {
    std::string what, sql;
    std::vector<std::string> states;
  };
  const std::vector<Limit> limits = {
      {"1+1+…+1 (100,000 terms)", "SELECT " + Repeat("1+", 99999) + "1", {"54"}},
      {"100,000 nested parentheses",
       "SELECT " + Repeat("(", 100000) + "1" + Repeat(")", 100000),
       {"54", "42601"}},
      {"NOT ×100,000", "SELECT " + Repeat("NOT ", 100000) + "true", {"54", "42601"}},
      {"a 2 MiB statement", "SELECT 1 -- " + std::string(2 << 20, 'x'), {"54"}},
      {"CTEs whose plan doubles 24 times", ctes, {"54"}},
      {"1,200 FROM items", from_items, {"54"}},
  };
  for (const auto& [what, sql, states] : limits) {
    bool canceled = false;
    const auto start = std::chrono::steady_clock::now();
    const PgAnswer answer = ExecuteBounded(connection, sql, 60s, &canceled);
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_TRUE(connection.ok()) << what << ": the connection is lost: " << connection.error()
                                 << "\n"
                                 << frontend.LogTail();
    EXPECT_FALSE(canceled) << what << ": not answered within 60 s";
    ASSERT_FALSE(answer.ok()) << what << ": answered with rows";
    bool allowed = false;
    for (const std::string& state : states) {
      allowed = allowed || answer.sqlstate().rfind(state, 0) == 0;
    }
    EXPECT_TRUE(allowed) << what << ": " << answer.error->ToString();
    std::cout << what << ": " << answer.error->ToString() << " ("
              << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms)\n";
    ExpectServing(frontend, "big", 1000, what);
  }

  // A huge IN list: the right answer, or a program-limit error.
  {
    std::string in = "SELECT count(*) FROM big WHERE k IN (";
    for (int i = 0; i < 100000; ++i) in += (i == 0 ? "" : ",") + std::to_string(i * 7);
    in += ")";
    bool canceled = false;
    const PgAnswer answer = ExecuteBounded(connection, in, 60s, &canceled);
    ASSERT_TRUE(connection.ok()) << "IN list: " << connection.error() << "\n" << frontend.LogTail();
    EXPECT_FALSE(canceled) << "IN list: not answered within 60 s";
    if (answer.ok()) {
      EXPECT_EQ(answer.rows, (std::vector<SqlRow>{{"143"}}));  // 0, 7, …, 994
    } else {
      EXPECT_EQ(answer.sqlstate().substr(0, 2), "54") << answer.error->ToString();
    }
    std::cout << "IN list of 100,000: " << (answer.ok() ? "answered" : answer.error->ToString())
              << "\n";
    ExpectServing(frontend, "big", 1000, "the IN list");
  }

  // A 10-way cross join of 1,000 rows: 10^30 rows. An error (the statement timeout, a memory
  // bound, a refusal), answered within the statement timeout and a margin; never a crash.
  {
    std::string join = "SELECT count(*) FROM big AS a1";
    for (int i = 2; i <= 10; ++i) join += " CROSS JOIN big AS a" + std::to_string(i);
    bool canceled = false;
    const auto start = std::chrono::steady_clock::now();
    const PgAnswer answer = ExecuteBounded(connection, join, 90s, &canceled);
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_TRUE(connection.ok()) << "cross join: " << connection.error() << "\n"
                                 << frontend.LogTail();
    EXPECT_FALSE(canceled) << "cross join: not answered within 90 s (statement timeout 20 s)";
    ASSERT_FALSE(answer.ok()) << "cross join: answered " << FormatRow(answer.rows.at(0));
    EXPECT_EQ(answer.sqlstate().size(), 5u) << answer.error->ToString();
    EXPECT_NE(answer.sqlstate(), "XX000") << answer.error->ToString();
    std::cout << "10-way cross join: " << answer.error->ToString() << " ("
              << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms)\n";
    ExpectServing(frontend, "big", 1000, "the cross join");
  }
  ASSERT_FALSE(frontend.Exited()) << "status " << frontend.exit_status() << "\n"
                                  << frontend.LogTail();
}

}  // namespace
}  // namespace tandem::testing

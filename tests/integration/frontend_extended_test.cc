// The extended query protocol (DESIGN §17) over libpq, with PostgreSQL 15 as the oracle: the same
// tables and rows on tandem-frontend and on a private PostgreSQL, then each statement prepared on
// both (PQprepare, its parameter types unspecified) and compared —
//   * the parameter types each side infers and the result columns' types (PQdescribePrepared);
//   * the rows each side answers when it is executed with parameters in text (PQexecPrepared);
//   * the bytes of every column in binary format (PQexecParams, resultFormat 1), and the rows of
//     parameters sent in binary;
//   * the SQLSTATE of what either refuses: a syntax error at Parse, an unknown statement, the
//     wrong number of parameters, a parameter that is no value of its type — each followed by a
//     statement the session still answers.
// Row limits and portals held across Executes are the drivers' tests' (asyncpg's cursors:
// frontend_clients_test.cc); the messages themselves are pgwire_test.cc's.
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend_harness.h"
#include "pg_connection.h"
#include "postgres_server.h"

namespace tandem::testing {
namespace extended_protocol_test {
namespace {

constexpr char kTables[] =
    "CREATE TABLE p (k int4 PRIMARY KEY, i8 int8, n numeric(12,2), t text, v varchar(10), "
    "d date, ts timestamptz, iv interval, u uuid, f float8, b bool, bt bytea, tm time, "
    "tsn timestamp, s2 int2, f4 float4, c char(3))";
constexpr char kRows[] =
    "INSERT INTO p VALUES "
    "(1, 10, 1.50, 'one', 'uno', '2026-12-06', '2026-12-06 12:00:00+00', '1 day 02:00:00', "
    "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 1.25, true, '\\x00ff', '12:34:56.789', "
    "'2026-12-06 01:02:03.000004', 7, 0.5, 'ab'), "
    "(2, -20, -3.25, 'two', 'dos', '2000-01-01', '1999-12-31 23:59:59.123456+00', '-5 mons', "
    "'00000000-0000-0000-0000-000000000005', -0.5, false, '\\x', '00:00:00', "
    "'1970-01-01 00:00:00', -7, -1.5, 'xyz'), "
    "(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
    "NULL, NULL)";

// One side's view of a prepared statement: its parameter types and its columns' types.
struct Description {
  std::string error;  // the SQLSTATE of a refusal, "" when prepared
  std::vector<Oid> parameters;
  std::vector<std::pair<Oid, int>> columns;  // type, type modifier

  bool operator==(const Description&) const = default;
};

std::string Show(const Description& d) {
  if (!d.error.empty()) return "refused " + d.error;
  std::string s = "parameters (";
  for (Oid p : d.parameters) s += std::to_string(p) + " ";
  s += ") columns (";
  for (const auto& [type, mod] : d.columns)
    s += std::to_string(type) + "/" + std::to_string(mod) + " ";
  return s + ")";
}

std::string StateOf(const PGresult* result) {
  const char* state = PQresultErrorField(result, PG_DIAG_SQLSTATE);
  return state != nullptr ? state : "";
}

using Result = std::unique_ptr<PGresult, decltype(&PQclear)>;

Result Wrap(PGresult* r) { return Result(r, &PQclear); }

// A result's rows: each value's bytes (nullopt for NULL), rows sorted.
using Rows = std::vector<std::vector<std::optional<std::string>>>;
struct Answer {
  std::string error;  // SQLSTATE; "" on success
  Rows rows;
  bool operator==(const Answer&) const = default;
};

Answer AnswerOf(const PGresult* r) {
  Answer a;
  const auto status = PQresultStatus(r);
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
    a.error = StateOf(r);
    if (a.error.empty()) a.error = "(no SQLSTATE) " + std::string(PQresultErrorMessage(r));
    return a;
  }
  for (int i = 0; i < PQntuples(r); ++i) {
    std::vector<std::optional<std::string>> row;
    for (int j = 0; j < PQnfields(r); ++j) {
      if (PQgetisnull(r, i, j)) {
        row.emplace_back();
      } else {
        row.emplace_back(std::string(PQgetvalue(r, i, j), PQgetlength(r, i, j)));
      }
    }
    a.rows.push_back(std::move(row));
  }
  std::sort(a.rows.begin(), a.rows.end());
  return a;
}

std::string Show(const Answer& a) {
  if (!a.error.empty()) return "refused " + a.error;
  std::string s;
  for (const auto& row : a.rows) {
    s += "(";
    for (const auto& v : row) {
      if (!v) {
        s += "NULL ";
        continue;
      }
      std::string hex;
      for (unsigned char c : *v) {
        static const char* digits = "0123456789abcdef";
        hex += digits[c >> 4];
        hex += digits[c & 15];
      }
      s += *v + "[" + hex + "] ";
    }
    s += ")";
  }
  return s;
}

// Both servers, started once for the suite, with the same tables and rows.
class ExtendedProtocol : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (PostgresServer::Unavailable()) return;
    postgres_ = std::make_unique<PostgresServer>();
    tandem_ = std::make_unique<FrontendServer>();
  }
  static void TearDownTestSuite() {
    tandem_.reset();
    postgres_.reset();
  }

  void SetUp() override {
    TANDEM_SKIP_UNLESS_POSTGRES();
    ASSERT_TRUE(postgres_->ok()) << postgres_->error();
    ASSERT_GT(tandem_->Port(), 0) << tandem_->LogTail();
    pg_ = std::make_unique<PgConnection>(postgres_->conninfo());
    td_ = std::make_unique<PgConnection>(tandem_->conninfo());
    ASSERT_TRUE(pg_->ok()) << pg_->error();
    ASSERT_TRUE(td_->ok()) << td_->error();
    if (!tables_made_) {
      for (PgConnection* c : {pg_.get(), td_.get()}) {
        for (const char* sql : {kTables, kRows}) {
          const PgAnswer a = c->Execute(sql);
          ASSERT_TRUE(a.ok()) << sql << ": " << a.error->ToString();
        }
      }
      tables_made_ = true;
    }
  }

  void TearDown() override {
    if (HasFailure() && tandem_ != nullptr) std::cout << tandem_->LogTail();
  }

  static Description Describe(PgConnection& c, const std::string& name, const std::string& sql) {
    Description d;
    Result prepared = Wrap(PQprepare(c.raw(), name.c_str(), sql.c_str(), 0, nullptr));
    if (PQresultStatus(prepared.get()) != PGRES_COMMAND_OK) {
      d.error = StateOf(prepared.get());
      return d;
    }
    Result described = Wrap(PQdescribePrepared(c.raw(), name.c_str()));
    if (PQresultStatus(described.get()) != PGRES_COMMAND_OK) {
      d.error = StateOf(described.get());
      return d;
    }
    for (int i = 0; i < PQnparams(described.get()); ++i) {
      d.parameters.push_back(PQparamtype(described.get(), i));
    }
    for (int i = 0; i < PQnfields(described.get()); ++i) {
      d.columns.emplace_back(PQftype(described.get(), i), PQfmod(described.get(), i));
    }
    return d;
  }

  // `sql` run with text parameters `values` (nullopt: NULL), results in `result_format`.
  static Answer Run(PgConnection& c, const std::string& sql,
                    const std::vector<std::optional<std::string>>& values, int result_format = 0,
                    const std::vector<Oid>& types = {}, const std::vector<int>& formats = {}) {
    std::vector<const char*> pointers;
    std::vector<int> lengths;
    for (const auto& v : values) {
      pointers.push_back(v ? v->data() : nullptr);
      lengths.push_back(v ? static_cast<int>(v->size()) : 0);
    }
    Result r =
        Wrap(PQexecParams(c.raw(), sql.c_str(), static_cast<int>(values.size()),
                          types.empty() ? nullptr : types.data(), pointers.data(), lengths.data(),
                          formats.empty() ? nullptr : formats.data(), result_format));
    return AnswerOf(r.get());
  }

  // The session answers a plain statement (after a refusal).
  static void ExpectServing(PgConnection& c, const char* who) {
    const PgAnswer a = c.Execute("SELECT 1");
    EXPECT_TRUE(a.ok()) << who << ": " << (a.ok() ? "" : a.error->ToString());
  }

  static std::unique_ptr<PostgresServer> postgres_;
  static std::unique_ptr<FrontendServer> tandem_;
  static bool tables_made_;
  std::unique_ptr<PgConnection> pg_;
  std::unique_ptr<PgConnection> td_;
};

std::unique_ptr<PostgresServer> ExtendedProtocol::postgres_;
std::unique_ptr<FrontendServer> ExtendedProtocol::tandem_;
bool ExtendedProtocol::tables_made_ = false;

// Statements whose parameters' types their context decides, as PostgreSQL decides them.
const std::vector<std::string> kInferred = {
    "SELECT k FROM p WHERE k = $1",
    "SELECT * FROM p WHERE i8 = $1 AND t = $2",
    "SELECT $1::int8 + k FROM p",
    "SELECT k FROM p WHERE n > $1",
    "SELECT k FROM p WHERE ts < $1 AND d >= $2",
    "SELECT k FROM p WHERE u = $1 OR iv = $2",
    "SELECT $1",
    "SELECT k + $1 FROM p",
    "SELECT f * $1 FROM p",
    "SELECT k FROM p WHERE b = $1",
    "SELECT k FROM p WHERE t LIKE $1",
    "SELECT k FROM p WHERE k IN ($1, $2, $3)",
    "SELECT coalesce(t, $1) FROM p",
    "SELECT k, n * $1 FROM p WHERE $2 < ts",
    "SELECT k FROM p WHERE bt = $1 OR tm = $2 OR tsn = $3",
    "SELECT count(*), sum(n) FROM p WHERE s2 = $1 OR f4 = $2",
    "SELECT upper(t) || $1 FROM p WHERE k = $2",
    "INSERT INTO p (k, t, n) VALUES ($1, $2, $3)",
    "UPDATE p SET t = $2, ts = $3 WHERE k = $1",
    "DELETE FROM p WHERE k = $1 AND d = $2",
    "SELECT k, t FROM p WHERE k = 1",
    "SELECT k FROM p WHERE v = $1 OR c = $2",
    "INSERT INTO p (k, v, c, n) VALUES ($1, $2, $3, $4)",
    "SELECT k FROM p WHERE k = $1 + 1",
    "SELECT greatest(k, $1), n + $2, iv * $3, d - $4::int4 FROM p",
    "SELECT k FROM p ORDER BY k LIMIT $1 OFFSET $2",
};

TEST_F(ExtendedProtocol, ParameterAndColumnTypesAreThoseOfPostgres) {
  int i = 0;
  for (const std::string& sql : kInferred) {
    const std::string name = "types" + std::to_string(i++);
    const Description on_pg = Describe(*pg_, name, sql);
    const Description on_tandem = Describe(*td_, name, sql);
    ASSERT_EQ(on_pg.error, "") << sql;
    EXPECT_EQ(on_tandem, on_pg) << sql << "\n  Tandem:     " << Show(on_tandem)
                                << "\n  PostgreSQL: " << Show(on_pg);
  }
}

TEST_F(ExtendedProtocol, TextParametersAnswerThePostgresRows) {
  struct Case {
    std::string sql;
    std::vector<std::optional<std::string>> values;
  };
  const std::vector<Case> cases = {
      {"SELECT k, t, n FROM p WHERE k = $1", {"1"}},
      {"SELECT k FROM p WHERE n > $1", {"-4.5"}},
      {"SELECT k FROM p WHERE ts < $1", {"2026-01-01 00:00:00+00"}},
      {"SELECT k, iv FROM p WHERE iv = $1", {"26 hours"}},
      {"SELECT k FROM p WHERE u = $1", {"00000000-0000-0000-0000-000000000005"}},
      {"SELECT $1, $2::int4 + 1", {"text", "41"}},
      {"SELECT k FROM p WHERE k IN ($1, $2)", {"1", std::nullopt}},
      {"SELECT coalesce(t, $1) FROM p", {"none"}},
      {"SELECT k FROM p WHERE t LIKE $1", {"t%"}},
      {"SELECT k FROM p WHERE bt = $1", {"\\x00ff"}},
      {"SELECT k, n * $1 FROM p WHERE $2 < ts", {"2", "1999-01-01"}},
      {"SELECT k FROM p WHERE v = $1", {"dos"}},
      {"SELECT k FROM p WHERE c = $1", {"ab"}},
  };
  for (const Case& c : cases) {
    const Answer on_pg = Run(*pg_, c.sql, c.values);
    const Answer on_tandem = Run(*td_, c.sql, c.values);
    ASSERT_EQ(on_pg.error, "") << c.sql;
    EXPECT_EQ(on_tandem, on_pg) << c.sql << "\n  Tandem:     " << Show(on_tandem)
                                << "\n  PostgreSQL: " << Show(on_pg);
  }
}

TEST_F(ExtendedProtocol, BinaryResultsAreTheBytesOfPostgres) {
  for (int k = 1; k <= 3; ++k) {
    const std::string sql = "SELECT * FROM p WHERE k = $1";
    const Answer on_pg = Run(*pg_, sql, {std::to_string(k)}, 1);
    const Answer on_tandem = Run(*td_, sql, {std::to_string(k)}, 1);
    ASSERT_EQ(on_pg.error, "");
    EXPECT_EQ(on_tandem, on_pg) << "k = " << k << "\n  Tandem:     " << Show(on_tandem)
                                << "\n  PostgreSQL: " << Show(on_pg);
  }
  // Expressions' types too: numeric arithmetic's scale, an interval's parts, a float4.
  const std::string expressions =
      "SELECT n * 2, n / 3, iv * 2, ts + iv, f4 * 2, d - 1, k::numeric / 7 FROM p WHERE k = $1";
  const Answer on_pg = Run(*pg_, expressions, {"1"}, 1);
  const Answer on_tandem = Run(*td_, expressions, {"1"}, 1);
  ASSERT_EQ(on_pg.error, "");
  EXPECT_EQ(on_tandem, on_pg) << "\n  Tandem:     " << Show(on_tandem)
                              << "\n  PostgreSQL: " << Show(on_pg);
}

TEST_F(ExtendedProtocol, BinaryParametersSelectWhatTheirTextSelects) {
  // int4 1 and a numeric 1.50 (ndigits 2, weight 0, sign +, dscale 2: 1, 5000), in binary.
  const std::string one("\x00\x00\x00\x01", 4);
  const std::string numeric("\x00\x02\x00\x00\x00\x00\x00\x02\x00\x01\x13\x88", 12);
  const std::string sql = "SELECT k, t FROM p WHERE k = $1 AND n = $2";
  const std::vector<Oid> types = {23, 1700};
  const std::vector<int> formats = {1, 1};
  const Answer on_pg = Run(*pg_, sql, {one, numeric}, 0, types, formats);
  const Answer on_tandem = Run(*td_, sql, {one, numeric}, 0, types, formats);
  ASSERT_EQ(on_pg.error, "");
  ASSERT_EQ(on_pg.rows.size(), 1u);
  EXPECT_EQ(on_tandem, on_pg) << "\n  Tandem:     " << Show(on_tandem)
                              << "\n  PostgreSQL: " << Show(on_pg);
  // An int4 of 3 bytes: refused as PostgreSQL refuses it.
  const Answer short_pg = Run(*pg_, sql, {one.substr(1), numeric}, 0, types, formats);
  const Answer short_tandem = Run(*td_, sql, {one.substr(1), numeric}, 0, types, formats);
  EXPECT_NE(short_pg.error, "");
  EXPECT_EQ(short_tandem.error, short_pg.error);
  ExpectServing(*td_, "after a short binary parameter");
}

TEST_F(ExtendedProtocol, RefusalsHaveThePostgresSqlstateAndTheSessionServes) {
  // A syntax error at Parse; two statements in one; an unknown table; a parameter nothing types.
  for (const std::string sql :
       {"SELEC 1", "SELECT 1; SELECT 2", "SELECT k FROM nowhere WHERE k = $1",
        "SELECT k FROM p WHERE k = $2", "SELECT k FROM p WHERE $1 IS NULL"}) {
    const Description on_pg = Describe(*pg_, "bad", sql);
    const Description on_tandem = Describe(*td_, "bad", sql);
    EXPECT_NE(on_pg.error, "") << sql;
    EXPECT_EQ(on_tandem.error, on_pg.error) << sql;
    ExpectServing(*td_, sql.c_str());
  }
  // A parameter in DDL, its type given (psycopg 3 gives int4 for a Python int): PostgreSQL's
  // utility statements take none (a view's text would keep it) — refused at Parse (Tandem) or
  // at Execute (PostgreSQL), 42P02 either way, and no view made.
  for (PgConnection* c : {pg_.get(), td_.get()}) {
    const Oid int4 = 23;
    const std::string sql = "CREATE VIEW pv AS SELECT * FROM p WHERE k = $1";
    const Answer a = Run(*c, sql, {"1"}, 0, {int4});
    EXPECT_EQ(a.error, "42P02") << Show(a);
    ExpectServing(*c, "after a parameter in DDL");
    EXPECT_FALSE(c->Execute("SELECT * FROM pv").ok());
  }
  // An unknown prepared statement.
  for (PgConnection* c : {pg_.get(), td_.get()}) {
    Result r = Wrap(PQexecPrepared(c->raw(), "never_prepared", 0, nullptr, nullptr, nullptr, 0));
    EXPECT_EQ(StateOf(r.get()), "26000");
  }
  // The name of a statement already prepared.
  for (PgConnection* c : {pg_.get(), td_.get()}) {
    Result first = Wrap(PQprepare(c->raw(), "twice", "SELECT 1", 0, nullptr));
    EXPECT_EQ(PQresultStatus(first.get()), PGRES_COMMAND_OK);
    Result second = Wrap(PQprepare(c->raw(), "twice", "SELECT 2", 0, nullptr));
    EXPECT_EQ(StateOf(second.get()), "42P05");
  }
  // Too few parameters; a parameter that is no value of its type; a value out of its type's
  // range.
  for (const auto& [sql, values] :
       std::vector<std::pair<std::string, std::vector<std::optional<std::string>>>>{
           {"SELECT k FROM p WHERE k = $1 AND t = $2", {"1"}},
           {"SELECT k FROM p WHERE k = $1", {"abc"}},
           {"SELECT k FROM p WHERE k = $1", {"99999999999"}},
           {"SELECT k FROM p WHERE ts = $1", {"not a time"}},
           {"SELECT k FROM p LIMIT 99999999999999999999 OFFSET $1", {"0"}},
       }) {
    const Answer on_pg = Run(*pg_, sql, values);
    const Answer on_tandem = Run(*td_, sql, values);
    EXPECT_NE(on_pg.error, "") << sql;
    EXPECT_EQ(on_tandem.error, on_pg.error) << sql;
    ExpectServing(*td_, sql.c_str());
  }
}

TEST_F(ExtendedProtocol, APreparedStatementRunsAgainWithNewValuesAndSeesNewWrites) {
  for (PgConnection* c : {pg_.get(), td_.get()}) {
    Result prepared =
        Wrap(PQprepare(c->raw(), "again", "SELECT t FROM p WHERE k = $1", 0, nullptr));
    ASSERT_EQ(PQresultStatus(prepared.get()), PGRES_COMMAND_OK);
  }
  auto read = [](PgConnection& c, const char* k) {
    const char* values[] = {k};
    Result r = Wrap(PQexecPrepared(c.raw(), "again", 1, values, nullptr, nullptr, 0));
    return AnswerOf(r.get());
  };
  for (const char* k : {"1", "2", "3", "4"}) EXPECT_EQ(read(*td_, k), read(*pg_, k)) << k;
  for (PgConnection* c : {pg_.get(), td_.get()}) {
    const PgAnswer a = c->Execute("INSERT INTO p (k, t) VALUES (4, 'four')");
    ASSERT_TRUE(a.ok()) << a.error->ToString();
  }
  const Answer after = read(*td_, "4");
  EXPECT_EQ(after, read(*pg_, "4"));
  EXPECT_EQ(after.rows.size(), 1u) << "the write before is read: " << Show(after);
}

}  // namespace
}  // namespace extended_protocol_test
}  // namespace tandem::testing

namespace tandem::testing {
namespace in_place_reads_test {
namespace {

std::uint64_t InPlaceReads(PgConnection& c) {
  const PgAnswer a = c.Execute("SHOW tandem_in_place_reads");
  if (!a.ok() || a.rows.size() != 1 || !a.rows[0][0]) return 0;
  return std::stoull(*a.rows[0][0]);
}

// Random keyed SELECTs over a table of every kind of key the peek path meets (an int key, a
// numeric key spelled apart, NULLs, duplicates through a second index), each read in place and
// through the replica (SET tandem_local_reads = off) by two sessions of one frontend: the same
// rows in the same order, or the same SQLSTATE. The in-place reads are counted, so the test fails
// if they silently stop being taken.
void ReadEveryKeyedSelectBothWays(const std::vector<std::string>& flags) {
  FrontendServer frontend(flags);
  ASSERT_GT(frontend.Port(), 0) << frontend.LogTail();
  PgConnection in_place(frontend.conninfo());
  PgConnection remote(frontend.conninfo());
  ASSERT_TRUE(in_place.ok() && remote.ok());
  ASSERT_TRUE(remote.Execute("SET tandem_local_reads = off").ok());
  for (const char* sql :
       {"CREATE TABLE r (k int8 PRIMARY KEY, g int4, n numeric(10,2), s text, f float8)",
        "CREATE INDEX r_by_g ON r (g)", "CREATE TABLE q (n numeric PRIMARY KEY, v int4)"}) {
    const PgAnswer a = in_place.Execute(sql);
    ASSERT_TRUE(a.ok()) << sql << ": " << a.error->ToString();
  }
  std::uint64_t seed = 20261207;
  auto next = [&](std::uint64_t bound) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (seed >> 33) % bound;
  };
  std::string values;
  for (int k = 0; k < 200; ++k) {
    values +=
        (values.empty() ? "" : ", ") + std::string("(") + std::to_string(k) + ", " +
        (next(10) == 0 ? "NULL" : std::to_string(next(20))) + ", " +
        (next(8) == 0 ? "NULL" : std::to_string(next(1000)) + "." + std::to_string(next(100))) +
        ", " + (next(6) == 0 ? "NULL" : "'s" + std::to_string(next(30)) + "'") + ", " +
        (next(7) == 0 ? "0" : std::to_string(static_cast<double>(next(100)) / 4)) + ")";
  }
  ASSERT_TRUE(in_place.Execute("INSERT INTO r VALUES " + values).ok());
  ASSERT_TRUE(
      in_place.Execute("INSERT INTO q VALUES (1.5, 1), (2.50, 2), (-0.75, 3), (10, 4)").ok());

  const std::vector<std::string> projections = {"*", "k, s", "s, k * 2, n / 3", "f, g + 1"};
  const std::uint64_t before = InPlaceReads(in_place);
  int keyed = 0;
  for (int i = 0; i < 300; ++i) {
    std::string where;
    switch (next(5)) {
      case 0:
        where = "k = " + std::to_string(next(220));
        break;
      case 1: {
        where = "k IN (";
        const int n = 1 + static_cast<int>(next(6));
        for (int j = 0; j < n; ++j) where += (j ? ", " : "") + std::to_string(next(220));
        where += ")";
        break;
      }
      case 2:
        where = "g = " + std::to_string(next(22));
        break;
      case 3:
        where = "k = " + std::to_string(next(220)) + " AND f > " + std::to_string(next(20));
        break;
      default:
        where = "g IN (" + std::to_string(next(22)) + ", " + std::to_string(next(22)) +
                ") AND n IS NOT NULL";
    }
    const std::string& projection = projections[next(projections.size())];
    std::string sql = "SELECT " + projection + " FROM r WHERE " + where;
    if (next(3) == 0) sql += " ORDER BY k DESC";
    if (next(4) == 0)
      sql += " LIMIT " + std::to_string(next(4)) + " OFFSET " + std::to_string(next(2));
    if (next(6) == 0) sql += " ORDER BY 1";  // refused after LIMIT: both sides the same error
    const PgAnswer a = in_place.Execute(sql);
    const PgAnswer b = remote.Execute(sql);
    ASSERT_EQ(a.ok(), b.ok()) << sql;
    if (!a.ok()) {
      EXPECT_EQ(a.sqlstate(), b.sqlstate()) << sql;
      continue;
    }
    ++keyed;
    std::vector<SqlRow> x = a.rows, y = b.rows;
    if (sql.find("ORDER BY") == std::string::npos) {
      std::sort(x.begin(), x.end());
      std::sort(y.begin(), y.end());
    }
    EXPECT_EQ(x, y) << sql;
  }
  // Numeric keys spelled apart (1.5 = 1.50) and data errors of the map (division by zero).
  for (const std::string& sql :
       {std::string("SELECT * FROM q WHERE n = 1.50"), std::string("SELECT * FROM q WHERE n = 2.5"),
        std::string("SELECT v FROM q WHERE n IN (1.5, 1.500, -0.750)"),
        std::string("SELECT 10 / (v - 1) FROM q WHERE n = 1.5"),
        std::string("SELECT 10 / (v - 1) FROM q WHERE n IN (1.5, 10)")}) {
    const PgAnswer a = in_place.Execute(sql);
    const PgAnswer b = remote.Execute(sql);
    ASSERT_EQ(a.ok(), b.ok()) << sql;
    if (!a.ok()) {
      EXPECT_EQ(a.sqlstate(), b.sqlstate()) << sql;
      EXPECT_EQ(a.error->message, b.error->message) << sql;
    } else {
      std::vector<SqlRow> x = a.rows, y = b.rows;
      std::sort(x.begin(), x.end());
      std::sort(y.begin(), y.end());
      EXPECT_EQ(x, y) << sql;
    }
  }
  EXPECT_GT(keyed, 200);
  EXPECT_GE(InPlaceReads(in_place) - before, static_cast<std::uint64_t>(keyed) / 2)
      << "the keyed reads were not answered in place";
  if (::testing::Test::HasFailure()) std::cout << frontend.LogTail();
}

TEST(InPlaceReads, EveryKeyedSelectAnswersWhatThePeekThroughTheReplicaAnswers) {
  ReadEveryKeyedSelectBothWays({});
}

// Keys routed to three workers' parts: each key read where the runtime's exchange put it, errors
// of several parts chosen as the peek chooses.
TEST(InPlaceReads, ThreeWorkersAnswerWhatThePeekThroughTheReplicaAnswers) {
  ReadEveryKeyedSelectBothWays({"--workers", "3"});
}

}  // namespace
}  // namespace in_place_reads_test
}  // namespace tandem::testing

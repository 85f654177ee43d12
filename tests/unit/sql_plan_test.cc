// The planner for queries (frontend/plan) against PostgreSQL: each query is planned against an
// in-memory catalog, its plan evaluated by the independent reference evaluator
// (tests/reference) over small tables with NULLs and duplicates, its Finishing applied — and the
// rows compared with the rows a real PostgreSQL 15 server gives for the same query over the same
// tables (started by the suite; the comparisons skip where PostgreSQL is not installed). Where a
// query is a peek (AsPeek), the peek's answer over the index is compared too. Refusals are
// checked by SQLSTATE and message (and against PostgreSQL's where it refuses the same query).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "base/datum_text.h"
#include "frontend/plan/planner.h"
#include "frontend/sql/parse.h"
#include "memory_catalog.h"
#include "postgres_server.h"
#include "reference/reference.h"
#include "sql_rows.h"

namespace tandem::frontend::plan {
namespace {

namespace pb = ::tandem::protocol;
using ::tandem::testing::MemoryCatalog;
using ::tandem::testing::PgAnswer;
using ::tandem::testing::PostgresServer;
using ::tandem::testing::RowComparison;
using ::tandem::testing::RowOrder;
using ::tandem::testing::SqlRow;
using ::tandem::testing::SqlValue;

struct TableData {
  std::string name;
  std::vector<CatalogColumn> columns;
  std::vector<std::uint32_t> primary_key;
  std::vector<Row> rows;
  std::string create;  // PostgreSQL's CREATE TABLE
};

Datum N() { return Null{}; }
Datum I(std::int64_t v) { return v; }
Datum F(double v) { return v; }
Datum S(const char* v) { return std::string(v); }
Datum B(bool v) { return v; }

std::vector<TableData> Tables() {
  const auto int8 = pb::INT64, text = pb::STRING, float8 = pb::FLOAT64, boolean = pb::BOOL;
  return {
      {"t",
       {{"a", int8, true},
        {"b", int8, true},
        {"s", text, true},
        {"f", float8, true},
        {"p", boolean, true}},
       {},
       {{I(1), I(10), S("x"), F(1.5), B(true)},
        {I(1), I(10), S("x"), F(1.5), B(true)},
        {I(2), I(20), S("y"), F(2.5), B(false)},
        {I(3), N(), S("z"), N(), N()},
        {N(), I(30), N(), F(0.25), B(true)},
        {I(4), I(40), S("x"), F(-1.0), B(false)},
        {I(5), I(0), S("w"), F(3.0), N()}},
       "CREATE TABLE t (a int8, b int8, s text, f float8, p bool)"},
      {"u",
       {{"a", int8, true}, {"c", int8, true}, {"s", text, true}},
       {},
       {{I(1), I(100), S("x")},
        {I(1), I(101), S("q")},
        {I(2), I(200), S("y")},
        {N(), I(300), S("n")},
        {I(6), I(600), N()},
        {I(6), I(600), N()}},
       "CREATE TABLE u (a int8, c int8, s text)"},
      {"k",
       {{"id", int8, false}, {"v", text, true}},
       {0},
       {{I(1), S("one")}, {I(2), S("two")}, {I(3), N()}, {I(5), S("five")}},
       "CREATE TABLE k (id int8 PRIMARY KEY, v text)"},
      {"e", {{"a", int8, true}, {"s", text, true}}, {}, {}, "CREATE TABLE e (a int8, s text)"},
      {"n", {{"a", int8, true}}, {}, {{I(1)}, {N()}}, "CREATE TABLE n (a int8)"},
  };
}

std::string SqlLiteral(const Datum& d) {
  if (std::holds_alternative<Null>(d)) return "NULL";
  if (const auto* b = std::get_if<bool>(&d)) return *b ? "true" : "false";
  if (const auto* i = std::get_if<std::int64_t>(&d)) return std::to_string(*i);
  if (const auto* f = std::get_if<double>(&d)) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "'%.17g'::float8", *f);
    return buffer;
  }
  std::string out = "'";
  for (char c : std::get<std::string>(d)) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// A datum as PostgreSQL's text output gives it (floats: any text that parses to the same
// number, which is how sql_rows.h compares them).
SqlValue Text(const Datum& d) {
  if (std::holds_alternative<Null>(d)) return std::nullopt;
  if (const auto* b = std::get_if<bool>(&d)) return std::string(*b ? "t" : "f");
  if (const auto* i = std::get_if<std::int64_t>(&d)) return std::to_string(*i);
  if (const auto* f = std::get_if<double>(&d)) {
    if (std::isnan(*f)) return std::string("NaN");
    if (std::isinf(*f)) return std::string(*f > 0 ? "Infinity" : "-Infinity");
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.17g", *f);
    return std::string(buffer);
  }
  return PostgresOutput(d);  // a string as it is; a numeric, a date, ... in PostgreSQL's text
}

unsigned TypeOid(pb::ScalarType type) {
  switch (type) {
    case pb::BOOL:
      return ::tandem::testing::pg_type::kBool;
    case pb::INT16:
      return ::tandem::testing::pg_type::kInt2;
    case pb::INT32:
      return ::tandem::testing::pg_type::kInt4;
    case pb::INT64:
      return ::tandem::testing::pg_type::kInt8;
    case pb::FLOAT32:
      return ::tandem::testing::pg_type::kFloat4;
    case pb::FLOAT64:
      return ::tandem::testing::pg_type::kFloat8;
    case pb::NUMERIC:
      return ::tandem::testing::pg_type::kNumeric;
    default:
      return ::tandem::testing::pg_type::kText;
  }
}

// How an answer is compared with PostgreSQL's.
struct Options {
  bool types = true;  // PostgreSQL types an integer constant int4; Tandem has int8 only
  bool ordered = false;
  std::vector<std::size_t> order_columns;
  Options() {}
};

class SqlPlanTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tables_ = new std::vector<TableData>(Tables());
    catalog_ = new MemoryCatalog();
    for (const auto& t : *tables_) catalog_->AddTable(t.name, t.columns, t.primary_key);
    catalog_->AddTable(kOneRowObject, {{"one", pb::INT64, false}}, {}, ObjectKind::kSource);
    catalog_->AddIndex("u_c_idx", "u", {1});
    catalog_->AddView("v_big", "SELECT a, b FROM t WHERE b > 15",
                      {{"a", pb::INT64, true}, {"b", pb::INT64, true}});
    catalog_->AddView("v_nested", "SELECT a AS x FROM v_big WHERE a < 4", {{"x", pb::INT64, true}});
    catalog_->AddView("v_agg", "SELECT s, count(*) AS n FROM t GROUP BY s",
                      {{"s", pb::STRING, true}, {"n", pb::INT64, false}});
    if (!PostgresServer::Unavailable().has_value()) {
      server_ = new PostgresServer();
      if (!server_->ok()) {
        ADD_FAILURE() << "PostgreSQL did not start: " << server_->error();
        return;
      }
      std::string script;
      for (const auto& t : *tables_) {
        script += t.create + ";\n";
        for (const auto& row : t.rows) {
          script += "INSERT INTO " + t.name + " VALUES (";
          for (std::size_t i = 0; i < row.size(); ++i) {
            script += (i > 0 ? ", " : "") + SqlLiteral(row[i]);
          }
          script += ");\n";
        }
      }
      script += "CREATE VIEW v_big AS SELECT a, b FROM t WHERE b > 15;\n";
      script += "CREATE VIEW v_nested AS SELECT a AS x FROM v_big WHERE a < 4;\n";
      script += "CREATE VIEW v_agg AS SELECT s, count(*) AS n FROM t GROUP BY s;\n";
      const PgAnswer answer = server_->Execute(script);
      if (!answer.ok()) ADD_FAILURE() << answer.error->ToString();
    }
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    delete catalog_;
    delete tables_;
  }

  static const std::vector<Row>& RowsOf(const std::string& object) {
    static const std::vector<Row> one = {{I(1)}};
    if (object == kOneRowObject) return one;
    for (const auto& t : *tables_) {
      if (t.name == object) return t.rows;
    }
    static const std::vector<Row> none;
    return none;
  }

  static SqlResult<PlannedRelation> Plan(const std::string& sql) {
    auto parsed = sql::Parse(sql);
    if (!parsed.ok()) return parsed.error();
    EXPECT_EQ(parsed->size(), 1u);
    const auto& stmt = std::get<sql::PostgresStatement>(parsed->at(0).form).stmt;
    return PlanQuery(stmt, *catalog_, sql);
  }

  // The reference evaluator over the planned relation's imports.
  static std::unique_ptr<reference::Evaluator> Evaluate(const PlannedRelation& planned) {
    pb::DataflowDescription desc;
    desc.set_debug_name("query");
    for (const auto& import : planned.imports) *desc.add_index_imports() = import;
    auto* build = desc.add_objects_to_build();
    build->set_id("t_result");
    *build->mutable_plan() = planned.plan;
    desc.mutable_as_of()->add_elements(0);
    desc.mutable_until()->add_elements(1);
    desc.set_class_(pb::ONE_SHOT_READ);
    auto evaluator = std::make_unique<reference::Evaluator>(desc);
    for (std::size_t i = 0; i < planned.imports.size(); ++i) {
      std::vector<reference::Update> updates;
      for (const auto& row : RowsOf(planned.import_objects[i])) {
        updates.push_back(reference::Update{row, 0, 1});
      }
      evaluator->AddUpdates(planned.imports[i].on(), updates);
    }
    return evaluator;
  }

  static PgAnswer ToAnswer(const PlannedRelation& planned, const reference::PeekAnswer& peek) {
    PgAnswer answer;
    for (std::size_t i = 0; i < planned.columns.size(); ++i) {
      answer.column_names.push_back(planned.columns[i].name);
      answer.column_types.push_back(TypeOid(planned.columns[i].type));
    }
    if (!peek.ok) {
      answer.error = ::tandem::testing::PgError{"22000", peek.error, "", ""};
      return answer;
    }
    for (const auto& [row, count] : peek.rows) {
      SqlRow text;
      for (const auto& d : row) text.push_back(Text(d));
      for (std::uint64_t i = 0; i < count; ++i) answer.rows.push_back(text);
    }
    return answer;
  }

  // Tandem's answer: the plan through the reference, then the Finishing.
  static PgAnswer Answer(const PlannedRelation& planned) {
    auto evaluator = Evaluate(planned);
    auto contents = evaluator->At("t_result", 0);
    EXPECT_TRUE(contents.ok()) << contents.status().ToString();
    if (!contents.ok()) return {};
    return ToAnswer(planned, reference::AnswerPeek(*contents, {}, {}, pb::MapFilterProject(),
                                                   planned.finishing));
  }

  // The peek's answer, when the relation is one.
  static std::optional<PgAnswer> PeekAnswer(const PlannedRelation& planned) {
    auto peek = AsPeek(planned, *catalog_);
    if (!peek.has_value()) return std::nullopt;
    auto evaluator = Evaluate(planned);
    const CatalogObject* object = catalog_->FindObject(peek->object);
    EXPECT_NE(object, nullptr);
    const CatalogIndex* index = nullptr;
    for (const auto* i : catalog_->IndexesOn(peek->object)) {
      if (i->id == peek->index_id) index = i;
    }
    EXPECT_NE(index, nullptr);
    auto contents = evaluator->At(object->id, 0);
    EXPECT_TRUE(contents.ok());
    std::vector<Row> keys;
    for (const auto& k : peek->keys) keys.push_back(reference::FromProto(k));
    const std::vector<std::uint32_t>& key = index->key;
    return ToAnswer(planned,
                    reference::AnswerPeek(*contents, key, keys, peek->mfp, peek->finishing));
  }

  // Plans and answers `sql` as Tandem would and compares with PostgreSQL's answer.
  void ExpectSameAsPostgres(const std::string& sql, const Options& options = Options()) {
    SCOPED_TRACE(sql);
    auto planned = Plan(sql);
    ASSERT_TRUE(planned.ok()) << planned.error().ToString();
    if (server_ == nullptr || !server_->ok()) GTEST_SKIP() << "no PostgreSQL server";
    const PgAnswer expected = server_->Execute(sql);
    ASSERT_TRUE(expected.ok()) << expected.error->ToString();
    RowComparison how;
    how.column_types = options.types;
    how.float_ulps = 4;
    if (options.ordered) {
      how.order = RowOrder::kOrdered;
      how.order_columns = options.order_columns;
    }
    EXPECT_TRUE(::tandem::testing::SameResult(expected, Answer(*planned), how))
        << Explain(*planned);
    if (auto peek = PeekAnswer(*planned)) {
      EXPECT_TRUE(::tandem::testing::SameResult(expected, *peek, how)) << "as a peek";
    }
  }

  // The refusal of `sql`: its SQLSTATE and message; `postgres_too`: PostgreSQL refuses it the
  // same way (else PostgreSQL answers it and Tandem does not support it yet).
  void ExpectRefused(const std::string& sql, const std::string& sqlstate,
                     const std::string& message, bool postgres_too, int position = -1) {
    SCOPED_TRACE(sql);
    auto planned = Plan(sql);
    ASSERT_FALSE(planned.ok()) << Explain(*planned);
    EXPECT_EQ(planned.error().sqlstate, sqlstate) << planned.error().ToString();
    EXPECT_EQ(planned.error().message, message);
    if (position >= 0) {
      EXPECT_EQ(planned.error().position, position);
    }
    if (server_ == nullptr || !server_->ok()) return;
    const PgAnswer pg = server_->Execute(sql);
    if (postgres_too) {
      ASSERT_FALSE(pg.ok());
      EXPECT_EQ(pg.error->sqlstate, sqlstate);
      EXPECT_EQ(pg.error->message, message);
    } else {
      EXPECT_TRUE(pg.ok()) << pg.error->ToString();
    }
  }

  static std::vector<TableData>* tables_;
  static MemoryCatalog* catalog_;
  static PostgresServer* server_;
};

std::vector<TableData>* SqlPlanTest::tables_ = nullptr;
MemoryCatalog* SqlPlanTest::catalog_ = nullptr;
PostgresServer* SqlPlanTest::server_ = nullptr;

Options Untyped() {
  Options o;
  o.types = false;
  return o;
}
Options OrderedBy(std::vector<std::size_t> columns, bool types = true) {
  Options o;
  o.ordered = true;
  o.order_columns = std::move(columns);
  o.types = types;
  return o;
}

TEST_F(SqlPlanTest, SelectListsStarsAndArithmeticMatchPostgres) {
  ExpectSameAsPostgres("SELECT * FROM t");
  ExpectSameAsPostgres("SELECT t.* FROM t");
  ExpectSameAsPostgres("SELECT x.b, x.* FROM t AS x");
  ExpectSameAsPostgres("SELECT a, b + 1 AS c, -a, a * b, b - a, a AS \"A\" FROM t");
  ExpectSameAsPostgres("SELECT b / 7, b % 7, (b - 25) / 7, (b - 25) % 7, -b / 3 FROM t");
  ExpectSameAsPostgres("SELECT f * 2, f + '0.5'::float8, -f, f / 4, f - f FROM t");
  ExpectSameAsPostgres("SELECT a = b, a < b, s >= 'x', s <> 'x', p = true, f > 1 FROM t");
  ExpectSameAsPostgres("SELECT 'abc', NULL::text, true, '1.5'::float8, 42::int8, 'x'::text");
  ExpectSameAsPostgres("SELECT 1, 1 + 2 AS three, 7 / 2, -7 % 3", Untyped());
  ExpectSameAsPostgres("SELECT a FROM t AS x(a)");
}

TEST_F(SqlPlanTest, WherePredicatesKeepSqlThreeValuedLogic) {
  ExpectSameAsPostgres("SELECT a FROM t WHERE b > 15");
  ExpectSameAsPostgres("SELECT a, b FROM t WHERE a IS NULL OR b IS NULL");
  ExpectSameAsPostgres("SELECT * FROM t WHERE a IS NOT NULL AND p");
  ExpectSameAsPostgres("SELECT * FROM t WHERE s = 'x'");
  ExpectSameAsPostgres("SELECT * FROM t WHERE a IN (1, 3, NULL)");
  ExpectSameAsPostgres("SELECT * FROM t WHERE a NOT IN (1, 2)");
  ExpectSameAsPostgres("SELECT * FROM t WHERE a NOT IN (1, NULL)");
  ExpectSameAsPostgres("SELECT * FROM t WHERE b BETWEEN 10 AND 30");
  ExpectSameAsPostgres("SELECT * FROM t WHERE b NOT BETWEEN 10 AND 30");
  ExpectSameAsPostgres("SELECT * FROM t WHERE NOT (a = 1)");
  ExpectSameAsPostgres(
      "SELECT a, p IS TRUE, p IS NOT TRUE, p IS FALSE, p IS NOT FALSE, "
      "p IS UNKNOWN, p IS NOT UNKNOWN FROM t");
  ExpectSameAsPostgres("SELECT * FROM t WHERE f = '1.5' OR f < 0");
  ExpectSameAsPostgres("SELECT a, a IS DISTINCT FROM 1, a IS NOT DISTINCT FROM 1 FROM t");
  ExpectSameAsPostgres("SELECT * FROM t WHERE b = '20'");
  ExpectSameAsPostgres("SELECT * FROM t WHERE p = 't'");
  ExpectSameAsPostgres("SELECT * FROM t WHERE b <> 0 AND 100 / b > 4");
}

TEST_F(SqlPlanTest, CaseCoalesceAndNullifMatchPostgres) {
  ExpectSameAsPostgres(
      "SELECT CASE WHEN a > 2 THEN 'big' WHEN a IS NULL THEN 'none' ELSE 'small' END, "
      "CASE a WHEN 1 THEN b ELSE 0 END, CASE WHEN p THEN f END, COALESCE(b, a, 0), "
      "COALESCE(s, 'none'), NULLIF(a, 1), NULLIF(s, 'x') FROM t");
}

TEST_F(SqlPlanTest, GreatestLeastAbsAndModMatchPostgres) {
  ExpectSameAsPostgres(
      "SELECT GREATEST(a, b), LEAST(a, b, 3), GREATEST(s, 'x'), LEAST(f, 1), "
      "GREATEST(NULL, a) FROM t");
  ExpectSameAsPostgres("SELECT abs(a - 3), abs(f), abs(-f), mod(b, 7), mod(b - 25, 7) FROM t");
}

TEST_F(SqlPlanTest, JoinsOfEveryKindMatchPostgres) {
  ExpectSameAsPostgres("SELECT t.a, t.b, u.c FROM t JOIN u ON t.a = u.a");
  ExpectSameAsPostgres("SELECT * FROM t, u WHERE t.a = u.a AND t.s = u.s");
  ExpectSameAsPostgres("SELECT t.a, u.c FROM t LEFT JOIN u ON t.a = u.a");
  ExpectSameAsPostgres("SELECT t.a, u.a, u.c FROM t RIGHT JOIN u ON t.a = u.a");
  ExpectSameAsPostgres("SELECT t.a, t.s, u.a, u.c FROM t FULL JOIN u ON t.a = u.a");
  ExpectSameAsPostgres("SELECT t.a, u.c FROM t FULL OUTER JOIN u ON u.a = t.a AND u.s = t.s");
  ExpectSameAsPostgres("SELECT t.a, u.c FROM t CROSS JOIN u");
  ExpectSameAsPostgres("SELECT * FROM t JOIN u USING (a)");
  ExpectSameAsPostgres("SELECT * FROM t LEFT JOIN u USING (a, s)");
  ExpectSameAsPostgres("SELECT * FROM t FULL JOIN u USING (a)");
  ExpectSameAsPostgres("SELECT a, t.a, u.a FROM t RIGHT JOIN u USING (a)");
  ExpectSameAsPostgres("SELECT * FROM t NATURAL JOIN u");
  ExpectSameAsPostgres("SELECT t.a, u.c FROM t LEFT JOIN u ON t.a = u.a AND u.c > 100");
  ExpectSameAsPostgres("SELECT t.a, u.c FROM t LEFT JOIN u ON false");
  ExpectSameAsPostgres("SELECT t.a, u.c FROM t JOIN u ON t.b < u.c AND t.a + 1 = u.a");
  ExpectSameAsPostgres("SELECT t.a, u.c FROM t JOIN u ON t.b * 10 = u.c - 0");
  ExpectSameAsPostgres(
      "SELECT x.a, y.a, z.id FROM t x JOIN u y ON x.a = y.a LEFT JOIN k z ON z.id = y.a");
  // ON conditions an equi-join cannot take: the pairs, then the unmatched rows (null-safe).
  ExpectSameAsPostgres("SELECT t.a, t.b, u.c FROM t LEFT JOIN u ON t.a = u.a AND t.b > 5");
  ExpectSameAsPostgres("SELECT t.a, t.s, u.c FROM t LEFT JOIN u ON t.a < u.a AND t.s <> u.s");
  ExpectSameAsPostgres("SELECT t.a, u.c FROM t RIGHT JOIN u ON t.a = u.a AND u.c > 150");
  ExpectSameAsPostgres("SELECT t.a, t.p, u.a, u.c FROM t RIGHT JOIN u ON t.b * 10 < u.c");
  ExpectSameAsPostgres("SELECT t.a, t.s, u.a, u.c FROM t FULL JOIN u ON t.a = u.a AND u.c > 100");
  ExpectSameAsPostgres("SELECT t.*, u.* FROM t FULL JOIN u ON t.a < u.a AND t.s = u.s");
  ExpectSameAsPostgres(
      "SELECT * FROM t LEFT JOIN u USING (a) LEFT JOIN k ON k.id = u.c / 100 "
      "AND t.b IS NOT NULL");
}

TEST_F(SqlPlanTest, AggregatesMatchPostgresAlsoOverNoRows) {
  // sum(bigint) is numeric, as in PostgreSQL (the input cast to NUMERIC before the SUM).
  ExpectSameAsPostgres(
      "SELECT count(*), count(a), count(DISTINCT a), sum(b), min(s), max(f), sum(f), avg(f), "
      "bool_or(p), bool_and(p), min(a), max(s) FROM t");
  ExpectSameAsPostgres("SELECT count(*), count(a), sum(a), max(s), bool_or(a > 0) FROM e");
  ExpectSameAsPostgres("SELECT sum(b)::int8 / 3, -sum(b) % 7, sum(b) * 2 - 1 FROM t GROUP BY p");
  ExpectSameAsPostgres(
      "SELECT x + 1 FROM (SELECT sum(b) AS x FROM t GROUP BY s) AS q "
      "UNION ALL SELECT 7::int8");
  ExpectSameAsPostgres("SELECT count(*) FROM t WHERE false");
  ExpectSameAsPostgres("SELECT count(*) + 1, sum(a) * 2 FROM e", Untyped());
  ExpectSameAsPostgres("SELECT count(*) FROM t HAVING count(*) > 100");
  ExpectSameAsPostgres("SELECT s, count(*), sum(b) FROM t GROUP BY s");
  ExpectSameAsPostgres("SELECT s, count(*) AS n FROM t GROUP BY s HAVING count(*) > 1");
  ExpectSameAsPostgres("SELECT a + 1, count(*) FROM t GROUP BY a + 1");
  ExpectSameAsPostgres("SELECT s, p, min(b) FROM t GROUP BY 1, 2");
  ExpectSameAsPostgres("SELECT s AS name, count(*) FROM t GROUP BY name");
  ExpectSameAsPostgres("SELECT sum(b) + 1, p FROM t GROUP BY p");
  ExpectSameAsPostgres("SELECT p, count(*) FROM t GROUP BY p HAVING bool_or(a > 3) OR p");
  ExpectSameAsPostgres("SELECT s, count(*) FROM t GROUP BY s ORDER BY 2 DESC, 1",
                       OrderedBy({1, 0}));
  ExpectSameAsPostgres("SELECT a FROM t GROUP BY a ORDER BY count(*) DESC, a", OrderedBy({}));
  ExpectSameAsPostgres("SELECT * FROM v_agg");
}

TEST_F(SqlPlanTest, DistinctAndSetOperationsKeepBagSemantics) {
  ExpectSameAsPostgres("SELECT DISTINCT s FROM t");
  ExpectSameAsPostgres("SELECT DISTINCT a, s FROM t ORDER BY a", OrderedBy({0}));
  for (const char* op :
       {"UNION", "UNION ALL", "EXCEPT", "EXCEPT ALL", "INTERSECT", "INTERSECT ALL"}) {
    ExpectSameAsPostgres(std::string("SELECT a FROM t ") + op + " SELECT a FROM u");
    ExpectSameAsPostgres(std::string("SELECT a, s FROM u ") + op + " SELECT a, s FROM t");
  }
  ExpectSameAsPostgres("SELECT a FROM t UNION ALL SELECT a FROM u UNION SELECT id FROM k");
  ExpectSameAsPostgres("SELECT a AS x FROM t UNION SELECT c FROM u ORDER BY x DESC LIMIT 4",
                       OrderedBy({0}));
  ExpectSameAsPostgres("SELECT a FROM u INTERSECT ALL (SELECT a FROM t UNION ALL SELECT a FROM t)");
  ExpectSameAsPostgres("SELECT a, NULL FROM t UNION SELECT NULL, s FROM u");
  ExpectSameAsPostgres("SELECT NULL AS x EXCEPT ALL SELECT b FROM t", Untyped());
}

TEST_F(SqlPlanTest, OrderLimitAndOffsetAreTheFinishingOrATopK) {
  ExpectSameAsPostgres("SELECT a, s FROM t ORDER BY a DESC NULLS LAST, s LIMIT 3 OFFSET 1",
                       OrderedBy({0, 1}));
  ExpectSameAsPostgres("SELECT a, s FROM t ORDER BY a NULLS FIRST", OrderedBy({0}));
  ExpectSameAsPostgres("SELECT a FROM t ORDER BY b, a", OrderedBy({}));
  ExpectSameAsPostgres("SELECT a, b FROM t ORDER BY a + b DESC, a", OrderedBy({}));
  ExpectSameAsPostgres("SELECT * FROM t LIMIT 0");
  ExpectSameAsPostgres("SELECT * FROM t ORDER BY b LIMIT ALL", OrderedBy({1}));
  ExpectSameAsPostgres("SELECT * FROM (SELECT a, b FROM t ORDER BY b DESC LIMIT 2) AS x");
  ExpectSameAsPostgres("SELECT * FROM (SELECT a FROM t ORDER BY a OFFSET 5) AS x");
  ExpectSameAsPostgres("SELECT * FROM (SELECT a FROM t LIMIT 0) AS x");
  ExpectSameAsPostgres(
      "SELECT s FROM (SELECT s, b FROM t ORDER BY b DESC NULLS LAST LIMIT 3) x "
      "ORDER BY s",
      OrderedBy({0}));
}

TEST_F(SqlPlanTest, SubqueriesCtesAndViewsAreBoundInPlace) {
  ExpectSameAsPostgres("SELECT x.a + 1 FROM (SELECT a FROM t WHERE p) AS x");
  ExpectSameAsPostgres(
      "SELECT * FROM (SELECT s, count(*) FROM t GROUP BY s) AS g(name, n) "
      "WHERE n > 1");
  ExpectSameAsPostgres(
      "WITH big AS (SELECT * FROM t WHERE b > 15) SELECT a FROM big UNION ALL SELECT b FROM big");
  ExpectSameAsPostgres(
      "WITH x(v) AS (SELECT a FROM t), y AS (SELECT v FROM x WHERE v > 1) "
      "SELECT * FROM y JOIN x USING (v)");
  ExpectSameAsPostgres("SELECT * FROM v_big");
  ExpectSameAsPostgres("SELECT x, v_big.b FROM v_nested JOIN v_big ON v_nested.x = v_big.a");
  ExpectSameAsPostgres("SELECT n FROM v_agg WHERE s = 'x'");
}

TEST_F(SqlPlanTest, InAndExistsSubqueriesAreDecorrelatedIntoJoins) {
  ExpectSameAsPostgres("SELECT * FROM t WHERE a IN (SELECT a FROM u)");
  ExpectSameAsPostgres("SELECT * FROM t WHERE a NOT IN (SELECT a FROM u)");
  ExpectSameAsPostgres("SELECT * FROM t WHERE a NOT IN (SELECT a FROM u WHERE a IS NOT NULL)");
  ExpectSameAsPostgres("SELECT * FROM t WHERE a NOT IN (SELECT a FROM e)");
  ExpectSameAsPostgres("SELECT * FROM u WHERE a NOT IN (SELECT a FROM n)");
  ExpectSameAsPostgres(
      "SELECT * FROM u WHERE a IN (SELECT * FROM n) OR a NOT IN (SELECT n.* FROM n)");
  ExpectSameAsPostgres("SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.a = t.a)");
  ExpectSameAsPostgres("SELECT * FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.a = t.a)");
  ExpectSameAsPostgres("SELECT * FROM t WHERE EXISTS (SELECT 1 FROM e)");
  ExpectSameAsPostgres("SELECT * FROM t WHERE NOT EXISTS (SELECT * FROM e)");
  ExpectSameAsPostgres("SELECT * FROM t WHERE EXISTS (SELECT * FROM u WHERE c > 500)");
  ExpectSameAsPostgres("SELECT * FROM t WHERE a IN (SELECT u.a FROM u WHERE u.s = t.s)");
  ExpectSameAsPostgres("SELECT * FROM t WHERE a NOT IN (SELECT u.a FROM u WHERE u.s = t.s)");
  ExpectSameAsPostgres(
      "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE t.a = u.a AND u.c > 100)");
  ExpectSameAsPostgres("SELECT * FROM t WHERE b IN (SELECT c / 10 FROM u UNION SELECT 40)");
  ExpectSameAsPostgres("SELECT * FROM t WHERE a IN (SELECT count(*) FROM u GROUP BY a)");
  ExpectSameAsPostgres("SELECT * FROM u WHERE s IN (SELECT s FROM t) AND c > 100");
  // Subqueries inside subqueries: planned over the subquery's FROM.
  ExpectSameAsPostgres(
      "SELECT * FROM t WHERE a IN (SELECT a FROM u WHERE c IN (SELECT c FROM u WHERE s = 'x'))");
  ExpectSameAsPostgres(
      "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.a = t.a AND NOT "
      "EXISTS (SELECT 1 FROM k WHERE k.id = u.c / 100))");
  ExpectSameAsPostgres(
      "SELECT * FROM t WHERE a IN (SELECT a FROM u WHERE c > 150 OR a IN (SELECT id FROM k))");
  ExpectSameAsPostgres(
      "SELECT a, (SELECT count(*) FROM u WHERE u.a = t.a AND u.s IN "
      "(SELECT s FROM t)) FROM t");
  ExpectSameAsPostgres(
      "SELECT t.a, u.c FROM t JOIN u ON t.a = u.a AND u.c IN (SELECT c FROM u "
      "WHERE s = 'x') OR t.b IN (SELECT id * 10 FROM k)");
  // Anywhere else in a condition or a select list: a mark join, SQL's three values.
  ExpectSameAsPostgres("SELECT * FROM t WHERE a IN (SELECT a FROM u) OR b > 30");
  ExpectSameAsPostgres("SELECT * FROM t WHERE NOT (a IN (SELECT a FROM u) OR b > 30)");
  ExpectSameAsPostgres(
      "SELECT a, a IN (SELECT a FROM u), a NOT IN (SELECT a FROM n), "
      "EXISTS (SELECT 1 FROM u WHERE u.a = t.a), a IN (SELECT a FROM e) FROM t");
  ExpectSameAsPostgres(
      "SELECT a, b, a IN (SELECT u.a FROM u WHERE u.s = t.s), "
      "b NOT IN (SELECT c / 10 FROM u WHERE u.a = t.a) FROM t");
  ExpectSameAsPostgres(
      "SELECT CASE WHEN EXISTS (SELECT 1 FROM k WHERE k.id = t.b) THEN 'k' "
      "ELSE s END FROM t WHERE (a IN (SELECT id FROM k)) IS NOT TRUE");
}

TEST_F(SqlPlanTest, ScalarSubqueriesOfAtMostOneRowAreJoinedIn) {
  ExpectSameAsPostgres("SELECT a, b FROM t WHERE b > (SELECT min(c) / 10 FROM u)");
  ExpectSameAsPostgres("SELECT a, (SELECT max(c) FROM u), (SELECT count(*) FROM e) FROM t",
                       Untyped());
  ExpectSameAsPostgres("SELECT a, (SELECT count(*) FROM u WHERE u.a = t.a) FROM t");
  ExpectSameAsPostgres(
      "SELECT a, (SELECT sum(c) + count(*) FROM u WHERE u.a = t.a AND "
      "u.c > 100) AS total FROM t",
      Untyped());
  ExpectSameAsPostgres(
      "SELECT * FROM t WHERE b < (SELECT max(c) FROM u WHERE u.s = t.s) / 10 "
      "OR (SELECT count(*) FROM u WHERE u.a = t.a) = 0");
  ExpectSameAsPostgres(
      "SELECT a, (SELECT c FROM u WHERE c > 150 ORDER BY c LIMIT 1), "
      "(SELECT v FROM k WHERE id = 9 LIMIT 1) FROM t");
  ExpectSameAsPostgres("SELECT (SELECT bool_or(p) FROM t WHERE t.a = k.id), id FROM k");
  ExpectSameAsPostgres("SELECT (SELECT 1) AS one, (SELECT 'x' WHERE false) AS none FROM k",
                       Untyped());
}

TEST_F(SqlPlanTest, ValuesAndSelectWithoutFromReadTheOneRowCollection) {
  ExpectSameAsPostgres("VALUES (1, 'a'), (2, NULL), (2, NULL)", Untyped());
  ExpectSameAsPostgres("SELECT * FROM (VALUES (1), (2), (NULL)) AS v(x) WHERE x > 1", Untyped());
  ExpectSameAsPostgres("SELECT 1 AS one, 'two' AS two", Untyped());
  ExpectSameAsPostgres("SELECT a FROM t UNION ALL VALUES (9::int8)");
}

TEST_F(SqlPlanTest, SelectsOneIndexAnswersArePeeksWithKeys) {
  auto by_key = Plan("SELECT v FROM k WHERE id = 2");
  ASSERT_TRUE(by_key.ok()) << by_key.error().ToString();
  auto peek = AsPeek(*by_key);
  ASSERT_TRUE(peek.has_value());
  EXPECT_EQ(peek->object, "k");
  ASSERT_EQ(peek->keys.size(), 1u);
  EXPECT_EQ(peek->keys[0].datums(0).int64(), 2);
  EXPECT_EQ(Explain(*by_key), "Peek of index " + peek->index_id + " on k (1 key lookups)\n");
  ExpectSameAsPostgres("SELECT v FROM k WHERE id = 2");

  auto in_list = Plan("SELECT * FROM k WHERE id IN (1, 5, 7) AND v IS NOT NULL");
  ASSERT_TRUE(in_list.ok());
  ASSERT_TRUE(AsPeek(*in_list).has_value());
  EXPECT_EQ(AsPeek(*in_list)->keys.size(), 3u);
  ExpectSameAsPostgres("SELECT * FROM k WHERE id IN (1, 5, 7) AND v IS NOT NULL");

  auto whole = Plan("SELECT id + 1, v FROM k WHERE v <> 'two' ORDER BY v DESC LIMIT 2");
  ASSERT_TRUE(whole.ok());
  ASSERT_TRUE(AsPeek(*whole).has_value());
  EXPECT_TRUE(AsPeek(*whole)->keys.empty());
  ExpectSameAsPostgres("SELECT id + 1, v FROM k WHERE v <> 'two' ORDER BY v DESC LIMIT 2",
                       OrderedBy({1}));
  // A map guarded by the filter it follows: 100 / id is never computed for id = 0 rows.
  ExpectSameAsPostgres("SELECT 100 / (id - 1) FROM k WHERE id <> 1");

  // A secondary index whose key the predicates fix: a keyed peek of it, not of the default one.
  auto by_c = Plan("SELECT a, s FROM u WHERE c = 600 OR c = 100");
  ASSERT_TRUE(by_c.ok());
  ASSERT_TRUE(AsPeek(*by_c).has_value());
  EXPECT_TRUE(AsPeek(*by_c)->keys.empty());
  auto secondary = AsPeek(*by_c, *catalog_);
  ASSERT_TRUE(secondary.has_value());
  EXPECT_EQ(secondary->index_id, catalog_->FindIndex("u_c_idx")->id);
  EXPECT_EQ(secondary->keys.size(), 2u);
  ExpectSameAsPostgres("SELECT a, s FROM u WHERE c = 600 OR c = 100");

  auto join = Plan("SELECT * FROM t JOIN k ON t.a = k.id");
  ASSERT_TRUE(join.ok());
  EXPECT_FALSE(AsPeek(*join).has_value());
  EXPECT_EQ(join->imports.size(), 2u);
  EXPECT_EQ(Explain(*join).rfind("One-shot dataflow\n  reads index ", 0), 0u) << Explain(*join);
}

TEST_F(SqlPlanTest, PlansTypeCheckAndNameColumnsAsPostgres) {
  auto planned = Plan(
      "SELECT count(*), sum(b), a, a + 1, s AS label, CASE WHEN p THEN 1 END, "
      "COALESCE(b, 0), '1.5'::float8 FROM t GROUP BY a, s, p, b");
  ASSERT_TRUE(planned.ok()) << planned.error().ToString();
  std::vector<std::string> names;
  for (const auto& c : planned->columns) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"count", "sum", "a", "?column?", "label", "case",
                                             "coalesce", "float8"}));
  EXPECT_FALSE(planned->columns[0].nullable);
  EXPECT_TRUE(planned->columns[1].nullable);
  ASSERT_EQ(planned->imports.size(), 1u);
  EXPECT_EQ(planned->imports[0].on(), catalog_->FindObject("t")->id);
  EXPECT_EQ(planned->imports[0].id(), catalog_->IndexesOn("t")[0]->id);
}

TEST_F(SqlPlanTest, ErrorsArePostgresSqlstatesAndMessages) {
  ExpectRefused("SELECT * FROM nope", "42P01", "relation \"nope\" does not exist", true, 15);
  ExpectRefused("SELECT zz FROM t", "42703", "column \"zz\" does not exist", true, 8);
  ExpectRefused("SELECT * FROM nosuch.t", "42P01", "relation \"nosuch.t\" does not exist", true,
                15);
  ExpectRefused("SELECT * FROM public.nope", "42P01", "relation \"public.nope\" does not exist",
                true, 15);
  ExpectRefused("SELECT t.zz FROM t", "42703", "column t.zz does not exist", true);
  ExpectRefused("SELECT a FROM t, u", "42702", "column reference \"a\" is ambiguous", true, 8);
  ExpectRefused("SELECT q.a FROM t", "42P01", "missing FROM-clause entry for table \"q\"", true);
  ExpectRefused("SELECT * FROM t WHERE b", "42804",
                "argument of WHERE must be type boolean, not type bigint", true);
  ExpectRefused("SELECT b + s FROM t", "42883", "operator does not exist: bigint + text", true, 10);
  ExpectRefused("SELECT a FROM t GROUP BY s", "42803",
                "column \"t.a\" must appear in the GROUP BY clause or be used in an aggregate "
                "function",
                true);
  ExpectRefused("SELECT * FROM t WHERE count(*) > 1", "42803",
                "aggregate functions are not allowed in WHERE", true);
  ExpectRefused("SELECT sum(s) FROM t", "42883", "function sum(text) does not exist", true);
  ExpectRefused("SELECT * FROM t, t", "42712", "table name \"t\" specified more than once", true);
  ExpectRefused("SELECT b FROM t WHERE s = 1", "42883", "operator does not exist: text = integer",
                true);
  ExpectRefused("SELECT a FROM t UNION SELECT s FROM t", "42804",
                "UNION types bigint and text cannot be matched", true);
  ExpectRefused("SELECT * FROM t WHERE b = 'abc'", "22P02",
                "invalid input syntax for type bigint: \"abc\"", true);
  ExpectRefused("SELECT * FROM (SELECT 1)", "42601", "subquery in FROM must have an alias", true);
  ExpectRefused("SELECT f % f FROM t", "42883",
                "operator does not exist: double precision % double precision", true);
  ExpectRefused("SELECT a FROM t ORDER BY 9", "42P10", "ORDER BY position 9 is not in select list",
                true);
}

TEST_F(SqlPlanTest, UnsupportedConstructsAreRefusedNamingThem) {
  ExpectRefused("SELECT * FROM t WHERE s LIKE 'x%' ESCAPE '!'", "0A000",
                "LIKE … ESCAPE is not supported yet", false);
  ExpectRefused("SELECT * FROM t FULL JOIN u ON t.p", "0A000",
                "FULL JOIN is only supported with merge-joinable or hash-joinable join conditions",
                true);
  ExpectRefused("SELECT (SELECT a FROM u WHERE c = 200) FROM t", "0A000",
                "a scalar subquery that can return more than one row is not supported yet (only "
                "an aggregate without GROUP BY, or LIMIT 1)",
                false, 8);
  ExpectRefused("SELECT count(*) FROM t HAVING count(*) > (SELECT count(*) FROM u)", "0A000",
                "a subquery here is not supported yet: only EXISTS, IN and scalar subqueries in a "
                "WHERE or in the select list of a query without aggregates are",
                false);
  ExpectRefused("SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.c > t.b)", "0A000",
                "a correlated subquery's condition other than an equality of its own columns "
                "with the outer query's is not supported",
                false);
  ExpectRefused("SELECT * FROM t WHERE a IN (SELECT t.b FROM u)", "0A000",
                "a subquery whose select list reads the outer query's columns is not supported",
                false);
  ExpectRefused("SELECT * FROM t z WHERE EXISTS (SELECT 1 FROM u z WHERE z.a = z.b)", "42703",
                "column z.b does not exist", true);
  ExpectRefused("SELECT * FROM t WHERE EXISTS (SELECT nope FROM u)", "42703",
                "column \"nope\" does not exist", true);
  ExpectRefused("SELECT '2026-12-06'::timestamp(3)", "0A000",
                "timestamp without time zone with a precision is not supported: values keep "
                "microseconds",
                false);
  ExpectRefused("WITH RECURSIVE r AS (SELECT 1) SELECT * FROM r", "0A000",
                "WITH RECURSIVE is not supported", false);
  ExpectRefused("SELECT DISTINCT ON (a) a FROM t", "0A000",
                "SELECT DISTINCT ON is not supported yet", false);
  ExpectRefused("SELECT initcap(s) FROM t", "0A000", "function initcap is not supported yet",
                false);
}

TEST_F(SqlPlanTest, DeepExpressionsAreRefusedNotCrashed) {
  // An IN list of 20,000 constants is a balanced OR, a few levels deep.
  std::string in = "SELECT * FROM t WHERE a IN (";
  for (int i = 0; i < 20000; ++i) in += (i > 0 ? ", " : "") + std::to_string(i % 4);
  in += ")";
  auto wide = Plan(in);
  ASSERT_TRUE(wide.ok()) << wide.error().ToString();
  std::string cases = "SELECT CASE";
  for (int i = 0; i < 5000; ++i) cases += " WHEN a = " + std::to_string(i) + " THEN 1";
  cases += " END FROM t";
  auto many = Plan(cases);
  ASSERT_FALSE(many.ok());
  EXPECT_EQ(many.error().sqlstate, "54001") << many.error().ToString();
  std::string deep = "SELECT ";
  for (int i = 0; i < 60; ++i) deep += "(";
  deep += "a";
  for (int i = 0; i < 60; ++i) deep += " + 1)";
  deep += " FROM t";
  auto planned = Plan(deep);
  ASSERT_FALSE(planned.ok());
  EXPECT_EQ(planned.error().sqlstate, "54001") << planned.error().ToString();
  std::string deeper = "SELECT ";
  for (int i = 0; i < 900; ++i) deeper += "-(";
  deeper += "a";
  for (int i = 0; i < 900; ++i) deeper += ")";
  deeper += " FROM t";
  auto refused = Plan(deeper);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().sqlstate, "54001") << refused.error().ToString();
}

TEST_F(SqlPlanTest, CombinationsOfClausesMatchPostgres) {
  ExpectSameAsPostgres("SELECT * FROM (SELECT s FROM t ORDER BY b DESC LIMIT 2) AS x");
  ExpectSameAsPostgres(
      "(SELECT a FROM t ORDER BY a LIMIT 2) UNION ALL "
      "(SELECT a FROM u ORDER BY a DESC NULLS LAST LIMIT 1)");
  ExpectSameAsPostgres("SELECT a, t.s, u.s FROM t JOIN u USING (a) WHERE a > 1 AND u.c > 0");
  ExpectSameAsPostgres("SELECT t.a, u.c FROM t LEFT JOIN u ON t.a + 1 = u.a");
  ExpectSameAsPostgres("SELECT t.a, u.c FROM t RIGHT JOIN u ON t.a = u.a AND t.b > 10");
  ExpectSameAsPostgres(
      "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.a = t.a AND "
      "u.s = t.s AND u.c < 1000)");
  ExpectSameAsPostgres("SELECT * FROM t WHERE f IN (1, 2.5::float8, 3)");
  ExpectSameAsPostgres("SELECT CASE WHEN p THEN 1 ELSE f END FROM t");
  ExpectSameAsPostgres(
      "SELECT u.s, count(DISTINCT t.a), count(*) FROM t JOIN u ON t.a = u.a "
      "GROUP BY u.s");
  ExpectSameAsPostgres("SELECT s, count(*) FROM t GROUP BY s HAVING s <> 'x'");
  ExpectSameAsPostgres("SELECT (a + 1) * 2 FROM t GROUP BY a + 1");
  ExpectSameAsPostgres("SELECT count(*) FROM t HAVING false ORDER BY 1", OrderedBy({0}));
  ExpectSameAsPostgres("SELECT count(*) FROM t WHERE a IN (SELECT a FROM u)");
  ExpectSameAsPostgres("SELECT v.x FROM v_nested v WHERE v.x > 1");
  ExpectSameAsPostgres(
      "WITH c AS (SELECT a FROM u) SELECT * FROM t WHERE a IN (SELECT a FROM c) AND "
      "NOT EXISTS (SELECT 1 FROM c WHERE c.a = t.b)");
  ExpectSameAsPostgres("SELECT a, s FROM u EXCEPT SELECT a, s FROM t WHERE a > 100");
  ExpectSameAsPostgres("SELECT a, count(*) FROM t GROUP BY a HAVING a > 1 ORDER BY a LIMIT 2",
                       OrderedBy({0}));
  ExpectSameAsPostgres("SELECT a FROM t ORDER BY a OFFSET 2", OrderedBy({0}));
  ExpectSameAsPostgres("SELECT s FROM t GROUP BY s ORDER BY max(b) DESC NULLS LAST LIMIT 2",
                       OrderedBy({}));
  ExpectSameAsPostgres("SELECT s, s IS DISTINCT FROM 'x', NULL IS DISTINCT FROM s FROM t");
  ExpectSameAsPostgres("SELECT x.a, y.b FROM t x JOIN t y USING (a) WHERE x.b = y.b");
  ExpectSameAsPostgres("SELECT DISTINCT p FROM t ORDER BY p", OrderedBy({0}));
  ExpectSameAsPostgres("SELECT s FROM t UNION SELECT s FROM u EXCEPT SELECT 'x'");
  ExpectSameAsPostgres("SELECT a FROM t INTERSECT SELECT a FROM u ORDER BY 1", OrderedBy({0}));
  ExpectSameAsPostgres(
      "SELECT t.*, u.c FROM t LEFT JOIN u ON u.a = t.a AND u.s = 'x' "
      "ORDER BY t.a, t.b, u.c",
      OrderedBy({}));
  ExpectSameAsPostgres("SELECT count(*), min(b), max(b) FROM t, u WHERE t.a = u.a");
  ExpectSameAsPostgres("SELECT NOT p, p AND a > 1, p OR a > 1 FROM t");
  ExpectSameAsPostgres("SELECT COALESCE(u.c, t.b, -1) FROM t FULL JOIN u ON t.a = u.a");
}

TEST_F(SqlPlanTest, PlansThatWouldExplodeAreRefusedBeforeTheyAreBuilt) {
  // Each FULL JOIN copies both its inputs; each CTE reference binds the CTE again.
  std::string full = "SELECT count(*) FROM t t0";
  for (int i = 1; i < 40; ++i) {
    full += " FULL JOIN t t" + std::to_string(i) + " ON t" + std::to_string(i) + ".a = t" +
            std::to_string(i - 1) + ".a";
  }
  auto planned = Plan(full);
  ASSERT_FALSE(planned.ok());
  EXPECT_EQ(planned.error().sqlstate, "54001") << planned.error().ToString();
  std::string ctes = "WITH c0 AS (SELECT a FROM t)";
  for (int i = 1; i < 40; ++i) {
    ctes += ", c" + std::to_string(i) + " AS (SELECT a FROM c" + std::to_string(i - 1) +
            " UNION ALL SELECT a FROM c" + std::to_string(i - 1) + ")";
  }
  planned = Plan(ctes + " SELECT * FROM c39");
  ASSERT_FALSE(planned.ok());
  EXPECT_EQ(planned.error().sqlstate, "54001") << planned.error().ToString();
  // NULLIF uses its first argument twice: nested 60 deep, 2^60 copies.
  std::string nullifs = "a";
  for (int i = 0; i < 60; ++i) nullifs = "NULLIF(" + nullifs + ", 1)";
  planned = Plan("SELECT " + nullifs + " FROM t");
  ASSERT_FALSE(planned.ok());
  EXPECT_EQ(planned.error().sqlstate, "54001") << planned.error().ToString();
}

}  // namespace
}  // namespace tandem::frontend::plan

// INSERT, UPDATE and DELETE (frontend/plan/dml.h): each statement planned against an in-memory
// catalog, its rows evaluated — constants by EvaluateConstant, the rest by the reference
// evaluator (tests/reference) over small tables — and turned into a WriteTable's updates by
// BuildWrite, which must pass the replica's own rules (ipc/table_write.h). Refusals by SQLSTATE and
// message; NOT NULL and primary key violations with PostgreSQL's messages and DETAIL.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "frontend/plan/dml.h"
#include "frontend/sql/parse.h"
#include "ipc/rows.h"
#include "ipc/table_write.h"
#include "memory_catalog.h"
#include "reference/reference.h"

namespace tandem::frontend::plan {
namespace {

namespace pb = ::tandem::protocol;
using ::tandem::testing::MemoryCatalog;

Datum N() { return Null{}; }
Datum I(std::int64_t v) { return v; }
Datum F(double v) { return v; }
Datum S(const char* v) { return std::string(v); }

// t: plain rows (no primary key); k: primary key id; kk: a two-column primary key.
const std::vector<Row>& TRows() {
  static const std::vector<Row> rows = {{I(1), I(10), S("x"), F(1.5)},
                                        {I(1), I(10), S("x"), F(1.5)},
                                        {I(2), I(20), S("y"), N()},
                                        {I(3), N(), N(), F(0.5)}};
  return rows;
}
const std::vector<Row>& KRows() {
  static const std::vector<Row> rows = {
      {I(1), S("one"), I(10)}, {I(2), S("two"), I(20)}, {I(5), S("five"), I(50)}};
  return rows;
}

class SqlDmlTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    catalog_ = new MemoryCatalog();
    const auto int8 = pb::INT64, text = pb::STRING, float8 = pb::FLOAT64;
    catalog_->AddTable(
        "t", {{"a", int8, true}, {"b", int8, true}, {"s", text, true}, {"f", float8, true}});
    catalog_->AddTable("k", {{"id", int8, false}, {"v", text, true}, {"n", int8, false}}, {0});
    catalog_->AddTable("kk", {{"a", int8, false}, {"b", text, false}, {"c", int8, true}}, {0, 1});
    catalog_->AddTable(kOneRowObject, {{"one", int8, false}}, {}, ObjectKind::kSource);
    catalog_->AddTable("src", {{"x", int8, true}}, {}, ObjectKind::kSource);
    catalog_->AddTable("mv", {{"x", int8, true}}, {}, ObjectKind::kMaterializedView);
    catalog_->AddView("v", "SELECT a FROM t", {{"a", int8, true}});
  }
  static void TearDownTestSuite() { delete catalog_; }

  static SqlResult<DmlPlan> Dml(const std::string& sql) {
    auto parsed = sql::Parse(sql);
    if (!parsed.ok()) return parsed.error();
    EXPECT_EQ(parsed->size(), 1u);
    const auto& stmt = std::get<sql::PostgresStatement>(parsed->at(0).form).stmt;
    return PlanDml(stmt, *catalog_, sql);
  }

  static SqlResult<PlannedRelation> Query(const std::string& sql) {
    auto parsed = sql::Parse(sql);
    if (!parsed.ok()) return parsed.error();
    const auto& stmt = std::get<sql::PostgresStatement>(parsed->at(0).form).stmt;
    return PlanQuery(stmt, *catalog_, sql);
  }

  static DmlPlan Planned(const SqlResult<DmlPlan>& plan) {
    EXPECT_TRUE(plan.ok()) << (plan.ok() ? "" : plan.error().ToString());
    return plan.ok() ? *plan : DmlPlan();
  }

  // The refusal of `sql`: its SQLSTATE, and a message containing `words`.
  static void ExpectRefused(const std::string& sql, const std::string& state,
                            const std::string& words) {
    auto plan = Dml(sql);
    ASSERT_FALSE(plan.ok()) << sql << " was planned";
    EXPECT_EQ(plan.error().sqlstate, state) << sql << ": " << plan.error().ToString();
    EXPECT_NE(plan.error().message.find(words), std::string::npos)
        << sql << ": " << plan.error().ToString();
  }

  // The rows of a planned relation over the tables' rows: the reference evaluator, each row
  // repeated per its count (sorted).
  static std::vector<Row> Rows(const PlannedRelation& planned) {
    pb::DataflowDescription desc;
    desc.set_debug_name("dml");
    for (const auto& import : planned.imports) *desc.add_index_imports() = import;
    auto* build = desc.add_objects_to_build();
    build->set_id("rows");
    *build->mutable_plan() = planned.plan;
    desc.mutable_as_of()->add_elements(0);
    desc.mutable_until()->add_elements(1);
    desc.set_class_(pb::ONE_SHOT_READ);
    reference::Evaluator evaluator(desc);
    for (std::size_t i = 0; i < planned.imports.size(); ++i) {
      const std::string& object = planned.import_objects[i];
      const std::vector<Row> one = {{I(1)}};
      const std::vector<Row>& rows = object == "t"             ? TRows()
                                     : object == "k"           ? KRows()
                                     : object == kOneRowObject ? one
                                                               : TRows();
      std::vector<reference::Update> updates;
      for (const auto& row : rows) updates.push_back(reference::Update{row, 0, 1});
      evaluator.AddUpdates(planned.imports[i].on(), updates);
    }
    auto contents = evaluator.At("rows", 0);
    EXPECT_TRUE(contents.ok()) << contents.status().ToString();
    std::vector<Row> out;
    if (!contents.ok()) return out;
    EXPECT_FALSE(contents->HasError()) << contents->FirstError();
    for (const auto& [row, count] : contents->rows) {
      for (reference::Count i = 0; i < count; ++i) out.push_back(row);
    }
    return out;
  }

  // Constant rows (EvaluateConstant must say constant and succeed).
  static std::vector<Row> Constant(const PlannedRelation& planned) {
    auto rows = EvaluateConstant(planned);
    EXPECT_TRUE(rows.has_value()) << "not constant";
    std::vector<Row> out;
    if (!rows.has_value()) return out;
    EXPECT_TRUE(rows->ok()) << rows->error().ToString();
    if (!rows->ok()) return out;
    for (const auto& r : **rows) out.push_back(ipc::FromProto(r));
    return out;
  }

  static std::vector<pb::Row> Protos(const std::vector<Row>& rows) {
    std::vector<pb::Row> out;
    for (const auto& r : rows) out.push_back(ipc::ToProto(r));
    return out;
  }

  // BuildWrite's updates, checked against the replica's rules for the table.
  static DmlWrite Write(const DmlPlan& plan, const std::vector<Row>& rows,
                        const std::vector<Row>& existing = {}) {
    auto write = BuildWrite(plan, Protos(rows), Protos(existing));
    EXPECT_TRUE(write.ok()) << write.error().ToString();
    if (!write.ok()) return {};
    pb::WriteTable message;
    message.set_id(plan.table_id);
    for (const auto& u : write->updates) *message.add_updates() = u;
    pb::Schema schema;
    for (const auto& c : plan.columns) {
      auto* column = schema.add_columns();
      column->set_name(c.name);
      column->set_type(c.type);
      column->set_nullable(c.nullable);
    }
    const Status valid = ipc::CheckTableUpdates(message, schema, plan.primary_key);
    EXPECT_TRUE(valid.ok()) << valid.ToString();
    return *write;
  }

  // KeysToCheck's keys as rows.
  static std::vector<Row> Keys(const DmlPlan& plan, const std::vector<pb::Row>& rows) {
    std::vector<Row> out;
    for (const auto& key : KeysToCheck(plan, rows)) out.push_back(ipc::FromProto(key));
    return out;
  }

  static MemoryCatalog* catalog_;
};

MemoryCatalog* SqlDmlTest::catalog_ = nullptr;

std::string Describe(const pb::TableUpdate& u) {
  auto text = [](const pb::Row& r) { return RowText(ipc::FromProto(r)); };
  switch (u.kind_case()) {
    case pb::TableUpdate::kUpdate:
      return "update " + text(u.update().row()) + " " + std::to_string(u.update().diff());
    case pb::TableUpdate::kUpsert:
      return "upsert " + text(u.upsert());
    case pb::TableUpdate::kDelete:
      return "delete " + text(u.delete_());
    default:
      return "none";
  }
}

std::vector<std::string> Describe(const DmlWrite& write) {
  std::vector<std::string> out;
  for (const auto& u : write.updates) out.push_back(Describe(u));
  return out;
}

// ---- refusals

TEST_F(SqlDmlTest, UnknownTablesAndReadOnlyObjectsAreRefused) {
  ExpectRefused("INSERT INTO nope VALUES (1)", "42P01", "relation \"nope\" does not exist");
  ExpectRefused("DELETE FROM other.t", "42P01", "relation \"other.t\" does not exist");
  ExpectRefused("INSERT INTO v VALUES (1)", "42809", "cannot insert into view \"v\"");
  ExpectRefused("UPDATE v SET a = 1", "42809", "cannot update view \"v\"");
  ExpectRefused("DELETE FROM v", "42809", "cannot delete from view \"v\"");
  ExpectRefused("UPDATE mv SET x = 1", "42809", "cannot change materialized view \"mv\"");
  ExpectRefused("DELETE FROM src", "42809", "cannot delete from source \"src\": it is read-only");
  ExpectRefused(std::string("INSERT INTO ") + kOneRowObject + " VALUES (2)", "42809", "read-only");
}

TEST_F(SqlDmlTest, UnknownAndRepeatedColumnsAreRefusedAsPostgresDoes) {
  ExpectRefused("INSERT INTO t (zz) VALUES (1)", "42703",
                "column \"zz\" of relation \"t\" does not exist");
  ExpectRefused("UPDATE t SET zz = 1", "42703", "column \"zz\" of relation \"t\" does not exist");
  ExpectRefused("UPDATE t SET a = zz", "42703", "column \"zz\" does not exist");
  ExpectRefused("DELETE FROM t WHERE zz = 1", "42703", "column \"zz\" does not exist");
  ExpectRefused("INSERT INTO t (a, a) VALUES (1, 2)", "42701",
                "column \"a\" specified more than once");
  ExpectRefused("UPDATE t SET a = 1, a = 2", "42601", "multiple assignments to same column \"a\"");
  // Positions as PostgreSQL gives them (none for a column assigned twice).
  auto plan = Dml("INSERT INTO t (zz) VALUES (1)");
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().position, 16);
  plan = Dml("INSERT INTO t (a, a) VALUES (1, 2)");
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().position, 19);
  plan = Dml("UPDATE t SET a = 1, a = 2");
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().position, 0);
}

TEST_F(SqlDmlTest, ExpressionCountsAreCheckedAsPostgresDoes) {
  ExpectRefused("INSERT INTO t (a) VALUES (1, 2)", "42601",
                "INSERT has more expressions than target columns");
  ExpectRefused("INSERT INTO t VALUES (1, 2, 'x', 1, 5)", "42601",
                "INSERT has more expressions than target columns");
  ExpectRefused("INSERT INTO t (a, b) VALUES (1)", "42601",
                "INSERT has more target columns than expressions");
  ExpectRefused("INSERT INTO t (a, b) SELECT 1", "42601",
                "INSERT has more target columns than expressions");
  ExpectRefused("INSERT INTO t (a) SELECT 1, 2", "42601",
                "INSERT has more expressions than target columns");
  ExpectRefused("INSERT INTO t VALUES (1), (1, 2)", "42601",
                "VALUES lists must all be the same length");
  // Positions as PostgreSQL gives them: the first expression or target column too many, the
  // first item of the list of another length.
  for (const auto& [sql, position] :
       std::vector<std::pair<std::string, int>>{{"INSERT INTO t (a) VALUES (1, 2)", 30},
                                                {"INSERT INTO t (a, b) VALUES (1)", 19},
                                                {"INSERT INTO t (a) SELECT 1, 2", 29},
                                                {"INSERT INTO t VALUES (1), (1, 2)", 28}}) {
    auto plan = Dml(sql);
    ASSERT_FALSE(plan.ok()) << sql;
    EXPECT_EQ(plan.error().position, position) << sql;
  }
}

TEST_F(SqlDmlTest, ValuesOfTheWrongTypeAreRefusedWithPostgresMessages) {
  ExpectRefused("INSERT INTO t (a) VALUES ('x'::text)", "42804",
                "column \"a\" is of type bigint but expression is of type text");
  ExpectRefused("INSERT INTO t (a) VALUES (true)", "42804",
                "column \"a\" is of type bigint but expression is of type boolean");
  ExpectRefused("INSERT INTO t (a) SELECT s FROM t", "42804",
                "column \"a\" is of type bigint but expression is of type text");
  ExpectRefused("UPDATE t SET b = s", "42804",
                "column \"b\" is of type bigint but expression is of type text");
  ExpectRefused("INSERT INTO t (a) VALUES ('abc')", "22P02",
                "invalid input syntax for type bigint: \"abc\"");
  // PostgreSQL's assignment casts: bigint into double precision, anything into text.
  EXPECT_TRUE(Dml("INSERT INTO t (f) SELECT a FROM t").ok());
  EXPECT_TRUE(Dml("UPDATE t SET s = a").ok());
  auto plan = Dml("UPDATE t SET b = s");
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().hint, "You will need to rewrite or cast the expression.");
  EXPECT_EQ(plan.error().position, 18);  // at the expression
}

TEST_F(SqlDmlTest, UnplannedConstructsAreRefusedNamingThem) {
  ExpectRefused("INSERT INTO t VALUES (1) RETURNING a", "0A000", "RETURNING");
  ExpectRefused("UPDATE t SET a = 1 RETURNING *", "0A000", "RETURNING");
  ExpectRefused("DELETE FROM t RETURNING a", "0A000", "RETURNING");
  ExpectRefused("INSERT INTO k VALUES (1, 'x', 1) ON CONFLICT DO NOTHING", "0A000", "ON CONFLICT");
  ExpectRefused("WITH w AS (SELECT 1) INSERT INTO t (a) SELECT * FROM w", "0A000", "WITH");
  ExpectRefused("WITH w AS (SELECT 1) DELETE FROM t", "0A000", "WITH");
  ExpectRefused("UPDATE t SET a = k.id FROM k", "0A000", "UPDATE … FROM");
  ExpectRefused("DELETE FROM t USING k WHERE t.a = k.id", "0A000", "DELETE … USING");
  ExpectRefused("UPDATE t SET (a, b) = (SELECT 1, 2)", "0A000", "SET (…)");
  ExpectRefused("INSERT INTO t (a) VALUES (sum(1))", "42803", "VALUES");
}

// ---- INSERT

TEST_F(SqlDmlTest, InsertFillsColumnsNotNamedWithNullAndCastsOnAssignment) {
  const DmlPlan plan = Planned(Dml("INSERT INTO t (f, a) VALUES (1, 2), ('2.5', NULL)"));
  EXPECT_EQ(plan.kind, DmlKind::kInsert);
  EXPECT_EQ(plan.object, "t");
  EXPECT_EQ(plan.table_id, catalog_->FindObject("t")->id);
  ASSERT_EQ(plan.rows.columns.size(), 4u);
  EXPECT_EQ(plan.rows.columns[3].type, pb::FLOAT64);
  const std::vector<Row> want = {{I(2), N(), N(), F(1.0)}, {N(), N(), N(), F(2.5)}};
  EXPECT_EQ(Constant(plan.rows), want);
  EXPECT_EQ(Rows(plan.rows), (std::vector<Row>{want[1], want[0]}));  // the reference agrees

  EXPECT_EQ(Constant(Planned(Dml("INSERT INTO t VALUES (1)")).rows),
            (std::vector<Row>{{I(1), N(), N(), N()}}));
  EXPECT_EQ(Constant(Planned(Dml("INSERT INTO t DEFAULT VALUES")).rows),
            (std::vector<Row>{{N(), N(), N(), N()}}));
  EXPECT_EQ(Constant(Planned(Dml("INSERT INTO t (s, b) VALUES (5, DEFAULT)")).rows),
            (std::vector<Row>{{N(), N(), S("5"), N()}}));
  EXPECT_EQ(Constant(Planned(Dml("INSERT INTO t (b) VALUES (2 * 3 + 1)")).rows),
            (std::vector<Row>{{N(), I(7), N(), N()}}));
  // A decimal constant into double precision: PostgreSQL's assignment cast numeric → float8.
  EXPECT_EQ(Constant(Planned(Dml("INSERT INTO t (f) VALUES (12.5), (-0.25), (1e3)")).rows),
            (std::vector<Row>{
                {N(), N(), N(), F(12.5)}, {N(), N(), N(), F(-0.25)}, {N(), N(), N(), F(1000.0)}}));
  // … and into bigint (numeric → int8 rounds, the runtime's cast), and as an operand.
  EXPECT_TRUE(Dml("INSERT INTO t (a) VALUES (12.5)").ok());
  EXPECT_TRUE(Dml("INSERT INTO t (f) VALUES (12.5 + 1)").ok());
}

TEST_F(SqlDmlTest, InsertSelectAssignsItsColumnsInOrder) {
  // PostgreSQL leaves a SELECT's string constant and NULL untyped for the column to type.
  EXPECT_EQ(Constant(Planned(Dml("INSERT INTO t (a, s, b) SELECT '7', 'q', NULL")).rows),
            (std::vector<Row>{{I(7), N(), S("q"), N()}}));
  const DmlPlan plan = Planned(Dml("INSERT INTO t (b, a) SELECT a, b + 1 FROM t WHERE a = 1"));
  EXPECT_FALSE(EvaluateConstant(plan.rows).has_value());
  EXPECT_EQ(Rows(plan.rows), (std::vector<Row>{{I(11), I(1), N(), N()}, {I(11), I(1), N(), N()}}));
  EXPECT_EQ(plan.rows.import_objects, std::vector<std::string>{"t"});
}

// ---- UPDATE and DELETE

TEST_F(SqlDmlTest, UpdateGivesOldAndNewRowsOfTheMatchingRows) {
  const DmlPlan plan = Planned(Dml("UPDATE t SET b = a * 100 + b, s = 'z' WHERE a >= 2"));
  EXPECT_EQ(plan.kind, DmlKind::kUpdate);
  ASSERT_EQ(plan.rows.columns.size(), 8u);
  EXPECT_EQ(Rows(plan.rows),
            (std::vector<Row>{{I(2), I(20), S("y"), N(), I(2), I(220), S("z"), N()},
                              {I(3), N(), N(), F(0.5), I(3), N(), S("z"), F(0.5)}}));
  // An alias qualifies the columns; SET (a, b) = (…) assigns each; DEFAULT is NULL.
  EXPECT_EQ(Rows(Planned(Dml("UPDATE t AS x SET (a, b) = (x.b, x.a), f = DEFAULT "
                             "WHERE x.a = 2"))
                     .rows),
            (std::vector<Row>{{I(2), I(20), S("y"), N(), I(20), I(2), S("y"), N()}}));
  // A subquery in SET, as in a select list.
  EXPECT_EQ(Rows(Planned(Dml("UPDATE t SET b = (SELECT max(id) FROM k) WHERE a = 3")).rows),
            (std::vector<Row>{{I(3), N(), N(), F(0.5), I(3), I(5), N(), F(0.5)}}));
}

TEST_F(SqlDmlTest, DeleteGivesTheMatchingRows) {
  const DmlPlan plan = Planned(Dml("DELETE FROM t WHERE b IS NULL OR a = 2"));
  EXPECT_EQ(plan.kind, DmlKind::kDelete);
  EXPECT_EQ(Rows(plan.rows),
            (std::vector<Row>{{I(2), I(20), S("y"), N()}, {I(3), N(), N(), F(0.5)}}));
  EXPECT_EQ(Rows(Planned(Dml("DELETE FROM t")).rows).size(), 4u);
  EXPECT_EQ(Rows(Planned(Dml("DELETE FROM k WHERE id IN (SELECT a FROM t)")).rows),
            (std::vector<Row>{{I(1), S("one"), I(10)}, {I(2), S("two"), I(20)}}));
}

// ---- EvaluateConstant

TEST_F(SqlDmlTest, ConstantRelationsAreEvaluatedAsAReplicaWould) {
  auto two = Query("SELECT 1 + 1");
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(Constant(*two), (std::vector<Row>{{I(2)}}));
  auto values = Query("VALUES (1, 'a'), (2, 'b'), (1, 'a')");
  ASSERT_TRUE(values.ok());
  EXPECT_EQ(Constant(*values), (std::vector<Row>{{I(1), S("a")}, {I(2), S("b")}, {I(1), S("a")}}));
  auto none = Query("SELECT 1 WHERE false");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(Constant(*none).empty());
  auto table = Query("SELECT a FROM t");
  ASSERT_TRUE(table.ok());
  EXPECT_FALSE(EvaluateConstant(*table).has_value());
}

TEST_F(SqlDmlTest, DataErrorsOfConstantsAreReportedAsPostgresDoes) {
  auto zero = Query("SELECT 1 / 0");
  ASSERT_TRUE(zero.ok());
  auto rows = EvaluateConstant(*zero);
  ASSERT_TRUE(rows.has_value());
  ASSERT_FALSE(rows->ok());
  EXPECT_EQ(rows->error().sqlstate, "22012");
  EXPECT_EQ(rows->error().message, "division by zero");
  auto overflow = Dml("INSERT INTO t (a) VALUES (9223372036854775807 + 1)");
  ASSERT_TRUE(overflow.ok());
  rows = EvaluateConstant(overflow->rows);
  ASSERT_TRUE(rows.has_value());
  ASSERT_FALSE(rows->ok());
  EXPECT_EQ(rows->error().sqlstate, "22003");
  EXPECT_EQ(rows->error().message, "bigint out of range");
}

// ---- BuildWrite: tables without a primary key

TEST_F(SqlDmlTest, PlainTablesGetDiffsWithEqualRowsCoalesced) {
  const DmlPlan insert = Planned(Dml("INSERT INTO t (a) VALUES (1), (1), (2)"));
  const auto rows = Constant(insert.rows);
  EXPECT_TRUE(Keys(insert, Protos(rows)).empty());
  DmlWrite write = Write(insert, rows);
  EXPECT_EQ(write.count, 3u);
  EXPECT_EQ(Describe(write), (std::vector<std::string>{"update (1, null, null, null) 2",
                                                       "update (2, null, null, null) 1"}));
  EXPECT_EQ(CommandTag(insert, write.count), "INSERT 0 3");

  const DmlPlan update = Planned(Dml("UPDATE t SET b = b + 1 WHERE a <= 2"));
  write = Write(update, Rows(update.rows));
  EXPECT_EQ(write.count, 3u);
  EXPECT_EQ(Describe(write),
            (std::vector<std::string>{
                "update (1, 10, \"x\", 1.5) -2", "update (1, 11, \"x\", 1.5) 2",
                "update (2, 20, \"y\", null) -1", "update (2, 21, \"y\", null) 1"}));
  EXPECT_EQ(CommandTag(update, write.count), "UPDATE 3");
  // A row updated to itself writes nothing, but counts.
  const DmlPlan same = Planned(Dml("UPDATE t SET b = b WHERE a = 1"));
  write = Write(same, Rows(same.rows));
  EXPECT_TRUE(write.updates.empty());
  EXPECT_EQ(write.count, 2u);

  const DmlPlan del = Planned(Dml("DELETE FROM t WHERE a = 1"));
  write = Write(del, Rows(del.rows));
  EXPECT_EQ(Describe(write), (std::vector<std::string>{"update (1, 10, \"x\", 1.5) -2"}));
  EXPECT_EQ(CommandTag(del, write.count), "DELETE 2");
  write = Write(del, {});
  EXPECT_TRUE(write.updates.empty());
  EXPECT_EQ(write.count, 0u);
}

TEST_F(SqlDmlTest, NullsInNotNullColumnsAreRefusedWithTheFailingRow) {
  const DmlPlan plan = Planned(Dml("INSERT INTO k (id, v) VALUES (4, 'four')"));
  auto write = BuildWrite(plan, Protos(Constant(plan.rows)), {});
  ASSERT_FALSE(write.ok());
  EXPECT_EQ(write.error().sqlstate, "23502");
  EXPECT_EQ(write.error().message,
            "null value in column \"n\" of relation \"k\" violates not-null constraint");
  EXPECT_EQ(write.error().detail, "Failing row contains (4, four, null).");
  const DmlPlan update = Planned(Dml("UPDATE k SET id = NULL WHERE id = 1"));
  write = BuildWrite(update, Protos(Rows(update.rows)), {});
  ASSERT_FALSE(write.ok());
  EXPECT_EQ(write.error().sqlstate, "23502");
}

// ---- BuildWrite: tables with a primary key

TEST_F(SqlDmlTest, InsertIntoAKeyedTableUpsertsNewKeysAndRefusesTakenOnes) {
  const DmlPlan plan = Planned(Dml("INSERT INTO k VALUES (3, 'three', 30), (7, NULL, 70)"));
  const auto rows = Constant(plan.rows);
  EXPECT_EQ(Keys(plan, Protos(rows)), (std::vector<Row>{{I(3)}, {I(7)}}));
  DmlWrite write = Write(plan, rows);
  EXPECT_EQ(Describe(write),
            (std::vector<std::string>{"upsert (3, \"three\", 30)", "upsert (7, null, 70)"}));
  EXPECT_EQ(write.count, 2u);

  const DmlPlan taken = Planned(Dml("INSERT INTO k VALUES (3, 'three', 30), (5, 'x', 1)"));
  auto refused = BuildWrite(taken, Protos(Constant(taken.rows)), Protos({KRows()[2]}));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().sqlstate, "23505");
  EXPECT_EQ(refused.error().message, "duplicate key value violates unique constraint \"k_pkey\"");
  EXPECT_EQ(refused.error().detail, "Key (id)=(5) already exists.");

  const DmlPlan twice = Planned(Dml("INSERT INTO kk VALUES (1, 'a', 1), (1, 'a', 2)"));
  refused = BuildWrite(twice, Protos(Constant(twice.rows)), {});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().sqlstate, "23505");
  EXPECT_EQ(refused.error().message, "duplicate key value violates unique constraint \"kk_pkey\"");
  EXPECT_EQ(refused.error().detail, "Key (a, b)=(1, a) already exists.");
}

TEST_F(SqlDmlTest, UpdateOfAKeyedTableDeletesMovedKeysBeforeUpserting) {
  // Only non-key columns: upserts, nothing to check.
  const DmlPlan values = Planned(Dml("UPDATE k SET n = n + 1 WHERE id <= 2"));
  auto rows = Rows(values.rows);
  EXPECT_TRUE(Keys(values, Protos(rows)).empty());
  EXPECT_EQ(Describe(Write(values, rows)),
            (std::vector<std::string>{"upsert (1, \"one\", 11)", "upsert (2, \"two\", 21)"}));

  // Keys shifted among the updated rows: 1→2 and 2→3; key 2 is left by one row, taken by another.
  const DmlPlan shift = Planned(Dml("UPDATE k SET id = id + 1 WHERE id <= 2"));
  rows = Rows(shift.rows);
  EXPECT_EQ(Keys(shift, Protos(rows)), (std::vector<Row>{{I(2)}, {I(3)}}));
  DmlWrite write = Write(shift, rows, {KRows()[1]});
  EXPECT_EQ(Describe(write), (std::vector<std::string>{"delete (1)", "upsert (2, \"one\", 10)",
                                                       "upsert (3, \"two\", 20)"}));
  EXPECT_EQ(write.count, 2u);

  // Onto a key another row keeps: refused.
  const DmlPlan onto = Planned(Dml("UPDATE k SET id = 5 WHERE id = 1"));
  rows = Rows(onto.rows);
  EXPECT_EQ(Keys(onto, Protos(rows)), (std::vector<Row>{{I(5)}}));
  auto refused = BuildWrite(onto, Protos(rows), Protos({KRows()[2]}));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().sqlstate, "23505");
  EXPECT_EQ(refused.error().detail, "Key (id)=(5) already exists.");

  // Two rows onto one key: refused within the statement.
  const DmlPlan both = Planned(Dml("UPDATE k SET id = 9 WHERE id <= 2"));
  refused = BuildWrite(both, Protos(Rows(both.rows)), {});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().detail, "Key (id)=(9) already exists.");
}

TEST_F(SqlDmlTest, DeleteFromAKeyedTableDeletesKeys) {
  const DmlPlan plan = Planned(Dml("DELETE FROM k WHERE v <> 'two'"));
  const auto rows = Rows(plan.rows);
  EXPECT_TRUE(Keys(plan, Protos(rows)).empty());
  const DmlWrite write = Write(plan, rows);
  EXPECT_EQ(Describe(write), (std::vector<std::string>{"delete (1)", "delete (5)"}));
  EXPECT_EQ(CommandTag(plan, write.count), "DELETE 2");
}

TEST_F(SqlDmlTest, StatementsOfMoreRowsThanOneWriteHoldsAreRefused) {
  const DmlPlan plan = Planned(Dml("DELETE FROM t"));
  std::vector<pb::Row> rows(kMaxInsertOrDeleteRows + 1, ipc::ToProto(TRows()[0]));
  auto refused = BuildWrite(plan, rows, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().sqlstate, "54000");
  EXPECT_NE(refused.error().message.find("more than 100000 rows in one statement"),
            std::string::npos)
      << refused.error().message;
  rows.pop_back();
  EXPECT_TRUE(BuildWrite(plan, rows, {}).ok());
}

}  // namespace
}  // namespace tandem::frontend::plan

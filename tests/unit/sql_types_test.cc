// The binder's typing of the types of DESIGN §16 (frontend/plan): every construct's result type
// as PostgreSQL 15 gives it, and its refusals with PostgreSQL's SQLSTATE and words. Planned against
// an in-memory catalog; no evaluation (the values are the runtime's and the reference's to test).
//
// The expected types are PostgreSQL 15.20's, asked of it over the same table:
//   CREATE TABLE n (i2 smallint, i4 integer, i8 bigint, f4 real, f8 double precision, d numeric,
//     m numeric(10,2), s text, v varchar(5), c char(3), b bytea, dt date, tm time, ts timestamp,
//     tz timestamptz, iv interval, u uuid, p boolean);
//   CREATE VIEW x AS SELECT <expression> AS c FROM n;
//   SELECT format_type(atttypid, atttypmod) FROM pg_attribute
//     WHERE attrelid = 'x'::regclass AND attname = 'c';
// (format_type shows the modifiers PostgreSQL keeps: a column's numeric(10,2), a cast's
// varchar(2).) The errors are PostgreSQL's for `SELECT <expression> FROM n`.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "frontend/catalog/objects.h"
#include "frontend/catalog/sql_type.h"
#include "frontend/plan/dml.h"
#include "frontend/plan/planner.h"
#include "frontend/sql/parse.h"
#include "ipc/codec.h"
#include "memory_catalog.h"

namespace tandem::frontend::plan {
namespace {

namespace pb = ::tandem::protocol;
using ::tandem::testing::MemoryCatalog;

class SqlTypesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    catalog_ = new MemoryCatalog();
    auto col = [](const char* name, pb::ScalarType type, TypeMods mods = {}) {
      return CatalogColumn{name, type, true, mods};
    };
    catalog_->AddTable("n", {col("i2", pb::INT16), col("i4", pb::INT32), col("i8", pb::INT64),
                             col("f4", pb::FLOAT32), col("f8", pb::FLOAT64), col("d", pb::NUMERIC),
                             col("m", pb::NUMERIC, TypeMods{10, 2, 0, false}), col("s", pb::STRING),
                             col("v", pb::STRING, TypeMods{0, 0, 5, false}),
                             col("c", pb::STRING, TypeMods{0, 0, 3, true}), col("b", pb::BYTEA),
                             col("dt", pb::DATE), col("tm", pb::TIME), col("ts", pb::TIMESTAMP),
                             col("tz", pb::TIMESTAMPTZ), col("iv", pb::INTERVAL),
                             col("u", pb::UUID), col("p", pb::BOOL)});
    catalog_->AddTable(
        "w",
        {CatalogColumn{"k", pb::INT32, false, {}}, col("m", pb::NUMERIC, TypeMods{5, 2, 0, false}),
         col("v", pb::STRING, TypeMods{0, 0, 3, false}),
         col("c", pb::STRING, TypeMods{0, 0, 3, true}), col("dt", pb::DATE), col("i8", pb::INT64)},
        {0});
    catalog_->AddTable(kOneRowObject, {{"one", pb::INT64, false, {}}}, {}, ObjectKind::kSource);
  }
  static void TearDownTestSuite() { delete catalog_; }

  static SqlResult<PlannedRelation> Plan(const std::string& sql) {
    auto parsed = sql::Parse(sql);
    if (!parsed.ok()) return parsed.error();
    const auto& stmt = std::get<sql::PostgresStatement>(parsed->at(0).form).stmt;
    return PlanQuery(stmt, *catalog_, sql);
  }
  static SqlResult<DmlPlan> Dml(const std::string& sql) {
    auto parsed = sql::Parse(sql);
    if (!parsed.ok()) return parsed.error();
    const auto& stmt = std::get<sql::PostgresStatement>(parsed->at(0).form).stmt;
    return PlanDml(stmt, *catalog_, sql);
  }
  // The type (with its modifiers) of `SELECT <expression> FROM n`, or the error.
  static std::string TypeOf(const std::string& expression) {
    auto planned = Plan("SELECT " + expression + " FROM n");
    if (!planned.ok()) return "error " + planned.error().ToString();
    if (planned->columns.size() != 1) return "columns: " + std::to_string(planned->columns.size());
    return SqlTypeNameWithMods(planned->columns[0].type, planned->columns[0].mods);
  }
  static SqlError Refused(const std::string& expression) {
    auto planned = Plan("SELECT " + expression + " FROM n");
    EXPECT_FALSE(planned.ok()) << expression;
    return planned.ok() ? SqlError("", "") : planned.error();
  }

  static MemoryCatalog* catalog_;
};

MemoryCatalog* SqlTypesTest::catalog_ = nullptr;

struct Typed {
  const char* expression;
  const char* postgres;  // format_type of the column PostgreSQL 15 makes of it
};

TEST_F(SqlTypesTest, EveryConstructHasPostgresResultType) {
  const std::vector<Typed> cases = {
      {"1", "integer"},
      {"3000000000", "bigint"},
      {"30000000000000000000", "numeric"},
      {"1.5", "numeric"},
      {"-2147483648", "integer"},
      {"'x'", "text"},
      {"NULL", "text"},
      {"i2", "smallint"},
      {"m", "numeric(10,2)"},
      {"v", "character varying(5)"},
      {"c", "character(3)"},
      {"i2 + i2", "smallint"},
      {"i2 + i4", "integer"},
      {"i4 + i8", "bigint"},
      {"i4 + f4", "double precision"},
      {"i8 + f4", "double precision"},
      {"f4 + f8", "double precision"},
      {"i8 + d", "numeric"},
      {"i4 * d", "numeric"},
      {"d * f8", "double precision"},
      {"m + 1", "numeric"},
      {"m * m", "numeric"},
      {"i4 / 2", "integer"},
      {"d / 3", "numeric"},
      {"f4 * 2", "double precision"},
      {"-m", "numeric"},
      {"-iv", "interval"},
      {"dt + 1", "date"},
      {"dt - 1", "date"},
      {"1 + dt", "date"},
      {"dt - dt", "integer"},
      {"dt + iv", "timestamp without time zone"},
      {"dt + tm", "timestamp without time zone"},
      {"tm + dt", "timestamp without time zone"},
      {"dt - tm", "timestamp without time zone"},
      {"ts + iv", "timestamp without time zone"},
      {"iv + ts", "timestamp without time zone"},
      {"tz - iv", "timestamp with time zone"},
      {"ts - ts", "interval"},
      {"tz - tz", "interval"},
      {"tm - tm", "interval"},
      {"tm + iv", "time without time zone"},
      {"iv * 2", "interval"},
      {"2 * iv", "interval"},
      {"iv / 2", "interval"},
      {"iv * 1.5", "interval"},
      {"dt - '2026-01-01'", "integer"},
      {"tm + '01:00'", "time without time zone"},
      {"s || s", "text"},
      {"s || 1", "text"},
      {"1 || s", "text"},
      {"v || c", "text"},
      {"c || 'x'", "text"},
      {"s || NULL", "text"},
      {"'a' || 'b'", "text"},
      {"i4 = i8", "boolean"},
      {"i8 = d", "boolean"},
      {"d = f8", "boolean"},
      {"f4 = d", "boolean"},
      {"dt = ts", "boolean"},
      {"ts < tz", "boolean"},
      {"dt = '2026-12-06'", "boolean"},
      {"c = 'ab'", "boolean"},
      {"v = c", "boolean"},
      {"s = c", "boolean"},
      {"u = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", "boolean"},
      {"iv = tm", "boolean"},
      {"CASE WHEN p THEN i4 ELSE d END", "numeric"},
      {"CASE WHEN p THEN i8 ELSE f4 END", "real"},
      {"CASE WHEN p THEN 1 ELSE 2.5 END", "numeric"},
      {"CASE WHEN p THEN m ELSE m END", "numeric(10,2)"},
      {"CASE WHEN p THEN v ELSE v END", "character varying(5)"},
      {"CASE WHEN p THEN v ELSE s END", "text"},
      // PostgreSQL: character varying without a length, which Tandem has as text.
      {"CASE WHEN p THEN c ELSE v END", "text"},
      {"CASE WHEN p THEN dt ELSE ts END", "timestamp without time zone"},
      {"CASE WHEN p THEN ts ELSE tz END", "timestamp with time zone"},
      {"COALESCE(i2, i4)", "integer"},
      {"COALESCE(i8, f4)", "real"},
      {"COALESCE(m, 0)", "numeric"},
      {"COALESCE(NULL, dt)", "date"},
      {"GREATEST(i4, d)", "numeric"},
      {"LEAST(dt, tz)", "timestamp with time zone"},
      {"NULLIF(i4, d)", "numeric"},
      {"NULLIF(d, i4)", "numeric"},
      // character = text is text's: text; character = character keeps the first's typmod.
      {"NULLIF(c, s)", "text"},
      {"NULLIF(c, c)", "character(3)"},
      {"NULLIF(c, 'a')", "character(3)"},
      {"CASE WHEN p THEN c ELSE c END", "character(3)"},
      {"b || b", "bytea"},
      {"i2::int4", "integer"},
      {"i4::numeric(10,2)", "numeric(10,2)"},
      {"'12.345'::numeric(5,1)", "numeric(5,1)"},
      {"'abc'::varchar(2)", "character varying(2)"},
      {"'abc'::char(5)", "character(5)"},
      {"CAST(s AS integer)", "integer"},
      {"d::float8", "double precision"},
      {"f8::numeric", "numeric"},
      {"dt::timestamp", "timestamp without time zone"},
      {"tz::date", "date"},
      {"ts::time", "time without time zone"},
      {"i4::bool", "boolean"},
      {"p::int4", "integer"},
      {"u::text", "text"},
      {"'1 day'::interval", "interval"},
      {"DATE '2026-12-06'", "date"},
      {"TIMESTAMP '2026-12-06 12:00'", "timestamp without time zone"},
      {"TIMESTAMPTZ '2026-12-06 12:00+00'", "timestamp with time zone"},
      {"INTERVAL '1 day'", "interval"},
      {"TIME '12:00'", "time without time zone"},
      {"length(s)", "integer"},
      {"length(c)", "integer"},
      {"char_length(v)", "integer"},
      {"octet_length(b)", "integer"},
      {"lower(c)", "text"},
      {"upper(v)", "text"},
      {"substr(s, 2)", "text"},
      {"substr(s, 2, 3)", "text"},
      {"substring(s from 2 for 3)", "text"},
      {"position('a' in s)", "integer"},
      {"strpos(s, 'a')", "integer"},
      {"trim(s)", "text"},
      {"trim(both 'x' from s)", "text"},
      {"ltrim(s)", "text"},
      {"rtrim(s, 'x')", "text"},
      {"replace(s, 'a', 'b')", "text"},
      {"s LIKE 'a%'", "boolean"},
      {"s NOT LIKE 'a%'", "boolean"},
      {"s ILIKE 'a%'", "boolean"},
      {"c LIKE 'a%'", "boolean"},
      {"abs(i2)", "smallint"},
      {"abs(m)", "numeric"},
      {"abs(f4)", "real"},
      {"round(f4)", "double precision"},
      {"round(m)", "numeric"},
      {"round(i4)", "double precision"},
      {"round(i4, 1)", "numeric"},
      {"round(m, 1)", "numeric"},
      {"trunc(d)", "numeric"},
      {"trunc(d, 2)", "numeric"},
      {"floor(i8)", "double precision"},
      {"ceil(m)", "numeric"},
      {"ceiling(f8)", "double precision"},
      {"mod(i4, 3)", "integer"},
      {"mod(i8, i4)", "bigint"},
      {"mod(d, 2)", "numeric"},
      {"power(i4, 2)", "double precision"},
      {"power(d, 2)", "numeric"},
      {"pow(f4, 2)", "double precision"},
      {"sqrt(i4)", "double precision"},
      {"sqrt(d)", "numeric"},
      {"date_trunc('day', ts)", "timestamp without time zone"},
      {"date_trunc('day', tz)", "timestamp with time zone"},
      {"date_trunc('day', dt)", "timestamp with time zone"},
      {"date_trunc('hour', iv)", "interval"},
      {"date_trunc('hour', tm)", "interval"},
      {"extract(year from dt)", "numeric"},
      {"extract(epoch from tz)", "numeric"},
      {"extract(hour from iv)", "numeric"},
      {"date_part('year', ts)", "double precision"},
      {"date_part('minute', tm)", "double precision"},
      {"i4 % 2", "integer"},
      {"d % 2", "numeric"},
      {"count(*)", "bigint"},
      {"count(i4)", "bigint"},
      {"sum(i2)", "bigint"},
      {"sum(i4)", "bigint"},
      {"sum(i8)", "numeric"},
      {"sum(f4)", "real"},
      {"sum(f8)", "double precision"},
      {"sum(d)", "numeric"},
      {"sum(m)", "numeric"},
      {"sum(iv)", "interval"},
      {"sum(tm)", "interval"},
      {"avg(i2)", "numeric"},
      {"avg(i4)", "numeric"},
      {"avg(i8)", "numeric"},
      {"avg(f4)", "double precision"},
      {"avg(f8)", "double precision"},
      {"avg(m)", "numeric"},
      {"avg(iv)", "interval"},
      {"min(i4)", "integer"},
      {"max(m)", "numeric"},
      {"min(dt)", "date"},
      {"max(ts)", "timestamp without time zone"},
      {"min(tz)", "timestamp with time zone"},
      {"max(iv)", "interval"},
      {"min(tm)", "time without time zone"},
      {"max(s)", "text"},
      {"min(v)", "text"},
      {"max(c)", "character"},
  };
  for (const Typed& t : cases) {
    EXPECT_EQ(TypeOf(t.expression), t.postgres) << "SELECT " << t.expression << " FROM n";
  }
}

// PostgreSQL's refusals: SQLSTATE and message (its words for `SELECT <expression> FROM n`).
TEST_F(SqlTypesTest, RefusalsAreWordedAsPostgresWordsThem) {
  struct Refusal {
    const char* expression;
    const char* sqlstate;
    const char* message;
  };
  const std::vector<Refusal> cases = {
      {"dt + dt", "42883", "operator does not exist: date + date"},
      {"dt + '1 day'", "42725", "operator is not unique: date + unknown"},
      {"s + 1", "42883", "operator does not exist: text + integer"},
      {"'1' + '2'", "42725", "operator is not unique: unknown + unknown"},
      {"u < b", "42883", "operator does not exist: uuid < bytea"},
      {"- s", "42883", "operator does not exist: - text"},
      {"NULLIF(dt, 1)", "42883", "operator does not exist: date = integer"},
      {"s LIKE 1", "42883", "operator does not exist: text ~~ integer"},
      {"length(i4)", "42883", "function length(integer) does not exist"},
      {"round(f8, 1)", "42883", "function round(double precision, integer) does not exist"},
      {"substr(s, i8)", "42883", "function substr(text, bigint) does not exist"},
      {"date_trunc('day', s)", "42883", "function date_trunc(unknown, text) does not exist"},
      {"extract(day from s)", "42883", "function pg_catalog.extract(unknown, text) does not exist"},
      {"max(u)", "42883", "function max(uuid) does not exist"},
      {"sum(s)", "42883", "function sum(text) does not exist"},
      {"p::date", "42846", "cannot cast type boolean to date"},
      {"CASE WHEN p THEN s ELSE i4 END", "42804", "CASE types integer and text cannot be matched"},
      {"CASE WHEN p THEN u ELSE b END", "42846", "CASE/WHEN could not convert type uuid to bytea"},
      {"COALESCE(dt, iv)", "42804", "COALESCE types date and interval cannot be matched"},
      {"'abc'::int4", "22P02", "invalid input syntax for type integer: \"abc\""},
      {"'3000000000'::int4", "22003", "value \"3000000000\" is out of range for type integer"},
      {"3000000000::int4", "22003", "integer out of range"},
      {"i4 IN (1, 'x')", "22P02", "invalid input syntax for type integer: \"x\""},
      {"'x'::foo", "42704", "type \"foo\" does not exist"},
      // Dates, times and numerics are read while planning, as PostgreSQL reads its constants.
      {"DATE 'x'", "22007", "invalid input syntax for type date: \"x\""},
      {"'2026-13-01'::date", "22008", "date/time field value out of range: \"2026-13-01\""},
      {"TIMESTAMP '2026-12-06 25:00'", "22008",
       "date/time field value out of range: \"2026-12-06 25:00\""},
      {"INTERVAL 'abc'", "22007", "invalid input syntax for type interval: \"abc\""},
      {"'abc'::numeric", "22P02", "invalid input syntax for type numeric: \"abc\""},
  };
  for (const Refusal& r : cases) {
    const SqlError e = Refused(r.expression);
    EXPECT_EQ(e.sqlstate, r.sqlstate) << r.expression << ": " << e.message;
    EXPECT_EQ(e.message, r.message) << r.expression;
  }
  // What PostgreSQL takes and Tandem does not: named, 0A000.
  EXPECT_EQ(Refused("i4::numeric(39)").sqlstate, "0A000");
  EXPECT_EQ(Refused("ts::timestamp(3)").sqlstate, "0A000");
}

// The Casts the runtime needs (it never converts implicitly: ipc/plan_typing.h): PostgreSQL's
// implicit conversions become Casts of the narrower operand, constants are converted here.
std::string Json(const pb::Plan& plan) { return ipc::ToJson(plan); }

TEST_F(SqlTypesTest, ImplicitConversionsAreCastsInThePlan) {
  // int4 + int8: the int4 cast to int8 (PostgreSQL's int48pl is int8's +).
  auto p = Plan("SELECT i4 + i8 FROM n");
  ASSERT_TRUE(p.ok()) << p.error().ToString();
  EXPECT_NE(Json(p->plan).find("\"cast\":{\"expr\":{\"column\":1}"), std::string::npos)
      << Json(p->plan);
  EXPECT_NE(Json(p->plan).find("\"type\":\"INT64\""), std::string::npos);
  // A constant is converted here: `i8 = 5` compares with an int8 literal, no Cast (a key lookup
  // stays a key lookup).
  p = Plan("SELECT i8 FROM n WHERE i8 = 5");
  ASSERT_TRUE(p.ok()) << p.error().ToString();
  EXPECT_EQ(Json(p->plan).find("cast"), std::string::npos) << Json(p->plan);
  // A quoted constant takes the column's type: '2026-12-06' read as a date here (20793 days
  // since 1970-01-01: SELECT '2026-12-06'::date - DATE '1970-01-01'), a date literal.
  p = Plan("SELECT dt FROM n WHERE dt = '2026-12-06'");
  ASSERT_TRUE(p.ok()) << p.error().ToString();
  EXPECT_NE(Json(p->plan).find("\"date\":20793"), std::string::npos) << Json(p->plan);
  EXPECT_EQ(Json(p->plan).find("cast"), std::string::npos) << Json(p->plan);
  // '1.5e3'::numeric is 1500 (PostgreSQL: SELECT '1.5e3'::numeric).
  p = Plan("SELECT '1.5e3'::numeric FROM n");
  ASSERT_TRUE(p.ok()) << p.error().ToString();
  EXPECT_NE(Json(p->plan).find("\"numeric\":\"1500\""), std::string::npos) << Json(p->plan);
  // character compares without its trailing blanks: both sides rtrim'd.
  p = Plan("SELECT c FROM n WHERE c = 'ab'");
  ASSERT_TRUE(p.ok()) << p.error().ToString();
  EXPECT_NE(Json(p->plan).find("RTRIM"), std::string::npos) << Json(p->plan);
  // sum(int8) is numeric: the input cast to NUMERIC before the runtime's SUM.
  p = Plan("SELECT sum(i8) FROM n");
  ASSERT_TRUE(p.ok()) << p.error().ToString();
  EXPECT_NE(Json(p->plan).find("\"type\":\"NUMERIC\""), std::string::npos) << Json(p->plan);
  // A decimal literal is an exact numeric datum.
  p = Plan("SELECT 12.50 FROM n");
  ASSERT_TRUE(p.ok()) << p.error().ToString();
  EXPECT_NE(Json(p->plan).find("\"numeric\":\"12.50\""), std::string::npos) << Json(p->plan);
}

TEST_F(SqlTypesTest, SetOperationsAndValuesTakeTheCommonType) {
  // SELECT pg_typeof(x) FROM (SELECT i4 AS x FROM n UNION ALL SELECT d FROM n) q: numeric.
  auto p = Plan("SELECT i4 FROM n UNION ALL SELECT d FROM n");
  ASSERT_TRUE(p.ok()) << p.error().ToString();
  EXPECT_EQ(p->columns[0].type, pb::NUMERIC);
  // VALUES (1), (2.5): numeric; (1), (3000000000): bigint.
  p = Plan("VALUES (1), (2.5)");
  ASSERT_TRUE(p.ok()) << p.error().ToString();
  EXPECT_EQ(p->columns[0].type, pb::NUMERIC);
  p = Plan("VALUES (1), (3000000000)");
  ASSERT_TRUE(p.ok()) << p.error().ToString();
  EXPECT_EQ(p->columns[0].type, pb::INT64);
  // SELECT dt FROM n UNION SELECT ts FROM n: timestamp without time zone.
  p = Plan("SELECT dt FROM n UNION SELECT ts FROM n");
  ASSERT_TRUE(p.ok()) << p.error().ToString();
  EXPECT_EQ(p->columns[0].type, pb::TIMESTAMP);
  // PostgreSQL: UNION types text and integer cannot be matched (42804).
  p = Plan("SELECT s FROM n UNION SELECT i4 FROM n");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().sqlstate, "42804");
  EXPECT_EQ(p.error().message, "UNION types text and integer cannot be matched");
}

TEST_F(SqlTypesTest, WritesAssignWithPostgresAssignmentCasts) {
  // INSERT INTO w VALUES (1, 1.005, 'ab', 'x', '2026-12-06', 5): every value PostgreSQL takes.
  auto d = Dml("INSERT INTO w VALUES (1, 1.005, 'ab', 'x', '2026-12-06', 5)");
  ASSERT_TRUE(d.ok()) << d.error().ToString();
  // bigint into integer: an assignment cast (PostgreSQL: 22003 "integer out of range" when it
  // does not fit: a constant is checked here).
  d = Dml("INSERT INTO w (k) VALUES (3000000000)");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().sqlstate, "22003");
  EXPECT_EQ(d.error().message, "integer out of range");
  d = Dml("INSERT INTO w (k, i8) SELECT i8, i4 FROM n");
  ASSERT_TRUE(d.ok()) << d.error().ToString();
  // PostgreSQL: column "dt" is of type date but expression is of type integer (42804).
  d = Dml("INSERT INTO w (k, dt) VALUES (1, 5)");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().sqlstate, "42804");
  EXPECT_EQ(d.error().message, "column \"dt\" is of type date but expression is of type integer");
  // Anything into a string column (its output function): PostgreSQL takes INSERT INTO w (k, v)
  // VALUES (1, 12).
  d = Dml("INSERT INTO w (k, v) VALUES (1, 12)");
  ASSERT_TRUE(d.ok()) << d.error().ToString();
}

TEST_F(SqlTypesTest, VarcharAndCharLengthsAreCheckedAndPaddedOnWrite) {
  auto d = Dml("INSERT INTO w (k, v, c) VALUES (1, 'abc', 'a')");
  ASSERT_TRUE(d.ok()) << d.error().ToString();
  auto row = [](const char* v, const char* c) {
    pb::Row r;
    r.add_datums()->set_int64(1);
    r.add_datums()->mutable_null();
    r.add_datums()->set_string(v);
    r.add_datums()->set_string(c);
    r.add_datums()->mutable_null();
    r.add_datums()->mutable_null();
    return r;
  };
  // char(3) padded: 'a' is written 'a  ' (PostgreSQL: SELECT c, length(c::bytea) → "a  ", 3).
  auto w = BuildWrite(*d, {row("abc", "a")}, {});
  ASSERT_TRUE(w.ok()) << w.error().ToString();
  ASSERT_EQ(w->updates.size(), 1u);
  EXPECT_EQ(w->updates[0].upsert().datums(3).string(), "a  ");
  // Blanks past the length are cut (PostgreSQL: INSERT … VALUES (1, 'abc  ', …) stores 'abc').
  w = BuildWrite(*d, {row("abc  ", "a")}, {});
  ASSERT_TRUE(w.ok()) << w.error().ToString();
  EXPECT_EQ(w->updates[0].upsert().datums(2).string(), "abc");
  // PostgreSQL: ERROR 22001 value too long for type character varying(3).
  w = BuildWrite(*d, {row("abcd", "a")}, {});
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().sqlstate, "22001");
  EXPECT_EQ(w.error().message, "value too long for type character varying(3)");
  w = BuildWrite(*d, {row("ab", "abcd")}, {});
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().message, "value too long for type character(3)");
  // Characters, not bytes: 'äöü' is three.
  w = BuildWrite(*d, {row("\xc3\xa4\xc3\xb6\xc3\xbc", "a")}, {});
  EXPECT_TRUE(w.ok()) << w.error().ToString();
}

TEST_F(SqlTypesTest, OutputColumnsKeepTheModifiersPostgresKeeps) {
  // RowDescription's typmod: numeric(10,2) is ((10 << 16) | 2) + 4, varchar(5) 9, char(3) 7.
  auto p = Plan("SELECT m, v, c, m + 1 FROM n");
  ASSERT_TRUE(p.ok()) << p.error().ToString();
  EXPECT_EQ(TypeModifier(p->columns[0].type, p->columns[0].mods), (10 << 16 | 2) + 4);
  EXPECT_EQ(TypeModifier(p->columns[1].type, p->columns[1].mods), 9);
  EXPECT_EQ(TypeModifier(p->columns[2].type, p->columns[2].mods), 7);
  EXPECT_EQ(TypeModifier(p->columns[3].type, p->columns[3].mods), -1);
}

}  // namespace
}  // namespace tandem::frontend::plan

// The frontend's catalog (frontend/catalog/): each DDL statement's commands — every one validated
// as the supervisor validates a controller's commands, in order, on a replica that saw all the
// statements before (and again as a fresh replica's replay) — every refusal's SQLSTATE and
// message with the catalog unchanged, DROP … CASCADE's order, and the catalog file: its round
// trip, ids rising across restarts, and a torn, damaged or left-behind file.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "controller/compaction.h"
#include "frontend/catalog/catalog.h"
#include "frontend/catalog/catalog_store.h"
#include "frontend/catalog/ddl.h"
#include "frontend/sql/parse.h"
#include "ipc/model.h"
#include "ipc/validate.h"

namespace tandem::frontend::catalog_test {
namespace {

namespace pb = ipc::pb;
using sql::SqlError;
using sql::SqlResult;

pb::Command Hello() {
  pb::Command c;
  c.mutable_hello()->set_nonce("catalog-test");
  c.mutable_hello()->set_protocol_version(ipc::kProtocolVersion);
  return c;
}

// The frontend's catalog and one replica that has seen every command the statements made.
class CatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    replica_.set_data_dir(true);
    ASSERT_TRUE(replica_.Validate(Hello()).ok());
  }

  // Parses `sql` (one statement) and runs it; a view's or materialized view's query is
  // `planned`.
  SqlResult<DdlOutcome> Run(const std::string& sql, const PlannedQuery* planned = nullptr,
                            std::uint64_t as_of_floor = 0) {
    texts_.push_back(sql);
    const std::string& kept = texts_.back();
    auto parsed = sql::Parse(kept);
    if (!parsed.ok()) return parsed.error();
    EXPECT_EQ(parsed->size(), 1u) << sql;
    const auto& statement = parsed->front();
    const auto* pg = std::get_if<sql::PostgresStatement>(&statement.form);
    EXPECT_NE(pg, nullptr) << sql;
    if (!pg) return SqlError("XX000", "not a PostgreSQL statement");
    const StatementText text{kept, statement.text};
    const pg_query::Node& n = pg->stmt;
    if (n.has_create_stmt()) return CreateTable(n.create_stmt(), text, catalog_);
    if (n.has_index_stmt()) return CreateIndex(n.index_stmt(), text, as_of_floor, catalog_);
    if (n.has_drop_stmt()) return Drop(n.drop_stmt(), text, catalog_);
    EXPECT_NE(planned, nullptr) << sql;
    if (n.has_view_stmt()) return CreateView(n.view_stmt(), text, *planned, catalog_);
    if (n.has_create_table_as_stmt()) {
      return CreateMaterializedView(n.create_table_as_stmt(), text, *planned, as_of_floor,
                                    catalog_);
    }
    ADD_FAILURE() << "no DDL: " << sql;
    return SqlError("XX000", "no DDL");
  }

  // Runs `sql`, which must succeed; the replica must accept each of its commands in order.
  DdlOutcome Ok(const std::string& sql, const PlannedQuery* planned = nullptr,
                std::uint64_t as_of_floor = 0) {
    auto r = Run(sql, planned, as_of_floor);
    EXPECT_TRUE(r.ok()) << sql << ": " << (r.ok() ? "" : r.error().ToString());
    if (!r.ok()) return {};
    for (const auto& c : r->commands) {
      const Status s = replica_.Validate(c);
      EXPECT_TRUE(s.ok()) << sql << ": the replica refuses " << ipc::ToJson(c) << ": "
                          << s.ToString();
    }
    ExpectReplayAccepted();
    return std::move(r).value();
  }

  // Runs `sql`, which must fail with `state`, leaving the catalog as it was.
  SqlError Refused(const std::string& sql, const std::string& state,
                   const PlannedQuery* planned = nullptr) {
    const std::string before = CatalogToText(catalog_);
    auto r = Run(sql, planned);
    EXPECT_FALSE(r.ok()) << sql;
    if (r.ok()) return SqlError("", "");
    EXPECT_EQ(r.error().sqlstate, state) << sql << ": " << r.error().ToString();
    EXPECT_EQ(CatalogToText(catalog_), before) << sql << ": a refusal changed the catalog";
    return r.error();
  }

  // A fresh replica accepts the catalog's replay, and then maintains exactly its live indexes.
  void ExpectReplayAccepted() const {
    ipc::Validator fresh;
    fresh.set_data_dir(true);
    ASSERT_TRUE(fresh.Validate(Hello()).ok());
    for (const auto& c : catalog_.Replay()) {
      const Status s = fresh.Validate(c);
      EXPECT_TRUE(s.ok()) << "replay refused: " << ipc::ToJson(c) << ": " << s.ToString();
    }
    std::set<std::string> live;
    for (const auto& [id, info] : fresh.indexes()) live.insert(id);
    EXPECT_EQ(live, catalog_.LiveIndexes());
    std::set<std::string> named;
    for (const auto& [name, i] : catalog_.indexes()) named.insert(i.id);
    EXPECT_EQ(live, named);
  }

  // The default index import of object `name`, as a planner would give it.
  pb::IndexImport DefaultImport(const std::string& name) const {
    const CatalogObject* o = catalog_.FindObject(name);
    const CatalogIndex* i = catalog_.IndexesOn(name).front();
    pb::IndexImport imp;
    imp.set_id(i->id);
    imp.set_on(o->id);
    for (const auto& c : o->columns) {
      auto* col = imp.mutable_schema()->add_columns();
      col->set_name(c.name);
      col->set_type(c.type);
      col->set_nullable(c.nullable);
    }
    for (auto k : i->key) imp.add_key(k);
    return imp;
  }

  Catalog catalog_;
  ipc::Validator replica_;
  std::deque<std::string> texts_;  // the statements' text outlives their trees' use
};

// A plan reading `on` (a collection id) projected to `projection`.
pb::Plan Projection(const std::string& on, std::vector<std::uint32_t> projection) {
  pb::Plan p;
  p.mutable_mfp()->mutable_input()->mutable_get()->set_id(on);
  for (auto c : projection) p.mutable_mfp()->mutable_mfp()->add_projection(c);
  return p;
}

CatalogColumn Column(std::string name, pb::ScalarType type, bool nullable) {
  CatalogColumn c;
  c.name = std::move(name);
  c.type = type;
  c.nullable = nullable;
  return c;
}

// ---------------------------------------------------------------------------------------------
// CREATE TABLE

TEST_F(CatalogTest, CreateTableIsOneDataflowWithTheTableSourceAndItsPrimaryKeyIndex) {
  const DdlOutcome out =
      Ok("CREATE TABLE t (a bigint PRIMARY KEY, b text NOT NULL, c double precision, d boolean, "
         "e int8, f float8, g varchar, h bool)");
  EXPECT_EQ(out.command_tag, "CREATE TABLE");
  ASSERT_EQ(out.commands.size(), 1u);
  const auto& d = out.commands[0].create_dataflow().desc();
  EXPECT_EQ(d.class_(), pb::MAINTAINED);
  ASSERT_EQ(d.as_of().elements_size(), 1);
  EXPECT_EQ(d.as_of().elements(0), 0u);
  ASSERT_EQ(d.source_imports_size(), 1);
  const auto& s = d.source_imports(0);
  EXPECT_EQ(s.id(), "u1");
  EXPECT_TRUE(s.source().has_table());
  ASSERT_EQ(s.upsert_key_size(), 1);
  EXPECT_EQ(s.upsert_key(0), 0u);
  ASSERT_EQ(s.schema().columns_size(), 8);
  const std::vector<pb::ScalarType> types = {pb::INT64, pb::STRING,  pb::FLOAT64, pb::BOOL,
                                             pb::INT64, pb::FLOAT64, pb::STRING,  pb::BOOL};
  const std::vector<bool> nullable = {false, false, true, true, true, true, true, true};
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(s.schema().columns(i).type(), types[static_cast<std::size_t>(i)]) << i;
    EXPECT_EQ(s.schema().columns(i).nullable(), nullable[static_cast<std::size_t>(i)]) << i;
  }
  ASSERT_EQ(d.index_exports_size(), 1);
  EXPECT_EQ(d.index_exports(0).id(), "u2");
  EXPECT_EQ(d.index_exports(0).on(), "u1");
  ASSERT_EQ(d.index_exports(0).key_size(), 1);
  EXPECT_EQ(d.index_exports(0).key(0), 0u);
  // The catalog: a table, its default index first.
  const CatalogObject* t = catalog_.FindObject("t");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->kind, ObjectKind::kTable);
  EXPECT_EQ(t->id, "u1");
  EXPECT_EQ(t->primary_key, std::vector<std::uint32_t>{0});
  ASSERT_EQ(catalog_.IndexesOn("t").size(), 1u);
  EXPECT_EQ(catalog_.IndexesOn("t")[0]->name, "t_primary_idx");
  EXPECT_EQ(catalog_.IndexesOn("t")[0]->id, "u2");
  // The replica knows it as a writable table.
  EXPECT_TRUE(replica_.tables().count("u1"));
  EXPECT_EQ(catalog_.LiveIndexes(), std::set<std::string>{"u2"});
}

TEST_F(CatalogTest, TableWithoutPrimaryKeyIsIndexedOnEveryColumnAndHasNoUpsertKey) {
  const DdlOutcome out = Ok("CREATE TABLE plain (x bigint, y text)");
  const auto& d = out.commands.at(0).create_dataflow().desc();
  EXPECT_EQ(d.source_imports(0).upsert_key_size(), 0);
  EXPECT_EQ(
      std::vector<std::uint32_t>(d.index_exports(0).key().begin(), d.index_exports(0).key().end()),
      (std::vector<std::uint32_t>{0, 1}));
}

TEST_F(CatalogTest, TablePrimaryKeyConstraintIsTheUpsertKeyInItsOrderAndNotNull) {
  const DdlOutcome out = Ok("CREATE TABLE t (a int8, b text, c bool, PRIMARY KEY (b, a))");
  const auto& s = out.commands.at(0).create_dataflow().desc().source_imports(0);
  EXPECT_EQ(std::vector<std::uint32_t>(s.upsert_key().begin(), s.upsert_key().end()),
            (std::vector<std::uint32_t>{1, 0}));
  EXPECT_FALSE(s.schema().columns(0).nullable());
  EXPECT_FALSE(s.schema().columns(1).nullable());
  EXPECT_TRUE(s.schema().columns(2).nullable());
}

TEST_F(CatalogTest, QuotedNamesKeepTheirCaseAndUnquotedOnesFold) {
  Ok("CREATE TABLE \"Mixed\" (\"A\" bigint, b bigint)");
  Ok("CREATE TABLE mixed (a bigint)");
  ASSERT_NE(catalog_.FindObject("Mixed"), nullptr);
  ASSERT_NE(catalog_.FindObject("mixed"), nullptr);
  EXPECT_EQ(catalog_.FindObject("Mixed")->columns[0].name, "A");
  Refused("CREATE TABLE MIXED (a bigint)", "42P07");
}

TEST_F(CatalogTest, CreateTableTakesPostgresTypesWithTheirModifiers) {
  // Each spelling PostgreSQL 15 takes, and what it makes of it (format_type of the column):
  // smallint, integer, bigint, real, double precision, numeric(10,2), numeric, text,
  // character varying(5), character(3), character(1), bytea, date, time without time zone,
  // timestamp without time zone, timestamp with time zone, interval, uuid, boolean.
  const DdlOutcome out =
      Ok("CREATE TABLE every (a smallint, b int, c integer, d int4, e int8, f real, g float, "
         "h double precision, i decimal(10, 2), j numeric, k text, l character varying(5), "
         "m char(3), n char, o bytea, p date, q time, r timestamp, s timestamptz, "
         "t timestamp with time zone, u interval, v uuid, w boolean, x int2, y float(10), "
         "z varchar)");
  const CatalogObject* o = catalog_.FindObject("every");
  ASSERT_NE(o, nullptr);
  std::vector<std::string> shown;
  for (const auto& c : o->columns) shown.push_back(SqlTypeNameWithMods(c.type, c.mods));
  EXPECT_EQ(shown, (std::vector<std::string>{"smallint",
                                             "integer",
                                             "integer",
                                             "integer",
                                             "bigint",
                                             "real",
                                             "double precision",
                                             "double precision",
                                             "numeric(10,2)",
                                             "numeric",
                                             "text",
                                             "character varying(5)",
                                             "character(3)",
                                             "character(1)",
                                             "bytea",
                                             "date",
                                             "time without time zone",
                                             "timestamp without time zone",
                                             "timestamp with time zone",
                                             "timestamp with time zone",
                                             "interval",
                                             "uuid",
                                             "boolean",
                                             "smallint",
                                             "real",
                                             "text"}));
  EXPECT_EQ(o->columns[8].type, pb::NUMERIC);
  EXPECT_EQ(o->columns[8].mods, (TypeMods{10, 2, 0, false}));
  EXPECT_EQ(o->columns[12].mods, (TypeMods{0, 0, 3, true}));
  // The source's schema carries the modifiers to the replicas.
  ASSERT_FALSE(out.commands.empty());
  const auto& schema = out.commands[0].create_dataflow().desc().source_imports(0).schema();
  EXPECT_EQ(schema.columns(8).precision(), 10u);
  EXPECT_EQ(schema.columns(8).scale(), 2u);
  EXPECT_EQ(schema.columns(11).length(), 5u);
  EXPECT_FALSE(schema.columns(11).blank_padded());
  EXPECT_TRUE(schema.columns(12).blank_padded());
}

TEST_F(CatalogTest, CreateTableRefusals) {
  Ok("CREATE TABLE t (a bigint)");
  EXPECT_EQ(Refused("CREATE TABLE t (b text)", "42P07").message, "relation \"t\" already exists");
  // PostgreSQL 15's words for a bad modifier (CREATE TABLE x (a numeric(0)), varchar(0), char(0)).
  EXPECT_EQ(Refused("CREATE TABLE u (a numeric(0))", "22023").message,
            "NUMERIC precision 0 must be between 1 and 1000");
  EXPECT_EQ(Refused("CREATE TABLE u (a varchar(0))", "22023").message,
            "length for type varchar must be at least 1");
  EXPECT_EQ(Refused("CREATE TABLE u (a char(0))", "22023").message,
            "length for type char must be at least 1");
  EXPECT_EQ(Refused("CREATE TABLE u (a varchar(10485761))", "22023").message,
            "length for type varchar cannot exceed 10485760");
  EXPECT_EQ(Refused("CREATE TABLE u (a date(3))", "42601").message,
            "type modifier is not allowed for type \"date\"");
  // What PostgreSQL has and Tandem does not: 0A000 naming it.
  EXPECT_NE(Refused("CREATE TABLE u (a numeric(39))", "0A000").message.find("at most 38 digits"),
            std::string::npos);
  Refused("CREATE TABLE u (a numeric(5,6))", "0A000");
  Refused("CREATE TABLE u (a numeric(5,-1))", "0A000");
  Refused("CREATE TABLE u (a timestamp(3))", "0A000");
  Refused("CREATE TABLE u (a interval day)", "0A000");
  Refused("CREATE TABLE u (a jsonb)", "0A000");
  Refused("CREATE TABLE u (a bigint[])", "0A000");
  EXPECT_EQ(Refused("CREATE TABLE u (a nosuchtype)", "42704").message,
            "type \"nosuchtype\" does not exist");
  EXPECT_EQ(Refused("CREATE TABLE u (a bigint, a text)", "42701").message,
            "column \"a\" specified more than once");
  EXPECT_EQ(Refused("CREATE TABLE u (a bigint PRIMARY KEY, b bigint PRIMARY KEY)", "42P16").message,
            "multiple primary keys for table \"u\" are not allowed");
  EXPECT_EQ(Refused("CREATE TABLE u (a bigint, PRIMARY KEY (z))", "42703").message,
            "column \"z\" named in key does not exist");
  EXPECT_EQ(Refused("CREATE TABLE u (a bigint UNIQUE)", "0A000").message,
            "UNIQUE constraints are not supported");
  EXPECT_EQ(Refused("CREATE TABLE u (a bigint DEFAULT 1)", "0A000").message,
            "DEFAULT is not supported");
  Refused("CREATE TABLE u (a bigint CHECK (a > 0))", "0A000");
  Refused("CREATE TABLE u (a bigint REFERENCES t (a))", "0A000");
  Refused("CREATE TEMPORARY TABLE u (a bigint)", "0A000");
  Refused("CREATE TABLE u (a bigint NULL NOT NULL)", "42601");
  EXPECT_EQ(Refused("CREATE TABLE other.u (a bigint)", "3F000").message,
            "schema \"other\" does not exist");
  Refused("CREATE TABLE u ()", "0A000");
  // The position points at the construct: the type.
  const SqlError e = Refused("CREATE TABLE u (a jsonb)", "0A000");
  EXPECT_EQ(e.position, 19);
  // Nothing was handed out by the refusals: the next table is u3.
  const DdlOutcome out = Ok("CREATE TABLE public.u (a bigint)");
  EXPECT_EQ(out.commands.at(0).create_dataflow().desc().source_imports(0).id(), "u3");
}

TEST_F(CatalogTest, CreateTableIfNotExistsIsANoticeAndNothingElse) {
  Ok("CREATE TABLE t (a bigint)");
  const DdlOutcome out = Ok("CREATE TABLE IF NOT EXISTS t (b text)");
  EXPECT_TRUE(out.commands.empty());
  ASSERT_EQ(out.notices.size(), 1u);
  EXPECT_EQ(out.notices[0].sqlstate, "42P07");
  EXPECT_EQ(out.notices[0].message, "relation \"t\" already exists, skipping");
  EXPECT_EQ(catalog_.FindObject("t")->columns[0].name, "a");
}

// ---------------------------------------------------------------------------------------------
// CREATE TABLE … WITH: sources

TEST_F(CatalogTest, CsvAndJsonLinesSourcesAreReadOnlySourcesWithTheirPath) {
  const DdlOutcome csv =
      Ok("CREATE TABLE prices (sku text PRIMARY KEY, price double precision) "
         "WITH (source = 'csv', path = '/data/prices.csv')");
  const auto& s = csv.commands.at(0).create_dataflow().desc().source_imports(0);
  ASSERT_TRUE(s.source().has_csv());
  EXPECT_EQ(s.source().csv().path(), "/data/prices.csv");
  EXPECT_EQ(s.upsert_key_size(), 1);
  EXPECT_EQ(catalog_.FindObject("prices")->kind, ObjectKind::kSource);
  EXPECT_FALSE(replica_.tables().count(s.id()));
  const DdlOutcome jsonl =
      Ok("CREATE TABLE events (id bigint, body text) WITH (source = jsonl, path = '/e.jsonl')");
  const auto& j = jsonl.commands.at(0).create_dataflow().desc().source_imports(0);
  ASSERT_TRUE(j.source().has_json_lines());
  EXPECT_EQ(j.source().json_lines().path(), "/e.jsonl");
}

TEST_F(CatalogTest, GeneratorSourcesTakeTheirParametersAndShape) {
  const DdlOutcome counter =
      Ok("CREATE TABLE c (n bigint) WITH (source = 'counter', tick_interval_us = 1000, max = 50)");
  const auto& s = counter.commands.at(0).create_dataflow().desc().source_imports(0);
  ASSERT_TRUE(s.source().has_counter());
  EXPECT_EQ(s.source().counter().tick_interval_us(), 1000u);
  EXPECT_EQ(s.source().counter().max(), 50u);
  EXPECT_FALSE(s.schema().columns(0).nullable());
  const DdlOutcome kv =
      Ok("CREATE TABLE kv (k bigint, v bigint) WITH (source = 'key_value', keys = 10, "
         "updates_per_tick = 2, seed = 7)");
  const auto& k = kv.commands.at(0).create_dataflow().desc().source_imports(0);
  ASSERT_TRUE(k.source().has_key_value());
  EXPECT_EQ(k.source().key_value().keys(), 10u);
  EXPECT_EQ(k.source().key_value().updates_per_tick(), 2u);
  EXPECT_EQ(k.source().key_value().seed(), 7u);
  // A table's own tick.
  const DdlOutcome t = Ok("CREATE TABLE t (a bigint) WITH (tick_interval_ms = 100)");
  EXPECT_EQ(t.commands.at(0)
                .create_dataflow()
                .desc()
                .source_imports(0)
                .source()
                .table()
                .tick_interval_ms(),
            100u);
}

TEST_F(CatalogTest, SourceOptionRefusals) {
  EXPECT_EQ(Refused("CREATE TABLE s (a bigint) WITH (colour = 'red')", "22023").message,
            "unrecognized parameter \"colour\"");
  Refused("CREATE TABLE s (a bigint) WITH (source = 'kafka')", "22023");
  Refused("CREATE TABLE s (a bigint) WITH (source = 'csv')", "22023");  // no path
  EXPECT_NE(Refused("CREATE TABLE s (a bigint) WITH (source = 'csv', path = 'rel.csv')", "22023")
                .message.find("not absolute"),
            std::string::npos);
  Refused("CREATE TABLE s (a bigint) WITH (source = 'csv', path = '/x', max = 3)", "22023");
  Refused("CREATE TABLE s (a bigint, b bigint) WITH (source = 'counter')", "42P16");
  Refused("CREATE TABLE s (a text) WITH (source = 'counter')", "42P16");
  Refused("CREATE TABLE s (a bigint PRIMARY KEY, b bigint) WITH (source = 'key_value')", "42P16");
  Refused("CREATE TABLE s (a bigint) WITH (source = 'counter', max = 'many')", "22023");
  Refused("CREATE TABLE s (a bigint) WITH (source = 'key_value', keys = 0)", "42P16");
  Refused("CREATE TABLE s (k bigint, v bigint) WITH (source = 'key_value', keys = 0)", "22023");
  // Every column in a csv source's upsert key: CheckSourceImport's refusal, now.
  Refused("CREATE TABLE s (a bigint PRIMARY KEY) WITH (source = 'csv', path = '/x.csv')", "22023");
}

// ---------------------------------------------------------------------------------------------
// Views, materialized views, indexes

TEST_F(CatalogTest, ViewIsCatalogOnlyWithItsQueryTextAndColumns) {
  Ok("CREATE TABLE t (a bigint PRIMARY KEY, b text)");
  const std::vector<CatalogColumn> cols = {Column("a", pb::INT64, false),
                                           Column("b", pb::STRING, true)};
  const pb::Plan plan;
  const std::vector<pb::IndexImport> imports;
  const PlannedQuery q(plan, imports, cols);
  const DdlOutcome out = Ok("CREATE VIEW v (x) AS SELECT a, b FROM t WHERE a > 1", &q);
  EXPECT_EQ(out.command_tag, "CREATE VIEW");
  EXPECT_TRUE(out.commands.empty());
  const CatalogObject* v = catalog_.FindObject("v");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->kind, ObjectKind::kView);
  EXPECT_TRUE(v->id.empty());
  EXPECT_EQ(v->definition_sql, "SELECT a, b FROM t WHERE a > 1");
  EXPECT_EQ(v->depends_on, std::vector<std::string>{"t"});
  ASSERT_EQ(v->columns.size(), 2u);
  EXPECT_EQ(v->columns[0].name, "x");  // renamed by the column list
  EXPECT_EQ(v->columns[1].name, "b");
  EXPECT_TRUE(catalog_.IndexesOn("v").empty());
  Refused("CREATE VIEW v AS SELECT 1", "42P07", &q);
  Refused("CREATE VIEW w (p, q, r) AS SELECT a, b FROM t", "42601", &q);
  Refused("CREATE OR REPLACE VIEW w AS SELECT a FROM t", "0A000", &q);
  Refused("CREATE INDEX ON v (a)", "42809");
}

TEST_F(CatalogTest, MaterializedViewImportsBuildsAndExportsFromWhereItsInputsAreReadable) {
  Ok("CREATE TABLE t (a bigint PRIMARY KEY, b text)");
  catalog_.RecordCompaction("u2", 500);
  ASSERT_TRUE(replica_.Validate(controller::AllowCompaction("u2", 500)).ok());
  const std::vector<pb::IndexImport> imports = {DefaultImport("t")};
  const pb::Plan plan = Projection("u1", {1, 0});
  const std::vector<CatalogColumn> cols = {Column("b", pb::STRING, true),
                                           Column("a", pb::INT64, true)};
  const PlannedQuery q(plan, imports, cols);
  const DdlOutcome out =
      Ok("CREATE MATERIALIZED VIEW m AS SELECT b, a FROM t ORDER BY a WITH DATA", &q, 100);
  EXPECT_EQ(out.command_tag, "CREATE MATERIALIZED VIEW");
  ASSERT_EQ(out.commands.size(), 1u);
  const auto& d = out.commands[0].create_dataflow().desc();
  EXPECT_EQ(d.as_of().elements(0), 500u);  // the history's compaction, above the floor
  ASSERT_EQ(d.index_imports_size(), 1);
  EXPECT_EQ(d.index_imports(0).id(), "u2");
  ASSERT_EQ(d.objects_to_build_size(), 1);
  EXPECT_EQ(d.objects_to_build(0).id(), "u3");
  ASSERT_EQ(d.index_exports_size(), 1);
  EXPECT_EQ(d.index_exports(0).id(), "u4");
  EXPECT_EQ(d.index_exports(0).on(), "u3");
  EXPECT_EQ(d.index_exports(0).key_size(), 2);
  const CatalogObject* m = catalog_.FindObject("m");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->kind, ObjectKind::kMaterializedView);
  EXPECT_EQ(m->definition_sql, "SELECT b, a FROM t ORDER BY a");
  EXPECT_EQ(m->depends_on, std::vector<std::string>{"t"});
  EXPECT_FALSE(m->columns[1].nullable);  // the plan's nullability: a is the table's key
  EXPECT_EQ(catalog_.IndexesOn("m").at(0)->name, "m_primary_idx");
  // An index on the materialized view imports its default index.
  const DdlOutcome idx = Ok("CREATE INDEX m_by_a ON m (a)");
  const auto& x = idx.commands.at(0).create_dataflow().desc();
  EXPECT_EQ(x.index_imports(0).id(), "u4");
  EXPECT_EQ(x.index_exports(0).on(), "u3");
  EXPECT_EQ(x.index_exports(0).key(0), 1u);
  // A floor above what the history knows wins.
  const DdlOutcome late = Ok("CREATE INDEX ON t (b)", nullptr, 9000);
  EXPECT_EQ(late.commands.at(0).create_dataflow().desc().as_of().elements(0), 9000u);
  EXPECT_EQ(catalog_.FindIndex("t_b_idx")->key, std::vector<std::uint32_t>{1});
}

TEST_F(CatalogTest, MaterializedViewRefusals) {
  Ok("CREATE TABLE t (a bigint PRIMARY KEY, b text)");
  const std::vector<pb::IndexImport> imports = {DefaultImport("t")};
  const pb::Plan plan = Projection("u1", {1, 0});
  const std::vector<CatalogColumn> cols = {Column("b", pb::STRING, true),
                                           Column("a", pb::INT64, true)};
  const PlannedQuery q(plan, imports, cols);
  Refused("CREATE MATERIALIZED VIEW t AS SELECT b, a FROM t", "42P07", &q);
  Refused("CREATE MATERIALIZED VIEW m AS SELECT b, a FROM t WITH NO DATA", "0A000", &q);
  pb::Finishing limit;
  limit.set_limit(3);
  const PlannedQuery limited(plan, imports, cols, &limit);
  Refused("CREATE MATERIALIZED VIEW m AS SELECT b, a FROM t LIMIT 3", "0A000", &limited);
  // A planner whose columns disagree with its plan is an internal error, not a bad dataflow.
  const std::vector<CatalogColumn> wrong = {Column("b", pb::INT64, true),
                                            Column("a", pb::INT64, true)};
  const PlannedQuery bad(plan, imports, wrong);
  Refused("CREATE MATERIALIZED VIEW m AS SELECT b, a FROM t", "XX000", &bad);
}

TEST_F(CatalogTest, CreateIndexRefusals) {
  Ok("CREATE TABLE t (a bigint, b text)");
  EXPECT_EQ(Refused("CREATE INDEX i ON t (z)", "42703").message, "column \"z\" does not exist");
  EXPECT_EQ(Refused("CREATE INDEX i ON nosuch (a)", "42P01").message,
            "relation \"nosuch\" does not exist");
  Refused("CREATE UNIQUE INDEX i ON t (a)", "0A000");
  Refused("CREATE INDEX i ON t ((a + 1))", "0A000");
  Refused("CREATE INDEX i ON t (a) WHERE a > 0", "0A000");
  Refused("CREATE INDEX i ON t USING hash (a)", "0A000");
  Ok("CREATE INDEX i ON t (b, a)");
  EXPECT_EQ(Refused("CREATE INDEX i ON t (a)", "42P07").message, "relation \"i\" already exists");
  EXPECT_TRUE(Ok("CREATE INDEX IF NOT EXISTS i ON t (a)").commands.empty());
  EXPECT_EQ(catalog_.IndexesOn("t").size(), 2u);
  EXPECT_EQ(catalog_.IndexesOn("t")[0]->name, "t_primary_idx");
}

TEST_F(CatalogTest, CompactionRecordedReplacesTheLastOneAndGoesWithItsIndex) {
  Ok("CREATE TABLE t (a bigint)");
  Ok("CREATE TABLE s (a bigint)");
  catalog_.RecordCompaction("u2", 500);
  catalog_.RecordCompaction("u4", 600);
  catalog_.RecordCompaction("u2", 700);
  catalog_.RecordCompaction("u2", 650);   // lower: nothing
  catalog_.RecordCompaction("u1", 900);   // not an index: nothing
  catalog_.RecordCompaction("u99", 900);  // unknown: nothing
  std::vector<std::string> compactions;
  for (const auto& c : catalog_.Replay()) {
    if (c.has_allow_compaction()) {
      compactions.push_back(c.allow_compaction().id() + "@" +
                            std::to_string(c.allow_compaction().frontier().elements(0)));
    }
  }
  EXPECT_EQ(compactions, (std::vector<std::string>{"u4@600", "u2@700"}));
  EXPECT_EQ(catalog_.ReadableFrom("u2"), 700u);
  ExpectReplayAccepted();
  Ok("DROP TABLE t");
  for (const auto& c : catalog_.Replay()) {
    EXPECT_FALSE(c.has_allow_compaction() && c.allow_compaction().id() == "u2");
  }
}

TEST_F(CatalogTest, LongNamesAreTruncatedAsPostgresTruncatesThem) {
  Ok("CREATE TABLE " + std::string(70, 'x') + " (a bigint)");
  EXPECT_NE(catalog_.FindObject(std::string(63, 'x')), nullptr);
  Refused("CREATE TABLE " + std::string(64, 'x') + " (b bigint)", "42P07");
}

TEST_F(CatalogTest, TooManyColumnsAndDeepQueriesAreErrorsOrWorkNeverACrash) {
  std::string wide = "CREATE TABLE w (";
  for (int i = 0; i < 1601; ++i) wide += (i ? ", c" : "c") + std::to_string(i) + " bigint";
  EXPECT_EQ(Refused(wide + ")", "54011").message, "tables can have at most 1600 columns");
  // A view over a query nested as deep as the parser allows: its dependencies are found without
  // recursion.
  Ok("CREATE TABLE t (a bigint)");
  std::string deep = "SELECT a FROM t";
  for (int i = 0; i < 200; ++i) deep = "SELECT a FROM (" + deep + ") AS q" + std::to_string(i);
  const std::vector<CatalogColumn> cols = {Column("a", pb::INT64, true)};
  const pb::Plan plan;
  const std::vector<pb::IndexImport> imports;
  const PlannedQuery q(plan, imports, cols);
  Ok("CREATE VIEW deep AS " + deep, &q);
  EXPECT_EQ(catalog_.FindObject("deep")->depends_on, std::vector<std::string>{"t"});
  EXPECT_EQ(catalog_.FindObject("deep")->definition_sql, deep);
}

TEST_F(CatalogTest, CatalogMutationsRefusedChangeNothing) {
  Ok("CREATE TABLE t (a bigint)");
  const std::string before = CatalogToText(catalog_);
  CatalogObject o;
  o.name = "u";
  o.kind = ObjectKind::kView;
  o.depends_on = {"nosuch"};
  auto e = catalog_.Create(o, {}, {});
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->sqlstate, "42P01");
  o.depends_on = {};
  CatalogIndex i;
  i.name = "t_primary_idx";
  i.id = "u50";
  e = catalog_.Create(o, {i}, {});
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->sqlstate, "42P07");
  EXPECT_EQ(CatalogToText(catalog_), before);
}

// ---------------------------------------------------------------------------------------------
// DROP

// t ← v (view) ← m (materialized view, reads v; imports t's index i) ← m_idx; s alone.
class DropTest : public CatalogTest {
 protected:
  void SetUp() override {
    CatalogTest::SetUp();
    Ok("CREATE TABLE t (a bigint PRIMARY KEY, b text)");  // u1, u2
    Ok("CREATE INDEX i ON t (b)");                        // u3
    Ok("CREATE TABLE s (x bigint)");                      // u4, u5
    const std::vector<CatalogColumn> cols = {Column("a", pb::INT64, false),
                                             Column("b", pb::STRING, true)};
    const pb::Plan none;
    const std::vector<pb::IndexImport> no_imports;
    const PlannedQuery view(none, no_imports, cols);
    Ok("CREATE VIEW v AS SELECT a, b FROM t", &view);
    pb::IndexImport by_b = DefaultImport("t");
    by_b.set_id("u3");
    by_b.clear_key();
    by_b.add_key(1);
    const std::vector<pb::IndexImport> imports = {by_b};
    const pb::Plan plan = Projection("u1", {0, 1});
    const PlannedQuery m(plan, imports, cols);
    Ok("CREATE MATERIALIZED VIEW m AS SELECT * FROM v", &m);  // u6, u7
    Ok("CREATE INDEX m_idx ON m (b)");                        // u8
  }

  std::vector<std::string> DroppedIds(const DdlOutcome& out) {
    std::vector<std::string> ids;
    for (const auto& c : out.commands) {
      EXPECT_TRUE(ipc::IsDrop(c)) << ipc::ToJson(c);
      ids.push_back(c.allow_compaction().id());
    }
    return ids;
  }
};

TEST_F(DropTest, DropWithoutCascadeNamesEveryDependantAsPostgresDoes) {
  const SqlError e = Refused("DROP TABLE t", "2BP01");
  EXPECT_EQ(e.message, "cannot drop table t because other objects depend on it");
  EXPECT_EQ(e.detail,
            "view v depends on table t\n"
            "materialized view m depends on view v");
  EXPECT_EQ(e.hint, "Use DROP ... CASCADE to drop the dependent objects too.");
  const SqlError v = Refused("DROP VIEW v", "2BP01");
  EXPECT_EQ(v.message, "cannot drop view v because other objects depend on it");
  EXPECT_EQ(v.detail, "materialized view m depends on view v");
  // m imports index i: dropping i would pull the arrangement from under it.
  const SqlError i = Refused("DROP INDEX i", "2BP01");
  EXPECT_EQ(i.detail, "materialized view m depends on index i");
  // A default index goes only with its object.
  const SqlError def = Refused("DROP INDEX t_primary_idx CASCADE", "2BP01");
  EXPECT_EQ(def.message, "cannot drop index t_primary_idx because table t requires it");
}

TEST_F(DropTest, DropCascadeDropsDependantsFirstAndPrunesTheHistory) {
  const DdlOutcome out = Ok("DROP TABLE t CASCADE");
  EXPECT_EQ(out.command_tag, "DROP TABLE");
  // Highest id first: m_idx (imports m's index), m, i (imported by m), then t's own index.
  EXPECT_EQ(DroppedIds(out), (std::vector<std::string>{"u8", "u7", "u3", "u2"}));
  ASSERT_EQ(out.notices.size(), 1u);
  EXPECT_EQ(out.notices[0].message, "drop cascades to 2 other objects");
  EXPECT_EQ(out.notices[0].detail,
            "drop cascades to view v\n"
            "drop cascades to materialized view m");
  EXPECT_EQ(catalog_.FindObject("t"), nullptr);
  EXPECT_EQ(catalog_.FindObject("v"), nullptr);
  EXPECT_EQ(catalog_.FindObject("m"), nullptr);
  EXPECT_EQ(catalog_.FindIndex("i"), nullptr);
  EXPECT_NE(catalog_.FindObject("s"), nullptr);
  // The history is s's dataflow alone: a replica that reconnects is sent only that.
  ASSERT_EQ(catalog_.Replay().size(), 1u);
  EXPECT_EQ(catalog_.Replay()[0].create_dataflow().desc().source_imports(0).id(), "u4");
  EXPECT_EQ(replica_.indexes().size(), 1u);
  EXPECT_TRUE(catalog_.IsDroppedId("u7"));
  EXPECT_FALSE(catalog_.IsDroppedId("u5"));
  EXPECT_FALSE(catalog_.IsDroppedId("u99"));
  // A name dropped can be made again, with new ids.
  const DdlOutcome again = Ok("CREATE TABLE t (a bigint)");
  EXPECT_EQ(again.commands.at(0).create_dataflow().desc().source_imports(0).id(), "u9");
}

TEST_F(DropTest, DropOfALeafAndOfAnIndexWithItsImporter) {
  EXPECT_EQ(DroppedIds(Ok("DROP INDEX m_idx")), std::vector<std::string>{"u8"});
  EXPECT_EQ(DroppedIds(Ok("DROP INDEX i CASCADE")), (std::vector<std::string>{"u7", "u3"}));
  EXPECT_EQ(catalog_.FindObject("m"), nullptr);
  EXPECT_NE(catalog_.FindObject("v"), nullptr);
  EXPECT_TRUE(Ok("DROP VIEW v").commands.empty());
  EXPECT_EQ(DroppedIds(Ok("DROP TABLE t, s")), (std::vector<std::string>{"u2", "u5"}));
  EXPECT_TRUE(catalog_.Replay().empty());
  EXPECT_TRUE(catalog_.objects().empty());
}

TEST_F(DropTest, DropRefusalsAndIfExists) {
  EXPECT_EQ(Refused("DROP TABLE nosuch", "42P01").message, "table \"nosuch\" does not exist");
  EXPECT_EQ(Refused("DROP VIEW nosuch", "42P01").message, "view \"nosuch\" does not exist");
  EXPECT_EQ(Refused("DROP MATERIALIZED VIEW nosuch", "42P01").message,
            "materialized view \"nosuch\" does not exist");
  EXPECT_EQ(Refused("DROP INDEX nosuch", "42704").message, "index \"nosuch\" does not exist");
  const SqlError wrong = Refused("DROP VIEW m", "42809");
  EXPECT_EQ(wrong.message, "\"m\" is not a view");
  EXPECT_EQ(wrong.hint, "Use DROP MATERIALIZED VIEW to remove a materialized view.");
  EXPECT_EQ(Refused("DROP TABLE v", "42809").hint, "Use DROP VIEW to remove a view.");
  const SqlError not_index = Refused("DROP INDEX IF EXISTS t", "42809");
  EXPECT_EQ(not_index.message, "\"t\" is not an index");
  EXPECT_EQ(not_index.hint, "Use DROP TABLE to remove a table.");
  const SqlError not_table = Refused("DROP TABLE i", "42809");
  EXPECT_EQ(not_table.message, "\"i\" is not a table");
  EXPECT_EQ(not_table.hint, "Use DROP INDEX to remove an index.");
  // All or nothing: s would go, t cannot.
  Refused("DROP TABLE s, t", "2BP01");
  EXPECT_NE(catalog_.FindObject("s"), nullptr);
  const DdlOutcome out = Ok("DROP TABLE IF EXISTS nosuch, s");
  ASSERT_EQ(out.notices.size(), 1u);
  EXPECT_EQ(out.notices[0].message, "table \"nosuch\" does not exist, skipping");
  EXPECT_EQ(DroppedIds(out), std::vector<std::string>{"u5"});
}

// ---------------------------------------------------------------------------------------------
// SHOW

TEST_F(DropTest, ShowListsObjectsIndexesAndColumns) {
  Ok("CREATE TABLE c (n bigint) WITH (source = 'counter')");
  const ShowResult tables = Show(sql::StatementKind::kShowTables, catalog_);
  EXPECT_EQ(tables.columns, std::vector<std::string>{"name"});
  EXPECT_EQ(tables.rows, (std::vector<std::vector<std::string>>{{"c"}, {"s"}, {"t"}}));
  EXPECT_EQ(Show(sql::StatementKind::kShowViews, catalog_).rows,
            (std::vector<std::vector<std::string>>{{"v"}}));
  EXPECT_EQ(Show(sql::StatementKind::kShowMaterializedViews, catalog_).rows,
            (std::vector<std::vector<std::string>>{{"m"}}));
  const ShowResult indexes = Show(sql::StatementKind::kShowIndexes, catalog_);
  EXPECT_EQ(indexes.columns, (std::vector<std::string>{"name", "on", "key"}));
  EXPECT_EQ(indexes.rows, (std::vector<std::vector<std::string>>{{"c_primary_idx", "c", "n"},
                                                                 {"i", "t", "b"},
                                                                 {"m_idx", "m", "b"},
                                                                 {"m_primary_idx", "m", "a, b"},
                                                                 {"s_primary_idx", "s", "x"},
                                                                 {"t_primary_idx", "t", "a"}}));
  texts_.push_back("SHOW COLUMNS FROM t");
  auto parsed = sql::Parse(texts_.back());
  ASSERT_TRUE(parsed.ok());
  const auto& st = std::get<sql::ShowColumnsStatement>(parsed->front().form);
  auto cols =
      ShowColumns(st.relation, StatementText{texts_.back(), parsed->front().text}, catalog_);
  ASSERT_TRUE(cols.ok());
  EXPECT_EQ(cols->columns, (std::vector<std::string>{"name", "type", "nullable"}));
  EXPECT_EQ(cols->rows,
            (std::vector<std::vector<std::string>>{{"a", "bigint", "NO"}, {"b", "text", "YES"}}));
  texts_.push_back("SHOW COLUMNS FROM nosuch");
  auto parsed2 = sql::Parse(texts_.back());
  ASSERT_TRUE(parsed2.ok());
  auto missing = ShowColumns(std::get<sql::ShowColumnsStatement>(parsed2->front().form).relation,
                             StatementText{texts_.back(), parsed2->front().text}, catalog_);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().sqlstate, "42P01");
}

// ---------------------------------------------------------------------------------------------
// Durability

class StoreTest : public DropTest {
 protected:
  void SetUp() override {
    DropTest::SetUp();
    char pattern[] = "/tmp/tandem-catalog-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string ReadFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  void WriteFile(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
  }

  std::string dir_;
};

// `body` (a catalog file's lines before its end line) with the end line the store writes: its
// line count and FNV-1a 64 — a whole file, whatever the body says.
std::string Sealed(const std::string& body) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char ch : body) {
    h ^= ch;
    h *= 0x100000001b3ULL;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  std::size_t lines = 0;
  for (char ch : body) lines += ch == '\n';
  return body + "end " + std::to_string(lines) + " " + hex + "\n";
}

TEST_F(StoreTest, MissingFileIsAnEmptyCatalog) {
  auto store = CatalogStore::Open(dir_ + "/new");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto c = store->Load();
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->objects().empty());
  EXPECT_EQ(c->next_id(), 1u);
}

TEST_F(StoreTest, SaveAndLoadRoundTripEverything) {
  auto store = CatalogStore::Open(dir_);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  // Names that need escaping survive too.
  Ok("CREATE TABLE \"we ird,%name\" (\"col -1\" text)");
  Ok("CREATE TABLE typed (a numeric(12,2), b varchar(7), c char(2), d timestamptz, e int2)");
  ASSERT_TRUE(store->Save(catalog_).ok());
  auto back = store->Load();
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(CatalogToText(*back), CatalogToText(catalog_));
  EXPECT_EQ(back->next_id(), catalog_.next_id());
  EXPECT_EQ(back->FindObject("m")->definition_sql, "SELECT * FROM v");
  EXPECT_EQ(back->FindObject("v")->depends_on, std::vector<std::string>{"t"});
  EXPECT_EQ(back->FindObject("m")->depends_on, std::vector<std::string>{"v"});
  EXPECT_NE(back->FindObject("we ird,%name"), nullptr);
  EXPECT_EQ(back->FindObject("we ird,%name")->columns[0].name, "col -1");
  ASSERT_NE(back->FindObject("typed"), nullptr);
  std::vector<std::string> typed;
  for (const auto& c : back->FindObject("typed")->columns) {
    typed.push_back(SqlTypeNameWithMods(c.type, c.mods));
  }
  EXPECT_EQ(typed,
            (std::vector<std::string>{"numeric(12,2)", "character varying(7)", "character(2)",
                                      "timestamp with time zone", "smallint"}));
  EXPECT_EQ(back->Replay().size(), catalog_.Replay().size());
  for (std::size_t i = 0; i < back->Replay().size(); ++i) {
    EXPECT_EQ(ipc::ToJson(back->Replay()[i]), ipc::ToJson(catalog_.Replay()[i]));
  }
  EXPECT_EQ(back->LiveIndexes(), catalog_.LiveIndexes());
  EXPECT_FALSE(std::filesystem::exists(store->path() + ".tmp"));
}

TEST_F(StoreTest, IdsKeepRisingAcrossARestartEvenAfterDrops) {
  Ok("DROP TABLE t CASCADE");  // the highest ids, u7 and u8, are gone
  const std::uint64_t next = catalog_.next_id();
  {
    auto store = CatalogStore::Open(dir_);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE(store->Save(catalog_).ok());
  }
  auto store = CatalogStore::Open(dir_);
  ASSERT_TRUE(store.ok());
  auto back = store->Load();
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->next_id(), next);
  // What was dropped stays known as this catalog's (a replica still running it is ours to
  // reconcile); an id it never handed out, or still has, is not.
  EXPECT_TRUE(back->IsDroppedId("u7"));
  EXPECT_TRUE(back->IsDroppedId("u8"));
  EXPECT_FALSE(back->IsDroppedId("u4"));
  EXPECT_FALSE(back->IsDroppedId("u" + std::to_string(next)));
  back->Retire({"u" + std::to_string(next + 5), "u4"});  // not handed out; still defined
  EXPECT_FALSE(back->IsDroppedId("u" + std::to_string(next + 5)));
  EXPECT_FALSE(back->IsDroppedId("u4"));
  catalog_ = std::move(back).value();
  const DdlOutcome out = Ok("CREATE TABLE fresh (a bigint)");
  EXPECT_EQ(out.commands.at(0).create_dataflow().desc().source_imports(0).id(),
            "u" + std::to_string(next));
}

TEST_F(StoreTest, ATempFileLeftByACrashLeavesTheOldCatalog) {
  auto store = CatalogStore::Open(dir_);
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(store->Save(catalog_).ok());
  const std::string saved = CatalogToText(catalog_);
  // A crash mid-Save: the next catalog half written to the temp file, never renamed.
  Ok("CREATE TABLE late (a bigint)");
  const std::string next = CatalogToText(catalog_);
  WriteFile(store->path() + ".tmp", next.substr(0, next.size() / 2));
  auto back = store->Load();
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(CatalogToText(*back), saved);
  // The next Save replaces the temp file and the catalog whole.
  ASSERT_TRUE(store->Save(catalog_).ok());
  auto after = store->Load();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(CatalogToText(*after), next);
}

TEST_F(StoreTest, TornOrDamagedFilesAreErrorsNamingTheFile) {
  auto store = CatalogStore::Open(dir_);
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(store->Save(catalog_).ok());
  const std::string good = ReadFile(store->path());
  auto expect_corrupt = [&](const std::string& text, const std::string& why) {
    WriteFile(store->path(), text);
    auto c = store->Load();
    ASSERT_FALSE(c.ok()) << why;
    EXPECT_EQ(c.status().code(), StatusCode::kCorruption) << why;
    EXPECT_NE(c.status().message().find(store->path()), std::string::npos)
        << why << ": " << c.status().message();
  };
  // Cut at every length but the whole (a torn write on a file system that lost the order).
  for (std::size_t n = 0; n < good.size(); n += 7) expect_corrupt(good.substr(0, n), "torn");
  expect_corrupt(good.substr(0, good.size() - 1), "no final newline");
  // One byte changed anywhere.
  for (std::size_t at : {std::size_t{0}, good.size() / 3, good.size() / 2, good.size() - 30}) {
    std::string bad = good;
    bad[at] = static_cast<char>(bad[at] ^ 0x20);
    expect_corrupt(bad, "flipped byte at " + std::to_string(at));
  }
  expect_corrupt("garbage\x01\x02 not a catalog\n", "garbage");
  expect_corrupt(std::string(4096, '\0'), "zeros");
  // Whole but of another version: a later one is refused naming it; versions 1 (the same records
  // but `retired`) and 2 (no types of DESIGN §16, no modifiers) are read.
  auto resealed_as = [&](const std::string& format_line) {
    std::string text = good;
    text.replace(0, good.find('\n'), format_line);
    return Sealed(text.substr(0, text.rfind("end ")));
  };
  WriteFile(store->path(), resealed_as("tandem-catalog 4"));
  auto c = store->Load();
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("version 4"), std::string::npos) << c.status().message();
  WriteFile(store->path(), resealed_as("tandem-catalog 2"));
  c = store->Load();
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(good.find("\nretired "), std::string::npos) << "the fixture drops nothing";
  WriteFile(store->path(), resealed_as("tandem-catalog 1"));
  c = store->Load();
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->next_id(), catalog_.next_id());
}

TEST_F(StoreTest, AWholeFileThatContradictsItselfIsRefused) {
  // An index line taken out (the history still maintains it), resealed: parses, but is not a
  // catalog.
  const std::string good = CatalogToText(catalog_);
  std::string body = good.substr(0, good.rfind("end "));
  const std::size_t at = body.find("\nindex i ");
  ASSERT_NE(at, std::string::npos);
  body.erase(at + 1, body.find('\n', at + 1) - at);
  auto c = CatalogFromText(Sealed(body), "F");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kCorruption);
  EXPECT_NE(c.status().message().find("u3"), std::string::npos) << c.status().message();
}

TEST_F(StoreTest, ASecondFrontendOnTheDataDirIsRefused) {
  auto store = CatalogStore::Open(dir_);
  ASSERT_TRUE(store.ok());
  // POSIX record locks are per process: the second opener is a child.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto other = CatalogStore::Open(dir_);
    const bool refused = !other.ok() && other.status().message().find("another tandem-frontend") !=
                                            std::string::npos;
    _exit(refused ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace tandem::frontend::catalog_test

// DDL: a CREATE, DROP or SHOW statement as PostgreSQL's parser gave it (a pg_query tree,
// frontend/sql/parse.h) → the catalog changed and the protocol commands that make every replica
// run what the catalog now says (DESIGN §3, §8, §9, §15). The statement's tree is read here and
// nowhere past here.
//
// Each function checks the whole statement against the catalog before it changes anything: on
// error (a SqlError with PostgreSQL's SQLSTATE and wording, pointing at the construct) the
// catalog is unchanged. On success the catalog holds the new state and DdlOutcome::commands are
// already in its history; the caller then sends them to every replica that is up, saves the
// catalog (CatalogStore::Save) and only then answers the client. A replica that is down gets them
// in its replay (Catalog::Replay) when it reconnects.
//
// What each statement makes (every id a fresh u<n> of Catalog::NewId):
//   * CREATE TABLE t (cols) — a table (DESIGN §9): one maintained CreateDataflow (as_of 0) with
//     the SourceImport u<a> {TableSource, schema, upsert_key = the PRIMARY KEY} and its default
//     index u<b> on it ("t_primary_idx", keyed by the primary key, else every column). That is
//     the whole sequence a writable table needs: tandem-ctl's create-source --table sends the same
//     one command (Schedule and AllowWrites change nothing in today's runtimes, and are not sent).
//     Its rows are the runtime's (its --data-dir table log, W1), never the catalog's.
//   * CREATE TABLE t (cols) WITH (source = '…', …) — a read-only source, made the same way with
//     another Source (the options are in ddl.cc's SourceOptions and README.md):
//       source = 'csv' | 'json_lines', path = '/absolute/file'            (a PRIMARY KEY: upsert)
//       source = 'counter' [, tick_interval_us = N] [, max = N]            (one bigint column)
//       source = 'key_value' [, keys = N] [, updates_per_tick = N]
//                            [, tick_interval_us = N] [, seed = N]         (two bigint columns)
//     and for a table (source = 'table', the default) tick_interval_ms = N.
//   * CREATE VIEW v AS query — the catalog only: the query's text as written and the columns the
//     planner gave it.
//   * CREATE MATERIALIZED VIEW m AS query — a maintained CreateDataflow importing the indexes
//     the planner chose, building m's collection u<a> from its plan and exporting m's default
//     index u<b> (every column); it starts where every imported index is readable (the history's
//     ReadableFrom, and no earlier than the caller's as_of floor: the compaction frontier it last
//     allowed), as controller/imports.h does for tandem-ctl.
//   * CREATE INDEX i ON o (cols) — a maintained CreateDataflow importing o's default index and
//     exporting u<n> on o's collection keyed by the columns.
//   * DROP TABLE|VIEW|MATERIALIZED VIEW|INDEX [IF EXISTS] names [CASCADE] — the drop of every
//     index that goes (Catalog::PlanDrop: dependants first, an AllowCompaction to the empty
//     frontier each); the history is pruned of the dropped dataflows.
//   * SHOW TABLES|VIEWS|MATERIALIZED VIEWS|INDEXES, SHOW COLUMNS FROM o — rows, changing nothing.
//
// Thread safety: none; the catalog is the caller's to serialise.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/catalog/catalog.h"
#include "frontend/sql/classify.h"
#include "frontend/sql/parse.h"
#include "frontend/sql/pg_query.pb.h"
#include "frontend/sql/sql_error.h"
#include "ipc/codec.h"

namespace tandem::frontend {

// Where the statement is: `sql` is the whole text the client sent (the trees' locations are byte
// offsets into it), `span` the statement's part of it (ParsedStatement::text).
struct StatementText {
  std::string_view sql;
  sql::TextSpan span;
};

// A NOTICE for the client (NoticeResponse's C, M and D fields): PostgreSQL's, where it has one.
struct DdlNotice {
  std::string sqlstate;  // "00000"; "42P07" for CREATE … IF NOT EXISTS of a name taken
  std::string message;   // "table "t" does not exist, skipping", "drop cascades to view v"
  std::string detail;    // "drop cascades to view v\ndrop cascades to …" (several dependants)
};

struct DdlOutcome {
  std::string command_tag;  // CommandComplete's tag: "CREATE TABLE", "DROP VIEW" …
  // To send to every replica, in order; already in the catalog's history. Empty: catalog only.
  std::vector<ipc::pb::Command> commands;
  std::vector<DdlNotice> notices;
};

// A SHOW statement's answer: text columns, text rows.
struct ShowResult {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
};

// The planner's answer for a view's or materialized view's query (frontend/plan/planner.h's
// PlannedRelation, taken apart so that the catalog does not depend on the planner).
struct PlannedQuery {
  const ipc::pb::Plan* plan = nullptr;                         // what a materialized view builds
  const std::vector<ipc::pb::IndexImport>* imports = nullptr;  // what the plan reads
  const std::vector<CatalogColumn>* columns = nullptr;         // its output columns
  const ipc::pb::Finishing* finishing = nullptr;               // ORDER BY/LIMIT; may be null

  PlannedQuery(const ipc::pb::Plan& p, const std::vector<ipc::pb::IndexImport>& i,
               const std::vector<CatalogColumn>& c, const ipc::pb::Finishing* f = nullptr)
      : plan(&p), imports(&i), columns(&c), finishing(f) {}
};

// A table's tick unless CREATE TABLE … WITH (tick_interval_ms = N) says otherwise: how often its
// time follows the clock while nobody writes it. A read at or after a session's last write (to
// another table, say) waits for every table it reads to reach that time, so this bounds that
// wait; the runtime's own default (1 s) is for tables written through tandem-ctl.
inline constexpr std::uint64_t kSqlTableTickMs = 20;

// PostgreSQL's name of a column type ("bigint", "double precision", "text", "boolean"): what
// SHOW COLUMNS says and what a RowDescription's type stands for.
std::string_view PostgresTypeName(ipc::pb::ScalarType type);

sql::SqlResult<DdlOutcome> CreateTable(const pg_query::CreateStmt& stmt, const StatementText& text,
                                       Catalog& catalog);
// `query`: the planner's answer for stmt.query (only its columns are used).
sql::SqlResult<DdlOutcome> CreateView(const pg_query::ViewStmt& stmt, const StatementText& text,
                                      const PlannedQuery& query, Catalog& catalog);
// `as_of_floor`: the dataflow starts no earlier (the compaction frontier the caller last allowed
// for what it imports, when the catalog's history may not know it yet).
sql::SqlResult<DdlOutcome> CreateMaterializedView(const pg_query::CreateTableAsStmt& stmt,
                                                  const StatementText& text,
                                                  const PlannedQuery& query,
                                                  std::uint64_t as_of_floor, Catalog& catalog);
sql::SqlResult<DdlOutcome> CreateIndex(const pg_query::IndexStmt& stmt, const StatementText& text,
                                       std::uint64_t as_of_floor, Catalog& catalog);
sql::SqlResult<DdlOutcome> Drop(const pg_query::DropStmt& stmt, const StatementText& text,
                                Catalog& catalog);

// SHOW TABLES (tables and sources: name), VIEWS (name), MATERIALIZED VIEWS (name), INDEXES
// (name, on, key): sorted by name. REQUIRES: `kind` is one of those four.
ShowResult Show(sql::StatementKind kind, const Catalog& catalog);
// SHOW COLUMNS FROM relation (a RangeVar): name, type, nullable ("YES"/"NO"), in column order;
// 42P01 for an unknown name.
sql::SqlResult<ShowResult> ShowColumns(const pg_query::Node& relation, const StatementText& text,
                                       const Catalog& catalog);

// The names of the catalog's objects a query tree mentions (every RangeVar, walked without
// recursion): what a view or materialized view depends on besides what it imports.
std::vector<std::string> MentionedObjects(const pg_query::Node& query, const Catalog& catalog);

}  // namespace tandem::frontend

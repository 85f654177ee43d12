// FrontendEngine: tandem-frontend over pgwire as the engine under test of the SQL oracle suite
// (suite.h) — the whole system (parser, catalog, planner, the replica's dataflows, peeks and
// one-shots) answering through libpq what PostgreSQL answers.
//
// Load(database): drops what the previous database left (its materialized views, then its
// tables: DROP MATERIALIZED VIEW / DROP TABLE, no CASCADE), runs database.SchemaSql()'s CREATE
// TABLEs and database.writes through its one connection, as a client would.
//
// Query(sql), by mode:
//   * kOneShot: the query as it is (a SELECT: a peek or a one-shot dataflow, the frontend's
//     choice).
//   * kExtended: the same through the extended query protocol (Parse, Bind, Describe, Execute,
//     Sync), each number compared with (`= 5`, `< 2.5`: after a comparison operator) a parameter
//     of its constant's type ($1::int4, $2::numeric; its value sent in text), the results in
//     binary — each value decoded to PostgreSQL's text by the frontend's binary_values.h (itself
//     checked against PostgreSQL's own send and receive functions), so the suite compares text.
//   * kMaterialized: the query as a materialized view, read back with SELECT * FROM mv_<n>.
//     Views are made *during* the write workload, so that they are maintained, not only
//     hydrated: Load regenerates the queries the suite will ask of this database (the suite's
//     seeds: query j of database d has seed MixSeed(database.seed, j), options.enabled) and
//     creates one view per distinct query after the first half of the writes, before the rest.
//     A query Load did not foresee gets its view made at Query time. A view is dropped once read
//     as many times as Load foresaw (else at the next Load).
//     The query's top-level ORDER BY / LIMIT / OFFSET (SplitTopLevelOrder) stays out of the
//     view when its items name output columns (an ordinal or a bare name: c0): the view is the
//     rest and the read is SELECT * FROM mv_<n> ORDER BY … LIMIT … OFFSET …, which means the
//     same over the view's columns (same positions, same names). An ORDER BY of anything else (a
//     column the SELECT list does not show) stays inside the view with its LIMIT (a top-k view)
//     and the read has no ORDER BY — the suite compares such answers as multisets.
//
// Errors: an answer's error is the frontend's, SQLSTATE kept, so the suite counts 0A000 as
// refused and 54xxx as too complex; a failed CREATE MATERIALIZED VIEW or DROP is an error answer
// whose message names the statement (the suite reports the query with it). A failed DROP at Load
// fails the Load.
//
// Against PostgreSQL (the suite's check of this engine's own logic: conninfo of a PostgreSQL
// database, refresh_before_read): PostgreSQL's materialized views are snapshots, so each is
// REFRESHed before it is read.
//
// Thread safety: one thread at a time (one connection).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pg_connection.h"
#include "sql_oracle/features.h"
#include "sql_oracle/sql_engine.h"

namespace tandem::testing::sql_oracle {

struct FrontendEngineOptions {
  enum class Mode { kOneShot, kMaterialized, kExtended };
  Mode mode = Mode::kOneShot;
  // What Load regenerates the suite's queries from (kMaterialized): the suite's
  // options.enabled and options.queries_per_database.
  FeatureSet enabled = FeatureSet::All();
  int queries_per_database = 0;
  // REFRESH MATERIALIZED VIEW before each read (PostgreSQL's views are snapshots).
  bool refresh_before_read = false;
  // For reports: "tandem-frontend (solo replica)".
  std::string name = "tandem-frontend";
};

// A query's top-level ORDER BY … [LIMIT …] [OFFSET …] (or a top-level LIMIT/OFFSET alone), split
// off: the first keyword at parenthesis depth 0 outside quoted literals and identifiers.
struct SplitQuery {
  std::string body;  // the query without it
  std::string tail;  // " ORDER BY 2 DESC, c0 LIMIT 3", or "" when it has none
  // Every ORDER BY item names an output column (an integer or a bare identifier): the tail
  // means the same applied to SELECT * of the body.
  bool tail_on_outputs = true;
};
SplitQuery SplitTopLevelOrder(const std::string& sql);

// kExtended's form of a query: each unsigned number right after a comparison operator (outside
// quotes, not followed by `::` or more of a word) replaced by $n cast to its constant's type —
// int4, int8 or numeric, as PostgreSQL types the constant — and its text kept in `values`.
struct ParameterizedQuery {
  std::string sql;
  std::vector<std::string> values;
};
ParameterizedQuery ParameterizeComparedNumbers(const std::string& sql);

class FrontendEngine : public SqlEngine {
 public:
  // Connects with `conninfo`. Check error().
  FrontendEngine(const std::string& conninfo, FrontendEngineOptions options);

  // Why the engine cannot run; "" when it can.
  const std::string& error() const { return error_; }

  std::string Name() const override;
  std::string Load(const Database& database) override;
  PgAnswer Query(const std::string& sql) override;

  // Drops what the last Load made (views, then tables). "" or the first failure.
  std::string DropAll();

  // Counts, for the test's summary.
  int views_created() const { return views_created_; }
  int views_created_during_writes() const { return views_during_writes_; }

 private:
  struct View {
    std::string name;      // mv_<n>
    std::string read;      // SELECT * FROM mv_<n> [tail]
    int reads_left = 0;    // reads Load foresaw; dropped when it reaches 0
    bool created = false;  // false: `refusal` holds the CREATE's error answer
    PgAnswer refusal;
  };

  // Makes `sql`'s view (CREATE MATERIALIZED VIEW); its read statement set.
  View CreateView(const std::string& sql);
  PgAnswer ReadView(View& view);
  // DROP MATERIALIZED VIEW; "" or the error's text.
  std::string DropView(const std::string& name);

  FrontendEngineOptions options_;
  std::unique_ptr<PgConnection> connection_;
  std::string error_;
  std::vector<std::string> tables_;    // the last Load's, to drop
  std::map<std::string, View> views_;  // by the query's text
  std::uint64_t next_view_ = 0;
  int views_created_ = 0;
  int views_during_writes_ = 0;
};

}  // namespace tandem::testing::sql_oracle

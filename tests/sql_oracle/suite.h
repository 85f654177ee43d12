// The SQL oracle suite: random databases (workload.h) and random queries (query_generator.h),
// each query run on PostgreSQL — the oracle — and on the engine under test (sql_engine.h), the
// answers compared (compare.h).
//
// For each of options.databases databases: its workload is applied to the oracle's database, the
// engine is loaded with the result, and options.queries_per_database queries are asked of both.
// An answer of the engine is
//   * matched: the same answer as PostgreSQL's (rows, or an error with the same SQLSTATE);
//   * refused: an error 0A000 (not supported). Counted per feature the query used; a refusal of
//     a query using only features in options.supported is a failure;
//   * too complex: an error of class 54 (program limit exceeded: a plan nesting deeper than the
//     engine's bound). Counted, not a failure: the bound is the engine's documented limit;
//   * a mismatch: anything else. A failure.
// A generated query PostgreSQL rejects (a syntax, type or resource error: 42xxx, 0A000, 54xxx,
// 57014) is a failure of the generator.
//
// Every failure is reported with what reproduces it by hand in psql: the seeds, the schema and
// data as SQL, the query, both answers and their difference.
//
// Seeds: database i has seed MixSeed(options.seed, i) and its query j seed MixSeed(that, j);
// the same options give the same databases and queries.
//
// Thread safety: runs on the caller's thread, using the connection and the engine.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pg_connection.h"
#include "sql_oracle/features.h"
#include "sql_oracle/sql_engine.h"
#include "sql_oracle/workload.h"

namespace tandem::testing::sql_oracle {

struct SuiteOptions {
  std::uint64_t seed = 1;
  int databases = 40;
  int queries_per_database = 50;
  WorkloadOptions workload;
  // The features the generator uses.
  FeatureSet enabled = FeatureSet::All();
  // The features the engine says it supports: a query using only these must not be refused.
  FeatureSet supported = FeatureSet::All();
  // Failures of each kind (mismatch, refusal, rejected query, load) reported in full; the rest
  // are only counted.
  std::size_t max_failure_reports = 3;
};

struct SuiteReport {
  std::string engine;
  int databases = 0;
  int queries = 0;
  int matched = 0;
  int nonempty = 0;  // queries PostgreSQL answered with at least one row (the suite's reach)
  int refused = 0;
  int mismatches = 0;
  int unexpected_refusals = 0;  // refusals of queries using only supported features
  int too_complex = 0;          // answered 54xxx (program limit exceeded)
  int oracle_errors = 0;        // generated queries PostgreSQL rejected
  int load_failures = 0;        // databases the oracle or the engine could not be given
  std::array<int, kFeatureCount> used_by_feature{};
  std::array<int, kFeatureCount> refused_by_feature{};  // refused queries that used it
  // Refused queries that used it while it is not in options.supported: what the refusals are
  // blamed on (a supported feature never is).
  std::array<int, kFeatureCount> blamed_by_feature{};
  // The engine's refusal messages, numbers replaced by N (so one reason is one entry) → count.
  std::map<std::string, int> refusal_reasons;
  std::vector<std::string> failures;  // the first max_failure_reports of each kind, in full

  int failure_count() const {
    return mismatches + unexpected_refusals + oracle_errors + load_failures;
  }
  bool ok() const { return failure_count() == 0; }
  // The counts, per feature how many queries used it and how many of those were refused, and
  // the commonest refusal reasons.
  std::string Summary() const;
};

// `oracle`: a connection to the oracle's own database (postgres_engine.h: ConnectToNewDatabase),
// whose schema public the suite replaces for each database.
SuiteReport RunOracleSuite(PgConnection& oracle, SqlEngine& engine, const SuiteOptions& options);

}  // namespace tandem::testing::sql_oracle

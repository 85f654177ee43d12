#include "sql_oracle/suite.h"

#include <algorithm>
#include <utility>

#include "sql_oracle/compare.h"
#include "sql_oracle/query_generator.h"
#include "sql_oracle/random.h"

namespace tandem::testing::sql_oracle {
namespace {

// Errors PostgreSQL raises for a query that is wrong as written rather than for its data: a
// generated query that gets one is the generator's bug.
bool RejectsTheQuery(const std::string& sqlstate) {
  return sqlstate.rfind("42", 0) == 0 || sqlstate.rfind("0A", 0) == 0 ||
         sqlstate.rfind("54", 0) == 0 || sqlstate == "57014" || sqlstate.empty();
}

// A refusal's message with every number (and alias or column number) as N: "numeric constants
// are not supported yet: N is numeric …".
std::string ReasonOf(const std::string& message) {
  std::string out;
  for (std::size_t i = 0; i < message.size(); ++i) {
    const char c = message[i];
    if (c >= '0' && c <= '9') {
      while (i + 1 < message.size() &&
             ((message[i + 1] >= '0' && message[i + 1] <= '9') || message[i + 1] == '.')) {
        ++i;
      }
      out += 'N';
    } else {
      out += c;
    }
  }
  return out;
}

struct QueryContext {
  const SuiteOptions* options;
  const Database* database;
  int database_index;
  int query_index;
  std::uint64_t query_seed;
};

std::string Reproduction(const QueryContext& context, const std::string& what,
                         const std::string& engine, const GeneratedQuery& query,
                         const PgAnswer* expected, const PgAnswer* actual,
                         const std::string& diff) {
  std::string out = "SQL oracle: " + what + " (engine: " + engine + ")\n";
  out += "  seeds: suite " + std::to_string(context.options->seed) + ", database #" +
         std::to_string(context.database_index) + " seed " +
         std::to_string(context.database->seed) + ", query #" +
         std::to_string(context.query_index) + " seed " + std::to_string(context.query_seed) +
         "\n  features: " + query.features.ToString() + "\n";
  out += "-- the database (psql):\n" + context.database->ScriptSql();
  out += "-- the query:\n" + query.sql + ";\n";
  if (expected != nullptr) out += "-- PostgreSQL answered:\n" + FormatAnswer(*expected);
  if (actual != nullptr) out += "-- the engine answered:\n" + FormatAnswer(*actual);
  if (!diff.empty()) out += "-- the difference:\n" + diff;
  return out;
}

// `count`: the failures of this kind so far, this one included.
void AddFailure(SuiteReport& report, const SuiteOptions& options, int count, std::string text) {
  if (static_cast<std::size_t>(count) <= options.max_failure_reports) {
    report.failures.push_back(std::move(text));
  }
}

}  // namespace

std::string SuiteReport::Summary() const {
  std::string out = engine + ": " + std::to_string(queries) + " queries over " +
                    std::to_string(databases) + " databases (" + std::to_string(nonempty) +
                    " answered with rows by PostgreSQL): " + std::to_string(matched) +
                    " matched, " + std::to_string(refused) + " refused (" +
                    std::to_string(unexpected_refusals) + " of supported features), " +
                    std::to_string(too_complex) + " too complex for the engine, " +
                    std::to_string(mismatches) + " mismatches, " + std::to_string(oracle_errors) +
                    " rejected by PostgreSQL, " + std::to_string(load_failures) +
                    " databases not loaded\n  feature: queries using it / of those refused / "
                    "refusals blamed on it "
                    "(not supported)\n";
  for (std::size_t f = 0; f < kFeatureCount; ++f) {
    if (used_by_feature[f] == 0) continue;
    out += "    " + std::string(FeatureName(static_cast<Feature>(f))) + ": " +
           std::to_string(used_by_feature[f]) + " / " + std::to_string(refused_by_feature[f]) +
           " / " + std::to_string(blamed_by_feature[f]) + "\n";
  }
  std::vector<std::pair<int, std::string>> reasons;
  for (const auto& [reason, count] : refusal_reasons) reasons.emplace_back(count, reason);
  std::sort(reasons.begin(), reasons.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  if (!reasons.empty()) out += "  refusals: count, reason\n";
  for (std::size_t i = 0; i < reasons.size() && i < 12; ++i) {
    out += "    " + std::to_string(reasons[i].first) + "  " + reasons[i].second + "\n";
  }
  return out;
}

SuiteReport RunOracleSuite(PgConnection& oracle, SqlEngine& engine, const SuiteOptions& options) {
  SuiteReport report;
  report.engine = engine.Name();
  for (int d = 0; d < options.databases; ++d) {
    Database database =
        GenerateWorkload(MixSeed(options.seed, static_cast<std::uint64_t>(d)), options.workload);
    ++report.databases;
    std::string why = ApplyWorkload(oracle, &database);
    if (why.empty()) why = engine.Load(database);
    if (!why.empty()) {
      ++report.load_failures;
      AddFailure(report, options, report.load_failures,
                 "SQL oracle: database #" + std::to_string(d) + " (seed " +
                     std::to_string(database.seed) + ") not loaded: " + why + "\n" +
                     database.SchemaSql());
      continue;
    }
    const QueryGenerator generator(database.tables, options.enabled);
    for (int q = 0; q < options.queries_per_database; ++q) {
      const QueryContext context{&options, &database, d, q,
                                 MixSeed(database.seed, static_cast<std::uint64_t>(q))};
      const GeneratedQuery query = generator.Generate(context.query_seed);
      ++report.queries;
      for (std::size_t f = 0; f < kFeatureCount; ++f) {
        if (query.features.Has(static_cast<Feature>(f))) ++report.used_by_feature[f];
      }
      const PgAnswer expected = oracle.Execute(query.sql);
      if (!expected.ok() && RejectsTheQuery(expected.sqlstate())) {
        ++report.oracle_errors;
        AddFailure(report, options, report.oracle_errors,
                   Reproduction(context, "PostgreSQL rejected a generated query", engine.Name(),
                                query, &expected, nullptr, ""));
        continue;
      }
      if (expected.ok() && !expected.rows.empty()) ++report.nonempty;
      const PgAnswer actual = engine.Query(query.sql);
      if (!actual.ok() && actual.sqlstate() == "0A000") {
        ++report.refused;
        ++report.refusal_reasons[ReasonOf(actual.error->message)];
        const FeatureSet unsupported = query.features.Minus(options.supported);
        for (std::size_t f = 0; f < kFeatureCount; ++f) {
          if (query.features.Has(static_cast<Feature>(f))) ++report.refused_by_feature[f];
          if (unsupported.Has(static_cast<Feature>(f))) ++report.blamed_by_feature[f];
        }
        if (query.features.SubsetOf(options.supported)) {
          ++report.unexpected_refusals;
          AddFailure(report, options, report.unexpected_refusals,
                     Reproduction(context, "refused a query whose features the engine supports",
                                  engine.Name(), query, &expected, &actual, ""));
        }
        continue;
      }
      if (!actual.ok() && actual.sqlstate().rfind("54", 0) == 0) {
        ++report.too_complex;
        continue;
      }
      const std::string diff = DiffAnswers(expected, actual, query.order);
      if (diff.empty()) {
        ++report.matched;
        continue;
      }
      ++report.mismatches;
      AddFailure(report, options, report.mismatches,
                 Reproduction(context, "mismatch", engine.Name(), query, &expected, &actual, diff));
    }
  }
  return report;
}

}  // namespace tandem::testing::sql_oracle

// PlannerEngine: Tandem's SQL planner with the reference evaluator as the engine under test —
// the planner's answers checked against PostgreSQL without a replica. A query is parsed
// (frontend/sql: Parse), planned against an in-memory catalog of the database's tables
// (oracle_catalog.h; frontend/plan: PlanQuery), the plan evaluated by the independent reference
// evaluator (tests/reference: a DataflowDescription building the plan, importing the tables'
// default indexes with the tables' rows as their updates at time 0, as_of 0), and the planned
// Finishing applied (the reference's AnswerPeek). The catalog also has the planner's one-row
// object (frontend/plan/planner.h: kOneRowObject), holding its one row, as the frontend keeps it.
//
// Errors: the parser's and the planner's SqlError reach the suite as they are (0A000 is a
// refusal); an error in the data (the reference's "division by zero", "integer overflow") is
// 22012 or 22003, as PostgreSQL says; a plan the evaluator cannot interpret is XX000 — a
// mismatch, never a refusal.
//
// Thread safety: one thread at a time, and a long-lived one (libpg_query keeps state per
// thread: frontend/sql/parse.h), with a stack of at least sql::kParseStackBytes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/row.h"
#include "sql_oracle/oracle_catalog.h"
#include "sql_oracle/sql_engine.h"

namespace tandem::testing::sql_oracle {

class PlannerEngine : public SqlEngine {
 public:
  PlannerEngine() = default;

  std::string Name() const override { return "planner + reference evaluator"; }
  std::string Load(const Database& database) override;
  PgAnswer Query(const std::string& sql) override;

 private:
  OracleCatalog catalog_;
  // Per table, by its collection id: its rows as datums.
  std::vector<std::pair<std::string, std::vector<Row>>> rows_;
};

}  // namespace tandem::testing::sql_oracle

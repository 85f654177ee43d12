// SqlEngine: the engine under test of the SQL oracle suite (suite.h), behind one interface so the
// same suite drives PostgreSQL itself (postgres_engine.h: the suite's self-check), the planner
// with the reference evaluator (planner_engine.h), and the frontend over pgwire.
//
// The contract:
//   * Load(database) replaces whatever the engine held with `database`'s tables. An engine
//     without writes takes the tables' final contents (database.rows); one with writes may run
//     database.SchemaSql() and database.writes itself instead — both reach the same contents.
//   * Query(sql) answers one SELECT as a client would receive it (sql_rows.h: PgAnswer): the
//     columns' type OIDs and the rows in text format, or an error with its SQLSTATE. A construct
//     the engine does not support is the error 0A000 (feature_not_supported): the suite counts it
//     as refused, not as a wrong answer.
//
// Thread safety: one thread at a time per engine.
#pragma once

#include <string>

#include "sql_oracle/schema.h"
#include "sql_rows.h"

namespace tandem::testing::sql_oracle {

class SqlEngine {
 public:
  virtual ~SqlEngine() = default;

  // For reports: "PostgreSQL (second database)", "planner + reference evaluator".
  virtual std::string Name() const = 0;
  // "" on success, else why the database could not be loaded (the suite fails).
  virtual std::string Load(const Database& database) = 0;
  virtual PgAnswer Query(const std::string& sql) = 0;
};

}  // namespace tandem::testing::sql_oracle

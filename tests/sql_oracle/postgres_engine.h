// PostgresEngine: a second database of the oracle's PostgreSQL server as the engine under test.
// Given the same contents it must answer every query as the oracle does, so a run against it
// checks the suite itself: that the generator makes queries with one well-defined answer and
// that the comparison accepts equal answers (and, with a deliberately wrong engine around it,
// that it rejects unequal ones).
//
// It loads a Database from its final contents (Database::ScriptSql, the script a failure report
// prints, with each table's rows in reverse order) or, with kReplayWrites, by running the CREATE
// TABLEs and the write workload itself, as an engine with writes does; and it plans without hash
// joins and hash aggregation. So its rows meet in other orders than the oracle's, and an answer
// that depends on that order — one the generator must not make — shows as a mismatch.
//
// Thread safety: one thread at a time (it holds one connection).
#pragma once

#include <memory>
#include <string>

#include "pg_connection.h"
#include "postgres_server.h"
#include "sql_oracle/sql_engine.h"

namespace tandem::testing::sql_oracle {

// Creates database `name` on `server` (dropped first if it exists) with the C collation — the
// order Tandem compares text in — and connects to it with a statement timeout of
// `statement_timeout_ms`. Check ok() on the connection.
PgConnection ConnectToNewDatabase(PostgresServer& server, const std::string& name,
                                  int statement_timeout_ms = 20000);

class PostgresEngine : public SqlEngine {
 public:
  enum class LoadMode { kFinalContents, kReplayWrites };

  // Creates its own database `database_name` on `server`. Check error().
  PostgresEngine(PostgresServer& server, const std::string& database_name,
                 LoadMode mode = LoadMode::kFinalContents);

  // Why the engine cannot run; "" when it can.
  const std::string& error() const { return error_; }

  std::string Name() const override;
  std::string Load(const Database& database) override;
  PgAnswer Query(const std::string& sql) override;

 private:
  LoadMode mode_;
  std::unique_ptr<PgConnection> connection_;
  std::string error_;
};

}  // namespace tandem::testing::sql_oracle

#include "sql_oracle/postgres_engine.h"

#include <algorithm>

#include "sql_oracle/workload.h"

namespace tandem::testing::sql_oracle {

PgConnection ConnectToNewDatabase(PostgresServer& server, const std::string& name,
                                  int statement_timeout_ms) {
  server.Execute("DROP DATABASE IF EXISTS " + name);
  const PgAnswer created =
      server.Execute("CREATE DATABASE " + name +
                     " TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'");
  PgConnection connection(server.conninfo(name));
  if (created.ok() && connection.ok()) {
    connection.Execute("SET statement_timeout = " + std::to_string(statement_timeout_ms));
  }
  return connection;
}

PostgresEngine::PostgresEngine(PostgresServer& server, const std::string& database_name,
                               LoadMode mode)
    : mode_(mode) {
  connection_ = std::make_unique<PgConnection>(ConnectToNewDatabase(server, database_name));
  if (!connection_->ok()) {
    error_ = "connecting to " + database_name + ": " + connection_->error();
    return;
  }
  // Other join and grouping algorithms than the oracle's (which hashes where it can): rows meet
  // in other orders.
  const PgAnswer set = connection_->Execute("SET enable_hashjoin = off; SET enable_hashagg = off");
  if (!set.ok()) error_ = "configuring " + database_name + ": " + set.error->ToString();
}

std::string PostgresEngine::Name() const {
  return mode_ == LoadMode::kFinalContents ? "PostgreSQL (a second database, final contents)"
                                           : "PostgreSQL (a second database, writes replayed)";
}

std::string PostgresEngine::Load(const Database& database) {
  if (!error_.empty()) return error_;
  if (mode_ == LoadMode::kReplayWrites) {
    Database copy = database;
    return ApplyWorkload(*connection_, &copy);
  }
  if (std::string why = ResetSchema(*connection_); !why.empty()) return why;
  // The rows in the opposite order to the oracle's: scans, joins and aggregations meet them in
  // another order, so an answer that depends on it (ties cut by LIMIT, a float sum's rounding)
  // shows as a mismatch here.
  Database reversed = database;
  for (std::vector<SqlRow>& rows : reversed.rows) std::reverse(rows.begin(), rows.end());
  const std::string script = reversed.ScriptSql();
  const PgAnswer answer = connection_->Execute(script);
  return answer.ok() ? "" : "loading " + script + ": " + answer.error->ToString();
}

PgAnswer PostgresEngine::Query(const std::string& sql) { return connection_->Execute(sql); }

}  // namespace tandem::testing::sql_oracle

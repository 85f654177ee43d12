#include "sql_oracle/postgres_engine.h"

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
  if (!connection_->ok()) error_ = "connecting to " + database_name + ": " + connection_->error();
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
  const std::string script = database.ScriptSql();
  const PgAnswer answer = connection_->Execute(script);
  return answer.ok() ? "" : "loading " + script + ": " + answer.error->ToString();
}

PgAnswer PostgresEngine::Query(const std::string& sql) { return connection_->Execute(sql); }

}  // namespace tandem::testing::sql_oracle

#include "frontend/server/not_yet_executor.h"

#include <variant>

#include "frontend/sql/classify.h"
#include "frontend/sql/parse.h"
#include "frontend/sqlstate.h"

namespace tandem::frontend {

using pgwire::ErrorFields;
using pgwire::TransactionStatus;

TransactionEffect ApplyTransactionCommand(TransactionCommand command, TransactionStatus now) {
  TransactionEffect e;
  switch (command) {
    case TransactionCommand::kBegin:
      e.tag = "BEGIN";
      // PostgreSQL: BEGIN inside a failed block is refused (25P02) before it gets here.
      e.status = TransactionStatus::kInTransaction;
      if (now != TransactionStatus::kIdle) {
        e.warning_sqlstate = sqlstate::kActiveSqlTransaction;
        e.warning = "there is already a transaction in progress";
      }
      return e;
    case TransactionCommand::kCommit:
      e.tag = now == TransactionStatus::kFailed ? "ROLLBACK" : "COMMIT";
      break;
    case TransactionCommand::kRollback:
      e.tag = "ROLLBACK";
      break;
  }
  e.status = TransactionStatus::kIdle;
  if (now == TransactionStatus::kIdle) {
    e.warning_sqlstate = sqlstate::kNoActiveSqlTransaction;
    e.warning = "there is no transaction in progress";
  }
  return e;
}

namespace {

// An error ends the statements; inside a block it fails the block.
void FailStatement(pgwire::QuerySink& sink, SessionState& session, ErrorFields error) {
  (void)sink.Error(error);
  if (session.transaction != TransactionStatus::kIdle) {
    session.transaction = TransactionStatus::kFailed;
  }
}

ErrorFields FromSqlError(const sql::SqlError& e) {
  ErrorFields f = ErrorFields::Error(e.sqlstate, e.message);
  f.position = static_cast<std::uint32_t>(e.position);
  return f;
}

bool IsShowServerVersion(const sql::ParsedStatement& s) {
  const auto* pg = std::get_if<sql::PostgresStatement>(&s.form);
  return pg && pg->stmt.has_variable_show_stmt() &&
         pg->stmt.variable_show_stmt().name() == "server_version";
}

}  // namespace

void NotYetExecutor::Execute(std::string sql, pgwire::QuerySink& sink, SessionState& session) {
  auto parsed = sql::Parse(sql);
  if (!parsed.ok()) {
    FailStatement(sink, session, FromSqlError(parsed.error()));
    return;
  }
  if (parsed->empty()) {
    (void)sink.EmptyQuery();
    return;
  }
  for (const sql::ParsedStatement& statement : *parsed) {
    if (session.cancel.canceled()) {
      FailStatement(
          sink, session,
          ErrorFields::Error(sqlstate::kQueryCanceled, "canceling statement due to user request"));
      return;
    }
    auto kind = sql::Classify(statement);
    if (!kind.ok()) {
      FailStatement(sink, session, FromSqlError(kind.error()));
      return;
    }
    std::optional<TransactionCommand> tx;
    if (*kind == sql::StatementKind::kBegin) tx = TransactionCommand::kBegin;
    if (*kind == sql::StatementKind::kCommit) tx = TransactionCommand::kCommit;
    if (*kind == sql::StatementKind::kRollback) tx = TransactionCommand::kRollback;
    if (session.transaction == TransactionStatus::kFailed &&
        (!tx || *tx == TransactionCommand::kBegin)) {
      ErrorFields e = ErrorFields::Error(
          sqlstate::kInFailedSqlTransaction,
          "current transaction is aborted, commands ignored until end of transaction block");
      (void)sink.Error(e);
      return;
    }
    if (tx) {
      const TransactionEffect effect = ApplyTransactionCommand(*tx, session.transaction);
      if (!effect.warning.empty()) {
        (void)sink.Notice(
            ErrorFields(pgwire::Severity::kWarning, effect.warning_sqlstate, effect.warning));
      }
      session.transaction = effect.status;
      if (!sink.CommandComplete(effect.tag)) return;
      continue;
    }
    if (IsShowServerVersion(statement)) {
      const pgwire::FieldDescription field("server_version", pgwire::kText);
      const pgwire::Value value = server_version_;
      if (!sink.RowDescription({&field, 1}) || !sink.DataRow({&value, 1}) ||
          !sink.CommandComplete("SHOW")) {
        return;
      }
      continue;
    }
    ErrorFields e =
        ErrorFields::Error(sqlstate::kFeatureNotSupported,
                           std::string(sql::StatementKindName(*kind)) +
                               " is not supported yet (the SQL planner is not in this build)");
    e.position = static_cast<std::uint32_t>(statement.position);
    FailStatement(sink, session, e);
    return;
  }
}

}  // namespace tandem::frontend

// NotYetExecutor: the StatementExecutor the frontend runs until the planner and the catalog
// provide theirs — everything that needs neither, answered honestly, and every other statement
// refused with 0A000 naming it.
//
//  * Parse and Classify (frontend/sql): syntax errors (42601 at PostgreSQL's position), bounds
//    (54000, 54001, 22021), unsupported commands (0A000 "CREATE FUNCTION is not supported").
//  * An empty query ("", ";", only comments): EmptyQueryResponse.
//  * BEGIN / START TRANSACTION, COMMIT / END, ROLLBACK / ABORT: the transaction status
//    PostgreSQL's clients track ('T' inside a block, 'E' once a statement in it failed, until it
//    ends), with PostgreSQL's tags and warnings (25001 "there is already a transaction in
//    progress", 25P01 "there is no transaction in progress"; COMMIT of a failed block answers
//    ROLLBACK). A block groups nothing: each statement in it takes effect when it runs, and
//    ROLLBACK undoes nothing (no statement here changes anything yet).
//  * Inside a failed block, every statement but COMMIT/ROLLBACK: 25P02.
//  * SHOW server_version: the version the listener announces (pgwire ConnectionOptions).
//  * Every other statement: 0A000 "<STATEMENT> is not supported yet (the SQL planner is not in
//    this build)" at the statement's position.
//  * A cancel between statements: 57014.
#pragma once

#include <string>

#include "frontend/server/statement_executor.h"

namespace tandem::frontend {

class NotYetExecutor final : public StatementExecutor {
 public:
  explicit NotYetExecutor(std::string server_version)
      : server_version_(std::move(server_version)) {}
  void Execute(std::string sql, pgwire::QuerySink& sink, SessionState& session) override;

 private:
  const std::string server_version_;
};

// The transaction status after `kind` of statement (BEGIN, COMMIT, ROLLBACK) in `session`, its
// tag and the warning PostgreSQL gives, if any: shared by every executor.
struct TransactionEffect {
  TransactionEffect() {}
  std::string tag;
  pgwire::TransactionStatus status = pgwire::TransactionStatus::kIdle;
  std::string warning_sqlstate, warning;  // empty: none
};
enum class TransactionCommand { kBegin, kCommit, kRollback };
TransactionEffect ApplyTransactionCommand(TransactionCommand command,
                                          pgwire::TransactionStatus now);

}  // namespace tandem::frontend

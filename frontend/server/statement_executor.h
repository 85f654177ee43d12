// StatementExecutor: what runs a client's SQL — the seam between the session layer
// (sql_sessions.h: pgwire sessions, SQL threads) and the SQL layer (parse → bind → plan →
// replica driver); SqlExecutor (sql_executor.h) implements it.
//
// Threads. Execute runs on one of the frontend's SQL threads (sql_threads.h): long-lived, each
// with sql::kParseStackBytes of stack, so it may call sql::Parse. It may block — on the replica
// driver (driver_waits.h), on its sink's room (QuerySink::WaitForRoom) — bounded by the
// session's statement_timeout and ended early by its cancel token. One Execute per session runs
// at a time (pgwire answers one Query at a time), so SessionState needs no lock of its own but
// for its CancelToken.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/time.h"
#include "frontend/pgwire/messages.h"
#include "frontend/pgwire/query_handler.h"
#include "frontend/server/cancel_token.h"
#include "frontend/server/prepared_statements.h"

namespace tandem::frontend {

// One pgwire session's state, as the statements of it see it.
struct SessionState {
  SessionState() {}
  std::uint64_t id = 0;  // for logs
  pgwire::StartupParameters startup;
  // What ReadyForQuery says after the current answer: the executor keeps it (BEGIN, COMMIT, an
  // error inside a block).
  pgwire::TransactionStatus transaction = pgwire::TransactionStatus::kIdle;
  // Read your writes (DESIGN §15): the latest time one of this session's writes was acknowledged
  // at; its reads are at or after it (ReadTime::floor).
  Time last_write = 0;
  // A write ran inside the current transaction block (a ROLLBACK cannot undo it: it says so).
  bool block_wrote = false;
  // How long one statement may wait (for a replica, for a time to become readable).
  std::chrono::milliseconds statement_timeout{30000};
  // The frontend's --statement-timeout-ms: what SET statement_timeout = 0, DEFAULT and RESET
  // restore (PostgreSQL's 0 is "none"; the frontend keeps its own bound).
  std::chrono::milliseconds default_statement_timeout{30000};
  CancelToken cancel;
  // SET tandem_local_reads: keyed peeks of the local replica read in place (local_reads.h).
  bool local_reads = true;
  // The extended query protocol's prepared statements and portals by name ("": the unnamed
  // ones). Portals end with their transaction: at a Sync that leaves the session idle.
  std::map<std::string, std::shared_ptr<const PreparedStatement>> statements;
  std::map<std::string, Portal> portals;
  // The portal the running Execute runs its statement into (its rows go there: SendRows); null
  // while a simple Query runs.
  Portal* executing = nullptr;
};

// Fails the statement (or extended-protocol message) being answered: `error` ends its answer, and
// fails the transaction block the session is in. False, for `return FailStatement(…)`.
inline bool FailStatement(pgwire::QuerySink& sink, SessionState& session,
                          const pgwire::ErrorFields& error) {
  (void)sink.Error(error);
  if (session.transaction != pgwire::TransactionStatus::kIdle) {
    session.transaction = pgwire::TransactionStatus::kFailed;
  }
  return false;
}

class StatementExecutor {
 public:
  virtual ~StatementExecutor() = default;
  // Answers every statement of `sql` (a simple Query's whole text) on `sink`: per statement
  // RowDescription DataRow* CommandComplete, CommandComplete, or EmptyQuery; an Error ends them
  // (query_handler.h). Not Finish: the session layer ends the answer with session.transaction.
  // A cancel (session.cancel) ends the statement running with ERROR 57014.
  virtual void Execute(std::string sql, pgwire::QuerySink& sink, SessionState& session) = 0;

  // ---- the extended query protocol (DESIGN §17). Each runs on a SQL thread, as Execute does.
  //
  // Parse: `query`'s one statement (42601 for more), its parameters' types as `declared` gives
  // them (0: unspecified) or as its context decides (PostgreSQL's inference: the statement bound
  // with each parameter a NULL in its place; text in a select list, 42P18 where no context decides
  // one). Errors are the statement's own, as at Execute.
  virtual sql::SqlResult<PreparedStatement> Prepare(std::string query,
                                                    const std::vector<std::uint32_t>& declared,
                                                    SessionState& session) = 0;
  // The columns `statement` (`prepared`'s, its parameters replaced — NULLs for a Describe of the
  // statement, values for a portal's) returns; nullopt for one that returns none (NoData).
  virtual sql::SqlResult<std::optional<std::vector<pgwire::FieldDescription>>> DescribeResult(
      const PreparedStatement& prepared, const std::optional<sql::ParsedStatement>& statement,
      SessionState& session) = 0;
  // Whether `prepared` returns rows that KeepRows can read ahead (a SELECT, SHOW, EXPLAIN).
  virtual bool ReadsRows(const PreparedStatement& prepared) const = 0;
  // Describe of a portal that ReadsRows: its statement run now, its rows kept in it (its Execute
  // sends them). False when it failed (its error answered on `sink`) or the answer is unwanted.
  virtual bool KeepRows(Portal& portal, pgwire::QuerySink& sink, SessionState& session) = 0;
  // Execute: the portal's statement run (its first Execute) or its kept rows continued, answered
  // on `sink` as an Execute is (query_handler.h): at most `max_rows` rows (0: all).
  virtual void ExecutePortal(Portal& portal, std::uint32_t max_rows, pgwire::QuerySink& sink,
                             SessionState& session) = 0;
};

}  // namespace tandem::frontend

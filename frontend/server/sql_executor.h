// SqlExecutor: tandem-frontend's StatementExecutor (DESIGN §15) — every statement of a Query
// parsed (frontend/sql), classified, bound and planned against a snapshot of the catalog
// (frontend/plan), and run:
//   * CREATE / DROP: catalog_change.h (the catalog copied, changed, saved, sent, published);
//   * SHOW TABLES | VIEWS | MATERIALIZED VIEWS | INDEXES, SHOW COLUMNS: from the snapshot;
//   * SELECT (AS OF t): sql_reads.h — a peek when one index answers it, else a one-shot;
//   * EXPLAIN: which of the two, and what it reads;
//   * INSERT / UPDATE / DELETE: table_writes.h;
//   * BEGIN / COMMIT / ROLLBACK: the states clients track (transaction_block.h). A block groups
//     nothing yet: each statement in it takes effect when it runs (a ROLLBACK after a write in it
//     says so with a WARNING);
//   * SET / RESET / SHOW of the session parameters drivers use;
//   * SUBSCRIBE [TO] name [AS OF t]: sql_subscribe.h — streamed as COPY TO STDOUT until cancelled.
// The extended query protocol's statements run the same way: a portal's statement is the
// prepared one with its parameters replaced by their values (prepared_statements.h), bound and
// planned at each first Execute like a simple Query's, its rows kept in the portal.
// An error ends the Query's statements (PostgreSQL runs none after one that failed) and, inside
// a block, fails the block. A cancel ends the running statement with 57014.
//
// Thread safety: Execute runs on many SQL threads at once, one per session.
#pragma once

#include <string>

#include "frontend/plan/planner.h"
#include "frontend/server/live_catalog.h"
#include "frontend/server/local_reads.h"
#include "frontend/server/replica_driver.h"
#include "frontend/server/statement_executor.h"
#include "frontend/server/table_writes.h"
#include "frontend/sql/classify.h"
#include "frontend/sql/parse.h"

namespace tandem::frontend {

class SqlExecutor final : public StatementExecutor {
 public:
  // `local_reads`: the local replica's in-place reads (local_reads.h); null for remote replicas.
  SqlExecutor(LiveCatalog& catalog, ReplicaDriver& driver, std::string server_version,
              LocalReads* local_reads = nullptr);

  void Execute(std::string sql, pgwire::QuerySink& sink, SessionState& session) override;
  sql::SqlResult<PreparedStatement> Prepare(std::string query,
                                            const std::vector<std::uint32_t>& declared,
                                            SessionState& session) override;
  sql::SqlResult<std::optional<std::vector<pgwire::FieldDescription>>> DescribeResult(
      const PreparedStatement& prepared, const std::optional<sql::ParsedStatement>& statement,
      SessionState& session) override;
  bool ReadsRows(const PreparedStatement& prepared) const override;
  bool KeepRows(Portal& portal, pgwire::QuerySink& sink, SessionState& session) override;
  void ExecutePortal(Portal& portal, std::uint32_t max_rows, pgwire::QuerySink& sink,
                     SessionState& session) override;

 private:
  // One statement; false when the answer ended (it failed, or the client left).
  bool Run(const sql::ParsedStatement& statement, sql::StatementKind kind, std::string_view sql,
           pgwire::QuerySink& sink, SessionState& session);
  bool RunDdl(const sql::ParsedStatement& statement, sql::StatementKind kind, std::string_view sql,
              pgwire::QuerySink& sink, SessionState& session);
  bool RunSelect(const pg_query::Node& query, const pg_query::Node* as_of, std::string_view sql,
                 pgwire::QuerySink& sink, SessionState& session);
  bool RunSubscribeStatement(const sql::SubscribeStatement& statement, int position,
                             std::string_view sql, pgwire::QuerySink& sink, SessionState& session);
  bool RunExplain(const pg_query::ExplainStmt& explain, std::string_view sql,
                  pgwire::QuerySink& sink, SessionState& session);
  bool RunShow(const sql::ParsedStatement& statement, sql::StatementKind kind, std::string_view sql,
               pgwire::QuerySink& sink, SessionState& session);
  bool RunSet(const pg_query::VariableSetStmt& set, int position, pgwire::QuerySink& sink,
              SessionState& session);
  // Binds and plans `statement` (whose parameters are constants now) to learn the types its
  // unknown constants are read as; true, or the statement's error.
  sql::SqlResult<bool> PlanForTypes(const sql::ParsedStatement& statement, sql::StatementKind kind,
                                    std::string_view sql, plan::UnknownTypes* unknowns);

  LiveCatalog& catalog_;
  ReplicaDriver& driver_;
  LocalReads* const local_reads_;
  const std::string server_version_;
  TableWriters writers_;
};

// Makes sure the catalog holds plan::kOneRowObject — the read-only collection of one row the
// planner reads constants from (a counter source that emits 1 and closes: every replica makes the
// same row by itself, readable at every time). Called once at start-up, before the replica driver
// starts: it joins the history every replica is replayed. Hidden from SHOW; cannot be dropped or
// written.
Status EnsureOneRowObject(LiveCatalog& catalog);

}  // namespace tandem::frontend

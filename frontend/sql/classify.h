// Classify: which of the statements the frontend handles a parsed statement is — or, for any
// other, the error a client gets: 0A000 naming the construct as PostgreSQL names the command
// ("CREATE FUNCTION is not supported"). The one place that says which statements exist for the
// frontend; the binder and the executor switch on StatementKind.
//
// Only the statement's own kind is judged here: what is inside it (a type, a join, an
// aggregate) is the binder's and the planner's to accept or refuse.
#pragma once

#include <string>
#include <string_view>

#include "frontend/sql/parse.h"
#include "frontend/sql/pg_query.pb.h"
#include "frontend/sql/sql_error.h"

namespace tandem::sql {

enum class StatementKind {
  kCreateTable,             // CreateStmt
  kCreateView,              // ViewStmt
  kCreateMaterializedView,  // CreateTableAsStmt of a MATERIALIZED VIEW
  kCreateIndex,             // IndexStmt
  kDrop,                    // DropStmt of a TABLE, VIEW, MATERIALIZED VIEW or INDEX
  kShowTables,              // SHOW TABLES (PostgreSQL's VariableShowStmt "tables")
  kShowViews,               // SHOW VIEWS
  kShowMaterializedViews,   // ShowMaterializedViewsStatement
  kShowIndexes,             // SHOW INDEXES
  kShowColumns,             // ShowColumnsStatement
  kShowVariable,            // any other SHOW name (server_version, transaction_isolation, ALL)
  kExplain,                 // ExplainStmt, ExplainAsOfStatement
  kInsert,                  // InsertStmt
  kUpdate,                  // UpdateStmt
  kDelete,                  // DeleteStmt
  kSelect,                  // SelectStmt (also VALUES, TABLE, a set operation), SelectAsOfStatement
  kSubscribe,               // SubscribeStatement
  kBegin,                   // BEGIN, START TRANSACTION
  kCommit,                  // COMMIT, END
  kRollback,                // ROLLBACK, ABORT
  kSet,                     // SET, RESET (VariableSetStmt)
  kDeallocate,              // DEALLOCATE [PREPARE] name | ALL: a prepared statement closed
};

// "CREATE TABLE", "SHOW MATERIALIZED VIEWS", "SELECT" …
std::string_view StatementKindName(StatementKind kind);

// The statement's kind, or 0A000 "<command> is not supported" at the statement's position.
SqlResult<StatementKind> Classify(const ParsedStatement& statement);

// PostgreSQL's name for the command a statement node is ("CREATE FUNCTION", "ALTER TABLE",
// "DROP SCHEMA", "SAVEPOINT" …): what an error about it names.
std::string CommandName(const pg_query::Node& statement);

}  // namespace tandem::sql

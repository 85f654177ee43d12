// INSERT, UPDATE and DELETE (DESIGN §9, §15): a parsed statement and the catalog → the rows it
// reads (a PlannedRelation, bound by the same binder as a query), and those rows, read at one
// time, → the table updates of one WriteTable (ipc/tandem.proto), checked as PostgreSQL checks
// them (NOT NULL, the primary key's uniqueness). Pure functions: no server, no I/O; the executor
// (frontend/server) reads the rows through a replica, reads the existing rows of KeysToCheck at
// that same time, calls BuildWrite and sends the write. Callable from any thread (PlanDml on a
// stack of at least sql::kParseStackBytes, as PlanQuery).
//
// What the planner does not plan exactly is refused with 0A000 naming the construct — never a
// wrong write. A table has no column defaults: DEFAULT (in VALUES, in SET, DEFAULT VALUES, a
// column left out of INSERT's list) is NULL, as PostgreSQL's default without a DEFAULT clause.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/catalog/objects.h"
#include "frontend/plan/planner.h"
#include "frontend/sql/pg_query.pb.h"
#include "frontend/sql/sql_error.h"
#include "ipc/codec.h"
#include "ipc/table_write.h"

namespace tandem::frontend::plan {

enum class DmlKind { kInsert, kUpdate, kDelete };

// The rows one statement may write: a WriteTable holds at most ipc::WriteBounds::kMaxUpdates
// updates, and an UPDATE may take two per row (-old +new, or delete old key + upsert new row).
// More is refused by BuildWrite with 54000 "… more than N rows in one statement".
inline constexpr std::size_t kMaxInsertOrDeleteRows = ipc::WriteBounds::kMaxUpdates;
inline constexpr std::size_t kMaxUpdateRows = ipc::WriteBounds::kMaxUpdates / 2;

struct DmlPlan {
  DmlKind kind = DmlKind::kInsert;
  std::string object;                      // the table's SQL name
  std::string table_id;                    // its collection's GlobalId (the WriteTable's id)
  std::vector<CatalogColumn> columns;      // the table's columns
  std::vector<std::uint32_t> primary_key;  // empty: a table without upsert key
  // INSERT: the rows to insert, with the table's columns in order (columns not named get NULL;
  //   PostgreSQL's assignment casts applied where the engine can: an unknown constant parsed as
  //   the column's type, an integer constant into double precision or text; what PostgreSQL
  //   refuses refused with its SQLSTATE, what it casts and the engine cannot yet refused 0A000),
  //   from VALUES or a SELECT.
  // UPDATE: per table row matching WHERE: the old row's columns, then the new row's (2 × arity).
  // DELETE: the table rows matching WHERE (arity columns).
  // Its finishing is empty; it type-checks as PlanQuery's plans do.
  PlannedRelation rows;
};

// The statement node (InsertStmt, UpdateStmt, DeleteStmt as frontend/sql's Parse gives it) bound
// against `catalog`; `sql` is the statement's text (error positions). Refusals: 42P01 unknown
// table; 42809 when the target is a view ("cannot insert into view …"), a materialized view
// ("cannot change materialized view …"), a source or kOneRowObject (read-only); 42703 unknown
// column; 42701 a column twice in INSERT's list; 42601 more expressions than target columns (or
// the reverse), VALUES lists of different lengths, a column assigned twice by SET; 42804 a value
// PostgreSQL cannot assign to the column's type; 0A000 naming the construct for RETURNING, ON
// CONFLICT, WITH on the statement, OVERRIDING, UPDATE … FROM, DELETE … USING, SET (…) = (SELECT
// …), subscripts, and what else the binder refuses in a query.
// `unknowns`, where set, receives the types of the statement's unknown constants (planner.h).
SqlResult<DmlPlan> PlanDml(const pg_query::Node& statement, const CatalogReader& catalog,
                           std::string_view sql, UnknownTypes* unknowns = nullptr);

// The rows of `relation` when it is constant (its plan reads only kOneRowObject through
// map/filter/project, and unions of such — as VALUES and SELECT without FROM are planned),
// evaluated here exactly as a replica would (workers/expr.h), each row repeated per its
// multiplicity, the finishing NOT applied (the caller decides); nullopt when not constant. A data
// error → SqlError 22012 "division by zero" or 22003 "bigint out of range", as PostgreSQL says
// them.
std::optional<SqlResult<std::vector<ipc::pb::Row>>> EvaluateConstant(
    const PlannedRelation& relation);

// For a table with a primary key: the distinct keys (rows of the PK columns, in primary_key
// order) the statement will write, whose existing rows the executor must read (a peek of the
// table's default index, keyed by the PK, with these keys) for BuildWrite's uniqueness check:
// INSERT: every new row's key; UPDATE: every new key that differs from its old key; DELETE: none.
// Empty for tables without a PK. `rows` are plan.rows' rows.
std::vector<ipc::pb::Row> KeysToCheck(const DmlPlan& plan, const std::vector<ipc::pb::Row>& rows);

struct DmlWrite {
  std::vector<ipc::pb::TableUpdate> updates;  // may be empty (nothing matched): no write is sent
  std::uint64_t count = 0;                    // rows inserted/updated/deleted: the command tag's n
};

// The table updates of the statement, from `rows` (the rows of plan.rows, read at one time) and
// `existing` (the table's rows whose keys are among KeysToCheck, read at that same time).
// Checks, as PostgreSQL: 23502 null value in column "c" of relation "t" violates not-null
// constraint (DETAIL "Failing row contains (…)."); 23505 duplicate key value violates unique
// constraint "<t>_pkey" with DETAIL "Key (k)=(1) already exists." — against existing rows and
// within the statement, and for an UPDATE moving a row onto a key that another row keeps (keys
// swapped or shifted among the updated rows are fine: the statement's end state is checked, as
// the SQL standard says; PostgreSQL's immediate check may refuse some of those). 54000 past
// kMaxInsertOrDeleteRows / kMaxUpdateRows rows. Tables without PK: RowDiff +1 per inserted row,
// -1 per deleted row, -old +new per updated row (equal rows coalesced into one diff, a row updated
// to itself none). PK tables: every delete (a DELETE's keys, an UPDATE's old keys no new row
// takes) before every upsert (whole rows; a row updated to itself none), so no later update of a
// key undoes an earlier one (ipc/table_write.h's rules hold for every update).
sql::SqlResult<DmlWrite> BuildWrite(const DmlPlan& plan, const std::vector<ipc::pb::Row>& rows,
                                    const std::vector<ipc::pb::Row>& existing);

// "INSERT 0 <n>", "UPDATE <n>", "DELETE <n>".
std::string CommandTag(const DmlPlan& plan, std::uint64_t count);

}  // namespace tandem::frontend::plan

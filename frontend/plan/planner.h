// The SQL binder and planner for queries (DESIGN §15): a parsed query (a SelectStmt from
// frontend/sql's Parse, with WITH, set operations, VALUES) and the catalog → the controller
// protocol's plans (ipc/tandem.proto): one Plan over the default indexes of what it reads, the
// top-level ORDER BY / LIMIT / OFFSET as a Finishing, and the output columns as PostgreSQL names
// them. No server, no I/O: a pure function of its arguments, callable from any number of threads
// (each on a stack of at least sql::kParseStackBytes: a view's definition is parsed again here).
//
// What holds for every plan returned:
//   * it type-checks (ipc/plan_typing.h's PlanChecker over `imports`) and its output columns have
//     `columns`' types and nullability: a plan the replica would refuse is a planner bug, reported
//     as XX000, never sent;
//   * it Gets only the `on` ids of `imports`, one import per collection read;
//   * it nests at most kMaxPlanNesting protobuf messages deep (the replica's decoder refuses more)
//     and is at most kMaxPlanBytes: a deeper or larger one is refused with 54001;
//   * it answers what PostgreSQL 15 answers for the same query over the same rows (README.md lists
//     the few documented differences of type); a construct the planner cannot plan exactly is
//     refused with 0A000 naming it — never a wrong answer.
//
// Constant rows (SELECT without FROM, VALUES, an aggregate without GROUP BY over no rows) are read
// from kOneRowObject: a catalog object the frontend keeps holding exactly one row. Without it in
// the catalog, such queries are refused with 0A000.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/catalog/objects.h"
#include "frontend/sql/pg_query.pb.h"
#include "frontend/sql/sql_error.h"
#include "ipc/codec.h"

namespace tandem::frontend::plan {

using sql::SqlError;
using sql::SqlResult;

// The catalog object (a read-only source of one column `one` int8 not null) that holds exactly
// one row (1): the frontend creates it and writes its row once; the planner reads constants from
// it.
inline constexpr char kOneRowObject[] = "tandem_one_row";
// Views inside views inside …: deeper is refused with 54001 (a view cannot name itself, but a
// catalog is not the planner's to trust).
inline constexpr int kMaxViewDepth = 32;
// Protobuf messages a plan may nest (a Command, a CreateDataflow, a DataflowDescription and a
// BuildDesc around it stay within the decoder's 100).
inline constexpr int kMaxPlanNesting = 90;
// The largest plan (serialised) a query may become: FULL JOIN, INTERSECT, NOT IN and CTEs
// referenced several times copy their inputs, so a short statement can ask for a plan
// exponentially large. Checked as each relation is built, so the binder never holds much more.
inline constexpr std::size_t kMaxPlanBytes = std::size_t{1} << 20;
// FROM items a query may bind, each view and each WITH reference bound again counted: bounds the
// work of a statement whose CTEs or views name each other several times over (54001 past it).
inline constexpr int kMaxBoundRelations = 1000;

struct PlannedRelation {
  ipc::pb::Plan plan;                         // Gets only the `on` ids of `imports`
  std::vector<ipc::pb::IndexImport> imports;  // one per catalog collection read (its default index)
  std::vector<std::string> import_objects;    // the SQL name of each import's object, in order
  std::vector<CatalogColumn> columns;         // the output columns, named as PostgreSQL names them
  ipc::pb::Finishing finishing;  // the top-level ORDER BY / LIMIT / OFFSET (and its projection)
};

// The types PostgreSQL's unknown constants of a statement were read as (its context decides:
// `k = '5'` reads '5' as k's type; one the context leaves unknown is text): the constant's
// location in the statement's text → the type of its first reading. How the extended protocol
// infers its parameters' types (sql/parameters.h: a parameter is bound as a NULL constant at its
// own location).
// The modifiers say varchar or char (a column's, where an assignment decided it).
using UnknownTypes = std::map<int, CatalogColumn>;

// `sql` is the whole query string the statement came from: an error's position is 1-based
// characters into it (frontend/sql's CursorPosition of the node's location). `unknowns`, where
// set, receives the types of the statement's unknown constants.
SqlResult<PlannedRelation> PlanQuery(const pg_query::Node& query, const CatalogReader& catalog,
                                     std::string_view sql, UnknownTypes* unknowns = nullptr);

// A SELECT one index answers (DESIGN §15 "a peek"): read `index_id` (optionally only the rows
// whose key columns equal one of `keys`), then `mfp`, then `finishing`.
struct PeekPlan {
  std::string index_id;
  std::string object;              // the SQL name of the object the index is on
  std::vector<ipc::pb::Row> keys;  // empty: the whole index
  ipc::pb::MapFilterProject mfp;   // over the index's collection's rows
  ipc::pb::Finishing finishing;
};

// At most this many key rows a peek looks up (an IN list longer reads the whole index).
inline constexpr std::size_t kMaxPeekKeys = 1024;

// `relation` as a peek, when its plan is map/filter/projects over one import: its keys from the
// equality predicates (`k = 5`, `k IN (1, 2)`) on every key column of that import's index.
std::optional<PeekPlan> AsPeek(const PlannedRelation& relation);
// The same, and when the default index gives no keys, another index on the object whose whole
// key the predicates fix (CREATE INDEX … ON t (b), then WHERE b = 5): a keyed peek of it.
std::optional<PeekPlan> AsPeek(const PlannedRelation& relation, const CatalogReader& catalog);

// EXPLAIN's text: a peek (of which index, by key or whole) or a one-shot dataflow, and the
// indexes read, one line each.
std::string Explain(const PlannedRelation& relation);
std::string Explain(const PlannedRelation& relation, const CatalogReader& catalog);  // any index

}  // namespace tandem::frontend::plan

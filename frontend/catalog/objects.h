// The SQL catalog's objects as the binder and planner read them (DESIGN §15): what a name in a
// statement stands for. The durable catalog (catalog.h) owns them; the planner sees them only
// through a CatalogReader, so planning is testable against an in-memory catalog.
//
// Names are PostgreSQL's identifiers after case folding (the parser folds unquoted names to lower
// case; a quoted name keeps its case), one namespace for tables, views and materialized views and
// one for indexes, as in PostgreSQL's single schema `public`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/codec.h"

namespace tandem::frontend {

enum class ObjectKind {
  kTable,             // a table source (DESIGN §9): written by INSERT/UPDATE/DELETE
  kSource,            // a file or generator source: read only
  kView,              // catalog only: its query is inlined where it is named
  kMaterializedView,  // a maintained dataflow with at least one index
};

// A column type as PostgreSQL names it ("bigint", "double precision", "text", "boolean"): the
// one spelling the planner's errors, DDL and SHOW COLUMNS use.
inline std::string_view SqlTypeName(ipc::pb::ScalarType type) {
  switch (type) {
    case ipc::pb::BOOL:
      return "boolean";
    case ipc::pb::INT64:
      return "bigint";
    case ipc::pb::FLOAT64:
      return "double precision";
    case ipc::pb::STRING:
      return "text";
    default:
      return "unknown";
  }
}

struct CatalogColumn {
  std::string name;
  ipc::pb::ScalarType type = ipc::pb::SCALAR_TYPE_UNSPECIFIED;
  bool nullable = true;
};

// An index: a GlobalId exported on a collection, keyed by some of its columns. Every table,
// source and materialized view has at least one (its default index, on its primary key or on all
// of its columns), so that a query can import it (DESIGN §8).
struct CatalogIndex {
  std::string name;  // the SQL name (CREATE INDEX's, or the default "<object>_primary_idx")
  std::string id;    // its GlobalId ("u12")
  std::string on;    // the SQL name of the object it indexes
  std::vector<std::uint32_t> key;  // columns of that object
};

struct CatalogObject {
  std::string name;
  ObjectKind kind = ObjectKind::kTable;
  std::string id;  // the collection's GlobalId; empty for a view
  std::vector<CatalogColumn> columns;
  // Tables: the PRIMARY KEY columns (the upsert key, DESIGN §9); empty: plain rows.
  std::vector<std::uint32_t> primary_key;
  // Views and materialized views: the defining query as written (bound again where used).
  std::string definition_sql;
  // Names of the objects this one reads (views and materialized views), for DROP's dependants.
  std::vector<std::string> depends_on;
};

// What the binder and planner may ask of the catalog. Lookups return nothing for an unknown name;
// the pointers stay valid until the catalog is changed (a planner never holds them across
// statements).
class CatalogReader {
 public:
  virtual ~CatalogReader() = default;
  virtual const CatalogObject* FindObject(std::string_view name) const = 0;
  virtual const CatalogIndex* FindIndex(std::string_view name) const = 0;
  // Every index on object `name`, the default one first.
  virtual std::vector<const CatalogIndex*> IndexesOn(std::string_view name) const = 0;
};

}  // namespace tandem::frontend

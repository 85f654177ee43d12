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
#include <utility>
#include <vector>

#include "ipc/codec.h"

namespace tandem::frontend {

enum class ObjectKind {
  kTable,             // a table source (DESIGN §9): written by INSERT/UPDATE/DELETE
  kSource,            // a file or generator source: read only
  kView,              // catalog only: its query is inlined where it is named
  kMaterializedView,  // a maintained dataflow with at least one index
};

// The modifiers of a column type (PostgreSQL's typmod), as ipc::pb::Column carries them:
// numeric(precision, scale) when precision > 0; varchar(length) when length > 0, char(length)
// with blank_padded. All zero: none (numeric, text, and every other type).
struct TypeMods {
  std::uint32_t precision = 0;
  std::uint32_t scale = 0;
  std::uint32_t length = 0;
  bool blank_padded = false;
  friend bool operator==(const TypeMods&, const TypeMods&) = default;
};

// A column type as PostgreSQL's format_type names it without its modifiers ("bigint", "double
// precision", "timestamp with time zone"; a string type "text", "character varying" or
// "character" as its modifiers say): the one spelling the planner's errors use.
inline std::string_view SqlTypeName(ipc::pb::ScalarType type, const TypeMods& mods = {}) {
  switch (type) {
    case ipc::pb::BOOL:
      return "boolean";
    case ipc::pb::INT16:
      return "smallint";
    case ipc::pb::INT32:
      return "integer";
    case ipc::pb::INT64:
      return "bigint";
    case ipc::pb::FLOAT32:
      return "real";
    case ipc::pb::FLOAT64:
      return "double precision";
    case ipc::pb::NUMERIC:
      return "numeric";
    case ipc::pb::STRING:
      if (mods.blank_padded) return "character";
      return mods.length > 0 ? "character varying" : "text";
    case ipc::pb::BYTEA:
      return "bytea";
    case ipc::pb::DATE:
      return "date";
    case ipc::pb::TIME:
      return "time without time zone";
    case ipc::pb::TIMESTAMP:
      return "timestamp without time zone";
    case ipc::pb::TIMESTAMPTZ:
      return "timestamp with time zone";
    case ipc::pb::INTERVAL:
      return "interval";
    case ipc::pb::UUID:
      return "uuid";
    default:
      return "unknown";
  }
}
// With its modifiers, as DDL, SHOW COLUMNS and PostgreSQL's messages show a column's type:
// "numeric(10,2)", "character varying(5)", "character(3)", "integer".
inline std::string SqlTypeNameWithMods(ipc::pb::ScalarType type, const TypeMods& mods) {
  std::string name(SqlTypeName(type, mods));
  if (type == ipc::pb::NUMERIC && mods.precision > 0) {
    name += "(" + std::to_string(mods.precision) + "," + std::to_string(mods.scale) + ")";
  } else if (type == ipc::pb::STRING && mods.length > 0) {
    name += "(" + std::to_string(mods.length) + ")";
  }
  return name;
}

struct CatalogColumn {
  CatalogColumn() = default;
  CatalogColumn(std::string name_, ipc::pb::ScalarType type_, bool nullable_ = true,
                TypeMods mods_ = {})
      : name(std::move(name_)), type(type_), nullable(nullable_), mods(mods_) {}

  std::string name;
  ipc::pb::ScalarType type = ipc::pb::SCALAR_TYPE_UNSPECIFIED;
  bool nullable = true;
  TypeMods mods;  // numeric(p,s), varchar(n), char(n)
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

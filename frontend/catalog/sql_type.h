// SQL type names → Tandem's column types (DESIGN §16): what a column definition, a CAST, `x::t`
// and a typed literal (`DATE '…'`) name, resolved as PostgreSQL 15 resolves the same TypeName —
// its spellings (int, integer, int4; decimal, numeric; character varying, varchar; char,
// character, bpchar; timestamp with time zone, timestamptz; double precision, float, float(p)),
// its modifiers and its errors. One resolver for DDL and the binder, so a column declared
// `numeric(10,2)` and a cast `::numeric(10,2)` are the same type.
//
// Errors, as PostgreSQL words them: an unknown name → 42704 `type "x" does not exist`; a bad
// modifier → 22023 ("NUMERIC precision 0 must be between 1 and 1000", "length for type varchar
// must be at least 1") or 42601 ("type modifier is not allowed for type \"date\""). What
// PostgreSQL has and Tandem does not (numeric(39..1000), a negative or larger-than-precision
// scale, timestamp(p), time(p), interval fields, arrays, json, timetz …) → 0A000 naming it.
#pragma once

#include <optional>
#include <string>

#include "frontend/catalog/objects.h"
#include "frontend/sql/pg_query.pb.h"

namespace tandem::frontend {

struct ResolvedType {
  ipc::pb::ScalarType type = ipc::pb::SCALAR_TYPE_UNSPECIFIED;
  TypeMods mods;
};

struct TypeNameError {
  const char* sqlstate = "";
  std::string message;
  int location = -1;  // a byte offset into the statement's text (the TypeName's own)
};

// Exactly one of `type` and `error` is meaningful: `type` when it has a value.
struct TypeNameResult {
  std::optional<ResolvedType> type;
  TypeNameError error;
};

TypeNameResult ResolveTypeName(const pg_query::TypeName& name);

// PostgreSQL's atttypmod of a column of `type` (RowDescription's type modifier): numeric(p,s)
// ((p << 16) | s) + 4, varchar(n) and char(n) n + 4, else -1.
int TypeModifier(ipc::pb::ScalarType type, const TypeMods& mods);

// The pb::Column of a type (name and nullability left to the caller).
ipc::pb::Column ColumnOfType(ipc::pb::ScalarType type, const TypeMods& mods);

}  // namespace tandem::frontend

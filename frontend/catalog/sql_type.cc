#include "frontend/catalog/sql_type.h"

#include <cstdint>
#include <map>
#include <string_view>
#include <vector>

#include "frontend/sqlstate.h"

namespace tandem::frontend {

namespace pb = ipc::pb;

namespace {

// PostgreSQL's limits on the modifiers it takes (numeric.c, varchar.c).
constexpr std::int64_t kPostgresNumericMaxPrecision = 1000;
constexpr std::int64_t kPostgresMaxStringLength = 10485760;
constexpr std::int64_t kTandemNumericMaxPrecision = 38;  // base/numeric.h's kNumericMaxDigits

// What a name stands for once PostgreSQL's grammar folded its spellings: the internal names of
// pg_type (int4, bpchar, timestamptz …), with or without pg_catalog.
struct Known {
  pb::ScalarType type;
  enum class Mods { kNone, kNumeric, kVarchar, kBpchar, kPrecision, kInterval } mods;
  const char* shown;  // format_type's name, for messages
};

const std::map<std::string, Known, std::less<>>& KnownTypes() {
  using M = Known::Mods;
  static const auto* kTypes = new std::map<std::string, Known, std::less<>>{
      {"bool", {pb::BOOL, M::kNone, "boolean"}},
      {"boolean", {pb::BOOL, M::kNone, "boolean"}},
      {"int2", {pb::INT16, M::kNone, "smallint"}},
      {"smallint", {pb::INT16, M::kNone, "smallint"}},
      {"int4", {pb::INT32, M::kNone, "integer"}},
      {"int", {pb::INT32, M::kNone, "integer"}},
      {"integer", {pb::INT32, M::kNone, "integer"}},
      {"int8", {pb::INT64, M::kNone, "bigint"}},
      {"bigint", {pb::INT64, M::kNone, "bigint"}},
      {"float4", {pb::FLOAT32, M::kNone, "real"}},
      {"real", {pb::FLOAT32, M::kNone, "real"}},
      {"float8", {pb::FLOAT64, M::kNone, "double precision"}},
      {"numeric", {pb::NUMERIC, M::kNumeric, "numeric"}},
      {"decimal", {pb::NUMERIC, M::kNumeric, "numeric"}},
      {"text", {pb::STRING, M::kNone, "text"}},
      {"varchar", {pb::STRING, M::kVarchar, "character varying"}},
      {"bpchar", {pb::STRING, M::kBpchar, "character"}},
      {"bytea", {pb::BYTEA, M::kNone, "bytea"}},
      {"date", {pb::DATE, M::kNone, "date"}},
      {"time", {pb::TIME, M::kPrecision, "time without time zone"}},
      {"timestamp", {pb::TIMESTAMP, M::kPrecision, "timestamp without time zone"}},
      {"timestamptz", {pb::TIMESTAMPTZ, M::kPrecision, "timestamp with time zone"}},
      {"interval", {pb::INTERVAL, M::kInterval, "interval"}},
      {"uuid", {pb::UUID, M::kNone, "uuid"}},
  };
  return *kTypes;
}

// PostgreSQL's types Tandem does not have, by internal name → the name its messages use.
const std::map<std::string, std::string, std::less<>>& UnsupportedTypes() {
  static const auto* kTypes = new std::map<std::string, std::string, std::less<>>{
      {"char", "\"char\""},
      {"name", "name"},
      {"timetz", "time with time zone"},
      {"json", "json"},
      {"jsonb", "jsonb"},
      {"oid", "oid"},
      {"money", "money"},
      {"bit", "bit"},
      {"varbit", "bit varying"},
      {"inet", "inet"},
      {"cidr", "cidr"},
      {"macaddr", "macaddr"},
      {"xml", "xml"},
      {"point", "point"},
      {"serial", "serial"},
      {"bigserial", "bigserial"},
      {"smallserial", "smallserial"},
      {"regclass", "regclass"},
      {"record", "record"},
      {"tsvector", "tsvector"},
      {"int4range", "int4range"},
  };
  return *kTypes;
}

TypeNameResult Error(const char* state, std::string message, int location) {
  TypeNameResult r;
  r.error = TypeNameError{state, std::move(message), location};
  return r;
}

}  // namespace

TypeNameResult ResolveTypeName(const pg_query::TypeName& t) {
  const int at = t.location();
  std::vector<std::string> names;
  for (const auto& n : t.names()) {
    if (!n.has_string())
      return Error(sqlstate::kFeatureNotSupported, "this type name is not supported", at);
    names.push_back(n.string().sval());
  }
  std::string joined;
  for (const auto& n : names) joined += (joined.empty() ? "" : ".") + n;
  if (names.empty() || names.size() > 2 || (names.size() == 2 && names[0] != "pg_catalog")) {
    return Error(sqlstate::kUndefinedObject, "type \"" + joined + "\" does not exist", at);
  }
  const std::string& name = names.back();
  if (t.setof() || t.pct_type()) {
    return Error(sqlstate::kFeatureNotSupported, "SETOF and %TYPE are not supported", at);
  }
  const auto known = KnownTypes().find(name);
  if (known == KnownTypes().end()) {
    if (auto it = UnsupportedTypes().find(name); it != UnsupportedTypes().end()) {
      return Error(sqlstate::kFeatureNotSupported, "type " + it->second + " is not supported", at);
    }
    return Error(sqlstate::kUndefinedObject, "type \"" + joined + "\" does not exist", at);
  }
  const Known& k = known->second;
  if (!t.array_bounds().empty()) {
    return Error(sqlstate::kFeatureNotSupported,
                 std::string("array type ") + k.shown + "[] is not supported", at);
  }
  // The modifiers: integer constants only (PostgreSQL: "type modifiers must be simple constants
  // or identifiers").
  std::vector<std::int64_t> mods;
  for (const auto& m : t.typmods()) {
    if (!m.has_a_const() || m.a_const().val_case() != pg_query::A_Const::kIval) {
      return Error(sqlstate::kSyntaxError, "type modifiers must be simple constants or identifiers",
                   at);
    }
    mods.push_back(m.a_const().ival().ival());
  }
  ResolvedType out;
  out.type = k.type;
  using M = Known::Mods;
  switch (k.mods) {
    case M::kNone:
      if (!mods.empty()) {
        return Error(sqlstate::kSyntaxError,
                     "type modifier is not allowed for type \"" + name + "\"", at);
      }
      break;
    case M::kNumeric: {
      if (mods.empty()) break;  // unconstrained numeric
      if (mods.size() > 2) {
        return Error(sqlstate::kInvalidParameterValue, "invalid NUMERIC type modifier", at);
      }
      const std::int64_t p = mods[0], s = mods.size() == 2 ? mods[1] : 0;
      if (p < 1 || p > kPostgresNumericMaxPrecision) {
        return Error(sqlstate::kInvalidParameterValue,
                     "NUMERIC precision " + std::to_string(p) + " must be between 1 and 1000", at);
      }
      if (p > kTandemNumericMaxPrecision) {
        return Error(sqlstate::kFeatureNotSupported,
                     "numeric(" + std::to_string(p) +
                         ") is not supported: numeric holds at most 38 digits (declare "
                         "numeric(p,s) with p from 1 to 38, or numeric)",
                     at);
      }
      if (s < 0 || s > p) {
        return Error(sqlstate::kFeatureNotSupported,
                     "numeric(" + std::to_string(p) + "," + std::to_string(s) +
                         ") is not supported: the scale must be between 0 and the precision",
                     at);
      }
      out.mods.precision = static_cast<std::uint32_t>(p);
      out.mods.scale = static_cast<std::uint32_t>(s);
      break;
    }
    case M::kVarchar:
    case M::kBpchar: {
      const char* internal = k.mods == M::kVarchar ? "varchar" : "char";
      if (mods.empty()) {
        // varchar without a length is text here (values are not limited); bpchar without one is
        // character of any length (`char` alone is char(1): the grammar gives it its 1).
        if (k.mods == M::kBpchar) out.mods = TypeMods{0, 0, 0, true};
        break;
      }
      if (mods.size() > 1) {
        return Error(sqlstate::kInvalidParameterValue, std::string("invalid type modifier"), at);
      }
      if (mods[0] < 1) {
        return Error(sqlstate::kInvalidParameterValue,
                     std::string("length for type ") + internal + " must be at least 1", at);
      }
      if (mods[0] > kPostgresMaxStringLength) {
        return Error(sqlstate::kInvalidParameterValue,
                     std::string("length for type ") + internal + " cannot exceed 10485760", at);
      }
      out.mods.length = static_cast<std::uint32_t>(mods[0]);
      out.mods.blank_padded = k.mods == M::kBpchar;
      break;
    }
    case M::kPrecision:
      if (!mods.empty()) {
        return Error(
            sqlstate::kFeatureNotSupported,
            std::string(k.shown) + " with a precision is not supported: values keep microseconds",
            at);
      }
      break;
    case M::kInterval:
      if (!mods.empty()) {
        return Error(sqlstate::kFeatureNotSupported,
                     "interval fields and precision (INTERVAL DAY, interval(3)) are not supported",
                     at);
      }
      break;
  }
  TypeNameResult r;
  r.type = out;
  return r;
}

int TypeModifier(pb::ScalarType type, const TypeMods& mods) {
  constexpr int kVarHeader = 4;  // PostgreSQL's VARHDRSZ, which its typmods include
  if (type == pb::NUMERIC && mods.precision > 0) {
    return static_cast<int>((mods.precision << 16) | mods.scale) + kVarHeader;
  }
  if (type == pb::STRING && mods.length > 0) return static_cast<int>(mods.length) + kVarHeader;
  return -1;
}

pb::Column ColumnOfType(pb::ScalarType type, const TypeMods& mods) {
  pb::Column c;
  c.set_type(type);
  c.set_precision(mods.precision);
  c.set_scale(mods.scale);
  c.set_length(mods.length);
  c.set_blank_padded(mods.blank_padded);
  return c;
}

}  // namespace tandem::frontend

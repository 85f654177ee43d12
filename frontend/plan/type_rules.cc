#include "frontend/plan/type_rules.h"

#include <utility>

#include "frontend/plan/operator_table.h"

namespace tandem::frontend::plan {

namespace {

using T = PgTypeId;

// pg_cast's implicit (castcontext 'i') casts between Tandem's types, PostgreSQL 15.
constexpr std::pair<T, T> kImplicitCasts[] = {
    {T::kInt2, T::kInt4},
    {T::kInt2, T::kInt8},
    {T::kInt2, T::kFloat4},
    {T::kInt2, T::kFloat8},
    {T::kInt2, T::kNumeric},
    {T::kInt4, T::kInt8},
    {T::kInt4, T::kFloat4},
    {T::kInt4, T::kFloat8},
    {T::kInt4, T::kNumeric},
    {T::kInt8, T::kFloat4},
    {T::kInt8, T::kFloat8},
    {T::kInt8, T::kNumeric},
    {T::kFloat4, T::kFloat8},
    {T::kNumeric, T::kFloat4},
    {T::kNumeric, T::kFloat8},
    {T::kText, T::kBpchar},
    {T::kText, T::kVarchar},
    {T::kBpchar, T::kText},
    {T::kBpchar, T::kVarchar},
    {T::kVarchar, T::kText},
    {T::kVarchar, T::kBpchar},
    {T::kDate, T::kTimestamp},
    {T::kDate, T::kTimestampTz},
    {T::kTime, T::kInterval},
    {T::kTimestamp, T::kTimestampTz},
};

// pg_cast's assignment casts ('a'); every type also converts to a string type by its output
// function in an assignment.
constexpr std::pair<T, T> kAssignmentCasts[] = {
    {T::kInt8, T::kInt2},        {T::kInt8, T::kInt4},
    {T::kInt4, T::kInt2},        {T::kFloat4, T::kInt2},
    {T::kFloat4, T::kInt4},      {T::kFloat4, T::kInt8},
    {T::kFloat4, T::kNumeric},   {T::kFloat8, T::kInt2},
    {T::kFloat8, T::kInt4},      {T::kFloat8, T::kInt8},
    {T::kFloat8, T::kFloat4},    {T::kFloat8, T::kNumeric},
    {T::kNumeric, T::kInt2},     {T::kNumeric, T::kInt4},
    {T::kNumeric, T::kInt8},     {T::kTimestamp, T::kDate},
    {T::kTimestamp, T::kTime},   {T::kTimestampTz, T::kDate},
    {T::kTimestampTz, T::kTime}, {T::kTimestampTz, T::kTimestamp},
    {T::kInterval, T::kTime},
};

// pg_cast's explicit-only casts ('e'); a string type also converts to every type by its input
// function in an explicit cast.
constexpr std::pair<T, T> kExplicitCasts[] = {{T::kBool, T::kInt4}, {T::kInt4, T::kBool}};

template <std::size_t N>
bool Listed(const std::pair<T, T> (&casts)[N], T from, T to) {
  for (const auto& [f, t] : casts) {
    if (f == from && t == to) return true;
  }
  return false;
}

bool Concrete(T id) {
  return id != T::kNone && id != T::kUnknown && id != T::kAnyNonArray && id != T::kJsonb;
}

}  // namespace

PgTypeId IdOf(pb::ScalarType type, const TypeMods& mods) {
  switch (type) {
    case pb::BOOL:
      return T::kBool;
    case pb::INT16:
      return T::kInt2;
    case pb::INT32:
      return T::kInt4;
    case pb::INT64:
      return T::kInt8;
    case pb::FLOAT32:
      return T::kFloat4;
    case pb::FLOAT64:
      return T::kFloat8;
    case pb::NUMERIC:
      return T::kNumeric;
    case pb::STRING:
      if (mods.blank_padded) return T::kBpchar;
      return mods.length > 0 ? T::kVarchar : T::kText;
    case pb::BYTEA:
      return T::kBytea;
    case pb::DATE:
      return T::kDate;
    case pb::TIME:
      return T::kTime;
    case pb::TIMESTAMP:
      return T::kTimestamp;
    case pb::TIMESTAMPTZ:
      return T::kTimestampTz;
    case pb::INTERVAL:
      return T::kInterval;
    case pb::UUID:
      return T::kUuid;
    default:
      return T::kUnknown;
  }
}

pb::ScalarType ScalarOf(PgTypeId id) {
  switch (id) {
    case T::kBool:
      return pb::BOOL;
    case T::kInt2:
      return pb::INT16;
    case T::kInt4:
      return pb::INT32;
    case T::kInt8:
      return pb::INT64;
    case T::kFloat4:
      return pb::FLOAT32;
    case T::kFloat8:
      return pb::FLOAT64;
    case T::kNumeric:
      return pb::NUMERIC;
    case T::kText:
    case T::kVarchar:
    case T::kBpchar:
      return pb::STRING;
    case T::kBytea:
      return pb::BYTEA;
    case T::kDate:
      return pb::DATE;
    case T::kTime:
      return pb::TIME;
    case T::kTimestamp:
      return pb::TIMESTAMP;
    case T::kTimestampTz:
      return pb::TIMESTAMPTZ;
    case T::kInterval:
      return pb::INTERVAL;
    case T::kUuid:
      return pb::UUID;
    default:
      return pb::SCALAR_TYPE_UNSPECIFIED;
  }
}

TypeMods ModsOf(PgTypeId id) {
  TypeMods mods;
  mods.blank_padded = id == T::kBpchar;
  return mods;
}

std::string_view PgTypeName(PgTypeId id) {
  switch (id) {
    case T::kVarchar:
      return "character varying";
    case T::kBpchar:
      return "character";
    case T::kUnknown:
      return "unknown";
    case T::kAnyNonArray:
      return "anynonarray";
    case T::kJsonb:
      return "jsonb";
    case T::kNone:
      return "none";
    default:
      return SqlTypeName(ScalarOf(id));
  }
}

char Category(PgTypeId id) {
  switch (id) {
    case T::kBool:
      return 'B';
    case T::kInt2:
    case T::kInt4:
    case T::kInt8:
    case T::kFloat4:
    case T::kFloat8:
    case T::kNumeric:
      return 'N';
    case T::kText:
    case T::kVarchar:
    case T::kBpchar:
      return 'S';
    case T::kDate:
    case T::kTime:
    case T::kTimestamp:
    case T::kTimestampTz:
      return 'D';
    case T::kInterval:
      return 'T';
    case T::kUnknown:
      return 'X';
    default:
      return 'U';  // bytea, uuid
  }
}

bool Preferred(PgTypeId id) {
  return id == T::kBool || id == T::kFloat8 || id == T::kText || id == T::kTimestampTz ||
         id == T::kInterval;
}

bool IsIntegerType(PgTypeId id) { return id == T::kInt2 || id == T::kInt4 || id == T::kInt8; }
bool IsNumericFamily(PgTypeId id) { return Category(id) == 'N'; }
bool IsStringType(PgTypeId id) { return Category(id) == 'S'; }

bool CanCast(PgTypeId from, PgTypeId to, CastContext context) {
  if (from == to) return true;
  if (from == T::kUnknown) return Concrete(to);
  if (!Concrete(from) || !Concrete(to)) return false;
  if (Listed(kImplicitCasts, from, to)) return true;
  if (context == CastContext::kImplicit) return false;
  if (Listed(kAssignmentCasts, from, to) || IsStringType(to)) return true;
  if (context == CastContext::kAssignment) return false;
  return Listed(kExplicitCasts, from, to) || IsStringType(from);
}

CommonTypeChoice SelectCommonType(const std::vector<PgTypeId>& inputs) {
  CommonTypeChoice out;
  PgTypeId p = T::kUnknown;
  for (const PgTypeId n : inputs) {
    if (n == T::kUnknown || n == p) continue;
    if (p == T::kUnknown) {
      p = n;
      continue;
    }
    if (Category(n) != Category(p)) {
      out.a = p;
      out.b = n;
      return out;
    }
    if (!Preferred(p) && CanCast(p, n, CastContext::kImplicit) &&
        !CanCast(n, p, CastContext::kImplicit)) {
      p = n;
    }
  }
  if (p == T::kUnknown) p = T::kText;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!CanCast(inputs[i], p, CastContext::kImplicit)) {
      out.convert_failed = true;
      out.bad = i;
      out.a = inputs[i];
      out.b = p;
      return out;
    }
  }
  out.type = p;
  return out;
}

OperatorLookup FindOperator(std::string_view op, PgTypeId left, PgTypeId right,
                            OperatorChoice* out) {
  std::string_view key = op;
  if (op == "<>" || op == "!=") key = "=";
  if (op == "<=" || op == ">" || op == ">=") key = "<";
  for (const OperatorRow& row : kPostgresOperators) {
    if (key != row.op || row.left != left || row.right != right) continue;
    if (row.not_unique) return OperatorLookup::kNotUnique;
    *out = OperatorChoice{row.oper_left, row.oper_right, row.oper_result};
    return OperatorLookup::kFound;
  }
  return OperatorLookup::kMissing;
}

}  // namespace tandem::frontend::plan

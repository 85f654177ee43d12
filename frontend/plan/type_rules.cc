#include "frontend/plan/type_rules.h"

#include <utility>

#include "frontend/plan/operator_table.h"

namespace tandem::frontend::plan {

namespace {

using Pg = PgTypeId;

// pg_cast's implicit (castcontext 'i') casts between Tandem's types, PostgreSQL 15.
constexpr std::pair<Pg, Pg> kImplicitCasts[] = {
    {Pg::kInt2, Pg::kInt4},
    {Pg::kInt2, Pg::kInt8},
    {Pg::kInt2, Pg::kFloat4},
    {Pg::kInt2, Pg::kFloat8},
    {Pg::kInt2, Pg::kNumeric},
    {Pg::kInt4, Pg::kInt8},
    {Pg::kInt4, Pg::kFloat4},
    {Pg::kInt4, Pg::kFloat8},
    {Pg::kInt4, Pg::kNumeric},
    {Pg::kInt8, Pg::kFloat4},
    {Pg::kInt8, Pg::kFloat8},
    {Pg::kInt8, Pg::kNumeric},
    {Pg::kFloat4, Pg::kFloat8},
    {Pg::kNumeric, Pg::kFloat4},
    {Pg::kNumeric, Pg::kFloat8},
    {Pg::kText, Pg::kBpchar},
    {Pg::kText, Pg::kVarchar},
    {Pg::kBpchar, Pg::kText},
    {Pg::kBpchar, Pg::kVarchar},
    {Pg::kVarchar, Pg::kText},
    {Pg::kVarchar, Pg::kBpchar},
    {Pg::kDate, Pg::kTimestamp},
    {Pg::kDate, Pg::kTimestampTz},
    {Pg::kTime, Pg::kInterval},
    {Pg::kTimestamp, Pg::kTimestampTz},
};

// pg_cast's assignment casts ('a'); every type also converts to a string type by its output
// function in an assignment.
constexpr std::pair<Pg, Pg> kAssignmentCasts[] = {
    {Pg::kInt8, Pg::kInt2},        {Pg::kInt8, Pg::kInt4},
    {Pg::kInt4, Pg::kInt2},        {Pg::kFloat4, Pg::kInt2},
    {Pg::kFloat4, Pg::kInt4},      {Pg::kFloat4, Pg::kInt8},
    {Pg::kFloat4, Pg::kNumeric},   {Pg::kFloat8, Pg::kInt2},
    {Pg::kFloat8, Pg::kInt4},      {Pg::kFloat8, Pg::kInt8},
    {Pg::kFloat8, Pg::kFloat4},    {Pg::kFloat8, Pg::kNumeric},
    {Pg::kNumeric, Pg::kInt2},     {Pg::kNumeric, Pg::kInt4},
    {Pg::kNumeric, Pg::kInt8},     {Pg::kTimestamp, Pg::kDate},
    {Pg::kTimestamp, Pg::kTime},   {Pg::kTimestampTz, Pg::kDate},
    {Pg::kTimestampTz, Pg::kTime}, {Pg::kTimestampTz, Pg::kTimestamp},
    {Pg::kInterval, Pg::kTime},
};

// pg_cast's explicit-only casts ('e'); a string type also converts to every type by its input
// function in an explicit cast.
constexpr std::pair<Pg, Pg> kExplicitCasts[] = {{Pg::kBool, Pg::kInt4}, {Pg::kInt4, Pg::kBool}};

template <std::size_t N>
bool Listed(const std::pair<Pg, Pg> (&casts)[N], Pg from, Pg to) {
  for (const auto& [f, t] : casts) {
    if (f == from && t == to) return true;
  }
  return false;
}

bool Concrete(Pg id) {
  return id != Pg::kNone && id != Pg::kUnknown && id != Pg::kAnyNonArray && id != Pg::kJsonb;
}

}  // namespace

PgTypeId IdOf(pb::ScalarType type, const TypeMods& mods) {
  switch (type) {
    case pb::BOOL:
      return Pg::kBool;
    case pb::INT16:
      return Pg::kInt2;
    case pb::INT32:
      return Pg::kInt4;
    case pb::INT64:
      return Pg::kInt8;
    case pb::FLOAT32:
      return Pg::kFloat4;
    case pb::FLOAT64:
      return Pg::kFloat8;
    case pb::NUMERIC:
      return Pg::kNumeric;
    case pb::STRING:
      if (mods.blank_padded) return Pg::kBpchar;
      return mods.length > 0 ? Pg::kVarchar : Pg::kText;
    case pb::BYTEA:
      return Pg::kBytea;
    case pb::DATE:
      return Pg::kDate;
    case pb::TIME:
      return Pg::kTime;
    case pb::TIMESTAMP:
      return Pg::kTimestamp;
    case pb::TIMESTAMPTZ:
      return Pg::kTimestampTz;
    case pb::INTERVAL:
      return Pg::kInterval;
    case pb::UUID:
      return Pg::kUuid;
    default:
      return Pg::kUnknown;
  }
}

pb::ScalarType ScalarOf(PgTypeId id) {
  switch (id) {
    case Pg::kBool:
      return pb::BOOL;
    case Pg::kInt2:
      return pb::INT16;
    case Pg::kInt4:
      return pb::INT32;
    case Pg::kInt8:
      return pb::INT64;
    case Pg::kFloat4:
      return pb::FLOAT32;
    case Pg::kFloat8:
      return pb::FLOAT64;
    case Pg::kNumeric:
      return pb::NUMERIC;
    case Pg::kText:
    case Pg::kVarchar:
    case Pg::kBpchar:
      return pb::STRING;
    case Pg::kBytea:
      return pb::BYTEA;
    case Pg::kDate:
      return pb::DATE;
    case Pg::kTime:
      return pb::TIME;
    case Pg::kTimestamp:
      return pb::TIMESTAMP;
    case Pg::kTimestampTz:
      return pb::TIMESTAMPTZ;
    case Pg::kInterval:
      return pb::INTERVAL;
    case Pg::kUuid:
      return pb::UUID;
    default:
      return pb::SCALAR_TYPE_UNSPECIFIED;
  }
}

TypeMods ModsOf(PgTypeId id) {
  TypeMods mods;
  mods.blank_padded = id == Pg::kBpchar;
  return mods;
}

std::string_view PgTypeName(PgTypeId id) {
  switch (id) {
    case Pg::kVarchar:
      return "character varying";
    case Pg::kBpchar:
      return "character";
    case Pg::kUnknown:
      return "unknown";
    case Pg::kAnyNonArray:
      return "anynonarray";
    case Pg::kJsonb:
      return "jsonb";
    case Pg::kNone:
      return "none";
    default:
      return SqlTypeName(ScalarOf(id));
  }
}

char Category(PgTypeId id) {
  switch (id) {
    case Pg::kBool:
      return 'B';
    case Pg::kInt2:
    case Pg::kInt4:
    case Pg::kInt8:
    case Pg::kFloat4:
    case Pg::kFloat8:
    case Pg::kNumeric:
      return 'N';
    case Pg::kText:
    case Pg::kVarchar:
    case Pg::kBpchar:
      return 'S';
    case Pg::kDate:
    case Pg::kTime:
    case Pg::kTimestamp:
    case Pg::kTimestampTz:
      return 'D';
    case Pg::kInterval:
      return 'T';
    case Pg::kUnknown:
      return 'X';
    default:
      return 'U';  // bytea, uuid
  }
}

bool Preferred(PgTypeId id) {
  return id == Pg::kBool || id == Pg::kFloat8 || id == Pg::kText || id == Pg::kTimestampTz ||
         id == Pg::kInterval;
}

bool IsIntegerType(PgTypeId id) { return id == Pg::kInt2 || id == Pg::kInt4 || id == Pg::kInt8; }
bool IsNumericFamily(PgTypeId id) { return Category(id) == 'N'; }
bool IsStringType(PgTypeId id) { return Category(id) == 'S'; }

bool CanCast(PgTypeId from, PgTypeId to, CastContext context) {
  if (from == to) return true;
  if (from == Pg::kUnknown) return Concrete(to);
  if (!Concrete(from) || !Concrete(to)) return false;
  if (Listed(kImplicitCasts, from, to)) return true;
  if (context == CastContext::kImplicit) return false;
  if (Listed(kAssignmentCasts, from, to) || IsStringType(to)) return true;
  if (context == CastContext::kAssignment) return false;
  return Listed(kExplicitCasts, from, to) || IsStringType(from);
}

CommonTypeChoice SelectCommonType(const std::vector<PgTypeId>& inputs) {
  CommonTypeChoice out;
  PgTypeId p = Pg::kUnknown;
  for (const PgTypeId n : inputs) {
    if (n == Pg::kUnknown || n == p) continue;
    if (p == Pg::kUnknown) {
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
  if (p == Pg::kUnknown) p = Pg::kText;
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

#include "ipc/func_typing.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

#include "ipc/plan_typing.h"
#include "ipc/reasons.h"

namespace tandem::ipc {
namespace {

// The largest precision numeric(p,s) may declare: kNumericMaxDigits of base/numeric.h.
constexpr std::uint32_t kMaxNumericPrecision = 38;

bool IsScalarTypeOfColumn(pb::ScalarType type) {
  return type >= pb::BOOL && type <= pb::UUID && pb::ScalarType_IsValid(type);
}

bool IsNumberType(pb::ScalarType type) {
  switch (type) {
    case pb::INT16:
    case pb::INT32:
    case pb::INT64:
    case pb::FLOAT32:
    case pb::FLOAT64:
    case pb::NUMERIC:
      return true;
    default:
      return false;
  }
}

bool HasTypmod(const pb::Column& column) {
  return column.precision() != 0 || column.scale() != 0 || column.length() != 0 ||
         column.blank_padded();
}

// A typmod is PostgreSQL's: numeric(p,s) with 1 <= p <= 38 and 0 <= s <= p; varchar(n) and
// char(n) with n >= 1. No other type has one.
Status CheckTypmod(const pb::Column& to) {
  if (to.type() == pb::NUMERIC) {
    if (to.length() != 0 || to.blank_padded()) return Invalid("numeric has no length");
    if (to.precision() == 0) {
      if (to.scale() != 0)
        return Invalid("numeric scale " + std::to_string(to.scale()) + " without a precision");
      return Status::Ok();
    }
    if (to.precision() > kMaxNumericPrecision) {
      return Invalid("NUMERIC precision " + std::to_string(to.precision()) +
                     " must be between 1 and " + std::to_string(kMaxNumericPrecision));
    }
    if (to.scale() > to.precision()) {
      return Invalid("NUMERIC scale " + std::to_string(to.scale()) +
                     " must be between 0 and precision " + std::to_string(to.precision()));
    }
    return Status::Ok();
  }
  if (to.type() == pb::STRING) {
    if (to.precision() != 0 || to.scale() != 0) return Invalid("text has no precision or scale");
    // PostgreSQL's limit of a varchar(n) / char(n) length (MaxAttrSize).
    if (to.length() > 10'485'760) return Invalid("length for type varchar cannot exceed 10485760");
    return Status::Ok();
  }
  if (HasTypmod(to)) return Invalid(TypeName(to.type()) + " has no precision, scale or length");
  return Status::Ok();
}

// PostgreSQL's explicit casts between different types (pg_cast, and the I/O casts to and from
// text that every type has).
bool CastExists(pb::ScalarType from, pb::ScalarType to) {
  if (from == to) return true;
  if (from == pb::STRING || to == pb::STRING) return true;
  if (IsNumberType(from) && IsNumberType(to)) return true;
  if ((from == pb::BOOL && to == pb::INT32) || (from == pb::INT32 && to == pb::BOOL)) return true;
  switch (from) {
    case pb::DATE:
      return to == pb::TIMESTAMP || to == pb::TIMESTAMPTZ;
    case pb::TIMESTAMP:
      return to == pb::TIMESTAMPTZ || to == pb::DATE || to == pb::TIME;
    case pb::TIMESTAMPTZ:
      return to == pb::TIMESTAMP || to == pb::DATE || to == pb::TIME;
    case pb::INTERVAL:
      return to == pb::TIME;
    case pb::TIME:
      return to == pb::INTERVAL;
    default:
      return false;
  }
}

pb::Column ResultColumn(pb::ScalarType type, bool nullable) {
  pb::Column column;
  column.set_type(type);
  column.set_nullable(nullable);
  return column;
}

bool AnyNullable(const std::vector<pb::Column>& args) {
  for (const pb::Column& arg : args) {
    if (arg.nullable()) return true;
  }
  return false;
}

bool AllNullable(const std::vector<pb::Column>& args) {
  for (const pb::Column& arg : args) {
    if (!arg.nullable()) return false;
  }
  return true;
}

// The types of `args` as a reason prints them: "(STRING, INT64)".
std::string ArgTypesText(const std::vector<pb::Column>& args) {
  std::string out = "(";
  for (std::size_t i = 0; i < args.size(); ++i) {
    out += (i ? ", " : "") + TypeName(args[i].type());
  }
  return out + ")";
}

// A function whose arguments are exactly `types`: null in, null out.
bool ArgsAre(const std::vector<pb::Column>& args, std::initializer_list<pb::ScalarType> types) {
  if (args.size() != types.size()) return false;
  std::size_t i = 0;
  for (const pb::ScalarType type : types) {
    if (args[i++].type() != type) return false;
  }
  return true;
}

// COALESCE, NULLIF, GREATEST, LEAST: one type throughout; its typmod when all agree.
Result<pb::Column> SameTypeResult(const std::string& name, const std::vector<pb::Column>& args,
                                  bool nullable) {
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i].type() != args[0].type()) {
      return Invalid(name + " takes arguments of one type, not " + ArgTypesText(args));
    }
  }
  pb::Column out = ResultColumn(args[0].type(), nullable);
  bool same_typmod = true;
  for (std::size_t i = 1; i < args.size(); ++i)
    same_typmod = same_typmod && SameTypmod(args[0], args[i]);
  if (same_typmod) CopyTypmod(args[0], &out);
  return out;
}

}  // namespace

bool SameTypmod(const pb::Column& a, const pb::Column& b) {
  return a.precision() == b.precision() && a.scale() == b.scale() && a.length() == b.length() &&
         a.blank_padded() == b.blank_padded();
}

void CopyTypmod(const pb::Column& from, pb::Column* to) {
  to->set_precision(from.precision());
  to->set_scale(from.scale());
  to->set_length(from.length());
  to->set_blank_padded(from.blank_padded());
}

std::string SqlTypeName(pb::ScalarType type) {
  switch (type) {
    case pb::BOOL:
      return "boolean";
    case pb::INT16:
      return "smallint";
    case pb::INT32:
      return "integer";
    case pb::INT64:
      return "bigint";
    case pb::FLOAT32:
      return "real";
    case pb::FLOAT64:
      return "double precision";
    case pb::NUMERIC:
      return "numeric";
    case pb::STRING:
      return "text";
    case pb::BYTEA:
      return "bytea";
    case pb::DATE:
      return "date";
    case pb::TIME:
      return "time without time zone";
    case pb::TIMESTAMP:
      return "timestamp without time zone";
    case pb::TIMESTAMPTZ:
      return "timestamp with time zone";
    case pb::INTERVAL:
      return "interval";
    case pb::UUID:
      return "uuid";
    default:
      return TypeName(type);
  }
}

std::string SqlColumnTypeName(const pb::Column& column) {
  if (column.type() == pb::STRING && column.length() > 0) {
    return std::string(column.blank_padded() ? "character(" : "character varying(") +
           std::to_string(column.length()) + ")";
  }
  if (column.type() == pb::NUMERIC && column.precision() > 0) {
    return "numeric(" + std::to_string(column.precision()) + "," + std::to_string(column.scale()) +
           ")";
  }
  return SqlTypeName(column.type());
}

Result<pb::Column> CastType(const pb::Cast& cast, const pb::Column& operand) {
  const pb::Column& to = cast.to();
  if (!IsScalarTypeOfColumn(to.type())) return Invalid("cast to " + TypeName(to.type()));
  TANDEM_RETURN_IF_ERROR(CheckTypmod(to));
  if (!CastExists(operand.type(), to.type())) {
    return Invalid("cannot cast type " + SqlTypeName(operand.type()) + " to " +
                   SqlTypeName(to.type()));
  }
  pb::Column out = ResultColumn(to.type(), operand.nullable());
  CopyTypmod(to, &out);
  return out;
}

Result<pb::Column> FuncType(const pb::CallFunc& call, const std::vector<pb::Column>& args) {
  const pb::Func func = call.func();
  const std::string name = pb::Func_Name(func);
  if (name.empty() || func == pb::FUNC_UNSPECIFIED) {
    return Invalid("unknown function " + std::to_string(static_cast<int>(func)));
  }
  const bool nullable = AnyNullable(args);
  auto refuse = [&]() -> Result<pb::Column> {
    return Invalid(name + " does not take " + ArgTypesText(args));
  };
  switch (func) {
    case pb::COALESCE:
    case pb::GREATEST:
    case pb::LEAST:
      if (args.empty()) return Invalid(name + " takes at least one argument");
      return SameTypeResult(name, args, AllNullable(args));
    case pb::NULLIF:
      if (args.size() != 2) return Invalid(name + " takes two arguments");
      return SameTypeResult(name, args, true);
    case pb::CONCAT:
      if (!ArgsAre(args, {pb::STRING, pb::STRING}) && !ArgsAre(args, {pb::BYTEA, pb::BYTEA})) {
        return refuse();
      }
      return ResultColumn(args[0].type(), nullable);
    case pb::CHAR_LENGTH:
      if (!ArgsAre(args, {pb::STRING})) return refuse();
      return ResultColumn(pb::INT32, nullable);
    case pb::OCTET_LENGTH:
      if (!ArgsAre(args, {pb::STRING}) && !ArgsAre(args, {pb::BYTEA})) return refuse();
      return ResultColumn(pb::INT32, nullable);
    case pb::LOWER:
    case pb::UPPER:
      if (!ArgsAre(args, {pb::STRING})) return refuse();
      return ResultColumn(pb::STRING, nullable);
    case pb::SUBSTR:
      if (!ArgsAre(args, {pb::STRING, pb::INT32}) &&
          !ArgsAre(args, {pb::STRING, pb::INT32, pb::INT32})) {
        return refuse();
      }
      return ResultColumn(pb::STRING, nullable);
    case pb::STRPOS:
      if (!ArgsAre(args, {pb::STRING, pb::STRING})) return refuse();
      return ResultColumn(pb::INT32, nullable);
    case pb::BTRIM:
    case pb::LTRIM:
    case pb::RTRIM:
      if (!ArgsAre(args, {pb::STRING}) && !ArgsAre(args, {pb::STRING, pb::STRING})) return refuse();
      return ResultColumn(pb::STRING, nullable);
    case pb::REPLACE:
      if (!ArgsAre(args, {pb::STRING, pb::STRING, pb::STRING})) return refuse();
      return ResultColumn(pb::STRING, nullable);
    case pb::LIKE:
    case pb::ILIKE:
      if (!ArgsAre(args, {pb::STRING, pb::STRING})) return refuse();
      return ResultColumn(pb::BOOL, nullable);
    case pb::ABS:
      if (args.size() != 1 || !IsNumberType(args[0].type())) return refuse();
      return ResultColumn(args[0].type(), nullable);
    case pb::ROUND:
    case pb::TRUNC:
      if (!ArgsAre(args, {pb::NUMERIC}) && !ArgsAre(args, {pb::NUMERIC, pb::INT32}) &&
          !ArgsAre(args, {pb::FLOAT64})) {
        return refuse();
      }
      return ResultColumn(args[0].type(), nullable);
    case pb::FLOOR:
    case pb::CEIL:
    case pb::SQRT:
      if (!ArgsAre(args, {pb::NUMERIC}) && !ArgsAre(args, {pb::FLOAT64})) return refuse();
      return ResultColumn(args[0].type(), nullable);
    case pb::POWER:
      if (!ArgsAre(args, {pb::NUMERIC, pb::NUMERIC}) &&
          !ArgsAre(args, {pb::FLOAT64, pb::FLOAT64})) {
        return refuse();
      }
      return ResultColumn(args[0].type(), nullable);
    case pb::DATE_TRUNC:
      if (!ArgsAre(args, {pb::STRING, pb::TIMESTAMP}) &&
          !ArgsAre(args, {pb::STRING, pb::TIMESTAMPTZ}) &&
          !ArgsAre(args, {pb::STRING, pb::INTERVAL})) {
        return refuse();
      }
      return ResultColumn(args[1].type(), nullable);
    case pb::EXTRACT:
    case pb::DATE_PART: {
      if (args.size() != 2 || args[0].type() != pb::STRING) return refuse();
      const pb::ScalarType source = args[1].type();
      if (source != pb::DATE && source != pb::TIME && source != pb::TIMESTAMP &&
          source != pb::TIMESTAMPTZ && source != pb::INTERVAL) {
        return refuse();
      }
      return ResultColumn(func == pb::EXTRACT ? pb::NUMERIC : pb::FLOAT64, nullable);
    }
    default:
      return Invalid("unknown function " + name);
  }
}

}  // namespace tandem::ipc

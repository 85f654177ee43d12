#include "ipc/plan_typing.h"

#include <cmath>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>
#include <variant>

#include "base/check.h"
#include "base/count.h"
#include "base/datum_text.h"
#include "base/numeric.h"
#include "base/utf8.h"
#include "ipc/func_typing.h"
#include "ipc/reasons.h"
#include "ipc/rows.h"

namespace tandem::ipc {
namespace {

pb::Column MakeColumn(std::string name, pb::ScalarType type, bool nullable) {
  pb::Column column;
  column.set_name(std::move(name));
  column.set_type(type);
  column.set_nullable(nullable);
  return column;
}

std::string ColumnText(const pb::Column& column) {
  return TypeName(column.type()) + (column.nullable() ? " nullable" : "");
}

// The type of a datum that is not null; nullopt for null or no value. An int64 datum is INT64 and a
// float64 datum FLOAT64 here; CheckDatumFits lets them into INT16/INT32 and FLOAT32 columns.
std::optional<pb::ScalarType> DatumType(const pb::Datum& datum) {
  switch (datum.kind_case()) {
    case pb::Datum::kBool:
      return pb::BOOL;
    case pb::Datum::kInt64:
      return pb::INT64;
    case pb::Datum::kFloat64:
      return pb::FLOAT64;
    case pb::Datum::kString:
      return pb::STRING;
    case pb::Datum::kNumeric:
      return pb::NUMERIC;
    case pb::Datum::kBytea:
      return pb::BYTEA;
    case pb::Datum::kDate:
      return pb::DATE;
    case pb::Datum::kTime:
      return pb::TIME;
    case pb::Datum::kTimestamp:
      return pb::TIMESTAMP;
    case pb::Datum::kTimestamptz:
      return pb::TIMESTAMPTZ;
    case pb::Datum::kInterval:
      return pb::INTERVAL;
    case pb::Datum::kUuid:
      return pb::UUID;
    case pb::Datum::kNull:
    case pb::Datum::KIND_NOT_SET:
      break;
  }
  return std::nullopt;
}

// The column type whose datums are of `type`'s kind: INT16/INT32 columns hold INT64 datums,
// FLOAT32 columns FLOAT64 datums.
pb::ScalarType DatumTypeOfColumn(pb::ScalarType type) {
  if (type == pb::INT16 || type == pb::INT32) return pb::INT64;
  if (type == pb::FLOAT32) return pb::FLOAT64;
  return type;
}

Result<pb::Column> LiteralType(const pb::Literal& literal) {
  if (!IsKnownType(literal.type())) return Invalid("literal has " + TypeName(literal.type()));
  const auto kind = literal.value().kind_case();
  if (kind == pb::Datum::KIND_NOT_SET) {
    return Invalid("literal has no value (a NULL literal is a null datum)");
  }
  if (kind == pb::Datum::kNull) return MakeColumn("", literal.type(), true);
  const Status fits = CheckDatumFits(literal.value(), MakeColumn("", literal.type(), false));
  if (!fits.ok()) return Within("literal", fits);
  return MakeColumn("", literal.type(), false);
}

bool IsInteger(pb::ScalarType type) {
  return type == pb::INT16 || type == pb::INT32 || type == pb::INT64;
}
bool IsNumeric(pb::ScalarType type) {
  return IsInteger(type) || type == pb::FLOAT32 || type == pb::FLOAT64 || type == pb::NUMERIC;
}

// The result type of a date/time operator (the contract in plan_typing.h), if `func` has one for
// these operand types.
std::optional<pb::ScalarType> DateTimeArithType(pb::BinaryFunc func, pb::ScalarType l,
                                                pb::ScalarType r) {
  using T = pb::ScalarType;
  auto is = [&](T a, T b) { return l == a && r == b; };
  switch (func) {
    case pb::ADD:
      if (is(pb::DATE, pb::INT32) || is(pb::INT32, pb::DATE)) return T::DATE;
      if (is(pb::DATE, pb::INTERVAL) || is(pb::INTERVAL, pb::DATE) || is(pb::DATE, pb::TIME)) {
        return T::TIMESTAMP;
      }
      for (T t : {pb::TIMESTAMP, pb::TIMESTAMPTZ, pb::TIME}) {
        if (is(t, pb::INTERVAL) || is(pb::INTERVAL, t)) return t;
      }
      if (is(pb::INTERVAL, pb::INTERVAL)) return T::INTERVAL;
      break;
    case pb::SUB:
      if (is(pb::DATE, pb::INT32)) return T::DATE;
      if (is(pb::DATE, pb::DATE)) return T::INT32;
      if (is(pb::DATE, pb::INTERVAL)) return T::TIMESTAMP;
      for (T t : {pb::TIMESTAMP, pb::TIMESTAMPTZ, pb::TIME}) {
        if (is(t, pb::INTERVAL)) return t;
        if (is(t, t)) return T::INTERVAL;
      }
      if (is(pb::INTERVAL, pb::INTERVAL)) return T::INTERVAL;
      break;
    case pb::MUL:
      if (is(pb::INTERVAL, pb::FLOAT64) || is(pb::FLOAT64, pb::INTERVAL)) return T::INTERVAL;
      break;
    case pb::DIV:
      if (is(pb::INTERVAL, pb::FLOAT64)) return T::INTERVAL;
      break;
    default:
      break;
  }
  return std::nullopt;
}

Result<pb::Column> UnaryType(const pb::CallUnary& call, const std::vector<pb::Column>& columns) {
  const std::string name = pb::UnaryFunc_Name(call.func());
  if (name.empty() || call.func() == pb::UNARY_FUNC_UNSPECIFIED) {
    return Invalid("unary function " + std::to_string(static_cast<int>(call.func())) +
                   " is not a known function");
  }
  auto operand = ExprType(call.expr(), columns);
  if (!operand.ok()) return Within("operand of " + name, operand.status());
  switch (call.func()) {
    case pb::NOT:
      if (operand->type() != pb::BOOL) {
        return Invalid("NOT needs a BOOL operand, got " + TypeName(operand->type()));
      }
      return MakeColumn("", pb::BOOL, operand->nullable());
    case pb::IS_NULL:
    case pb::IS_NOT_NULL:
      return MakeColumn("", pb::BOOL, false);
    case pb::NEGATE:
      if (!IsNumeric(operand->type()) && operand->type() != pb::INTERVAL) {
        return Invalid("NEGATE needs a number or an INTERVAL, got " + TypeName(operand->type()));
      }
      return MakeColumn("", operand->type(), operand->nullable());
    default:
      break;
  }
  return Invalid("unary function " + name + " is not a known function");
}

Result<pb::Column> BinaryType(const pb::CallBinary& call, const std::vector<pb::Column>& columns) {
  const std::string name = pb::BinaryFunc_Name(call.func());
  if (name.empty() || call.func() == pb::BINARY_FUNC_UNSPECIFIED) {
    return Invalid("binary function " + std::to_string(static_cast<int>(call.func())) +
                   " is not a known function");
  }
  auto left = ExprType(call.left(), columns);
  if (!left.ok()) return Within("left operand of " + name, left.status());
  auto right = ExprType(call.right(), columns);
  if (!right.ok()) return Within("right operand of " + name, right.status());
  const bool nullable = left->nullable() || right->nullable();
  const std::string got = ", got " + TypeName(left->type()) + " and " + TypeName(right->type());
  switch (call.func()) {
    case pb::ADD:
    case pb::SUB:
    case pb::MUL:
    case pb::DIV:
    case pb::MOD: {
      if (auto t = DateTimeArithType(call.func(), left->type(), right->type())) {
        return MakeColumn("", *t, nullable);
      }
      const bool mod = call.func() == pb::MOD;
      if (left->type() != right->type() || !IsNumeric(left->type()) ||
          (mod && (left->type() == pb::FLOAT32 || left->type() == pb::FLOAT64))) {
        return Invalid(name +
                       (mod ? " needs two operands of one integer type or two NUMERIC"
                            : " needs two operands of one numeric type, or the date and "
                              "time operands of one of PostgreSQL's operators") +
                       got);
      }
      return MakeColumn("", left->type(), nullable);
    }
    case pb::EQ:
    case pb::NE:
    case pb::LT:
    case pb::LE:
    case pb::GT:
    case pb::GE:
      if (left->type() != right->type()) {
        return Invalid(name + " needs two operands of the same type" + got);
      }
      return MakeColumn("", pb::BOOL, nullable);
    case pb::AND:
    case pb::OR:
      if (left->type() != pb::BOOL || right->type() != pb::BOOL) {
        return Invalid(name + " needs two BOOL operands" + got);
      }
      return MakeColumn("", pb::BOOL, nullable);
    default:
      break;
  }
  return Invalid("binary function " + name + " is not a known function");
}

Result<pb::Column> IfThenElseType(const pb::IfThenElse& ite,
                                  const std::vector<pb::Column>& columns) {
  auto cond = ExprType(ite.cond(), columns);
  if (!cond.ok()) return Within("if condition", cond.status());
  if (cond->type() != pb::BOOL) {
    return Invalid("if condition must be BOOL, got " + TypeName(cond->type()));
  }
  auto then = ExprType(ite.then(), columns);
  if (!then.ok()) return Within("then branch", then.status());
  auto els = ExprType(ite.els(), columns);
  if (!els.ok()) return Within("else branch", els.status());
  if (then->type() != els->type()) {
    return Invalid("if branches have different types: " + TypeName(then->type()) + " and " +
                   TypeName(els->type()));
  }
  // The branches' typmod when they agree (PostgreSQL's select_common_typmod); else none.
  pb::Column out = MakeColumn("", then->type(), then->nullable() || els->nullable());
  if (SameTypmod(*then, *els)) CopyTypmod(*then, &out);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Plan nodes

// The prefix of an aggregate's output column name ("sum" of "sum_v"); "" for COUNT (named
// "count") and for an unknown function.
std::string AggregateName(pb::AggregateFunc func) {
  switch (func) {
    case pb::SUM:
      return "sum";
    case pb::MIN:
      return "min";
    case pb::MAX:
      return "max";
    case pb::COUNT_NON_NULL:
      return "count";
    case pb::COUNT_DISTINCT:
      return "count_distinct";
    case pb::AVG:
      return "avg";
    case pb::ANY:
      return "any";
    case pb::ALL:
      return "all";
    default:
      break;
  }
  return "";
}

// Left columns, then right columns (every right column nullable for LEFT_OUTER: a left row
// without a match carries nulls there).
Result<pb::Schema> JoinSchema(const pb::Plan::Join& join, const pb::Schema& left,
                              const pb::Schema& right) {
  if (join.kind() != pb::INNER && join.kind() != pb::LEFT_OUTER) {
    return Invalid("join kind " + std::to_string(static_cast<int>(join.kind())) +
                   " is not a known kind (INNER or LEFT_OUTER)");
  }
  if (join.left_key_size() != join.right_key_size()) {
    return Invalid("left_key has " + std::to_string(join.left_key_size()) +
                   " columns, right_key has " + std::to_string(join.right_key_size()) +
                   " (the key columns are paired)");
  }
  if (join.left_key_size() == 0) {
    return Invalid("the join key is empty (pair at least one left and right column)");
  }
  for (int i = 0; i < join.left_key_size(); ++i) {
    const std::string where = "join key " + std::to_string(i);
    const std::uint32_t l = join.left_key(i);
    const std::uint32_t r = join.right_key(i);
    const Status left_in_range = CheckColumnInRange(l, left.columns_size());
    if (!left_in_range.ok()) return Within(where + ": left", left_in_range);
    const Status right_in_range = CheckColumnInRange(r, right.columns_size());
    if (!right_in_range.ok()) return Within(where + ": right", right_in_range);
    const pb::ScalarType lt = left.columns(static_cast<int>(l)).type();
    const pb::ScalarType rt = right.columns(static_cast<int>(r)).type();
    if (lt != rt) {
      return Invalid(where + ": left column " + std::to_string(l) + " is " + TypeName(lt) +
                     ", right column " + std::to_string(r) + " is " + TypeName(rt));
    }
  }
  pb::Schema output = left;
  for (const auto& column : right.columns()) {
    pb::Column* out = output.add_columns();
    *out = column;
    if (join.kind() == pb::LEFT_OUTER) out->set_nullable(true);
  }
  return output;
}

Status CheckTopK(const pb::Plan::TopK& top_k, const pb::Schema& input) {
  for (int i = 0; i < top_k.group_key_size(); ++i) {
    const Status in_range = CheckColumnInRange(top_k.group_key(i), input.columns_size());
    if (!in_range.ok()) return Within("group key " + std::to_string(i), in_range);
  }
  for (int i = 0; i < top_k.order_by_size(); ++i) {
    const Status in_range = CheckColumnInRange(top_k.order_by(i).column(), input.columns_size());
    if (!in_range.ok()) return Within("order_by " + std::to_string(i), in_range);
  }
  if (top_k.has_limit() && top_k.limit() == 0) {
    return Invalid("limit 0 keeps no row (omit limit for no limit)");
  }
  return Status::Ok();
}

Result<pb::Schema> ReduceSchema(const pb::Plan::Reduce& reduce, const pb::Schema& input) {
  pb::Schema output;
  for (int i = 0; i < reduce.group_key_size(); ++i) {
    const Status in_range = CheckColumnInRange(reduce.group_key(i), input.columns_size());
    if (!in_range.ok()) return Within("group key " + std::to_string(i), in_range);
    *output.add_columns() = input.columns(static_cast<int>(reduce.group_key(i)));
  }
  for (int i = 0; i < reduce.aggregates_size(); ++i) {
    const pb::Aggregate& aggregate = reduce.aggregates(i);
    const std::string where = "aggregate " + std::to_string(i);
    if (aggregate.func() == pb::COUNT) {
      *output.add_columns() = MakeColumn("count", pb::INT64, false);
      continue;
    }
    const std::string func = AggregateName(aggregate.func());
    if (func.empty()) {
      return Invalid(where + ": aggregate function " +
                     std::to_string(static_cast<int>(aggregate.func())) +
                     " is not a known function");
    }
    const Status in_range = CheckColumnInRange(aggregate.column(), input.columns_size());
    if (!in_range.ok()) return Within(where, in_range);
    const pb::Column& column = input.columns(static_cast<int>(aggregate.column()));
    const std::string is =
        ", column " + std::to_string(aggregate.column()) + " is " + TypeName(column.type());
    // Named by function and input column: "sum_v" ("sum" for an unnamed column).
    std::string name = func;
    if (!column.name().empty()) name += "_" + column.name();
    switch (aggregate.func()) {
      case pb::SUM:
        // Integers sum as INT64 (a binder wanting PostgreSQL's numeric sum of int8 casts first);
        // every other type as itself.
        if (!IsNumeric(column.type()) && column.type() != pb::INTERVAL) {
          return Invalid(where + ": SUM needs a number or an INTERVAL" + is);
        }
        *output.add_columns() =
            MakeColumn(std::move(name), IsInteger(column.type()) ? pb::INT64 : column.type(), true);
        break;
      case pb::MIN:
      case pb::MAX: {
        // Nullable: the aggregate of a group whose values are all null is null. The typmod is
        // dropped, as PostgreSQL's min and max drop it, but for char(n): its values are all n
        // characters, and without its length it would be text (PostgreSQL's min(bpchar) is
        // bpchar, which Tandem cannot say without a length).
        pb::Column out = MakeColumn(std::move(name), column.type(), true);
        if (column.blank_padded()) {
          out.set_length(column.length());
          out.set_blank_padded(true);
        }
        *output.add_columns() = std::move(out);
        break;
      }
      case pb::COUNT_NON_NULL:
      case pb::COUNT_DISTINCT:
        // Any column type; a group whose values are all null counts 0.
        *output.add_columns() = MakeColumn(std::move(name), pb::INT64, false);
        break;
      case pb::AVG:
        // NUMERIC and INTERVAL average as themselves, the other numbers as FLOAT64.
        if (!IsNumeric(column.type()) && column.type() != pb::INTERVAL) {
          return Invalid(where + ": AVG needs a number or an INTERVAL" + is);
        }
        *output.add_columns() =
            MakeColumn(std::move(name),
                       column.type() == pb::NUMERIC || column.type() == pb::INTERVAL ? column.type()
                                                                                     : pb::FLOAT64,
                       true);
        break;
      case pb::ANY:
      case pb::ALL:
        if (column.type() != pb::BOOL) {
          return Invalid(where + ": " + (aggregate.func() == pb::ANY ? "ANY" : "ALL") +
                         " needs a BOOL column" + is);
        }
        *output.add_columns() = MakeColumn(std::move(name), pb::BOOL, true);
        break;
      default:
        break;
    }
  }
  return output;
}

}  // namespace

bool IsKnownType(pb::ScalarType type) {
  return type != pb::SCALAR_TYPE_UNSPECIFIED && pb::ScalarType_IsValid(type);
}

std::string TypeName(pb::ScalarType type) {
  if (type == pb::SCALAR_TYPE_UNSPECIFIED) return "unspecified type";
  if (!IsKnownType(type)) return "unknown type " + std::to_string(static_cast<int>(type));
  return pb::ScalarType_Name(type);
}

Status CheckColumnType(const pb::Column& column) {
  if (!IsKnownType(column.type())) return Invalid("column has " + TypeName(column.type()));
  const bool numeric = column.type() == pb::NUMERIC, string = column.type() == pb::STRING;
  if (!numeric && (column.precision() != 0 || column.scale() != 0)) {
    return Invalid("a precision or scale on a " + TypeName(column.type()) + " column");
  }
  if (numeric && column.precision() == 0 && column.scale() != 0) {
    return Invalid("NUMERIC column with a scale but no precision");
  }
  if (numeric && (column.precision() > static_cast<std::uint32_t>(kNumericMaxDigits) ||
                  column.scale() > column.precision())) {
    return Invalid("NUMERIC(" + std::to_string(column.precision()) + "," +
                   std::to_string(column.scale()) +
                   "): the precision must be 1 to 38 and the scale 0 to the precision");
  }
  if (!string && (column.length() != 0 || column.blank_padded())) {
    return Invalid("a length on a " + TypeName(column.type()) + " column");
  }
  if (string && column.blank_padded() && column.length() == 0) {
    return Invalid("a blank-padded STRING column (char(n)) without a length");
  }
  if (column.length() > kMaxStringLength) {
    return Invalid("STRING length " + std::to_string(column.length()) + " is over " +
                   std::to_string(kMaxStringLength) + " (PostgreSQL's limit)");
  }
  return Status::Ok();
}

std::string SchemaText(const pb::Schema& schema) {
  std::string out = "[";
  for (int i = 0; i < schema.columns_size(); ++i) {
    out += (i > 0 ? ", " : "") + ColumnText(schema.columns(i));
  }
  return out + "]";
}

bool SameShape(const pb::Schema& a, const pb::Schema& b) {
  if (a.columns_size() != b.columns_size()) return false;
  for (int i = 0; i < a.columns_size(); ++i) {
    if (a.columns(i).type() != b.columns(i).type() ||
        a.columns(i).nullable() != b.columns(i).nullable()) {
      return false;
    }
  }
  return true;
}

Status CheckColumnInRange(std::uint64_t column, int columns) {
  if (column >= static_cast<std::uint64_t>(columns)) {
    return Invalid("column " + std::to_string(column) + " out of range: input has " +
                   std::to_string(columns) + " columns");
  }
  return Status::Ok();
}

Status CheckDatumFits(const pb::Datum& datum, const pb::Column& column) {
  if (datum.kind_case() == pb::Datum::KIND_NOT_SET) return Invalid("datum has no value");
  if (datum.kind_case() == pb::Datum::kNull) {
    if (!column.nullable()) return Invalid("null for a column that is not nullable");
    return Status::Ok();
  }
  const pb::ScalarType type = *DatumType(datum);
  if (type != DatumTypeOfColumn(column.type())) {
    return Invalid("datum is " + TypeName(type) + ", the column is " + TypeName(column.type()));
  }
  auto value = CheckedFromProto(datum);  // a numeric's text, a uuid's 16 bytes, a time's range
  if (!value.ok()) return Invalid(value.status().message());
  switch (column.type()) {
    case pb::INT16:
    case pb::INT32: {
      const std::int64_t v = datum.int64();
      const std::int64_t limit = column.type() == pb::INT16 ? 32768 : 2147483648;
      if (v < -limit || v >= limit) {
        return Invalid("datum " + std::to_string(v) + " is out of range for " +
                       TypeName(column.type()));
      }
      break;
    }
    case pb::FLOAT32: {
      const double v = datum.float64();
      if (std::isnan(v) || std::isinf(v)) break;
      if (std::fabs(v) > static_cast<double>(std::numeric_limits<float>::max()) ||
          static_cast<double>(static_cast<float>(v)) != v) {
        return Invalid("datum " + FloatText(v) + " is not a FLOAT32 value");
      }
      break;
    }
    case pb::STRING: {
      if (column.length() == 0) break;
      const std::size_t chars = Utf8CodePoints(datum.string());
      if (column.blank_padded() ? chars != column.length() : chars > column.length()) {
        return Invalid("string datum of " + std::to_string(chars) + " characters for a column of " +
                       (column.blank_padded() ? "exactly " : "at most ") +
                       std::to_string(column.length()));
      }
      break;
    }
    case pb::NUMERIC: {
      if (column.precision() == 0) break;
      const Numeric& n = std::get<Numeric>(*value);
      if (n.scale != column.scale()) {
        return Invalid("numeric datum " + datum.numeric() + " has scale " +
                       std::to_string(n.scale) + ", the column " + std::to_string(column.scale()));
      }
      // At most precision - scale digits before the point: |coefficient| < 10^precision.
      const Int128 c = n.coefficient();
      UInt128 magnitude = c < 0 ? -static_cast<UInt128>(c) : static_cast<UInt128>(c);
      for (std::uint32_t d = 0; d < column.precision() && magnitude != 0; ++d) magnitude /= 10;
      if (magnitude != 0) {
        return Invalid("numeric datum " + datum.numeric() + " has more than " +
                       std::to_string(column.precision() - column.scale()) +
                       " digits before the point");
      }
      break;
    }
    default:
      break;
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Scalar expressions

Result<pb::Column> ExprType(const pb::ScalarExpr& expr, const std::vector<pb::Column>& columns) {
  switch (expr.kind_case()) {
    case pb::ScalarExpr::kColumn:
      TANDEM_RETURN_IF_ERROR(CheckColumnInRange(expr.column(), static_cast<int>(columns.size())));
      return columns[expr.column()];
    case pb::ScalarExpr::kLiteral:
      return LiteralType(expr.literal());
    case pb::ScalarExpr::kUnary:
      return UnaryType(expr.unary(), columns);
    case pb::ScalarExpr::kBinary:
      return BinaryType(expr.binary(), columns);
    case pb::ScalarExpr::kIfThenElse:
      return IfThenElseType(expr.if_then_else(), columns);
    case pb::ScalarExpr::kCast: {
      auto operand = ExprType(expr.cast().expr(), columns);
      if (!operand.ok()) return Within("operand of a cast", operand.status());
      return CastType(expr.cast(), *operand);
    }
    case pb::ScalarExpr::kCall: {
      std::vector<pb::Column> args;
      for (int i = 0; i < expr.call().args_size(); ++i) {
        auto arg = ExprType(expr.call().args(i), columns);
        if (!arg.ok()) {
          return Within(
              "argument " + std::to_string(i) + " of " + pb::Func_Name(expr.call().func()),
              arg.status());
        }
        args.push_back(std::move(arg).value());
      }
      return FuncType(expr.call(), args);
    }
    case pb::ScalarExpr::kNow:
      // Where the time may be read is the validator's rule (ipc/temporal_filter.h), not typing's.
      return MakeColumn("", pb::TIMESTAMPTZ, false);
    case pb::ScalarExpr::KIND_NOT_SET:
      break;
  }
  return Invalid("expression has no kind");
}

Result<pb::Schema> MfpSchema(const pb::MapFilterProject& mfp, const pb::Schema& input) {
  std::vector<pb::Column> columns(input.columns().begin(), input.columns().end());
  for (int i = 0; i < mfp.map_size(); ++i) {
    auto type = ExprType(mfp.map(i), columns);
    if (!type.ok()) return Within("map expression " + std::to_string(i), type.status());
    // A computed column is named by its position ("c5"); a column reference keeps its name.
    if (type->name().empty()) type->set_name("c" + std::to_string(columns.size()));
    columns.push_back(std::move(type).value());
  }
  for (int i = 0; i < mfp.predicates_size(); ++i) {
    auto type = ExprType(mfp.predicates(i), columns);
    if (!type.ok()) return Within("predicate " + std::to_string(i), type.status());
    if (type->type() != pb::BOOL) {
      return Invalid("predicate " + std::to_string(i) + " has type " + TypeName(type->type()) +
                     ", must be BOOL");
    }
  }
  pb::Schema output;
  if (mfp.projection_size() == 0) {
    for (auto& column : columns) *output.add_columns() = std::move(column);
    return output;
  }
  for (int i = 0; i < mfp.projection_size(); ++i) {
    const Status in_range = CheckColumnInRange(mfp.projection(i), static_cast<int>(columns.size()));
    if (!in_range.ok()) return Within("projection " + std::to_string(i), in_range);
    *output.add_columns() = columns[mfp.projection(i)];
  }
  return output;
}

// ---------------------------------------------------------------------------------------------
// Plans

Result<pb::Schema> PlanChecker::Check(const pb::Plan& plan) const {
  switch (plan.kind_case()) {
    case pb::Plan::kGet:
      return Get(plan.get());
    case pb::Plan::kMfp: {
      TANDEM_ASSIGN_OR_RETURN(pb::Schema input, Check(plan.mfp().input()));
      auto output = MfpSchema(plan.mfp().mfp(), input);
      if (!output.ok()) return Within("Mfp", output.status());
      return output;
    }
    case pb::Plan::kReduce: {
      TANDEM_ASSIGN_OR_RETURN(pb::Schema input, Check(plan.reduce().input()));
      auto output = ReduceSchema(plan.reduce(), input);
      if (!output.ok()) return Within("Reduce", output.status());
      return output;
    }
    case pb::Plan::kUnion:
      return Union(plan.union_());
    case pb::Plan::kDistinct:
      return Check(plan.distinct().input());
    case pb::Plan::kJoin: {
      auto left = Check(plan.join().left());
      if (!left.ok()) return Within("Join left", left.status());
      auto right = Check(plan.join().right());
      if (!right.ok()) return Within("Join right", right.status());
      auto output = JoinSchema(plan.join(), *left, *right);
      if (!output.ok()) return Within("Join", output.status());
      return output;
    }
    case pb::Plan::kTopK: {
      TANDEM_ASSIGN_OR_RETURN(pb::Schema input, Check(plan.top_k().input()));
      const Status ok = CheckTopK(plan.top_k(), input);
      if (!ok.ok()) return Within("TopK", ok);
      return input;
    }
    case pb::Plan::kNegate:
      return Check(plan.negate().input());
    case pb::Plan::kThreshold:
      return Check(plan.threshold().input());
    case pb::Plan::KIND_NOT_SET:
      break;
  }
  return Invalid("plan node has no kind");
}

Result<pb::Schema> PlanChecker::Get(const pb::Plan::Get& get) const {
  if (auto it = scope_.find(get.id()); it != scope_.end()) return it->second;
  if (known_.count(get.id()) > 0) {
    return Invalid("Get(" + Quoted(get.id()) +
                   "): not a source import, index import or earlier build of this dataflow "
                   "(import an index on it)");
  }
  return Status::NotFound("Get(" + Quoted(get.id()) + "): unknown collection");
}

Result<pb::Schema> PlanChecker::Union(const pb::Plan::Union& plan) const {
  if (plan.inputs_size() == 0) return Invalid("Union needs at least one input");
  TANDEM_ASSIGN_OR_RETURN(pb::Schema output, Check(plan.inputs(0)));
  for (int i = 1; i < plan.inputs_size(); ++i) {
    TANDEM_ASSIGN_OR_RETURN(pb::Schema input, Check(plan.inputs(i)));
    bool same_types = input.columns_size() == output.columns_size();
    for (int c = 0; same_types && c < input.columns_size(); ++c) {
      same_types = input.columns(c).type() == output.columns(c).type();
    }
    if (!same_types) {
      return Invalid("Union input " + std::to_string(i) + " has columns " + SchemaText(input) +
                     ", input 0 has " + SchemaText(output));
    }
    for (int c = 0; c < input.columns_size(); ++c) {
      auto* column = output.mutable_columns(c);
      column->set_nullable(column->nullable() || input.columns(c).nullable());
    }
  }
  return output;
}

Result<pb::Schema> PlanSchema(const pb::Plan& plan,
                              const std::map<std::string, pb::Schema>& scope) {
  return PlanChecker(scope, {}).Check(plan);
}

std::map<std::string, pb::Schema> ExportSchemas(const pb::DataflowDescription& desc) {
  std::map<std::string, pb::Schema> scope;
  for (const auto& s : desc.source_imports()) scope[s.id()] = s.schema();
  for (const auto& i : desc.index_imports()) scope[i.id()] = scope[i.on()] = i.schema();
  for (const pb::BuildDesc& b : desc.objects_to_build()) {
    auto schema = PlanSchema(b.plan(), scope);
    TANDEM_CHECK(schema.ok(), "a build that passed validation does not type-check");
    scope[b.id()] = *std::move(schema);
  }
  std::map<std::string, pb::Schema> exports;
  for (const pb::IndexExport& e : desc.index_exports()) exports[e.id()] = scope.at(e.on());
  return exports;
}

}  // namespace tandem::ipc

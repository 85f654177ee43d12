#include "ipc/validate.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <optional>
#include <set>
#include <utility>

#include "base/global_id.h"

namespace tandem::ipc {
namespace {

// base/time.h reserves UINT64_MAX for the empty frontier; it is never a time.
constexpr std::uint64_t kNotATime = std::numeric_limits<std::uint64_t>::max();

Status Invalid(std::string why) { return Status::InvalidArgument(std::move(why)); }

// The reason, with where it arose in front: "build u5: Mfp: column 7 out of range ...".
Status Within(const std::string& context, const Status& status) {
  return Status(status.code(), context + ": " + status.message());
}

// An id from the controller, safe to print; the empty id shows as "".
std::string Quoted(const std::string& id) { return id.empty() ? "\"\"" : Printable(id, 40); }

bool IsKnownType(pb::ScalarType type) {
  return type == pb::BOOL || type == pb::INT64 || type == pb::FLOAT64 || type == pb::STRING;
}

std::string TypeName(pb::ScalarType type) {
  if (type == pb::SCALAR_TYPE_UNSPECIFIED) return "unspecified type";
  if (!IsKnownType(type)) return "unknown type " + std::to_string(static_cast<int>(type));
  return pb::ScalarType_Name(type);
}

std::string ColumnText(const pb::Column& column) {
  return TypeName(column.type()) + (column.nullable() ? " nullable" : "");
}

std::string SchemaText(const pb::Schema& schema) {
  std::string out = "[";
  for (int i = 0; i < schema.columns_size(); ++i) {
    out += (i > 0 ? ", " : "") + ColumnText(schema.columns(i));
  }
  return out + "]";
}

template <typename Values>  // a RepeatedField<uint32_t> or a vector<uint32_t>
std::string ListText(const Values& values) {
  std::string out = "[";
  for (const std::uint32_t value : values) {
    out += (out.size() > 1 ? ", " : "") + std::to_string(value);
  }
  return out + "]";
}

std::string TimeText(std::uint64_t time) { return std::to_string(time); }

// "[5]" or "[]": a frontier for a reason text.
std::string FrontierList(const pb::Frontier& frontier) {
  std::string out = "[";
  for (int i = 0; i < frontier.elements_size(); ++i) {
    out += (i > 0 ? ", " : "") + TimeText(frontier.elements(i));
  }
  return out + "]";
}

// A transient id (t<n>, DESIGN §2) names a one-shot result. `id` has been checked canonical.
bool IsTransient(const std::string& id) {
  const auto parsed = GlobalId::Parse(id);
  return parsed && parsed->kind() == GlobalId::Kind::kTransient;
}

// Column types and nullability equal; names are labels and are not compared.
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

pb::Column MakeColumn(std::string name, pb::ScalarType type, bool nullable) {
  pb::Column column;
  column.set_name(std::move(name));
  column.set_type(type);
  column.set_nullable(nullable);
  return column;
}

Status CheckColumnInRange(std::uint64_t column, int columns) {
  if (column >= static_cast<std::uint64_t>(columns)) {
    return Invalid("column " + std::to_string(column) + " out of range: input has " +
                   std::to_string(columns) + " columns");
  }
  return Status::Ok();
}

Status CheckTime(std::uint64_t time, const std::string& what) {
  if (time == kNotATime) {
    return Invalid(what + " " + TimeText(time) + " is not a valid time (UINT64_MAX is reserved)");
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Scalar expressions

// The type of a datum that is not null; nullopt for null or no value.
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
    case pb::Datum::kNull:
    case pb::Datum::KIND_NOT_SET:
      break;
  }
  return std::nullopt;
}

// A datum that must fit `column` (a peek key against the index key's column).
Status CheckDatumFits(const pb::Datum& datum, const pb::Column& column) {
  if (datum.kind_case() == pb::Datum::KIND_NOT_SET) return Invalid("datum has no value");
  if (datum.kind_case() == pb::Datum::kNull) {
    if (!column.nullable()) return Invalid("null for a column that is not nullable");
    return Status::Ok();
  }
  const pb::ScalarType type = *DatumType(datum);
  if (type != column.type()) {
    return Invalid("datum is " + TypeName(type) + ", the column is " + TypeName(column.type()));
  }
  return Status::Ok();
}

Result<pb::Column> LiteralType(const pb::Literal& literal) {
  if (!IsKnownType(literal.type())) return Invalid("literal has " + TypeName(literal.type()));
  const auto kind = literal.value().kind_case();
  if (kind == pb::Datum::KIND_NOT_SET) {
    return Invalid("literal has no value (a NULL literal is a null datum)");
  }
  if (kind == pb::Datum::kNull) return MakeColumn("", literal.type(), true);
  const pb::ScalarType value_type = *DatumType(literal.value());
  if (value_type != literal.type()) {
    return Invalid("literal value is " + TypeName(value_type) + " but its type says " +
                   TypeName(literal.type()));
  }
  return MakeColumn("", literal.type(), false);
}

bool IsNumeric(pb::ScalarType type) { return type == pb::INT64 || type == pb::FLOAT64; }

Result<pb::Column> TypeOf(const pb::ScalarExpr& expr, const std::vector<pb::Column>& columns);

Result<pb::Column> UnaryType(const pb::CallUnary& call, const std::vector<pb::Column>& columns) {
  const std::string name = pb::UnaryFunc_Name(call.func());
  if (name.empty() || call.func() == pb::UNARY_FUNC_UNSPECIFIED) {
    return Invalid("unary function " + std::to_string(static_cast<int>(call.func())) +
                   " is not a known function");
  }
  auto operand = TypeOf(call.expr(), columns);
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
      if (!IsNumeric(operand->type())) {
        return Invalid("NEGATE needs an INT64 or FLOAT64 operand, got " +
                       TypeName(operand->type()));
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
  auto left = TypeOf(call.left(), columns);
  if (!left.ok()) return Within("left operand of " + name, left.status());
  auto right = TypeOf(call.right(), columns);
  if (!right.ok()) return Within("right operand of " + name, right.status());
  const bool nullable = left->nullable() || right->nullable();
  const std::string got = ", got " + TypeName(left->type()) + " and " + TypeName(right->type());
  switch (call.func()) {
    case pb::ADD:
    case pb::SUB:
    case pb::MUL:
    case pb::DIV:
    case pb::MOD:
      if (left->type() != right->type() || !IsNumeric(left->type())) {
        return Invalid(name + " needs two INT64 or two FLOAT64 operands" + got);
      }
      return MakeColumn("", left->type(), nullable);
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
  auto cond = TypeOf(ite.cond(), columns);
  if (!cond.ok()) return Within("if condition", cond.status());
  if (cond->type() != pb::BOOL) {
    return Invalid("if condition must be BOOL, got " + TypeName(cond->type()));
  }
  auto then = TypeOf(ite.then(), columns);
  if (!then.ok()) return Within("then branch", then.status());
  auto els = TypeOf(ite.els(), columns);
  if (!els.ok()) return Within("else branch", els.status());
  if (then->type() != els->type()) {
    return Invalid("if branches have different types: " + TypeName(then->type()) + " and " +
                   TypeName(els->type()));
  }
  return MakeColumn("", then->type(), then->nullable() || els->nullable());
}

// The type of `expr` over a row of `columns`. Recursion depth is bounded by protobuf's decoding
// limit (100 nested messages) for every command that arrived as bytes or JSON.
Result<pb::Column> TypeOf(const pb::ScalarExpr& expr, const std::vector<pb::Column>& columns) {
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
    case pb::ScalarExpr::KIND_NOT_SET:
      break;
  }
  return Invalid("expression has no kind");
}

// The output schema of `mfp` applied to rows of `input`.
Result<pb::Schema> CheckMfp(const pb::MapFilterProject& mfp, const pb::Schema& input) {
  std::vector<pb::Column> columns(input.columns().begin(), input.columns().end());
  for (int i = 0; i < mfp.map_size(); ++i) {
    auto type = TypeOf(mfp.map(i), columns);
    if (!type.ok()) return Within("map expression " + std::to_string(i), type.status());
    // A computed column is named by its position ("c5"); a column reference keeps its name.
    if (type->name().empty()) type->set_name("c" + std::to_string(columns.size()));
    columns.push_back(std::move(type).value());
  }
  for (int i = 0; i < mfp.predicates_size(); ++i) {
    auto type = TypeOf(mfp.predicates(i), columns);
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

// What a plan of one dataflow may read by name: its source imports, its index imports, the
// collections those indexes are on, and the builds before it.
using Scope = std::map<std::string, pb::Schema>;

class PlanChecker {
 public:
  PlanChecker(const Scope& scope, const std::map<std::string, pb::Schema>& epoch)
      : scope_(scope), epoch_(epoch) {}

  Result<pb::Schema> Check(const pb::Plan& plan) const {
    switch (plan.kind_case()) {
      case pb::Plan::kGet:
        return Get(plan.get());
      case pb::Plan::kMfp: {
        TANDEM_ASSIGN_OR_RETURN(pb::Schema input, Check(plan.mfp().input()));
        auto output = CheckMfp(plan.mfp().mfp(), input);
        if (!output.ok()) return Within("Mfp", output.status());
        return output;
      }
      case pb::Plan::kReduce: {
        TANDEM_ASSIGN_OR_RETURN(pb::Schema input, Check(plan.reduce().input()));
        auto output = Reduce(plan.reduce(), input);
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
        auto output = Join(plan.join(), *left, *right);
        if (!output.ok()) return Within("Join", output.status());
        return output;
      }
      case pb::Plan::kTopK: {
        TANDEM_ASSIGN_OR_RETURN(pb::Schema input, Check(plan.top_k().input()));
        const Status ok = TopK(plan.top_k(), input);
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

 private:
  Result<pb::Schema> Get(const pb::Plan::Get& get) const {
    if (auto it = scope_.find(get.id()); it != scope_.end()) return it->second;
    if (epoch_.count(get.id()) > 0) {
      return Invalid("Get(" + Quoted(get.id()) +
                     "): not a source import, index import or earlier build of this dataflow "
                     "(import an index on it)");
    }
    return Status::NotFound("Get(" + Quoted(get.id()) + "): unknown collection");
  }

  // Left columns, then right columns (every right column nullable for LEFT_OUTER: a left row
  // without a match carries nulls there).
  static Result<pb::Schema> Join(const pb::Plan::Join& join, const pb::Schema& left,
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

  static Status TopK(const pb::Plan::TopK& top_k, const pb::Schema& input) {
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

  static Result<pb::Schema> Reduce(const pb::Plan::Reduce& reduce, const pb::Schema& input) {
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
          if (!IsNumeric(column.type())) {
            return Invalid(where + ": SUM needs an INT64 or FLOAT64 column" + is);
          }
          [[fallthrough]];
        case pb::MIN:
        case pb::MAX:
          // Nullable: the aggregate of a group whose values are all null is null.
          *output.add_columns() = MakeColumn(std::move(name), column.type(), true);
          break;
        case pb::COUNT_NON_NULL:
        case pb::COUNT_DISTINCT:
          // Any column type; a group whose values are all null counts 0.
          *output.add_columns() = MakeColumn(std::move(name), pb::INT64, false);
          break;
        case pb::AVG:
          if (!IsNumeric(column.type())) {
            return Invalid(where + ": AVG needs an INT64 or FLOAT64 column" + is);
          }
          *output.add_columns() = MakeColumn(std::move(name), pb::FLOAT64, true);
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

  Result<pb::Schema> Union(const pb::Plan::Union& plan) const {
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

  const Scope& scope_;
  const std::map<std::string, pb::Schema>& epoch_;
};

// ---------------------------------------------------------------------------------------------
// Dataflow pieces

// The source's parameters against SourceBounds (validate.h); `segment_bytes` 0 is unknown.
Status CheckSourceBounds(const pb::SourceImport& import, std::uint64_t as_of,
                         std::uint64_t segment_bytes) {
  using B = SourceBounds;
  auto over = [](const std::string& what, std::uint64_t value, std::uint64_t bound,
                 const std::string& why) {
    return Invalid(what + " " + std::to_string(value) + " is over the bound " +
                   std::to_string(bound) + " (" + why + ")");
  };
  auto interval = [&](const std::string& kind, std::uint64_t us) {
    if (us <= B::kMaxTickIntervalUs) return Status::Ok();
    return over(kind + " source: tick_interval_us", us, B::kMaxTickIntervalUs, "one hour");
  };
  // A file the runtime opens: absolute (it runs in another directory), bounded, no NUL.
  // REQUIRES: not empty (CheckSourceSchema).
  auto path = [&](const std::string& kind, const std::string& path) {
    if (path.size() > B::kMaxPathBytes) {
      return over(kind + " source: path of", path.size(), B::kMaxPathBytes, "bytes");
    }
    if (path.find('\0') != std::string::npos) {
      return Invalid(kind + " source: path " + Printable(path, 80) + " has a NUL byte");
    }
    if (path[0] != '/') {
      return Invalid(kind + " source: path " + Printable(path, 80) +
                     " is not absolute (the runtime runs in another directory)");
    }
    return Status::Ok();
  };
  // as_of × rows per tick, the first tick's catch-up.
  auto catch_up = [&](const std::string& kind, std::uint64_t rows_per_tick) {
    if (as_of == 0 || as_of <= B::kMaxCatchUpRows / rows_per_tick) return Status::Ok();
    return Invalid(kind + " source: as_of " + TimeText(as_of) + " makes its first tick emit " +
                   std::to_string(rows_per_tick) + " rows for each time below it, over the bound " +
                   std::to_string(B::kMaxCatchUpRows) + " rows (start it at a lower as_of)");
  };
  switch (import.source().kind_case()) {
    case pb::Source::kCounter: {
      const auto& c = import.source().counter();
      TANDEM_RETURN_IF_ERROR(interval("counter", c.tick_interval_us()));
      if (c.max() >= kNotATime - 1) {
        return over("counter source: max", c.max(), kNotATime - 2,
                    "its last value is a time, and the last time is for closing");
      }
      return catch_up("counter", 1);
    }
    case pb::Source::kKeyValue: {
      const auto& kv = import.source().key_value();
      TANDEM_RETURN_IF_ERROR(interval("key_value", kv.tick_interval_us()));
      if (kv.keys() > B::kMaxKeys) {
        return over("key_value source: keys", kv.keys(), B::kMaxKeys,
                    "each key's value lives in the maintenance runtime");
      }
      if (kv.updates_per_tick() > B::kMaxUpdatesPerTick) {
        return over("key_value source: updates_per_tick", kv.updates_per_tick(),
                    B::kMaxUpdatesPerTick, "a tick's updates are made at once");
      }
      if (segment_bytes != 0) {
        const std::uint64_t rows = segment_bytes / B::kMinRowBytes;
        const std::string segment = "the segment has " + std::to_string(segment_bytes) +
                                    " bytes, a row takes at least " +
                                    std::to_string(B::kMinRowBytes);
        if (kv.keys() > rows) {
          return over("key_value source: keys", kv.keys(), rows,
                      "its first tick is a row per key; " + segment);
        }
        if (kv.updates_per_tick() > rows / 2) {
          return over("key_value source: updates_per_tick", kv.updates_per_tick(), rows / 2,
                      "a tick is 2 rows per update; " + segment);
        }
      }
      return catch_up("key_value", 2 * kv.updates_per_tick());
    }
    case pb::Source::kLog:
      return path("log", import.source().log().path());
    case pb::Source::kCsv:
      return path("csv", import.source().csv().path());
    case pb::Source::kJsonLines:
      return path("json_lines", import.source().json_lines().path());
    case pb::Source::kTable: {
      const std::uint64_t ms = import.source().table().tick_interval_ms();
      if (ms <= B::kMaxTableTickIntervalMs) return Status::Ok();
      return over("table source: tick_interval_ms", ms, B::kMaxTableTickIntervalMs, "one hour");
    }
    case pb::Source::KIND_NOT_SET:
      break;
  }
  return Invalid("source has no kind");
}

Status CheckSourceSchema(const pb::SourceImport& import) {
  const pb::Schema& schema = import.schema();
  auto int64s = [](int n) {
    pb::Schema expected;
    for (int i = 0; i < n; ++i) *expected.add_columns() = MakeColumn("", pb::INT64, false);
    return expected;
  };
  // A source whose schema is the controller's: at least one column, of known types.
  auto columns = [&](const std::string& kind) {
    if (schema.columns_size() == 0) return Invalid(kind + " source: schema has no columns");
    for (int i = 0; i < schema.columns_size(); ++i) {
      if (!IsKnownType(schema.columns(i).type())) {
        return Invalid(kind + " source: column " + std::to_string(i) + " has " +
                       TypeName(schema.columns(i).type()));
      }
    }
    return Status::Ok();
  };
  switch (import.source().kind_case()) {
    case pb::Source::kCounter:
      if (!SameShape(schema, int64s(1))) {
        return Invalid("a counter source has schema [INT64] (one column, not nullable), not " +
                       SchemaText(schema));
      }
      return Status::Ok();
    case pb::Source::kKeyValue:
      if (!SameShape(schema, int64s(2))) {
        return Invalid(
            "a key_value source has schema [INT64, INT64] (key, value; not nullable), not " +
            SchemaText(schema));
      }
      if (import.source().key_value().keys() == 0) return Invalid("key_value source: keys is 0");
      if (import.source().key_value().updates_per_tick() == 0) {
        return Invalid("key_value source: updates_per_tick is 0");
      }
      return Status::Ok();
    case pb::Source::kLog:
      if (import.source().log().path().empty()) return Invalid("log source: path is empty");
      return columns("log");
    case pb::Source::kCsv:
      if (import.source().csv().path().empty()) return Invalid("csv source: path is empty");
      return columns("csv");
    case pb::Source::kJsonLines:
      if (import.source().json_lines().path().empty()) {
        return Invalid("json_lines source: path is empty");
      }
      return columns("json_lines");
    case pb::Source::kTable:
      return columns("table");
    case pb::Source::KIND_NOT_SET:
      break;
  }
  return Invalid("source has no kind");
}

// pb::Source's field name of the source's kind: "log", "table", … ("" when it has none).
const char* SourceKindName(const pb::Source& source) {
  switch (source.kind_case()) {
    case pb::Source::kCounter:
      return "counter";
    case pb::Source::kKeyValue:
      return "key_value";
    case pb::Source::kLog:
      return "log";
    case pb::Source::kTable:
      return "table";
    case pb::Source::kCsv:
      return "csv";
    case pb::Source::kJsonLines:
      return "json_lines";
    case pb::Source::KIND_NOT_SET:
      break;
  }
  return "";
}

// The upsert envelope (DESIGN §9): which sources may have one, and its columns. REQUIRES: the
// source and its schema passed CheckSourceSchema.
Status CheckUpsertKey(const pb::SourceImport& import) {
  const auto& key = import.upsert_key();
  if (key.empty()) return Status::Ok();
  const auto kind = import.source().kind_case();
  const std::string name = SourceKindName(import.source());
  if (kind != pb::Source::kLog && kind != pb::Source::kTable && kind != pb::Source::kCsv &&
      kind != pb::Source::kJsonLines) {
    return Invalid("upsert_key is for log, table, csv and json_lines sources, not a " + name +
                   " source (its updates are its own)");
  }
  const int columns = import.schema().columns_size();
  std::set<std::uint32_t> seen;
  for (int i = 0; i < key.size(); ++i) {
    const std::string where = "upsert_key " + std::to_string(i);
    const Status in_range = CheckColumnInRange(key[i], columns);
    if (!in_range.ok()) return Within(where, in_range);
    if (!seen.insert(key[i]).second) {
      return Invalid(where + ": column " + std::to_string(key[i]) + " is in the key twice");
    }
  }
  // A csv record or a json line without any non-key field is a delete: with every column in the
  // key, such a source could only ever delete.
  if ((kind == pb::Source::kCsv || kind == pb::Source::kJsonLines) &&
      static_cast<int>(seen.size()) == columns) {
    return Invalid("upsert_key " + ListText(key) + " is every column: a " + name +
                   " record without a non-key field is a delete, so the source could never hold "
                   "a row (leave a column out of the key)");
  }
  return Status::Ok();
}

Status CheckProtocolVersion(const pb::Hello& hello) {
  if (hello.protocol_version() != kProtocolVersion) {
    return Invalid("protocol version " + std::to_string(hello.protocol_version()) +
                   ", supervisor speaks " + std::to_string(kProtocolVersion));
  }
  if (hello.writer() && !hello.observer()) {
    return Invalid(
        "writer: true needs observer: true (a writer session is an observer that may also write "
        "tables; a controller writes anyway)");
  }
  return Status::Ok();
}

// A row of a write against the columns it fills (a table's, or its key columns for a delete).
Status CheckWriteRow(const pb::Row& row, const std::vector<const pb::Column*>& columns,
                     const std::string& of) {
  if (static_cast<std::size_t>(row.datums_size()) != columns.size()) {
    return Invalid("row has " + std::to_string(row.datums_size()) + " datums, " + of + " has " +
                   std::to_string(columns.size()) + " columns");
  }
  for (int d = 0; d < row.datums_size(); ++d) {
    const Status fits = CheckDatumFits(row.datums(d), *columns[static_cast<std::size_t>(d)]);
    if (!fits.ok()) return Within("datum " + std::to_string(d), fits);
  }
  return Status::Ok();
}

// "u3" or "u3, u4": ids for a reason text.
std::string IdList(const std::vector<std::string>& ids) {
  std::string out;
  for (const auto& id : ids) out += (out.empty() ? "" : ", ") + id;
  return out;
}

Status CheckParamNames(const google::protobuf::Map<std::string, std::string>& params) {
  for (const auto& [name, value] : params) {
    if (name.empty()) return Invalid("a parameter has an empty name");
  }
  return Status::Ok();
}

}  // namespace

Status CheckTableUpdates(const pb::WriteTable& write, const pb::Schema& schema,
                         const std::vector<std::uint32_t>& upsert_key) {
  return CheckTableUpdates(write.id(), write.updates(), schema, upsert_key);
}

Status CheckTableUpdates(const std::string& id,
                         const google::protobuf::RepeatedPtrField<pb::TableUpdate>& updates,
                         const pb::Schema& schema, const std::vector<std::uint32_t>& upsert_key) {
  const bool upsert = !upsert_key.empty();
  std::vector<const pb::Column*> row_columns;
  for (const auto& column : schema.columns()) row_columns.push_back(&column);
  std::vector<const pb::Column*> key_columns;
  for (const std::uint32_t k : upsert_key) {
    if (k >= row_columns.size())
      return Invalid("upsert key column " + std::to_string(k) + " is out of range");
    key_columns.push_back(row_columns[k]);
  }
  for (int i = 0; i < updates.size(); ++i) {
    const pb::TableUpdate& update = updates.Get(i);
    Status why;
    switch (update.kind_case()) {
      case pb::TableUpdate::kUpdate:
        if (upsert) {
          why = Invalid(id + " has an upsert key " + ListText(upsert_key) +
                        ": write upserts and deletes, not updates with diffs");
        } else if (update.update().diff() == 0) {
          why = Invalid("diff is 0 (an update changes the row's multiplicity by a non-zero diff)");
        } else {
          why = CheckWriteRow(update.update().row(), row_columns, "the table");
        }
        break;
      case pb::TableUpdate::kUpsert:
        why = upsert ? CheckWriteRow(update.upsert(), row_columns, "the table")
                     : Invalid(id + " has no upsert key: write updates with diffs");
        break;
      case pb::TableUpdate::kDelete:
        why = upsert ? CheckWriteRow(update.delete_(), key_columns, "the upsert key")
                     : Invalid(id + " has no upsert key: write updates with diffs");
        break;
      case pb::TableUpdate::KIND_NOT_SET:
        why = Invalid("update has no kind (update, upsert or delete)");
        break;
    }
    if (!why.ok()) return Within("update " + std::to_string(i), why);
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------

Status Validator::Validate(const pb::Command& command) {
  Status why;
  switch (command.kind_case()) {
    case pb::Command::KIND_NOT_SET:
      return Invalid(Describe(command) + ": command has no kind");
    case pb::Command::kHello:
      why = CheckProtocolVersion(command.hello());
      if (!why.ok()) break;
      if (command.hello().observer()) return why;  // an observer's Hello starts no epoch
      hello_seen_ = true;
      collections_.clear();
      indexes_.clear();
      origins_.clear();
      dataflows_.clear();
      allowed_compaction_.clear();
      tables_.clear();
      return Status::Ok();
    default:
      if (!hello_seen_) {
        return Status::FailedPrecondition(Describe(command) + ": refused before the first Hello");
      }
      break;
  }
  switch (command.kind_case()) {
    case pb::Command::kCreateInstance:
      why = CheckParamNames(command.create_instance().config().params());
      break;
    case pb::Command::kUpdateConfiguration:
      why = CheckParamNames(command.update_configuration().params());
      break;
    case pb::Command::kCreateDataflow:
      why = ValidateCreateDataflow(command.create_dataflow().desc());
      break;
    case pb::Command::kSchedule:
      if (collections_.count(command.schedule().id()) == 0) {
        why = Status::NotFound("unknown id " + Quoted(command.schedule().id()));
      }
      break;
    case pb::Command::kAllowWrites:
      if (collections_.count(command.allow_writes().id()) == 0) {
        why = Status::NotFound("unknown id " + Quoted(command.allow_writes().id()));
      }
      break;
    case pb::Command::kAllowCompaction:
      why = ValidateAllowCompaction(command.allow_compaction());
      break;
    case pb::Command::kPeek:
      why = ValidatePeek(command.peek());
      break;
    case pb::Command::kWriteTable:
      why = ValidateWriteTable(command.write_table());
      break;
    case pb::Command::kCancelPeek:
      if (command.cancel_peek().uuid().empty()) why = Invalid("uuid is empty");
      break;
    case pb::Command::kSubscribe:
      why = ValidateSubscribe(command.subscribe());
      break;
    case pb::Command::kCancelSubscribe:
      if (command.cancel_subscribe().uuid().empty()) why = Invalid("uuid is empty");
      break;
    case pb::Command::kHello:
    case pb::Command::kInitializationComplete:
    case pb::Command::kGoodbye:
    case pb::Command::KIND_NOT_SET:
      break;
  }
  if (why.ok()) return why;
  return Status(why.code(), Describe(command) + ": " + why.message());
}

Status Validator::ValidateObserver(const pb::Command& command, bool writer) const {
  Status why;
  switch (command.kind_case()) {
    case pb::Command::kHello:
      why = CheckProtocolVersion(command.hello());
      break;
    case pb::Command::kPeek:
      why = ValidatePeek(command.peek());
      break;
    case pb::Command::kCancelPeek:
      if (command.cancel_peek().uuid().empty()) why = Invalid("uuid is empty");
      break;
    case pb::Command::kSubscribe:
      why = ValidateSubscribe(command.subscribe());
      break;
    case pb::Command::kCancelSubscribe:
      if (command.cancel_subscribe().uuid().empty()) why = Invalid("uuid is empty");
      break;
    case pb::Command::kGoodbye:
      break;
    case pb::Command::kWriteTable:
      if (writer) {
        why = ValidateWriteTable(command.write_table());
      } else {
        why = Invalid(
            "observer sessions are read-only: they may send only Peek, CancelPeek, Subscribe, "
            "CancelSubscribe and Goodbye; say Hello with observer: true and writer: true to write "
            "tables");
      }
      break;
    case pb::Command::KIND_NOT_SET:
      return Invalid(Describe(command) + ": command has no kind");
    default:
      why = Invalid(writer ? "writer sessions may only read and write tables: they may send only "
                             "Peek, CancelPeek, Subscribe, CancelSubscribe, WriteTable and "
                             "Goodbye (send Hello without observer to control the replica)"
                           : "observer sessions are read-only: they may send only Peek, "
                             "CancelPeek, Subscribe, CancelSubscribe and Goodbye (send Hello "
                             "without observer to control the replica)");
      break;
  }
  if (why.ok()) return why;
  return Status(why.code(), Describe(command) + ": " + why.message());
}

namespace {

// An id a dataflow creates: a canonical GlobalId, new in the epoch and in the dataflow.
Status CheckNewId(const std::string& id, const std::string& what,
                  const std::map<std::string, pb::Schema>& collections, const Scope& scope) {
  const auto parsed = GlobalId::Parse(id);
  if (!parsed) {
    return Invalid(what + " id \"" + Printable(id) + "\" is not a GlobalId (u<n>, s<n> or t<n>)");
  }
  if (parsed->ToString() != id) {
    return Invalid(what + " id \"" + Printable(id) + "\" is not in canonical form (" +
                   parsed->ToString() + ")");
  }
  if (collections.count(id) > 0) return Invalid(what + " " + id + " already exists");
  if (scope.count(id) > 0) return Invalid(what + " " + id + " is already used in this dataflow");
  return Status::Ok();
}

// The index exports of a dataflow: new ids, on a collection of the dataflow, keys in range.
Status CheckIndexExports(const pb::DataflowDescription& desc,
                         const std::map<std::string, pb::Schema>& collections, Scope* scope_out,
                         std::map<std::string, pb::Schema>* created,
                         std::map<std::string, Validator::IndexInfo>* new_indexes) {
  Scope& scope = *scope_out;
  for (const auto& index : desc.index_exports()) {
    TANDEM_RETURN_IF_ERROR(CheckNewId(index.id(), "index export", collections, scope));
    const std::string what = "index export " + index.id();
    const auto on = scope.find(index.on());
    if (on == scope.end()) {
      if (collections.count(index.on()) > 0) {
        return Invalid(what + ": " + Quoted(index.on()) +
                       " is not a source, import or build of this dataflow");
      }
      return Status::NotFound(what + ": unknown collection " + Quoted(index.on()));
    }
    if (index.key_size() == 0) return Invalid(what + ": key is empty (name at least one column)");
    for (int i = 0; i < index.key_size(); ++i) {
      const Status in_range = CheckColumnInRange(index.key(i), on->second.columns_size());
      if (!in_range.ok()) return Within(what + ": key " + std::to_string(i), in_range);
    }
    // Later exports may not reuse this id either.
    scope.emplace(index.id(), on->second);
    created->emplace(index.id(), on->second);
    new_indexes->emplace(index.id(), Validator::IndexInfo{index.on(),
                                                          {index.key().begin(), index.key().end()},
                                                          desc.as_of().elements(0)});
  }

  return Status::Ok();
}

// The index imports of a dataflow: each names a known index of the epoch with the same `on`,
// key and schema, once; their ids and `on` collections join the dataflow's scope.
Status CheckIndexImports(const pb::DataflowDescription& desc,
                         const std::map<std::string, pb::Schema>& collections,
                         const std::map<std::string, Validator::IndexInfo>& indexes,
                         Scope* scope_out) {
  Scope& scope = *scope_out;
  std::set<std::string> sources;
  for (const auto& import : desc.source_imports()) sources.insert(import.id());
  std::set<std::string> imported_indexes;
  for (const auto& import : desc.index_imports()) {
    const std::string what = "index import " + Quoted(import.id());
    const auto index = indexes.find(import.id());
    if (index == indexes.end()) {
      if (collections.count(import.id()) > 0) return Invalid(what + ": not an index");
      return Status::NotFound(what + ": unknown index");
    }
    // Only a MAINTAINED dataflow's index is in the registry for an importer to read; a one-shot
    // result lives in the memory of the runtime that computed it.
    if (IsTransient(import.id())) {
      return Invalid(what + ": " + import.id() +
                     " is a one-shot result, not a maintained index: import the indexes it reads");
    }
    if (!imported_indexes.insert(import.id()).second) {
      return Invalid(what + ": imported twice in this dataflow");
    }
    if (import.on() != index->second.on) {
      return Invalid(what + ": the index is on " + index->second.on + ", not " +
                     Quoted(import.on()));
    }
    const std::vector<std::uint32_t> key(import.key().begin(), import.key().end());
    if (key != index->second.key) {
      return Invalid(what + ": key " + ListText(import.key()) + " differs from the index's key");
    }
    const pb::Schema& known = collections.at(import.id());
    if (!SameShape(import.schema(), known)) {
      return Invalid(what + ": schema " + SchemaText(import.schema()) +
                     " differs from the known schema " + SchemaText(known));
    }
    // Source import ids are new in the epoch and index import ids are known: they cannot clash.
    scope.emplace(import.id(), known);
    // The collection the index is on may be read by name too. It must not clash with a source
    // import (possible once it was dropped and its id re-created here), and two imported indexes
    // on it must agree on its schema (they may not, if it was dropped and re-created between).
    const auto [it, inserted] = scope.emplace(import.on(), known);
    if (!inserted && (sources.count(import.on()) > 0 || !SameShape(it->second, known))) {
      return Invalid(what + ": " + import.on() + " is already used in this dataflow as " +
                     SchemaText(it->second));
    }
  }

  return Status::Ok();
}

// The shape of a ONE_SHOT_READ dataflow (DESIGN §8): it computes one time, as_of, from index
// imports only (interactive imports maintenance's indexes; it has no sources of its own).
Status CheckOneShotShape(const pb::DataflowDescription& desc, std::uint64_t as_of) {
  if (as_of == kNotATime - 1) {
    return Invalid("a ONE_SHOT_READ dataflow needs until = as_of + 1, and as_of " +
                   TimeText(as_of) + " is the last time (UINT64_MAX is reserved)");
  }
  const std::uint64_t until = as_of + 1;
  if (desc.until().elements_size() != 1 || desc.until().elements(0) != until) {
    return Invalid("a ONE_SHOT_READ dataflow computes one time: until must be [" + TimeText(until) +
                   "] (as_of + 1), not " + FrontierList(desc.until()) + " (send until [" +
                   TimeText(until) + "], or class MAINTAINED)");
  }
  if (!desc.source_imports().empty()) {
    return Invalid("a ONE_SHOT_READ dataflow reads index imports only, not source import " +
                   Quoted(desc.source_imports(0).id()) +
                   " (import an index on it, or send class MAINTAINED)");
  }
  if (desc.index_imports().empty()) {
    return Invalid(
        "a ONE_SHOT_READ dataflow needs at least one index import (it reads maintained indexes "
        "at as_of): import the indexes it reads");
  }
  return Status::Ok();
}

}  // namespace

std::string DescribeWrite(const pb::WriteTable& write) {
  return std::string("WriteTable(") + Printable(write.uuid(), WriteBounds::kMaxUuidBytes) + ", " +
         Printable(write.id(), 24) + ", " + std::to_string(write.updates_size()) + " updates)";
}

Status Validator::ValidateCreateDataflow(const pb::DataflowDescription& desc) {
  // Everything is checked before anything is recorded: a refused dataflow changes nothing.
  switch (desc.class_()) {
    case pb::MAINTAINED:
    case pb::ONE_SHOT_READ:
      break;
    case pb::DATAFLOW_CLASS_UNSPECIFIED:
      return Invalid(
          "class is unspecified; send MAINTAINED (kept up to date) or ONE_SHOT_READ (computed "
          "at as_of only)");
    default:
      return Invalid("class " + std::to_string(static_cast<int>(desc.class_())) +
                     " is not a known dataflow class");
  }

  if (desc.as_of().elements_size() != 1) {
    return Invalid("as_of must have exactly one element, has " +
                   std::to_string(desc.as_of().elements_size()));
  }
  const std::uint64_t as_of = desc.as_of().elements(0);
  TANDEM_RETURN_IF_ERROR(CheckTime(as_of, "as_of"));
  if (desc.until().elements_size() > 1) {
    return Invalid("until must have at most one element, has " +
                   std::to_string(desc.until().elements_size()));
  }
  if (desc.until().elements_size() == 1) {
    const std::uint64_t until = desc.until().elements(0);
    TANDEM_RETURN_IF_ERROR(CheckTime(until, "until"));
    if (!(as_of < until)) {
      return Invalid("as_of " + TimeText(as_of) + " is not before until " + TimeText(until));
    }
  }

  const bool one_shot = desc.class_() == pb::ONE_SHOT_READ;
  if (one_shot) TANDEM_RETURN_IF_ERROR(CheckOneShotShape(desc, as_of));

  Scope scope;

  for (const auto& import : desc.source_imports()) {
    TANDEM_RETURN_IF_ERROR(CheckNewId(import.id(), "source import", collections_, scope));
    Status source = CheckSourceSchema(import);
    if (source.ok()) source = CheckSourceBounds(import, as_of, segment_bytes_);
    if (source.ok()) source = CheckUpsertKey(import);
    if (source.ok() && import.source().has_table() && !data_dir_) {
      source =
          Status::FailedPrecondition("a table needs the replica's --data-dir (none was given)");
    }
    if (!source.ok()) return Within("source import " + import.id(), source);
    scope.emplace(import.id(), import.schema());
  }

  TANDEM_RETURN_IF_ERROR(CheckIndexImports(desc, collections_, indexes_, &scope));

  // A maintained importer reads the index from as_of on, forever: below the frontier the
  // controller allowed, the index may already be compacted and the dataflow would be wrong at
  // every time. (A one-shot there is accepted: the runtime answers its peeks Error "compacted".)
  if (!one_shot) {
    for (const auto& import : desc.index_imports()) {
      // Where the index's since may be: its own as_of, or past it as far as compaction was
      // allowed in this epoch. (An earlier controller may have compacted the same arrangement
      // further: the runtime then makes such an import an error of the dataflow — a dataflow
      // kept across the reconnect is not new, and held the index where it needed it.)
      const IndexInfo& index = indexes_.at(import.id());
      if (as_of < index.as_of) {
        return Invalid("index import " + import.id() + ": as_of " + TimeText(as_of) +
                       " is before the as_of " + TimeText(index.as_of) + " of " + import.id() +
                       " (its since starts there), so a maintained dataflow would read compacted "
                       "data: send as_of >= " +
                       TimeText(index.as_of));
      }
      const auto allowed = allowed_compaction_.find(import.id());
      if (allowed != allowed_compaction_.end() && as_of < allowed->second) {
        return Invalid("index import " + import.id() + ": as_of " + TimeText(as_of) +
                       " is below the compaction frontier [" + TimeText(allowed->second) +
                       "] the controller allowed for " + import.id() +
                       ", so a maintained dataflow would read compacted data: send as_of >= " +
                       TimeText(allowed->second) + " (or class ONE_SHOT_READ for one read)");
      }
    }
  }

  // Builds, in order: each may read what came before it.
  std::map<std::string, pb::Schema> created;
  for (const auto& import : desc.source_imports()) created.emplace(import.id(), import.schema());
  for (const auto& build : desc.objects_to_build()) {
    TANDEM_RETURN_IF_ERROR(CheckNewId(build.id(), "build", collections_, scope));
    auto schema = PlanChecker(scope, collections_).Check(build.plan());
    if (!schema.ok()) return Within("build " + build.id(), schema.status());
    scope.emplace(build.id(), *schema);
    created.emplace(build.id(), std::move(schema).value());
  }

  std::map<std::string, IndexInfo> new_indexes;
  TANDEM_RETURN_IF_ERROR(CheckIndexExports(desc, collections_, &scope, &created, &new_indexes));
  // Transient ids (t<n>) name one-shot results and nothing else (ids are canonical by now).
  for (const auto& index : desc.index_exports()) {
    if (one_shot && !IsTransient(index.id())) {
      return Invalid("index export " + index.id() +
                     ": a ONE_SHOT_READ dataflow exports transient ids (t<n>) only: its result "
                     "is never maintained and lives until it is dropped");
    }
    if (!one_shot && IsTransient(index.id())) {
      return Invalid("index export " + index.id() +
                     ": a transient id (t<n>) names a one-shot result; a MAINTAINED dataflow "
                     "exports u<n> or s<n> ids (or send class ONE_SHOT_READ with until = as_of "
                     "+ 1)");
    }
  }

  if (created.empty()) {
    return Invalid("the dataflow creates nothing (no source import, build or index export)");
  }
  // Only an index export makes a maintained dataflow readable — and droppable: AllowCompaction
  // with the empty frontier names an export. Without one it would compute forever, unseen.
  if (desc.index_exports().empty()) {
    return Invalid("the dataflow exports no index: nothing could read it or ever drop it");
  }
  // Every index takes a registry slot in each worker's row (DESIGN §4): past the capacity the
  // runtime could not publish it.
  if (index_capacity_ != 0 &&
      indexes_.size() + static_cast<std::size_t>(desc.index_exports_size()) > index_capacity_) {
    return Status::ResourceExhausted(
        "the replica has room for " + std::to_string(index_capacity_) +
        " indexes (--slots-per-row) and maintains " + std::to_string(indexes_.size()) +
        "; drop one first, or restart the replica with a larger --slots-per-row");
  }

  Record(desc, std::move(created), std::move(new_indexes));
  return Status::Ok();
}

void Validator::Record(const pb::DataflowDescription& desc,
                       std::map<std::string, pb::Schema> created,
                       std::map<std::string, IndexInfo> new_indexes) {
  const std::uint64_t dataflow = next_dataflow_++;
  Dataflow& members = dataflows_[dataflow];
  members.debug_name = desc.debug_name();
  for (const auto& import : desc.index_imports()) members.imports.push_back(import.id());
  if (desc.class_() == pb::ONE_SHOT_READ) members.one_shot_as_of = desc.as_of().elements(0);
  for (const auto& import : desc.source_imports()) {
    origins_[import.id()] = {dataflow, Origin::kSource, SourceKindName(import.source())};
    members.others.push_back(import.id());
    if (import.source().has_table()) {
      tables_.insert_or_assign(
          import.id(),
          TableInfo{import.schema(), {import.upsert_key().begin(), import.upsert_key().end()}});
    }
  }
  for (const auto& build : desc.objects_to_build()) {
    origins_[build.id()] = {dataflow, Origin::kView};
    members.others.push_back(build.id());
  }
  for (const auto& index : desc.index_exports()) {
    origins_[index.id()] = {dataflow, Origin::kIndex};
    members.live_exports.push_back(index.id());
  }
  for (auto& [id, schema] : created) collections_.insert_or_assign(id, std::move(schema));
  for (auto& [id, info] : new_indexes) indexes_.insert_or_assign(id, std::move(info));
}

Status Validator::ValidateSubscribe(const pb::Subscribe& subscribe) const {
  if (subscribe.uuid().empty()) return Invalid("uuid is empty");
  if (subscribe.uuid().size() > WriteBounds::kMaxUuidBytes) {
    return Invalid("uuid is " + std::to_string(subscribe.uuid().size()) + " bytes, at most " +
                   std::to_string(WriteBounds::kMaxUuidBytes));
  }
  if (indexes_.count(subscribe.id()) == 0) {
    if (collections_.count(subscribe.id()) > 0) {
      return Invalid(Quoted(subscribe.id()) + " is not an index (subscribes read indexes)");
    }
    return Status::NotFound("unknown index " + Quoted(subscribe.id()));
  }
  if (const auto as_of = OneShotAsOf(subscribe.id())) {
    return Invalid(subscribe.id() + " is a one-shot result (readable only at time " +
                   TimeText(*as_of) + "): subscribes read maintained indexes");
  }
  if (subscribe.has_as_of()) TANDEM_RETURN_IF_ERROR(CheckTime(subscribe.as_of(), "as_of"));
  if (subscribe.has_up_to()) {
    TANDEM_RETURN_IF_ERROR(CheckTime(subscribe.up_to(), "up_to"));
    if (subscribe.has_as_of() && subscribe.up_to() <= subscribe.as_of()) {
      return Invalid("up_to " + TimeText(subscribe.up_to()) + " is not after as_of " +
                     TimeText(subscribe.as_of()) + " (the subscribe would deliver nothing)");
    }
  }
  return Status::Ok();
}

Status Validator::ValidatePeek(const pb::Peek& peek) const {
  if (peek.uuid().empty()) return Invalid("uuid is empty");
  const auto index = indexes_.find(peek.id());
  if (index == indexes_.end()) {
    if (collections_.count(peek.id()) > 0) {
      return Invalid(Quoted(peek.id()) + " is not an index (peeks read indexes)");
    }
    return Status::NotFound("unknown index " + Quoted(peek.id()));
  }
  TANDEM_RETURN_IF_ERROR(CheckTime(peek.timestamp(), "timestamp"));
  // A one-shot result is computed at its as_of only (until = as_of + 1): no other time is exact.
  if (const auto as_of = OneShotAsOf(peek.id()); as_of && peek.timestamp() != *as_of) {
    return Invalid(peek.id() + " is a one-shot result, readable only at time " + TimeText(*as_of));
  }
  const pb::Schema& schema = collections_.at(peek.id());
  const std::vector<std::uint32_t>& key = index->second.key;
  for (int k = 0; k < peek.keys_size(); ++k) {
    const pb::Row& row = peek.keys(k);
    const std::string what = "key " + std::to_string(k);
    if (static_cast<std::size_t>(row.datums_size()) != key.size()) {
      return Invalid(what + " has " + std::to_string(row.datums_size()) +
                     " datums, the index key has " + std::to_string(key.size()) + " columns");
    }
    for (int d = 0; d < row.datums_size(); ++d) {
      // Index keys were checked in range when the index was created.
      const Status fits = CheckDatumFits(row.datums(d), schema.columns(static_cast<int>(key[d])));
      if (!fits.ok()) return Within(what + " datum " + std::to_string(d), fits);
    }
  }
  auto output = CheckMfp(peek.mfp(), schema);
  if (!output.ok()) return Within("mfp", output.status());
  const int columns = output->columns_size();
  auto out_of_range = [&](std::uint32_t column) {
    return Invalid("column " + std::to_string(column) + " out of range: the mfp's output has " +
                   std::to_string(columns) + " columns");
  };
  for (int i = 0; i < peek.finishing().order_by_size(); ++i) {
    const std::uint32_t column = peek.finishing().order_by(i).column();
    if (column >= static_cast<std::uint32_t>(columns)) {
      return Within("finishing order_by " + std::to_string(i), out_of_range(column));
    }
  }
  for (int i = 0; i < peek.finishing().project_size(); ++i) {
    const std::uint32_t column = peek.finishing().project(i);
    if (column >= static_cast<std::uint32_t>(columns)) {
      return Within("finishing project " + std::to_string(i), out_of_range(column));
    }
  }
  return Status::Ok();
}

Status Validator::ValidateWriteTable(const pb::WriteTable& write) const {
  if (write.uuid().empty()) return Invalid("uuid is empty (it is the write's idempotency key)");
  if (write.uuid().size() > WriteBounds::kMaxUuidBytes) {
    return Invalid("uuid of " + std::to_string(write.uuid().size()) + " bytes is over the bound " +
                   std::to_string(WriteBounds::kMaxUuidBytes) + " bytes");
  }
  const std::string& id = write.id();
  const auto table = tables_.find(id);
  if (table == tables_.end()) {
    const auto origin = origins_.find(id);
    if (origin == origins_.end()) return Status::NotFound("unknown table " + Quoted(id));
    const std::string what = origin->second.kind == Origin::kIndex ? "an index"
                             : origin->second.kind == Origin::kView
                                 ? "a view"
                                 : std::string("a ") + origin->second.source_kind + " source";
    return Invalid(id + " is not a table (it is " + what + "): only a table source takes writes");
  }
  if (write.updates().empty()) return Invalid("the write has no updates (send at least one)");
  if (write.updates_size() > WriteBounds::kMaxUpdates) {
    return Invalid(std::to_string(write.updates_size()) + " updates are over the bound " +
                   std::to_string(WriteBounds::kMaxUpdates) + " (split the write)");
  }
  return CheckTableUpdates(write, table->second.schema, table->second.upsert_key);
}

Status Validator::ValidateAllowCompaction(const pb::AllowCompaction& command) {
  const std::string& id = command.id();
  if (collections_.count(id) == 0) return Status::NotFound("unknown id " + Quoted(id));
  const Origin origin = origins_.at(id);  // a copy: a drop erases it
  if (origin.kind != Origin::kIndex) {
    // The runtimes would accept it and do nothing: only an index has a compaction frontier, and
    // a dataflow goes away when its last index is dropped.
    return Invalid(id + " is a " + (origin.kind == Origin::kSource ? "source" : "view") +
                   ", not an index: only indexes can be compacted or dropped (the dataflow that "
                   "defines it exports " +
                   IdList(dataflows_.at(origin.dataflow).live_exports) + ")");
  }
  if (!command.has_frontier()) {
    return Invalid("frontier is missing (to drop, send an empty frontier explicitly)");
  }
  const pb::Frontier& frontier = command.frontier();
  if (frontier.elements_size() > 1) {
    return Invalid("frontier has " + std::to_string(frontier.elements_size()) +
                   " elements; over a total order it has at most one");
  }
  if (frontier.elements_size() == 1) {
    const std::uint64_t time = frontier.elements(0);
    TANDEM_RETURN_IF_ERROR(CheckTime(time, "frontier element"));
    // A one-shot result has one time and nothing to compact: accepted, it changes nothing.
    if (OneShotAsOf(id)) return Status::Ok();
    // Compaction frontiers only rise: a lower one is accepted (the runtimes ignore it too).
    auto [allowed, inserted] = allowed_compaction_.try_emplace(id, time);
    if (!inserted && allowed->second < time) allowed->second = time;
    return Status::Ok();
  }
  // An importer reads the index's batches in place until it is dropped (DESIGN §8): the
  // controller drops the importers first.
  std::string importers;
  std::vector<std::string> to_drop;
  for (const auto& [number, importer] : dataflows_) {
    if (std::find(importer.imports.begin(), importer.imports.end(), id) == importer.imports.end()) {
      continue;
    }
    importers += (importers.empty() ? "" : " and by ") + IdList(importer.live_exports) +
                 " (dataflow '" + Printable(importer.debug_name) + "')";
    to_drop.insert(to_drop.end(), importer.live_exports.begin(), importer.live_exports.end());
  }
  if (!importers.empty()) {
    return Invalid(id + " is imported by " + importers + ": drop " + IdList(to_drop) + " first");
  }
  // Drop the index. Once a dataflow has no index left the runtimes drop all of it, so its
  // sources and views are forgotten with its last index (and their ids may be created again).
  collections_.erase(id);
  indexes_.erase(id);
  origins_.erase(id);
  allowed_compaction_.erase(id);
  auto dataflow = dataflows_.find(origin.dataflow);
  std::erase(dataflow->second.live_exports, id);
  if (dataflow->second.live_exports.empty()) {
    for (const auto& other : dataflow->second.others) {
      collections_.erase(other);
      origins_.erase(other);
      tables_.erase(other);
    }
    dataflows_.erase(dataflow);
  }
  return Status::Ok();
}

std::vector<std::string> Validator::ImportersOf(const std::string& index) const {
  std::vector<std::string> exports;
  for (const auto& [number, dataflow] : dataflows_) {
    if (std::find(dataflow.imports.begin(), dataflow.imports.end(), index) !=
        dataflow.imports.end()) {
      exports.insert(exports.end(), dataflow.live_exports.begin(), dataflow.live_exports.end());
    }
  }
  return exports;
}

std::optional<std::uint64_t> Validator::OneShotAsOf(const std::string& index) const {
  const auto origin = origins_.find(index);
  if (origin == origins_.end() || origin->second.kind != Origin::kIndex) return std::nullopt;
  return dataflows_.at(origin->second.dataflow).one_shot_as_of;
}

Result<pb::Schema> PlanSchema(const pb::Plan& plan,
                              const std::map<std::string, pb::Schema>& scope) {
  return PlanChecker(scope, {}).Check(plan);
}

}  // namespace tandem::ipc

#include <algorithm>
#include <utility>

#include "frontend/plan/binder.h"

namespace tandem::frontend::plan {

pb::ScalarExpr ColumnExpr(std::uint32_t column) {
  pb::ScalarExpr e;
  e.set_column(column);
  return e;
}

pb::ScalarExpr NullExpr(pb::ScalarType type) {
  pb::ScalarExpr e;
  e.mutable_literal()->mutable_value()->mutable_null();
  e.mutable_literal()->set_type(type);
  return e;
}

pb::ScalarExpr IntExpr(std::int64_t value, pb::ScalarType type) {
  pb::ScalarExpr e;
  e.mutable_literal()->mutable_value()->set_int64(value);
  e.mutable_literal()->set_type(type);
  return e;
}

pb::ScalarExpr NumericExpr(const std::string& text) {
  pb::ScalarExpr e;
  e.mutable_literal()->mutable_value()->set_numeric(text);
  e.mutable_literal()->set_type(pb::NUMERIC);
  return e;
}

pb::ScalarExpr CastExpr(pb::ScalarExpr expr, pb::ScalarType type, const TypeMods& mods) {
  pb::ScalarExpr e;
  *e.mutable_cast()->mutable_expr() = std::move(expr);
  *e.mutable_cast()->mutable_to() = ColumnOfType(type, mods);
  return e;
}

pb::ScalarExpr CallExpr(pb::Func func, std::vector<pb::ScalarExpr> args) {
  pb::ScalarExpr e;
  e.mutable_call()->set_func(func);
  for (auto& a : args) *e.mutable_call()->add_args() = std::move(a);
  return e;
}

pb::ScalarExpr ZeroExpr(pb::ScalarType type) {
  pb::ScalarExpr e;
  pb::Datum* v = e.mutable_literal()->mutable_value();
  e.mutable_literal()->set_type(type);
  switch (type) {
    case pb::BOOL:
      v->set_bool_(false);
      break;
    case pb::INT16:
    case pb::INT32:
    case pb::INT64:
      v->set_int64(0);
      break;
    case pb::FLOAT32:
    case pb::FLOAT64:
      v->set_float64(0);
      break;
    case pb::NUMERIC:
      v->set_numeric("0");
      break;
    case pb::BYTEA:
      v->set_bytea("");
      break;
    case pb::DATE:
      v->set_date(0);
      break;
    case pb::TIME:
      v->set_time(0);
      break;
    case pb::TIMESTAMP:
      v->set_timestamp(0);
      break;
    case pb::TIMESTAMPTZ:
      v->set_timestamptz(0);
      break;
    case pb::INTERVAL:
      v->mutable_interval();
      break;
    case pb::UUID:
      v->set_uuid(std::string(16, '\0'));
      break;
    default:
      v->set_string("");
      break;
  }
  return e;
}

pb::ScalarExpr BoolExpr(bool value) {
  pb::ScalarExpr e;
  e.mutable_literal()->mutable_value()->set_bool_(value);
  e.mutable_literal()->set_type(pb::BOOL);
  return e;
}

pb::ScalarExpr FloatExpr(double value) {
  pb::ScalarExpr e;
  e.mutable_literal()->mutable_value()->set_float64(value);
  e.mutable_literal()->set_type(pb::FLOAT64);
  return e;
}

pb::ScalarExpr StringExpr(const std::string& value) {
  pb::ScalarExpr e;
  e.mutable_literal()->mutable_value()->set_string(value);
  e.mutable_literal()->set_type(pb::STRING);
  return e;
}

pb::ScalarExpr Unary(pb::UnaryFunc func, pb::ScalarExpr operand) {
  pb::ScalarExpr e;
  e.mutable_unary()->set_func(func);
  *e.mutable_unary()->mutable_expr() = std::move(operand);
  return e;
}

pb::ScalarExpr Binary(pb::BinaryFunc func, pb::ScalarExpr left, pb::ScalarExpr right) {
  pb::ScalarExpr e;
  e.mutable_binary()->set_func(func);
  *e.mutable_binary()->mutable_left() = std::move(left);
  *e.mutable_binary()->mutable_right() = std::move(right);
  return e;
}

pb::ScalarExpr IfThenElse(pb::ScalarExpr cond, pb::ScalarExpr then, pb::ScalarExpr els) {
  pb::ScalarExpr e;
  *e.mutable_if_then_else()->mutable_cond() = std::move(cond);
  *e.mutable_if_then_else()->mutable_then() = std::move(then);
  *e.mutable_if_then_else()->mutable_els() = std::move(els);
  return e;
}

pb::ScalarExpr Balanced(pb::BinaryFunc func, std::vector<pb::ScalarExpr> operands) {
  // Pairwise rounds: each halves the count, so the depth is ceil(log2(n)) and no recursion.
  while (operands.size() > 1) {
    std::vector<pb::ScalarExpr> next;
    for (std::size_t i = 0; i + 1 < operands.size(); i += 2) {
      next.push_back(Binary(func, std::move(operands[i]), std::move(operands[i + 1])));
    }
    if (operands.size() % 2 == 1) next.push_back(std::move(operands.back()));
    operands = std::move(next);
  }
  return std::move(operands.at(0));
}

pb::Plan MfpPlan(pb::Plan input, std::vector<pb::ScalarExpr> map,
                 std::vector<pb::ScalarExpr> predicates, std::vector<std::uint32_t> projection) {
  pb::Plan plan;
  auto* mfp = plan.mutable_mfp();
  *mfp->mutable_input() = std::move(input);
  for (auto& e : map) *mfp->mutable_mfp()->add_map() = std::move(e);
  for (auto& e : predicates) *mfp->mutable_mfp()->add_predicates() = std::move(e);
  for (std::uint32_t c : projection) mfp->mutable_mfp()->add_projection(c);
  return plan;
}

pb::Plan UnionPlan(std::vector<pb::Plan> inputs) {
  pb::Plan plan;
  for (auto& input : inputs) *plan.mutable_union_()->add_inputs() = std::move(input);
  return plan;
}

pb::Plan NegatePlan(pb::Plan input) {
  pb::Plan plan;
  *plan.mutable_negate()->mutable_input() = std::move(input);
  return plan;
}

pb::Plan ThresholdPlan(pb::Plan input) {
  pb::Plan plan;
  *plan.mutable_threshold()->mutable_input() = std::move(input);
  return plan;
}

pb::Plan DistinctPlan(pb::Plan input) {
  pb::Plan plan;
  *plan.mutable_distinct()->mutable_input() = std::move(input);
  return plan;
}

void ColumnsRead(const pb::ScalarExpr& expr, std::vector<std::uint32_t>* out) {
  switch (expr.kind_case()) {
    case pb::ScalarExpr::kColumn:
      out->push_back(expr.column());
      break;
    case pb::ScalarExpr::kUnary:
      ColumnsRead(expr.unary().expr(), out);
      break;
    case pb::ScalarExpr::kBinary:
      ColumnsRead(expr.binary().left(), out);
      ColumnsRead(expr.binary().right(), out);
      break;
    case pb::ScalarExpr::kIfThenElse:
      ColumnsRead(expr.if_then_else().cond(), out);
      ColumnsRead(expr.if_then_else().then(), out);
      ColumnsRead(expr.if_then_else().els(), out);
      break;
    case pb::ScalarExpr::kCast:
      ColumnsRead(expr.cast().expr(), out);
      break;
    case pb::ScalarExpr::kCall:
      for (const auto& a : expr.call().args()) ColumnsRead(a, out);
      break;
    default:
      break;
  }
}

pb::ScalarExpr Substitute(const pb::ScalarExpr& expr, const std::vector<pb::ScalarExpr>& values) {
  pb::ScalarExpr out = expr;
  switch (expr.kind_case()) {
    case pb::ScalarExpr::kColumn:
      return values.at(expr.column());
    case pb::ScalarExpr::kUnary:
      *out.mutable_unary()->mutable_expr() = Substitute(expr.unary().expr(), values);
      break;
    case pb::ScalarExpr::kBinary:
      *out.mutable_binary()->mutable_left() = Substitute(expr.binary().left(), values);
      *out.mutable_binary()->mutable_right() = Substitute(expr.binary().right(), values);
      break;
    case pb::ScalarExpr::kIfThenElse:
      *out.mutable_if_then_else()->mutable_cond() = Substitute(expr.if_then_else().cond(), values);
      *out.mutable_if_then_else()->mutable_then() = Substitute(expr.if_then_else().then(), values);
      *out.mutable_if_then_else()->mutable_els() = Substitute(expr.if_then_else().els(), values);
      break;
    case pb::ScalarExpr::kCast:
      *out.mutable_cast()->mutable_expr() = Substitute(expr.cast().expr(), values);
      break;
    case pb::ScalarExpr::kCall:
      for (int i = 0; i < expr.call().args_size(); ++i) {
        *out.mutable_call()->mutable_args(i) = Substitute(expr.call().args(i), values);
      }
      break;
    default:
      break;
  }
  return out;
}

pb::ScalarExpr Renumber(const pb::ScalarExpr& expr, const std::vector<std::uint32_t>& map) {
  std::vector<pb::ScalarExpr> columns(map.size());
  for (std::size_t i = 0; i < map.size(); ++i) columns[i].set_column(map[i]);
  return Substitute(expr, columns);
}

pb::ScalarExpr AggregateOverNothing(const AggregateCall& call) {
  const bool counts =
      call.func == pb::COUNT || call.func == pb::COUNT_NON_NULL || call.func == pb::COUNT_DISTINCT;
  return counts ? IntExpr(0) : NullExpr(call.type);
}

namespace {

int ExprNesting(const pb::ScalarExpr& expr) {
  switch (expr.kind_case()) {
    case pb::ScalarExpr::kLiteral:
      return 4;  // Literal, Datum, its value (a Null message)
    case pb::ScalarExpr::kUnary:
      return 2 + ExprNesting(expr.unary().expr());
    case pb::ScalarExpr::kBinary:
      return 2 + std::max(ExprNesting(expr.binary().left()), ExprNesting(expr.binary().right()));
    case pb::ScalarExpr::kIfThenElse:
      return 2 + std::max({ExprNesting(expr.if_then_else().cond()),
                           ExprNesting(expr.if_then_else().then()),
                           ExprNesting(expr.if_then_else().els())});
    case pb::ScalarExpr::kCast:
      return 2 + std::max(ExprNesting(expr.cast().expr()), 2);  // Cast, and its Column
    case pb::ScalarExpr::kCall: {
      int deepest = 0;
      for (const auto& a : expr.call().args()) deepest = std::max(deepest, ExprNesting(a));
      return 2 + deepest;
    }
    default:
      return 1;
  }
}

int MfpNesting(const pb::MapFilterProject& mfp) {
  int deepest = 0;
  for (const auto& e : mfp.map()) deepest = std::max(deepest, ExprNesting(e));
  for (const auto& e : mfp.predicates()) deepest = std::max(deepest, ExprNesting(e));
  return 1 + deepest;
}

}  // namespace

int PlanNesting(const pb::Plan& plan) {
  switch (plan.kind_case()) {
    case pb::Plan::kGet:
      return 2;
    case pb::Plan::kMfp:
      return 2 + std::max(PlanNesting(plan.mfp().input()), MfpNesting(plan.mfp().mfp()));
    case pb::Plan::kReduce:
      return 2 + std::max(PlanNesting(plan.reduce().input()), 1);
    case pb::Plan::kUnion: {
      int deepest = 0;
      for (const auto& input : plan.union_().inputs()) {
        deepest = std::max(deepest, PlanNesting(input));
      }
      return 2 + deepest;
    }
    case pb::Plan::kDistinct:
      return 2 + PlanNesting(plan.distinct().input());
    case pb::Plan::kJoin:
      return 2 + std::max(PlanNesting(plan.join().left()), PlanNesting(plan.join().right()));
    case pb::Plan::kTopK:
      return 2 + std::max(PlanNesting(plan.top_k().input()), 1);
    case pb::Plan::kNegate:
      return 2 + PlanNesting(plan.negate().input());
    case pb::Plan::kThreshold:
      return 2 + PlanNesting(plan.threshold().input());
    default:
      return 1;
  }
}

std::string TypeSqlName(pb::ScalarType type, const TypeMods& mods) {
  return std::string(SqlTypeName(type, mods));
}

}  // namespace tandem::frontend::plan

namespace tandem::frontend::plan {

std::vector<std::uint32_t> Iota(std::size_t from, std::size_t to) {
  std::vector<std::uint32_t> out;
  for (std::size_t i = from; i < to; ++i) out.push_back(static_cast<std::uint32_t>(i));
  return out;
}

namespace {

// `side` with each key that is not a plain column mapped; the key columns in *columns.
pb::Plan KeyedSide(pb::Plan side, std::size_t arity, const std::vector<pb::ScalarExpr>& keys,
                   std::vector<std::uint32_t>* columns, std::size_t* new_arity) {
  std::vector<pb::ScalarExpr> map;
  for (const auto& key : keys) {
    if (key.kind_case() == pb::ScalarExpr::kColumn) {
      columns->push_back(key.column());
    } else {
      columns->push_back(static_cast<std::uint32_t>(arity + map.size()));
      map.push_back(key);
    }
  }
  if (keys.empty()) {  // a constant key: every row matches every row
    columns->push_back(static_cast<std::uint32_t>(arity));
    map.push_back(IntExpr(0));
  }
  *new_arity = arity + map.size();
  if (map.empty()) return side;
  return MfpPlan(std::move(side), std::move(map), {}, {});
}

}  // namespace

pb::Plan EquiJoin(pb::Plan left, std::size_t left_arity,
                  const std::vector<pb::ScalarExpr>& left_keys, pb::Plan right,
                  std::size_t right_arity, const std::vector<pb::ScalarExpr>& right_keys,
                  pb::JoinKind kind, const std::vector<pb::ScalarExpr>& predicates) {
  std::vector<std::uint32_t> lk, rk;
  std::size_t la = 0, ra = 0;
  pb::Plan l = KeyedSide(std::move(left), left_arity, left_keys, &lk, &la);
  pb::Plan r = KeyedSide(std::move(right), right_arity, right_keys, &rk, &ra);
  pb::Plan plan;
  auto* join = plan.mutable_join();
  *join->mutable_left() = std::move(l);
  *join->mutable_right() = std::move(r);
  for (auto c : lk) join->add_left_key(c);
  for (auto c : rk) join->add_right_key(c);
  join->set_kind(kind);
  if (la == left_arity && ra == right_arity) {
    if (predicates.empty()) return plan;
    return MfpPlan(std::move(plan), {}, predicates, {});
  }
  // One Mfp: the predicates (over [left, right]) read past the mapped keys, then the keys go.
  std::vector<std::uint32_t> projection = Iota(0, left_arity);
  for (auto c : Iota(la, la + right_arity)) projection.push_back(c);
  std::vector<pb::ScalarExpr> renumbered;
  for (const auto& p : predicates) renumbered.push_back(Renumber(p, projection));
  return MfpPlan(std::move(plan), {}, std::move(renumbered), std::move(projection));
}

namespace {

pb::ScalarExpr DefaultOf(pb::ScalarType type) { return ZeroExpr(type); }

// Keys that equal exactly when the columns are equal or both null: (c IS NULL, c or a default),
// and for a numeric or an interval, whose keys compare by value (base/row.h "Keys"), its text too
// (c::text or ''), which tells its spellings apart (1.5 and 1.50, '1 mon' and '30 days').
std::vector<pb::ScalarExpr> NullSafeKeys(const std::vector<pb::ScalarType>& types) {
  std::vector<pb::ScalarExpr> keys;
  for (std::uint32_t i = 0; i < types.size(); ++i) {
    keys.push_back(Unary(pb::IS_NULL, ColumnExpr(i)));
    keys.push_back(
        IfThenElse(Unary(pb::IS_NULL, ColumnExpr(i)), DefaultOf(types[i]), ColumnExpr(i)));
    if (types[i] == pb::NUMERIC || types[i] == pb::INTERVAL) {
      keys.push_back(IfThenElse(Unary(pb::IS_NULL, ColumnExpr(i)), DefaultOf(pb::STRING),
                                CastExpr(ColumnExpr(i), pb::STRING)));
    }
  }
  return keys;
}

std::vector<pb::ScalarExpr> NullsOf(const std::vector<pb::ScalarType>& types) {
  std::vector<pb::ScalarExpr> nulls;
  for (auto t : types) nulls.push_back(NullExpr(t));
  return nulls;
}

}  // namespace

pb::Plan RowsNotIn(pb::Plan rows, const std::vector<pb::ScalarType>& types, pb::Plan present,
                   std::vector<pb::ScalarExpr> append,
                   const std::vector<std::uint32_t>& projection) {
  // [rows, keys] LEFT JOIN Distinct([keys, marker]) on the keys; the rows whose marker is null,
  // with `append` after their columns, projected.
  const std::size_t n = types.size();
  const std::vector<pb::ScalarExpr> keys = NullSafeKeys(types);
  const std::size_t k = keys.size();
  std::vector<pb::ScalarExpr> marked_map = keys;
  marked_map.push_back(BoolExpr(true));
  pb::Plan plan;
  auto* join = plan.mutable_join();
  *join->mutable_left() = MfpPlan(std::move(rows), keys, {}, {});
  *join->mutable_right() =
      DistinctPlan(MfpPlan(std::move(present), std::move(marked_map), {}, Iota(n, n + k + 1)));
  for (auto c : Iota(n, n + k)) join->add_left_key(c);
  for (auto c : Iota(0, k)) join->add_right_key(c);
  join->set_kind(pb::LEFT_OUTER);
  // The join's columns: rows (n), their keys (k), present's keys (k), the marker.
  const auto marker = static_cast<std::uint32_t>(n + 2 * k);
  std::vector<std::uint32_t> out;
  for (auto c : projection)
    out.push_back(c < n ? c : static_cast<std::uint32_t>(marker + 1 + (c - n)));
  return MfpPlan(std::move(plan), std::move(append), {Unary(pb::IS_NULL, ColumnExpr(marker))},
                 std::move(out));
}

pb::Plan GeneralOuterJoin(pb::Plan left, const std::vector<pb::ScalarType>& left_types,
                          const std::vector<pb::ScalarExpr>& left_keys, pb::Plan right,
                          const std::vector<pb::ScalarType>& right_types,
                          const std::vector<pb::ScalarExpr>& right_keys,
                          const std::vector<pb::ScalarExpr>& conditions, bool full) {
  const std::size_t la = left_types.size(), ra = right_types.size();
  pb::Plan pairs = EquiJoin(left, la, left_keys, right, ra, right_keys, pb::INNER, conditions);
  std::vector<pb::Plan> parts;
  pb::Plan matched_left = MfpPlan(pairs, {}, {}, Iota(0, la));
  parts.push_back(RowsNotIn(std::move(left), left_types, std::move(matched_left),
                            NullsOf(right_types), Iota(0, la + ra)));
  if (full) {
    pb::Plan matched_right = MfpPlan(pairs, {}, {}, Iota(la, la + ra));
    std::vector<std::uint32_t> projection = Iota(ra, ra + la);
    for (auto c : Iota(0, ra)) projection.push_back(c);
    parts.push_back(RowsNotIn(std::move(right), right_types, std::move(matched_right),
                              NullsOf(left_types), projection));
  }
  parts.insert(parts.begin(), std::move(pairs));
  return UnionPlan(std::move(parts));
}

}  // namespace tandem::frontend::plan

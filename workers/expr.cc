#include "workers/expr.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "base/check.h"
#include "ipc/plan_typing.h"
#include "ipc/rows.h"
#include "ipc/temporal_filter.h"
#include "workers/arith.h"
#include "workers/cast_eval.h"
#include "workers/func_eval.h"

namespace tandem::workers {

namespace pb = ipc::pb;

namespace {

bool IsNull(const Datum& d) { return d.index() == 0; }

// The type of `e` over `columns` (validation typed it already: a refusal is our bug).
pb::ScalarType TypeOf(const pb::ScalarExpr& e, const std::vector<pb::Column>& columns) {
  auto type = ipc::ExprType(e, columns);
  TANDEM_CHECK(type.ok(), "an expression that passed validation does not type-check");
  return type->type();
}

}  // namespace

Expr CompileExpr(const pb::ScalarExpr& e, const std::vector<pb::Column>& columns) {
  Expr out;
  auto operand = [&](const pb::ScalarExpr& arg) {
    out.arg_types.push_back(TypeOf(arg, columns));
    out.args.push_back(CompileExpr(arg, columns));
  };
  switch (e.kind_case()) {
    case pb::ScalarExpr::kColumn:
      out.kind = Expr::Kind::kColumn;
      out.column = e.column();
      break;
    case pb::ScalarExpr::kLiteral:
      out.kind = Expr::Kind::kLiteral;
      out.literal = ipc::FromProto(e.literal().value());
      break;
    case pb::ScalarExpr::kUnary:
      out.kind = Expr::Kind::kUnary;
      out.func = e.unary().func();
      operand(e.unary().expr());
      break;
    case pb::ScalarExpr::kBinary:
      out.kind = Expr::Kind::kBinary;
      out.func = e.binary().func();
      operand(e.binary().left());
      operand(e.binary().right());
      break;
    case pb::ScalarExpr::kIfThenElse:
      out.kind = Expr::Kind::kIf;
      operand(e.if_then_else().cond());
      operand(e.if_then_else().then());
      operand(e.if_then_else().els());
      break;
    case pb::ScalarExpr::kCast:
      out.kind = Expr::Kind::kCast;
      out.cast_to = e.cast().to();
      operand(e.cast().expr());
      break;
    case pb::ScalarExpr::kCall:
      out.kind = Expr::Kind::kCall;
      out.func = e.call().func();
      for (const auto& arg : e.call().args()) operand(arg);
      break;
    case pb::ScalarExpr::kNow:
      // Mfp compiles a temporal filter's bounds, never the time itself.
      TANDEM_CHECK(false, "tandem_now() outside a temporal filter passed validation");
      break;
    default:
      TANDEM_CHECK(false, "an empty scalar expression passed validation");
  }
  return out;
}

// One case per expression kind and function, with SQL's null rules: long as a table is long.
bool Eval(const Expr& e, const Row& row, Datum* out, std::string* error) {
  switch (e.kind) {
    case Expr::Kind::kColumn:
      TANDEM_CHECK(e.column < row.size(), "column reference out of range passed validation");
      *out = row[e.column];
      return true;
    case Expr::Kind::kLiteral:
      *out = e.literal;
      return true;
    case Expr::Kind::kUnary: {
      Datum a;
      if (!Eval(e.args[0], row, &a, error)) return false;
      switch (e.func) {
        case pb::IS_NULL:
          *out = IsNull(a);
          return true;
        case pb::IS_NOT_NULL:
          *out = !IsNull(a);
          return true;
        case pb::NOT:
          *out = IsNull(a) ? Datum(Null{}) : Datum(!std::get<bool>(a));
          return true;
        case pb::NEGATE:
          if (IsNull(a)) {
            *out = Null{};
            return true;
          }
          return EvalNegate(e.arg_types[0], a, out, error);
        default:
          TANDEM_CHECK(false, "unknown unary function passed validation");
      }
      return false;
    }
    case Expr::Kind::kBinary: {
      Datum a, b;
      if (!Eval(e.args[0], row, &a, error)) return false;
      if (e.func == pb::AND || e.func == pb::OR) {
        const bool is_and = e.func == pb::AND;
        // Short circuit on the deciding value, but still three-valued.
        if (!IsNull(a) && std::get<bool>(a) != is_and) {
          *out = !is_and;
          return true;
        }
        if (!Eval(e.args[1], row, &b, error)) return false;
        if (!IsNull(b) && std::get<bool>(b) != is_and) {
          *out = !is_and;
          return true;
        }
        *out = (IsNull(a) || IsNull(b)) ? Datum(Null{}) : Datum(is_and);
        return true;
      }
      if (!Eval(e.args[1], row, &b, error)) return false;
      if (IsNull(a) || IsNull(b)) {
        *out = Null{};
        return true;
      }
      const pb::ScalarType type = e.arg_types[0];
      switch (e.func) {
        case pb::EQ:
          *out = CompareAsValues(type, a, b) == 0;
          return true;
        case pb::NE:
          *out = CompareAsValues(type, a, b) != 0;
          return true;
        case pb::LT:
          *out = CompareAsValues(type, a, b) < 0;
          return true;
        case pb::LE:
          *out = CompareAsValues(type, a, b) <= 0;
          return true;
        case pb::GT:
          *out = CompareAsValues(type, a, b) > 0;
          return true;
        case pb::GE:
          *out = CompareAsValues(type, a, b) >= 0;
          return true;
        default:
          return EvalArith(static_cast<pb::BinaryFunc>(e.func), type, e.arg_types[1], a, b, out,
                           error);
      }
    }
    case Expr::Kind::kCast: {
      Datum a;
      if (!Eval(e.args[0], row, &a, error)) return false;
      if (IsNull(a)) {
        *out = Null{};
        return true;
      }
      return EvalCast(a, e.arg_types[0], e.cast_to, out, error);
    }
    case Expr::Kind::kCall: {
      if (e.func == pb::COALESCE) {
        // Only the arguments up to the first that is not null are evaluated (PostgreSQL's
        // COALESCE, like CASE): an error further right is never reached.
        for (const Expr& arg : e.args) {
          if (!Eval(arg, row, out, error)) return false;
          if (!IsNull(*out)) return true;
        }
        *out = Null{};
        return true;
      }
      std::vector<Datum> args(e.args.size());
      for (std::size_t i = 0; i < e.args.size(); ++i) {
        if (!Eval(e.args[i], row, &args[i], error)) return false;
      }
      return EvalFunc(static_cast<pb::Func>(e.func), args, e.arg_types, out, error);
    }
    case Expr::Kind::kIf: {
      Datum c;
      if (!Eval(e.args[0], row, &c, error)) return false;
      const bool take_then = !IsNull(c) && std::get<bool>(c);
      return Eval(e.args[take_then ? 1 : 2], row, out, error);
    }
  }
  return false;
}

Mfp::Mfp(const pb::MapFilterProject& mfp, const pb::Schema& input) {
  std::vector<pb::Column> columns(input.columns().begin(), input.columns().end());
  for (const auto& e : mfp.map()) {
    map_.push_back(CompileExpr(e, columns));
    auto type = ipc::ExprType(e, columns);
    TANDEM_CHECK(type.ok(), "a map expression that passed validation does not type-check");
    columns.push_back(std::move(type).value());
  }
  for (const auto& e : mfp.predicates()) {
    if (!ipc::ContainsNow(e)) {
      predicates_.push_back(CompileExpr(e, columns));
      continue;
    }
    auto comparisons = ipc::TemporalComparisons(e);
    TANDEM_CHECK(comparisons.ok(), "a temporal filter that passed validation has another shape");
    for (const ipc::TemporalComparison& c : *comparisons) {
      bounds_.push_back({c.op, CompileExpr(*c.bound, columns)});
    }
  }
  projection_.assign(mfp.projection().begin(), mfp.projection().end());
  identity_ = map_.empty() && predicates_.empty() && bounds_.empty() && projection_.empty();
}

Partitioning Mfp::Through(const Partitioning& in) const {
  if (identity_ || (map_.empty() && projection_.empty())) return in;
  if (in.kind != Partitioning::Kind::kColumns) return Partitioning::Unknown();
  if (projection_.empty()) return in;  // maps append columns: the input's stay where they are
  std::vector<std::uint32_t> out;
  for (std::uint32_t c : in.columns) {
    auto at = std::find(projection_.begin(), projection_.end(), c);
    if (at == projection_.end()) return Partitioning::Unknown();
    out.push_back(static_cast<std::uint32_t>(at - projection_.begin()));
  }
  return Partitioning::By(std::move(out));
}

Mfp::Outcome Mfp::Apply(Row* row, std::string* error) const {
  TANDEM_CHECK(!temporal(), "a temporal filter applied without its validity");
  return ApplyWith(row, error, nullptr);
}

Mfp::Outcome Mfp::Apply(Row* row, std::string* error, Validity* validity) const {
  *validity = Validity{};
  return ApplyWith(row, error, validity);
}

Mfp::Outcome Mfp::ApplyWith(Row* row, std::string* error, Validity* validity) const {
  if (identity_) return Outcome::kKept;
  if (projection_.empty()) {  // the maps' columns are appended to the row itself
    for (const Expr& e : map_) {
      Datum d;
      if (!Eval(e, *row, &d, error)) return Outcome::kError;
      row->push_back(std::move(d));
    }
    return Passes(*row, error, validity);
  }
  // Maps and predicates over a scratch row (the input's datums moved in, the maps' appended),
  // then the projection into *row, which keeps its buffer: no allocation per row while the output
  // is no wider than the input (a row of every operator's input is one heap allocation).
  // On kDropped and kError *row is left unspecified (callers discard it).
  thread_local Row scratch;
  scratch.clear();
  scratch.insert(scratch.end(), std::make_move_iterator(row->begin()),
                 std::make_move_iterator(row->end()));
  for (const Expr& e : map_) {
    Datum d;
    if (!Eval(e, scratch, &d, error)) return Outcome::kError;
    scratch.push_back(std::move(d));
  }
  if (const Outcome o = Passes(scratch, error, validity); o != Outcome::kKept) return o;
  row->resize(projection_.size());
  for (std::size_t i = 0; i < projection_.size(); ++i) (*row)[i] = scratch[projection_[i]];
  return Outcome::kKept;
}

Mfp::Outcome Mfp::Passes(const Row& row, std::string* error, Validity* validity) const {
  for (const Expr& p : predicates_) {
    Datum d;
    if (!Eval(p, row, &d, error)) return Outcome::kError;
    if (IsNull(d) || !std::get<bool>(d)) return Outcome::kDropped;
  }
  if (validity == nullptr) return Outcome::kKept;
  // Every bound, even after a null one: an error in any of them is the row's at every time.
  bool null_bound = false;
  for (const Bound& b : bounds_) {
    Datum d;
    if (!Eval(b.bound, row, &d, error)) return Outcome::kError;
    if (IsNull(d)) {
      null_bound = true;
      continue;
    }
    Narrow(b.op, std::get<TimestampTz>(d).micros, validity);
  }
  return null_bound ? Outcome::kDropped : Outcome::kKept;
}

}  // namespace tandem::workers

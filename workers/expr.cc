#include "workers/expr.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "base/check.h"
#include "ipc/rows.h"

namespace tandem::workers {

namespace pb = ipc::pb;

namespace {

bool IsNull(const Datum& d) { return d.index() == 0; }

bool Arith(int func, const Datum& a, const Datum& b, Datum* out, std::string* error) {
  if (a.index() == 2) {
    const std::int64_t x = std::get<std::int64_t>(a), y = std::get<std::int64_t>(b);
    std::int64_t r = 0;
    switch (func) {
      case pb::ADD:
        if (__builtin_add_overflow(x, y, &r)) return *error = "integer overflow in +", false;
        break;
      case pb::SUB:
        if (__builtin_sub_overflow(x, y, &r)) return *error = "integer overflow in -", false;
        break;
      case pb::MUL:
        if (__builtin_mul_overflow(x, y, &r)) return *error = "integer overflow in *", false;
        break;
      case pb::DIV:
        if (y == 0) return *error = "division by zero", false;
        if (x == INT64_MIN && y == -1) return *error = "integer overflow in /", false;
        r = x / y;
        break;
      case pb::MOD:
        if (y == 0) return *error = "division by zero", false;
        r = (y == -1) ? 0 : x % y;
        break;
      default:
        TANDEM_CHECK(false, "not an arithmetic function");
    }
    *out = r;
    return true;
  }
  TANDEM_CHECK(a.index() == 3 && b.index() == 3, "arithmetic on non-numbers passed validation");
  const double x = std::get<double>(a), y = std::get<double>(b);
  switch (func) {
    case pb::ADD:
      *out = x + y;
      return true;
    case pb::SUB:
      *out = x - y;
      return true;
    case pb::MUL:
      *out = x * y;
      return true;
    case pb::DIV:
      if (y == 0) return *error = "division by zero", false;
      *out = x / y;
      return true;
    case pb::MOD:
      if (y == 0) return *error = "division by zero", false;
      *out = std::fmod(x, y);
      return true;
    default:
      TANDEM_CHECK(false, "not an arithmetic function");
  }
  return false;
}

}  // namespace

Expr CompileExpr(const pb::ScalarExpr& e) {
  Expr out;
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
      out.args.push_back(CompileExpr(e.unary().expr()));
      break;
    case pb::ScalarExpr::kBinary:
      out.kind = Expr::Kind::kBinary;
      out.func = e.binary().func();
      out.args.push_back(CompileExpr(e.binary().left()));
      out.args.push_back(CompileExpr(e.binary().right()));
      break;
    case pb::ScalarExpr::kIfThenElse:
      out.kind = Expr::Kind::kIf;
      out.args.push_back(CompileExpr(e.if_then_else().cond()));
      out.args.push_back(CompileExpr(e.if_then_else().then()));
      out.args.push_back(CompileExpr(e.if_then_else().els()));
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
          } else if (a.index() == 2) {
            const auto v = std::get<std::int64_t>(a);
            if (v == INT64_MIN) return *error = "integer overflow in unary -", false;
            *out = -v;
          } else {
            *out = -std::get<double>(a);
          }
          return true;
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
      switch (e.func) {
        case pb::EQ:
          *out = CompareDatum(a, b) == 0;
          return true;
        case pb::NE:
          *out = CompareDatum(a, b) != 0;
          return true;
        case pb::LT:
          *out = CompareDatum(a, b) < 0;
          return true;
        case pb::LE:
          *out = CompareDatum(a, b) <= 0;
          return true;
        case pb::GT:
          *out = CompareDatum(a, b) > 0;
          return true;
        case pb::GE:
          *out = CompareDatum(a, b) >= 0;
          return true;
        default:
          return Arith(e.func, a, b, out, error);
      }
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

Mfp::Mfp(const pb::MapFilterProject& mfp, std::size_t input_arity) {
  (void)input_arity;
  for (const auto& e : mfp.map()) map_.push_back(CompileExpr(e));
  for (const auto& e : mfp.predicates()) predicates_.push_back(CompileExpr(e));
  projection_.assign(mfp.projection().begin(), mfp.projection().end());
  identity_ = map_.empty() && predicates_.empty() && projection_.empty();
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
  if (identity_) return Outcome::kKept;
  if (projection_.empty()) {  // the maps' columns are appended to the row itself
    for (const Expr& e : map_) {
      Datum d;
      if (!Eval(e, *row, &d, error)) return Outcome::kError;
      row->push_back(std::move(d));
    }
    return Passes(*row, error);
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
  if (const Outcome o = Passes(scratch, error); o != Outcome::kKept) return o;
  row->resize(projection_.size());
  for (std::size_t i = 0; i < projection_.size(); ++i) (*row)[i] = scratch[projection_[i]];
  return Outcome::kKept;
}

Mfp::Outcome Mfp::Passes(const Row& row, std::string* error) const {
  for (const Expr& p : predicates_) {
    Datum d;
    if (!Eval(p, row, &d, error)) return Outcome::kError;
    if (IsNull(d) || !std::get<bool>(d)) return Outcome::kDropped;
  }
  return Outcome::kKept;
}

}  // namespace tandem::workers

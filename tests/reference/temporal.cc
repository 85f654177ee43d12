#include "reference/temporal.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace tandem::reference {
namespace {

bool ReadsNow(const pb::ScalarExpr& e) {
  switch (e.kind_case()) {
    case pb::ScalarExpr::kNow:
      return true;
    case pb::ScalarExpr::kUnary:
      return ReadsNow(e.unary().expr());
    case pb::ScalarExpr::kBinary:
      return ReadsNow(e.binary().left()) || ReadsNow(e.binary().right());
    case pb::ScalarExpr::kIfThenElse:
      return ReadsNow(e.if_then_else().cond()) || ReadsNow(e.if_then_else().then()) ||
             ReadsNow(e.if_then_else().els());
    case pb::ScalarExpr::kCast:
      return ReadsNow(e.cast().expr());
    case pb::ScalarExpr::kCall:
      return std::any_of(e.call().args().begin(), e.call().args().end(), ReadsNow);
    default:
      return false;
  }
}

// `e` with the time itself replaced by `now` everywhere.
void PutTimeIn(pb::ScalarExpr* e, const pb::ScalarExpr& now) {
  switch (e->kind_case()) {
    case pb::ScalarExpr::kNow:
      *e = now;
      return;
    case pb::ScalarExpr::kUnary:
      return PutTimeIn(e->mutable_unary()->mutable_expr(), now);
    case pb::ScalarExpr::kBinary:
      PutTimeIn(e->mutable_binary()->mutable_left(), now);
      return PutTimeIn(e->mutable_binary()->mutable_right(), now);
    case pb::ScalarExpr::kIfThenElse:
      PutTimeIn(e->mutable_if_then_else()->mutable_cond(), now);
      PutTimeIn(e->mutable_if_then_else()->mutable_then(), now);
      return PutTimeIn(e->mutable_if_then_else()->mutable_els(), now);
    case pb::ScalarExpr::kCast:
      return PutTimeIn(e->mutable_cast()->mutable_expr(), now);
    case pb::ScalarExpr::kCall:
      for (auto& arg : *e->mutable_call()->mutable_args()) PutTimeIn(&arg, now);
      return;
    default:
      return;
  }
}

// The temporal filters of one predicate: an AND whose operands both read the time is two.
void TemporalConjuncts(const pb::ScalarExpr& e, std::vector<pb::ScalarExpr>* out) {
  if (e.kind_case() == pb::ScalarExpr::kBinary && e.binary().func() == pb::AND &&
      ReadsNow(e.binary().left()) && ReadsNow(e.binary().right())) {
    TemporalConjuncts(e.binary().left(), out);
    TemporalConjuncts(e.binary().right(), out);
    return;
  }
  out->push_back(e);
}

// The time itself at `t`: t ms since the Unix epoch as a TIMESTAMPTZ literal (saturated beyond
// the int64 microseconds, where every TIMESTAMPTZ value is before it).
pb::ScalarExpr NowLiteral(Time t) {
  constexpr Time kLast = static_cast<Time>(std::numeric_limits<std::int64_t>::max() / 1000);
  pb::ScalarExpr e;
  e.mutable_literal()->mutable_value()->set_timestamptz(
      t <= kLast ? static_cast<std::int64_t>(t) * 1000 : std::numeric_limits<std::int64_t>::max());
  e.mutable_literal()->set_type(pb::TIMESTAMPTZ);
  return e;
}

}  // namespace

bool HasTemporalFilter(const pb::MapFilterProject& mfp) {
  return std::any_of(mfp.predicates().begin(), mfp.predicates().end(), ReadsNow);
}

Contents TemporalMfpOf(const Contents& input, const pb::MapFilterProject& mfp, Time t,
                       const ApplyMfpFn& apply) {
  // The other predicates, with the projection; and one filter per temporal filter at t, over the
  // input and the maps' columns, keeping everything (its row is not used: only its kind).
  pb::MapFilterProject ordinary = mfp;
  ordinary.clear_predicates();
  std::vector<pb::ScalarExpr> conjuncts;
  for (const auto& predicate : mfp.predicates()) {
    if (ReadsNow(predicate)) {
      TemporalConjuncts(predicate, &conjuncts);
    } else {
      *ordinary.add_predicates() = predicate;
    }
  }
  const pb::ScalarExpr now = NowLiteral(t);
  std::vector<pb::MapFilterProject> temporal;
  for (auto& conjunct : conjuncts) {
    PutTimeIn(&conjunct, now);
    pb::MapFilterProject one;
    *one.mutable_map() = mfp.map();
    *one.add_predicates() = conjunct;
    temporal.push_back(std::move(one));
  }
  Contents out;
  out.errors = input.errors;
  for (const auto& [row, count] : input.rows) {
    const MfpResult r = apply(ordinary, row);
    if (r.kind == MfpResult::Kind::kError) AddTo(out.errors, r.error, count);
    if (r.kind != MfpResult::Kind::kRow) continue;
    std::optional<std::string> error;
    bool holds = true;
    for (const auto& filter : temporal) {
      const MfpResult f = apply(filter, row);
      if (f.kind == MfpResult::Kind::kError && !error) error = f.error;
      if (f.kind == MfpResult::Kind::kDropped) holds = false;
    }
    if (error) {
      AddTo(out.errors, *error, count);
    } else if (holds) {
      AddTo(out.rows, r.row, count);
    }
  }
  return out;
}

}  // namespace tandem::reference

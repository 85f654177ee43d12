#include "ipc/temporal_filter.h"

#include <string>

#include "ipc/reasons.h"

namespace tandem::ipc {
namespace {

bool IsTemporalComparison(pb::BinaryFunc func) {
  return func == pb::EQ || func == pb::LT || func == pb::LE || func == pb::GT || func == pb::GE;
}

// `e op now` as `now op' e`.
pb::BinaryFunc TurnedRound(pb::BinaryFunc op) {
  switch (op) {
    case pb::LT:
      return pb::GT;
    case pb::LE:
      return pb::GE;
    case pb::GT:
      return pb::LT;
    case pb::GE:
      return pb::LE;
    default:
      return op;  // EQ
  }
}

const char* const kTemporalFilterShape =
    "a temporal filter compares tandem_now() (EQ, LT, LE, GT or GE) with a TIMESTAMPTZ "
    "expression that does not read it, or is an AND of such comparisons";

Status CollectComparisons(const pb::ScalarExpr& predicate, std::vector<TemporalComparison>* out) {
  if (predicate.kind_case() == pb::ScalarExpr::kNow) {
    return Invalid("tandem_now() alone is not a predicate: " + std::string(kTemporalFilterShape));
  }
  if (predicate.kind_case() != pb::ScalarExpr::kBinary) {
    return Invalid("tandem_now() is read inside an expression that is not a comparison: " +
                   std::string(kTemporalFilterShape));
  }
  const pb::CallBinary& call = predicate.binary();
  const bool left = ContainsNow(call.left());
  const bool right = ContainsNow(call.right());
  if (call.func() == pb::AND) {
    if (!left || !right) {
      return Invalid(std::string("an AND in a temporal filter joins temporal comparisons only: "
                                 "its ") +
                     (left ? "right" : "left") +
                     " operand does not read tandem_now() (send it as a predicate of its own)");
    }
    TANDEM_RETURN_IF_ERROR(CollectComparisons(call.left(), out));
    return CollectComparisons(call.right(), out);
  }
  const std::string name = pb::BinaryFunc_Name(call.func());
  if (!IsTemporalComparison(call.func())) {
    return Invalid("tandem_now() is an operand of " +
                   (name.empty() ? "an unknown function" : name) + ": " + kTemporalFilterShape);
  }
  if (left && right) {
    return Invalid("both operands of " + name + " read tandem_now(): " + kTemporalFilterShape);
  }
  const pb::ScalarExpr& now = left ? call.left() : call.right();
  if (now.kind_case() != pb::ScalarExpr::kNow) {
    return Invalid("an operand of " + name + " computes with tandem_now(): " +
                   kTemporalFilterShape + " (move the computation to the other side)");
  }
  out->push_back(
      {left ? call.func() : TurnedRound(call.func()), left ? &call.right() : &call.left()});
  return Status::Ok();
}

}  // namespace

bool PlanContainsNow(const pb::Plan& plan) {
  switch (plan.kind_case()) {
    case pb::Plan::kMfp: {
      const pb::MapFilterProject& mfp = plan.mfp().mfp();
      for (const auto& e : mfp.map()) {
        if (ContainsNow(e)) return true;
      }
      for (const auto& e : mfp.predicates()) {
        if (ContainsNow(e)) return true;
      }
      return PlanContainsNow(plan.mfp().input());
    }
    case pb::Plan::kReduce:
      return PlanContainsNow(plan.reduce().input());
    case pb::Plan::kUnion:
      for (const auto& input : plan.union_().inputs()) {
        if (PlanContainsNow(input)) return true;
      }
      return false;
    case pb::Plan::kDistinct:
      return PlanContainsNow(plan.distinct().input());
    case pb::Plan::kJoin:
      return PlanContainsNow(plan.join().left()) || PlanContainsNow(plan.join().right());
    case pb::Plan::kTopK:
      return PlanContainsNow(plan.top_k().input());
    case pb::Plan::kNegate:
      return PlanContainsNow(plan.negate().input());
    case pb::Plan::kThreshold:
      return PlanContainsNow(plan.threshold().input());
    case pb::Plan::kGet:
    case pb::Plan::KIND_NOT_SET:
      break;
  }
  return false;
}

bool ContainsNow(const pb::ScalarExpr& expr) {
  switch (expr.kind_case()) {
    case pb::ScalarExpr::kNow:
      return true;
    case pb::ScalarExpr::kUnary:
      return ContainsNow(expr.unary().expr());
    case pb::ScalarExpr::kBinary:
      return ContainsNow(expr.binary().left()) || ContainsNow(expr.binary().right());
    case pb::ScalarExpr::kIfThenElse:
      return ContainsNow(expr.if_then_else().cond()) || ContainsNow(expr.if_then_else().then()) ||
             ContainsNow(expr.if_then_else().els());
    case pb::ScalarExpr::kCast:
      return ContainsNow(expr.cast().expr());
    case pb::ScalarExpr::kCall:
      for (const auto& arg : expr.call().args()) {
        if (ContainsNow(arg)) return true;
      }
      return false;
    case pb::ScalarExpr::kColumn:
    case pb::ScalarExpr::kLiteral:
    case pb::ScalarExpr::KIND_NOT_SET:
      break;
  }
  return false;
}

Result<std::vector<TemporalComparison>> TemporalComparisons(const pb::ScalarExpr& predicate) {
  if (!ContainsNow(predicate)) return Invalid("the predicate does not read tandem_now()");
  std::vector<TemporalComparison> out;
  TANDEM_RETURN_IF_ERROR(CollectComparisons(predicate, &out));
  return out;
}

}  // namespace tandem::ipc

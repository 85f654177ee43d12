// Temporal filters (DESIGN §16): predicates that compare the time itself (ScalarExpr.now; SQL
// tandem_now(), Materialize's mz_now()) with row data, so that rows enter and leave a maintained
// view as time passes. This is the one definition of their shape: the validator reads it to
// refuse every other use of the time (ipc/validate.cc), the runtime to turn each comparison into
// a bound on the times a row is in the view (workers/temporal_bounds.h).
//
// The shape: a predicate that reads the time is a comparison `now OP e` or `e OP now`, OP one of
// EQ, LT, LE, GT, GE, where `e` does not read the time (typing makes it TIMESTAMPTZ: a comparison
// has two operands of one type), or an AND of such predicates (each operand is a comparison of
// its own: an AND of temporal comparisons is several of them).
//
// Every function here reads only its arguments; recursion follows the expression's nesting, which
// protobuf's decoding limit bounds.
#pragma once

#include <vector>

#include "base/status.h"
#include "ipc/codec.h"

namespace tandem::ipc {

// True when `expr` reads the time itself anywhere in it.
bool ContainsNow(const pb::ScalarExpr& expr);

// True when a map or predicate of any Mfp of `plan` reads the time itself.
bool PlanContainsNow(const pb::Plan& plan);

// One comparison of a temporal filter with the time on the left: `now op *bound`.
struct TemporalComparison {
  pb::BinaryFunc op = pb::EQ;             // EQ, LT, LE, GT or GE
  const pb::ScalarExpr* bound = nullptr;  // does not read the time; points into the predicate
};

// The comparisons of a predicate that reads the time, in the order they are written (an AND's
// left operand's before its right's; `e < now` turned round into `now > e`). Refuses, with the
// reason, a predicate that reads the time in any other way. Types nothing: ExprType does.
Result<std::vector<TemporalComparison>> TemporalComparisons(const pb::ScalarExpr& predicate);

}  // namespace tandem::ipc

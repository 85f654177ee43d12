// Temporal filters in the reference evaluator (DESIGN §16), by their definition and nothing else:
// the collection at time t is computed with the time itself put in as the TIMESTAMPTZ literal
// t × 1000 µs. No bounds, no scheduled updates: what the runtime derives
// (workers/temporal_bounds.h) is checked against this.
//
// A predicate that reads the time (ScalarExpr.now) is a temporal filter; an AND of two predicates
// that both read it is two of them. A row of the input is in the output at t when the other
// predicates keep it (ApplyMfp's rules: in order, first) and every temporal filter is true at t;
// an error in any temporal filter, whatever the others give at t, makes the row an error; else a
// false or null one drops it.
#pragma once

#include <functional>

#include "reference/reference.h"

namespace tandem::reference {

// True when a predicate of `mfp` reads the time itself.
bool HasTemporalFilter(const pb::MapFilterProject& mfp);

// `input` at time `t` through `mfp`. `apply` is the reference's ApplyMfp over the input's rows
// (it is given `mfp` without its temporal filters, and `mfp`'s maps with one temporal filter at a
// time, the time put in).
using ApplyMfpFn = std::function<MfpResult(const pb::MapFilterProject& mfp, const Row& row)>;
Contents TemporalMfpOf(const Contents& input, const pb::MapFilterProject& mfp, Time t,
                       const ApplyMfpFn& apply);

}  // namespace tandem::reference

// Map/filter/project, row by row (workers/README.md "Operators"): no exchange. Errors in the data
// (division by zero, overflow) become errors of the collection.
//
// With temporal filters (DESIGN §16, workers/temporal_bounds.h) each row that passes the other
// predicates is in the output over the times its bounds give: its input update (t, diff) becomes
// (max(t, lower), diff) and, when the bounds stop holding, (upper, -diff). Updates at times the
// tick does not cover wait in the node's PendingUpdates until the tick that does: the only state
// an Mfp keeps, one update per row in a sliding window. An error in a bound's expression is an
// error at the row's time, as any other.
//
// Never pulls arranged (Node's default): a temporal filter's output in a tick is not its input's
// in that tick, and a plain Mfp builds its rows anyway.
#pragma once

#include "base/time.h"
#include "workers/expr.h"
#include "workers/operators/node.h"
#include "workers/operators/pending_updates.h"

namespace tandem::workers {

class MfpNode final : public Node {
 public:
  // `until`: the dataflow's; a temporal filter keeps no update at or beyond it (no tick reaches
  // it).
  MfpNode(Node* input, Mfp mfp, Frontier until = Frontier::Empty())
      : input_(input), mfp_(std::move(mfp)), until_(until) {}
  Delta Pull(const TickCtx& ctx) override;
  // The input's, through the projection (a partitioning column projected away: unknown). A kept
  // update goes out on the worker that made it: the same placement.
  Partitioning partitioning() const override { return mfp_.Through(input_->partitioning()); }

  // The updates waiting for a later tick (a temporal filter's).
  std::size_t pending() const { return pending_.size(); }

 private:
  Delta PullTemporal(const TickCtx& ctx, Delta d);

  Node* input_;
  Mfp mfp_;
  Frontier until_;
  PendingUpdates pending_;
};

}  // namespace tandem::workers

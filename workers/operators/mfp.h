// Map/filter/project, row by row (workers/README.md "Operators"): no state, no exchange. Errors
// in the data (division by zero, overflow) become errors of the collection.
#pragma once

#include "workers/expr.h"
#include "workers/operators/node.h"

namespace tandem::workers {

class MfpNode final : public Node {
 public:
  MfpNode(Node* input, Mfp mfp) : input_(input), mfp_(std::move(mfp)) {}
  Delta Pull(const TickCtx& ctx) override;
  // The input's, through the projection (a partitioning column projected away: unknown).
  Partitioning partitioning() const override { return mfp_.Through(input_->partitioning()); }

 private:
  Node* input_;
  Mfp mfp_;
};

}  // namespace tandem::workers

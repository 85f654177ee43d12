#include "workers/operators/union.h"

#include <iterator>

namespace tandem::workers {

Delta UnionNode::Pull(const TickCtx& ctx) {
  Delta out;
  for (Node* in : inputs_) {
    Delta d = in->Pull(ctx);
    std::move(d.rows.begin(), d.rows.end(), std::back_inserter(out.rows));
    std::move(d.errors.begin(), d.errors.end(), std::back_inserter(out.errors));
  }
  return out;
}

Partitioning UnionNode::partitioning() const {
  if (inputs_.empty()) return Partitioning::Unknown();
  Partitioning p = inputs_.front()->partitioning();
  for (const Node* in : inputs_) {
    if (!(in->partitioning() == p)) return Partitioning::Unknown();
  }
  return p;
}

}  // namespace tandem::workers

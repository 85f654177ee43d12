// Union: the multiset sum of its inputs (rows and errors). No state, no exchange.
#pragma once

#include <vector>

#include "workers/operators/node.h"

namespace tandem::workers {

class UnionNode final : public Node {
 public:
  explicit UnionNode(std::vector<Node*> inputs) : inputs_(std::move(inputs)) {}
  Delta Pull(const TickCtx& ctx) override;
  // Partitioned when every input is, alike.
  Partitioning partitioning() const override;

 private:
  std::vector<Node*> inputs_;
};

}  // namespace tandem::workers

// Distinct: every row with a positive multiplicity, once. Exchanges by the whole row, then keeps
// each row's exact count (base/count.h) and emits a change only when its sign flips.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "base/count.h"
#include "workers/operators/node.h"

namespace tandem::workers {

class DistinctNode final : public Node {
 public:
  explicit DistinctNode(Node* input) : input_(input) {}
  Delta Pull(const TickCtx& ctx) override;

 private:
  Node* input_;
  // Encoded row → (row, count); counts are exact, only their sign matters.
  std::map<std::string, std::pair<Row, Int128>> state_;
};

}  // namespace tandem::workers

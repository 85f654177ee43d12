// Threshold and Distinct (workers/README.md "Operators"): both keep rows by the sign of their
// count. Threshold keeps every row with a positive count, with that count; Distinct keeps every
// such row once. Both exchange by the whole row, keep each row's exact count (base/count.h) and
// emit the change of the row's output count f(count) — max(count, 0) or [count > 0] — whenever
// it changes. Errors pass through unchanged.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "base/count.h"
#include "workers/operators/node.h"

namespace tandem::workers {

class ThresholdNode final : public Node {
 public:
  enum class Kind { kThreshold, kDistinct };
  ThresholdNode(Node* input, Kind kind) : input_(input), kind_(kind) {}
  Delta Pull(const TickCtx& ctx) override;
  Partitioning partitioning() const override { return Partitioning::WholeRow(); }

 private:
  Int128 Output(Int128 count) const;

  Node* input_;
  Kind kind_;
  // Encoded row → (row, count); a row leaves when its count is 0.
  std::map<std::string, std::pair<Row, Int128>> state_;
};

}  // namespace tandem::workers

// Threshold and Distinct (workers/README.md "Operators"): both keep rows by the sign of their
// count. Threshold keeps every row with a positive count, with that count; Distinct keeps every
// such row once. A "row" here is a key: rows equal by value (base/row.h "Keys") are one, counted
// together and printed in one spelling (spellings.h). Both exchange by the whole row, keep each
// row's exact count (base/count.h) and emit the change of the row's output count f(count) —
// max(count, 0) or [count > 0] — whenever it or the printed spelling changes. Errors pass through
// unchanged.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "base/count.h"
#include "workers/operators/node.h"
#include "workers/operators/spellings.h"

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
  struct Entry {
    Row printed;  // the spelling emitted (its first row's until spellings name another)
    Int128 count = 0;
    Spellings spellings;
  };
  // Key-encoded row → its entry; an entry leaves when its count and its spellings' are 0.
  std::map<std::string, Entry> state_;
};

}  // namespace tandem::workers

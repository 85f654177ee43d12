// Negate (workers/README.md "Operators"): every row's multiplicity negated, row by row; errors
// pass through unchanged (an error is not undone by negating the rows it came with). No state,
// no exchange. Threshold(Union(A, Negate(B))) is EXCEPT ALL.
#pragma once

#include <limits>

#include "workers/operators/node.h"

namespace tandem::workers {

class NegateNode final : public Node {
 public:
  explicit NegateNode(Node* input) : input_(input) {}
  Delta Pull(const TickCtx& ctx) override {
    Delta d = input_->Pull(ctx);
    const std::size_t n = d.rows.size();
    for (std::size_t i = 0; i < n; ++i) {
      RowUpdate& u = d.rows[i];
      if (u.diff == std::numeric_limits<std::int64_t>::min()) {  // a log source may write it
        u.diff = std::numeric_limits<std::int64_t>::max();
        d.rows.push_back({d.rows[i].row, d.rows[i].time, 1});  // (u may dangle after this)
      } else {
        u.diff = -u.diff;
      }
    }
    return d;
  }
  Partitioning partitioning() const override { return input_->partitioning(); }

 private:
  Node* input_;
};

}  // namespace tandem::workers

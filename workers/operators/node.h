// The operator interface of a rendered dataflow (DESIGN §8's operators, workers/README.md
// "Operators"): each worker holds one Node per plan node, and a tick pulls the changes at times
// [lo, hi) through the graph, from the sources to the index exports.
//
// Thread safety: a Node belongs to one worker thread. Nodes that exchange (Reduce, Distinct, the
// index export) call Exchange::Shuffle, a barrier: every worker pulls the same nodes in the same
// order in every tick.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "base/row.h"
#include "base/time.h"

namespace tandem::workers {

class Exchange;

struct RowUpdate {
  Row row;
  Time time = 0;
  std::int64_t diff = 0;
};

struct ErrorUpdate {
  std::string message;
  Time time = 0;
  std::int64_t diff = 0;
};

// The changes of one collection in one tick: rows, and errors in the data (DESIGN §3.2).
struct Delta {
  std::vector<RowUpdate> rows;
  std::vector<ErrorUpdate> errors;
};

// One tick: the changes at times [lo, hi); `tick` counts the worker's ticks of this dataflow.
struct TickCtx {
  Time lo;
  Frontier hi;
  std::uint64_t tick;
  std::uint32_t me;
  Exchange* exchange;
};

class Node {
 public:
  virtual ~Node() = default;
  // The changes of this node's collection in the tick. Called at most once per tick per consumer.
  virtual Delta Pull(const TickCtx& ctx) = 0;
};

// Groups updates by time (ascending) and calls fn(time, begin, end) for each run.
template <typename F>
void ForEachTime(std::vector<RowUpdate>& rows, F&& fn) {
  std::stable_sort(rows.begin(), rows.end(),
                   [](const RowUpdate& a, const RowUpdate& b) { return a.time < b.time; });
  for (std::size_t i = 0; i < rows.size();) {
    std::size_t j = i;
    while (j < rows.size() && rows[j].time == rows[i].time) ++j;
    fn(rows[i].time, i, j);
    i = j;
  }
}

}  // namespace tandem::workers

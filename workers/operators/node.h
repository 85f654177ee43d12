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
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/check.h"
#include "base/row.h"
#include "base/time.h"
#include "workers/partitioning.h"

namespace tandem::shm {
class UpdateBuffer;
}

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

class MemoryBudget;  // workers/operators/memory_budget.h

// One tick: the changes at times [lo, hi); `tick` counts the worker's ticks of this dataflow.
// `budget`: a one-shot's (what its operators may make), null for a maintained dataflow.
struct TickCtx {
  Time lo;
  Frontier hi;
  std::uint64_t tick;
  std::uint32_t me;
  Exchange* exchange;
  MemoryBudget* budget = nullptr;
};

class Node {
 public:
  virtual ~Node() = default;
  // The changes of this node's collection in the tick. Called at most once per tick per consumer.
  virtual Delta Pull(const TickCtx& ctx) = 0;
  // Where this node's rows are (Partitioning). Unknown unless the node knows better.
  virtual Partitioning partitioning() const { return Partitioning::Unknown(); }

  // The arranged pull: an index export by `key` of this node may call PullArranged instead of
  // Pull (once per tick), which encodes this worker's rows of the tick straight into `updates` as
  // the index holds them — (key-encoded key columns, encoded row, time, diff) — and appends its
  // errors to `errors`, building no Row. Only a node whose rows are placed by `key` already (no
  // exchange needed) can; whether it can is a property of the plan (the same on every worker).
  virtual bool CanPullArranged(const std::vector<std::uint32_t>& /*key*/) const { return false; }
  virtual void PullArranged(const TickCtx& /*ctx*/, const std::vector<std::uint32_t>& /*key*/,
                            shm::UpdateBuffer* /*updates*/, std::vector<ErrorUpdate>* /*errors*/) {
    TANDEM_CHECK(false, "PullArranged of a node that cannot (CanPullArranged is false)");
  }
};

// Groups updates by time (ascending) and calls fn(time, begin, end) for each run.
template <typename F>
void ForEachTime(std::vector<RowUpdate>& rows, F&& fn) {
  // A step's rows are usually of one tick: already in order (the stable sort would still allocate
  // a buffer and merge; 5 % of a reducing worker).
  auto by_time = [](const RowUpdate& a, const RowUpdate& b) { return a.time < b.time; };
  if (!std::is_sorted(rows.begin(), rows.end(), by_time)) {
    std::stable_sort(rows.begin(), rows.end(), by_time);
  }
  for (std::size_t i = 0; i < rows.size();) {
    std::size_t j = i;
    while (j < rows.size() && rows[j].time == rows[i].time) ++j;
    fn(rows[i].time, i, j);
    i = j;
  }
}

// The skeleton of the operators that keep state per group (Reduce, TopK): over `rows`, already
// exchanged by the `key` columns, time by time (ascending), calls apply(encoded group key, update)
// for each update, then settle(t, encoded group key) once for each group the time touched.
// The same, with the group key's columns chosen per update: key_of(update) (a Reduce's exchange
// carries partial rows, whose group key is in other columns, beside rows).
template <typename KeyOf, typename Apply, typename Settle>
void ForEachGroupChangeBy(std::vector<RowUpdate>& rows, KeyOf&& key_of, Apply&& apply,
                          Settle&& settle) {
  std::string encoded;
  ForEachTime(rows, [&](Time t, std::size_t b, std::size_t e) {
    std::set<std::string> touched;
    for (std::size_t i = b; i < e; ++i) {
      encoded.clear();
      AppendKeyColumns(rows[i].row, key_of(rows[i]), &encoded);
      apply(encoded, rows[i]);
      touched.insert(encoded);
    }
    for (const std::string& group : touched) settle(t, group);
  });
}
template <typename Apply, typename Settle>
void ForEachGroupChange(std::vector<RowUpdate>& rows, const std::vector<std::uint32_t>& key,
                        Apply&& apply, Settle&& settle) {
  ForEachGroupChangeBy(
      rows, [&key](const RowUpdate&) -> const std::vector<std::uint32_t>& { return key; },
      std::forward<Apply>(apply), std::forward<Settle>(settle));
}

}  // namespace tandem::workers

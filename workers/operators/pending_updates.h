// The updates an operator has made for times its current tick does not cover — a temporal
// filter's insertions and retractions at the times a row's bounds give (workers/temporal_bounds.h)
// — kept until the tick whose [lo, hi) holds them. So a row that enters a sliding window now and
// leaves it in ten seconds costs nothing in the ticks between.
//
// Invariants: every update kept is at a time at or beyond the hi of the tick that kept it (the
// rest go out in that tick), so releasing "before hi" in each later tick gives each update out in
// the one tick that covers its time, provided the operator is pulled in every tick (node.h).
// Memory: one RowUpdate per update kept; a sliding window keeps one per row in the window (its
// retraction), a filter whose rows enter in the future their insertions too.
//
// Thread safety: none; it belongs to its node's worker thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "workers/operators/node.h"

namespace tandem::workers {

class PendingUpdates {
 public:
  void Push(RowUpdate update) {
    heap_.push_back(std::move(update));
    std::push_heap(heap_.begin(), heap_.end(), Later);
  }

  // Moves every update kept at a time before `hi` (all of them for the empty frontier) to the end
  // of `out`, in time order.
  void ReleaseBefore(Frontier hi, std::vector<RowUpdate>* out) {
    while (!heap_.empty() && hi.Greater(heap_.front().time)) {
      std::pop_heap(heap_.begin(), heap_.end(), Later);
      out->push_back(std::move(heap_.back()));
      heap_.pop_back();
    }
  }

  std::size_t size() const { return heap_.size(); }
  bool empty() const { return heap_.empty(); }

 private:
  // A min-heap by time: std::push_heap keeps the greatest by the comparison at the front.
  static bool Later(const RowUpdate& a, const RowUpdate& b) { return a.time > b.time; }

  std::vector<RowUpdate> heap_;
};

}  // namespace tandem::workers

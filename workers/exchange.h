// Moves rows between the worker threads of one lockstep runtime (maintenance or solo), so that
// worker i holds exactly the keys with hash % N == i (DESIGN §1, workers/partitioning.h).
//
// Each exchange is one barrier; buffers alternate between two sets so that writers of exchange
// k+1 never touch what readers of exchange k still read. A receiver copies the rows another worker
// sent; the sender frees them in its next exchange (so each worker frees only what its own thread
// allocated, and what it sent is held until then: at most one exchange's rows).
#pragma once

#include <barrier>
#include <cstdint>
#include <vector>

#include "workers/operators/node.h"

namespace tandem::workers {

class Exchange {
 public:
  explicit Exchange(std::uint32_t workers);
  std::uint32_t workers() const { return workers_; }
  // Called by every worker, the same number of times in the same order. Returns the rows that
  // routing by `key_columns` (or the whole row) sent to `me` from every worker.
  std::vector<RowUpdate> Shuffle(std::uint32_t me, std::vector<RowUpdate> rows,
                                 const std::vector<std::uint32_t>& key_columns, bool whole_row);

 private:
  std::uint32_t workers_;
  std::barrier<> barrier_;
  // [set][from][to]
  std::vector<std::vector<std::vector<std::vector<RowUpdate>>>> buffers_;
  std::vector<std::uint64_t> round_;  // per worker: exchanges done (same for all)
};

// The start of every exchanging operator's tick: pulls `input`, appends its errors to `errors`
// (they need no routing) and returns its rows exchanged by `key_columns` (or the whole row) —
// without an exchange when `input`'s partitioning already satisfies it.
std::vector<RowUpdate> PullExchanged(Node* input, const TickCtx& ctx,
                                     const std::vector<std::uint32_t>& key_columns, bool whole_row,
                                     std::vector<ErrorUpdate>* errors);

}  // namespace tandem::workers

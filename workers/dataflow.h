// Rendering a Maintained dataflow: sources (workers/sources/) → operators (workers/operators/) →
// index exports, computed incrementally, one tick at a time, by all N worker threads of a
// maintenance (or solo) runtime in lockstep.
//
// A tick processes the updates at times [lo, hi) — hi is the same on every worker, decided in
// the runtime's tick barrier — and publishes each index's new updates with upper hi. Stateful
// operators (Reduce, Distinct) and index exports first exchange their input by key, so worker i
// holds exactly the keys with hash % N == i; errors stay where they arise (every worker's part of
// an index is checked for errors by a peek).
//
// Thread safety: DataflowShared is written only inside barrier completion steps (one thread, while
// every worker waits) and read by workers between barriers. Each DataflowInstance belongs to one
// worker thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/row.h"
#include "base/time.h"
#include "ipc/codec.h"
#include "shm/publisher.h"
#include "workers/exchange.h"
#include "workers/operators/node.h"
#include "workers/plan_graph.h"
#include "workers/sources/index_import.h"
#include "workers/sources/source.h"

namespace tandem::workers {

struct DataflowShared {
  ipc::pb::DataflowDescription desc;
  // One per source import, then one per index import (an ImportSource: its upper is the import's
  // progress), in the description's order.
  std::vector<std::unique_ptr<Source>> sources;
  Time as_of = 0;
  Frontier until = Frontier::Empty();
  Frontier frontier = Frontier::Minimum();  // processed up to here (all workers)
  Frontier target = Frontier::Minimum();    // the tick in progress processes [frontier, target)
  std::set<std::string> dropped_exports;
  // Back-pressure. `stalled`: set by a worker (between barriers) that holds index updates waiting
  // for room in the segment; taken by Prepare (in the barrier completion), which then starts no
  // new tick. `retry_pending`: written by Prepare, read by workers — whether this iteration tries
  // to publish the waiting updates (retries back off from 10 ms to 1 s while they keep failing).
  std::atomic<bool> stalled{false};
  bool retry_pending = true;
  std::chrono::steady_clock::duration stall_backoff{};
  std::chrono::steady_clock::time_point retry_at{};
  // Set by Prepare when a source had more ticks due than the step budget let it take: only then
  // may the runtime grow the budget (an idle step says nothing about how big a step could be).
  bool budget_limited = false;

  // True once every index export is dropped: the dataflow is done and may be let go of.
  bool AllExportsDropped() const {
    const auto& exports = desc.index_exports();
    return !exports.empty() && std::all_of(exports.begin(), exports.end(), [&](const auto& e) {
      return dropped_exports.count(e.id()) > 0;
    });
  }

  // Advances source uppers from the wall clock / the log file and sets `target`. A generator
  // advances at most `max_ticks` ticks (the runtime's step budget). While a worker is stalled
  // (the segment is full), starts no new tick and sources do not advance: the inputs wait.
  // Called in the tick barrier's completion step. Returns when it would next have something to
  // do (while stalled: when to retry, backing off from 10 ms to 1 s).
  std::chrono::steady_clock::time_point Prepare(std::uint32_t workers, Time max_ticks,
                                                std::chrono::steady_clock::time_point now);
};

// One worker's part of a rendered dataflow.
class DataflowInstance {
 public:
  // `imports`: this worker's part of each imported index, published by an earlier dataflow.
  DataflowInstance(DataflowShared* shared, std::uint32_t me, Exchange* exchange,
                   shm::Publisher* publisher,
                   const std::map<std::string, shm::PublishedRef>& imports);
  ~DataflowInstance();

  // Retries the index updates that found the segment full, then processes [shared->frontier,
  // shared->target) when the target is ahead. Every worker calls it in the same iteration (it may
  // exchange). Returns whether it ticked (false: nothing to do, or still waiting for room).
  bool Step();
  const DataflowShared& shared() const { return *shared_; }
  // The index exports, as published by this worker.
  const std::map<std::string, shm::PublishedRef>& exports() const { return exports_; }
  Status AllowCompaction(const std::string& id, Frontier frontier);
  // True once this worker has applied the drop of every index export.
  bool AllExportsUnpublished() const { return unpublished_.size() == exports_.size(); }

 private:
  DataflowShared* shared_;
  std::uint32_t me_;
  Exchange* exchange_;
  shm::Publisher* publisher_;
  PlanGraph graph_;
  // The index imports (owned by their nodes in graph_): after each tick every one is told it has
  // been read up to the tick's end, so its hold moves with the dataflow's progress even when no
  // node pulls it (an import nothing exported reads) — workers/sources/index_import.h.
  std::vector<ImportedIndex*> imports_;
  std::map<std::string, shm::PublishedRef> exports_;
  std::set<std::string> unpublished_;  // exports this worker has dropped
  std::uint64_t tick_ = 0;

  // Index updates the segment had no room for, by export: published (in order, before any later
  // tick) once there is room. Invariant: non-empty only while shared_->stalled keeps ticks back.
  struct Pending {
    shm::UpdateBuffer updates;
    Frontier upper;
    std::chrono::steady_clock::time_point since;
  };
  std::map<std::string, Pending> pending_;
  // Appends, or keeps the updates in pending_ when the segment is full (any other failure is a
  // broken invariant). `pending` is new from a tick, or moved out of pending_ for a retry.
  void AppendToIndex(const std::string& id, Pending pending);
};

}  // namespace tandem::workers

// Sources (workers/README.md "Sources"): where a Maintained dataflow's data comes from. One
// Source per source import of a rendered dataflow, shared by the runtime's worker threads, and
// one node per worker (MakeNode) that emits that worker's updates in each tick.
//
// Adding a kind of source is adding a file: a Source subclass and a line in MakeSource.
//
// Thread safety: Advance runs in the tick barrier's completion step (one thread, every worker
// waiting) and is the only writer of `upper` and of a subclass's shared state; workers read them
// between barriers, through their nodes.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "base/time.h"
#include "ipc/codec.h"
#include "workers/operators/node.h"

namespace tandem::workers {

// The most ticks a source advances in one lockstep step (the runtime's step budget grows to at
// most this).
inline constexpr Time kMaxStepTicks = 1024;
// Log lines a log source reads per tick of the step budget (a step of kMaxStepTicks reads at
// most 64 Ki lines).
inline constexpr std::size_t kLogLinesPerTick = 64;
// Bytes a log source reads per tick of the step budget (a step reads at most 64 MiB, and at least
// one line of the longest kind).
inline constexpr std::size_t kLogBytesPerTick = std::size_t{64} << 10;

// What one Advance is given, and what it tells back.
struct AdvanceCtx {
  std::chrono::steady_clock::time_point now;
  Time max_ticks = 1;                        // the step budget, in ticks
  Frontier processed = Frontier::Minimum();  // the dataflow has processed every time below this
  Time as_of = 0;
  Frontier until = Frontier::Empty();
  std::uint32_t workers = 1;
  // Lowered to when this source next has something to do (now: at once).
  std::chrono::steady_clock::time_point next;
  // Set when the budget held back work that is due already (only then may the budget grow).
  bool budget_limited = false;
};

class Source {
 public:
  Source(const ipc::pb::SourceImport& import, std::chrono::steady_clock::time_point created)
      : id(import.id()), source(import.source()), schema(import.schema()), created(created) {}
  // An input that is not a source import (an index import: workers/sources/index_import.h).
  Source(std::string id, ipc::pb::Schema schema, std::chrono::steady_clock::time_point created)
      : id(std::move(id)), schema(std::move(schema)), created(created) {}
  virtual ~Source() = default;

  // Moves `upper` forward as far as the source has data, within the step budget.
  virtual void Advance(AdvanceCtx& ctx) = 0;
  // Worker `me`'s part: in each tick, the updates at times [lo, hi) that `me` emits.
  virtual std::unique_ptr<Node> MakeNode(std::uint32_t me, Time as_of, Frontier until) = 0;
  // The controller dropped the dataflow (its last index): called once, in the start barrier's
  // completion, when that drop is applied — not when the process ends. A table moves its log
  // away here (workers/sources/table_source.h).
  virtual void OnDropped() {}

  const std::string id;
  const ipc::pb::Source source;
  const ipc::pb::Schema schema;
  const std::chrono::steady_clock::time_point created;
  Frontier upper = Frontier::Minimum();  // everything below is available to workers
};

class TableWriter;
// `tables`: the runtime's table writer (null without --data-dir: validation refuses tables then).
// `workers`: the runtime's N.
std::unique_ptr<Source> MakeSource(const ipc::pb::SourceImport& import,
                                   std::chrono::steady_clock::time_point created,
                                   TableWriter* tables = nullptr, std::uint32_t workers = 1);

// A source's node: emits updates of the dataflow's [as_of, until) only, times advanced to as_of.
class SourceNode : public Node {
 public:
  SourceNode(Time as_of, Frontier until) : as_of_(as_of), until_(until) {}

 protected:
  void Emit(Delta& d, Row row, Time t, std::int64_t diff) const {
    if (!until_.Greater(t)) return;
    d.rows.push_back({std::move(row), std::max(t, as_of_), diff});
  }
  // Emit's rules for an update at `t`: false when it is at or past `until`, else its time.
  bool Admit(Time t, Time* at) const {
    if (!until_.Greater(t)) return false;
    *at = std::max(t, as_of_);
    return true;
  }
  Time as_of_;
  Frontier until_;
};

}  // namespace tandem::workers

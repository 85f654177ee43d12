// key_value{keys K, updates_per_tick U, tick_interval_us, seed} (workers/README.md "Sources"): at
// time 0 every key 0..K-1 has value Initial(seed, k); at each time t >= 1, for j = 0..U-1 key
// Pick(seed, t, j) gets value Value(seed, t, j) — the retraction of its old value and the
// insertion of the new one, both at t. Worker me emits the keys it owns (OwnerOf(k) == me), so
// the rows are partitioned by the key column: an index by key needs no exchange.
#pragma once

#include <memory>

#include "workers/sources/generator.h"

namespace tandem::workers {

class KeyValueSource final : public GeneratorSource {
 public:
  KeyValueSource(const ipc::pb::SourceImport& import, std::chrono::steady_clock::time_point created)
      : GeneratorSource(import, created, import.source().key_value().tick_interval_us()),
        // Not value-initialized: nothing touches the pages before the first tick writes every key.
        values_(new std::int64_t[import.source().key_value().keys()]) {}
  std::unique_ptr<Node> MakeNode(std::uint32_t me, Time as_of, Frontier until) override;

 protected:
  std::uint64_t RowsPerTick() const override { return 2 * source.key_value().updates_per_tick(); }

 private:
  // The current value of every key, at its key. Shared by the workers' nodes: entry k is read and
  // written only by k's owner, in its ticks (entries of different owners may share a cache line;
  // they are distinct objects).
  std::unique_ptr<std::int64_t[]> values_;
};

// key_value's deterministic choices (pure functions; tests can compute answers with them).
std::int64_t KeyValueInitial(std::uint64_t seed, std::int64_t key);
std::int64_t KeyValuePick(std::uint64_t seed, Time t, std::uint64_t j, std::uint64_t keys);
std::int64_t KeyValueValue(std::uint64_t seed, Time t, std::uint64_t j);

}  // namespace tandem::workers

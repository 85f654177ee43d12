// tandem-bench's dataflows: key_value sources, indexed as they are or reduced.
#pragma once

#include <cstdint>
#include <string>

#include "ipc/codec.h"

namespace tandem::bench {

namespace pb = ipc::pb;

struct KeyValue {
  std::uint64_t keys = 100000;
  std::uint64_t updates_per_tick = 10;
  std::uint64_t tick_interval_us = 1000;
  std::uint64_t seed = 7;
};

// source `src` → index `index` by key.
pb::Command IndexedSource(const std::string& src, const std::string& index, const KeyValue& kv);

// source `src` → (optionally an index by key) and Reduce(count, sum(value)) grouped by
// key % groups, indexed as `reduce_index`.
pb::Command ReducedSource(const std::string& src, const std::string& src_index,
                          const std::string& reduce, const std::string& reduce_index,
                          const KeyValue& kv, std::int64_t groups);

}  // namespace tandem::bench

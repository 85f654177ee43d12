// tandem-bench's dataflows: key_value sources, indexed as they are or reduced.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

// slow-path's one-shot aggregate (DESIGN §8): count and sum(value) per group g = key % groups, over
// an index of a key_value source, read through the query protocol (a ONE_SHOT_READ dataflow).
//  arranged: source `src` → view `view` = (g, key, value) → index `index` on it by g; the
//            one-shot reduces the imported index by its own key (the arrangement it imports is
//            the one the reduce needs).
//  mapped:   source `src` → index `index` by key; the one-shot maps g = key % groups and
//            reduces by it (the reduce arranges its input itself).
struct GroupedTarget {
  bool arranged = true;
  std::string src, view, index;
  std::int64_t groups = 100;
  // The maintained dataflow that builds the index.
  pb::Command Create(const KeyValue& kv) const;
  // The import of the index a one-shot reads.
  pb::IndexImport Import() const;
  // The one-shot at `as_of`: builds `build` (the aggregate) and exports `result` on it by g.
  pb::Command OneShot(std::uint64_t as_of, const std::string& result,
                      const std::string& build) const;
};

// join: a fact stream `fact` (key, value) joined with a dimension `dim` (key, value) on
// fk = fact.key % dim_keys == dim.key, indexed by the fact's key as `join_index`:
//   join = Join(Mfp(Get fact: (key, value, fk)), Get dim, left_key [2], right_key [0])
//        → (key, value, fk, dim key, dim value)
//  sources  (imported = false): one dataflow with both sources; the join arranges both sides.
//  imported (imported = true):  the dimension is its own dataflow's index `dim_index` by key (the
//           join key); the joining dataflow imports it and the join reads it in place.
struct JoinTarget {
  bool imported = false;
  std::string fact, dim, dim_index, join, join_index;
  std::uint64_t dim_keys = 10000;
  // The dataflows, in the order to send them (imported: the dimension's first).
  std::vector<pb::Command> Create(const KeyValue& fact_kv, const KeyValue& dim_kv) const;
  // The indexes whose write frontiers say it is built.
  std::vector<std::string> Built() const;
};

}  // namespace tandem::bench

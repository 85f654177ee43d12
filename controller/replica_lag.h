// How far one replica of a ReplicaSet is behind the others: over every id some ready replica
// reported frontiers for, the largest difference between the freshest write frontier and its own.
// What an operator asks of several replicas before trusting any one of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "controller/replica_set.h"

namespace tandem::controller {

struct ReplicaLag {
  // The largest difference in times; unset when there is nothing to compare.
  std::optional<std::uint64_t> ticks;
  // Some index another replica closed is not closed on this one.
  bool behind_closed = false;
  // The ids it reported no frontiers for.
  std::vector<std::string> missing;
};

// Replica `i`'s lag behind the freshest ready replica of `set`.
ReplicaLag LagOf(const ReplicaSet& set, std::size_t i);

}  // namespace tandem::controller

#include "controller/replica_lag.h"

#include <algorithm>
#include <map>

namespace tandem::controller {

ReplicaLag LagOf(const ReplicaSet& set, std::size_t i) {
  std::map<std::string, std::optional<std::uint64_t>> freshest;  // nullopt: closed
  for (std::size_t j = 0; j < set.size(); ++j) {
    if (set.status(j).state != ReplicaSet::State::kReady) continue;
    for (const auto& [id, f] : set.frontiers(j)) {
      const auto& w = f.write().elements();
      auto it = freshest.find(id);
      if (w.empty()) {
        freshest[id] = std::nullopt;
      } else if (it == freshest.end()) {
        freshest[id] = w[0];
      } else if (it->second && w[0] > *it->second) {
        it->second = w[0];
      }
    }
  }
  ReplicaLag lag;
  const auto& mine = set.frontiers(i);
  for (const auto& [id, best] : freshest) {
    auto it = mine.find(id);
    if (it == mine.end()) {
      lag.missing.push_back(id);
      continue;
    }
    const auto& w = it->second.write().elements();
    std::uint64_t behind = 0;
    if (!best) {
      if (!w.empty()) lag.behind_closed = true;
    } else if (!w.empty()) {
      behind = *best - std::min(*best, w[0]);
    }
    lag.ticks = std::max(lag.ticks.value_or(0), behind);
  }
  return lag;
}

}  // namespace tandem::controller

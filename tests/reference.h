// The naive reference an arrangement is checked against: every update kept, counts summed.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "base/time.h"
#include "shm/batch.h"

namespace tandem::testing {

class ReferenceCollection {
 public:
  void Add(const shm::Update& u) { updates_.push_back(u); }
  void Add(const std::vector<shm::Update>& us) {
    updates_.insert(updates_.end(), us.begin(), us.end());
  }

  // (key, val) → accumulated count at t, zero counts dropped.
  std::map<std::pair<std::string, std::string>, std::int64_t> At(Time t) const {
    std::map<std::pair<std::string, std::string>, std::int64_t> out;
    for (const auto& u : updates_) {
      if (u.time <= t) out[{u.key, u.val}] += u.diff;
    }
    std::erase_if(out, [](const auto& kv) { return kv.second == 0; });
    return out;
  }

 private:
  std::vector<shm::Update> updates_;
};

}  // namespace tandem::testing

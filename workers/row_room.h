// Binding the registry slot of a new index (publisher side) or following it (reader side) right
// after another index was dropped: the row may still hold the dropped index's slot until its
// publisher frees it, once both sides have let go (DESIGN §4). The supervisor keeps the live
// indexes within the row's capacity (--slots-per-row), so the wait is short — milliseconds; a
// row still full after kFullRowWait is a broken invariant, for the caller to check.
#pragma once

#include <chrono>
#include <thread>

#include "base/status.h"

namespace tandem::workers {

inline constexpr std::chrono::milliseconds kFullRowWait{5000};

// Calls attempt() until it is not ResourceExhausted (a full row) or kFullRowWait has passed,
// calling between() before each retry (the publisher frees slots there). Returns the last result.
template <typename Attempt, typename Between>
auto WaitForRoomInRow(Attempt&& attempt, Between&& between) {
  auto result = attempt();
  for (std::chrono::milliseconds waited{0};
       !result.ok() && result.status().code() == StatusCode::kResourceExhausted &&
       waited < kFullRowWait;
       waited += std::chrono::milliseconds(1)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    between();
    result = attempt();
  }
  return result;
}

}  // namespace tandem::workers

#include "shm/spine.h"

namespace tandem::shm {

std::optional<std::size_t> SpineMergeStart(std::span<const std::uint64_t> updates) {
  if (updates.size() < 2) return std::nullopt;
  std::size_t first = updates.size() - 1;
  std::uint64_t folded = updates[first];
  while (first > 0 && updates[first - 1] <= 2 * folded) folded += updates[--first];
  if (updates.size() - first < 2) return std::nullopt;
  return first;
}

bool SpineIsGeometric(std::span<const std::uint64_t> updates) {
  for (std::size_t i = 0; i + 1 < updates.size(); ++i) {
    if (updates[i] <= 2 * updates[i + 1]) return false;
  }
  return true;
}

}  // namespace tandem::shm

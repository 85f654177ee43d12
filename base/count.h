// Multiplicities (DESIGN §2: an update's diff is a signed count).
//
// A single diff is an int64 — on the wire, in update buffers and in batches. Every sum of diffs
// (consolidation, merges, a reader's count of a row at a time, COUNT, a peek's result) is
// computed exactly in 128 bits and never wraps: a batch keeps a consolidated count that does not
// fit int64 as several int64 parts (PushCount below), and a count read or computed that does not
// fit int64 is a data error (kMultiplicityOverflow), like SUM's "integer overflow".
#pragma once

#include <cstdint>
#include <limits>

namespace tandem {

__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

inline constexpr char kMultiplicityOverflow[] = "multiplicity overflow: a count beyond int64";

inline bool FitsInt64(Int128 v) {
  return v >= std::numeric_limits<std::int64_t>::min() &&
         v <= std::numeric_limits<std::int64_t>::max();
}

// Calls push(part) with int64 parts, none zero, that sum to `count` (one part when it fits).
template <typename Push>
void PushCount(Int128 count, Push&& push) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  while (count > kMax) {
    push(kMax);
    count -= kMax;
  }
  while (count < -kMax) {
    push(-kMax);
    count += kMax;
  }
  if (count != 0) push(static_cast<std::int64_t>(count));
}

}  // namespace tandem

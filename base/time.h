// Time and Frontier (DESIGN §2).
//
// Time is a uint64 in [0, kMaxTime]. A Frontier over a total order is either one time t
// ("everything < t is final", or for compaction "times < t may be advanced to t") or empty
// ("closed": nothing will ever change; for compaction: "drop it").
//
// Representation: one uint64, with UINT64_MAX meaning empty. The empty frontier therefore orders
// after every time, which is exactly what the algebra needs: min(own, peer hold) with a released
// hold (empty) is `own`; holds and `since` only rise, so "rise" is an atomic max on the raw value.
// The one cost is that UINT64_MAX is not a valid Time; validation refuses it at the boundary.
#pragma once

#include <chrono>
#include <compare>
#include <cstdint>
#include <limits>
#include <string>

namespace tandem {

using Time = std::uint64_t;
inline constexpr Time kMinTime = 0;
inline constexpr Time kMaxTime = std::numeric_limits<std::uint64_t>::max() - 1;

// The wall clock in milliseconds since the Unix epoch: a table's time, a kept file's suffix.
inline Time WallClockMs() {
  return static_cast<Time>(std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count());
}

class Frontier {
 public:
  static constexpr std::uint64_t kEmptyRaw = std::numeric_limits<std::uint64_t>::max();

  constexpr Frontier() : raw_(kMinTime) {}  // the minimum frontier {0}
  static constexpr Frontier At(Time t) { return Frontier(t); }
  static constexpr Frontier Empty() { return Frontier(kEmptyRaw); }
  static constexpr Frontier Minimum() { return Frontier(kMinTime); }
  static constexpr Frontier FromRaw(std::uint64_t raw) { return Frontier(raw); }

  constexpr bool empty() const { return raw_ == kEmptyRaw; }
  // REQUIRES: !empty().
  constexpr Time time() const { return raw_; }
  constexpr std::uint64_t raw() const { return raw_; }

  // True when `t` is at or beyond this frontier (t >= frontier); never for the empty frontier.
  constexpr bool LessEqual(Time t) const { return !empty() && raw_ <= t; }
  // True when `t` is strictly before this frontier (t < frontier); always for the empty one.
  constexpr bool Greater(Time t) const { return empty() || t < raw_; }

  constexpr auto operator<=>(const Frontier&) const = default;

  std::string ToString() const {
    if (empty()) return "[]";
    std::string s = "[";
    s += std::to_string(raw_);
    s += ']';
    return s;
  }

 private:
  constexpr explicit Frontier(std::uint64_t raw) : raw_(raw) {}
  std::uint64_t raw_;
};

constexpr Frontier Min(Frontier a, Frontier b) { return a < b ? a : b; }
constexpr Frontier Max(Frontier a, Frontier b) { return a < b ? b : a; }

// Readable at t: since <= t < upper (DESIGN §2).
constexpr bool ReadableAt(Frontier since, Frontier upper, Time t) {
  return since.LessEqual(t) && upper.Greater(t);
}

}  // namespace tandem

// The random source of the SQL oracle's generators: SplitMix64, written out here so that a seed
// draws the same workload and the same queries under every compiler and standard library (the
// distributions of <random> are not specified bit for bit). Callers draw in a fixed order: one
// draw per statement, never two draws as operands of one expression (C++ leaves their order
// unspecified).
//
// Thread safety: a plain value; one thread at a time.
#pragma once

#include <cstdint>
#include <vector>

namespace tandem::testing::sql_oracle {

class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed) {}

  std::uint64_t Next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) (up to a bias of n / 2^64). REQUIRES: n > 0.
  std::uint64_t Below(std::uint64_t n) { return Next() % n; }
  // Uniform in [lo, hi]. REQUIRES: lo <= hi.
  std::int64_t Between(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(Below(static_cast<std::uint64_t>(hi - lo) + 1));
  }
  // True with probability percent / 100.
  bool Percent(int percent) { return Below(100) < static_cast<std::uint64_t>(percent); }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[Below(v.size())];
  }

 private:
  std::uint64_t state_;
};

// A seed derived from two numbers (a database's seed and a query's index): the SplitMix64 of
// their mix, so that neighbouring inputs give unrelated streams.
inline std::uint64_t MixSeed(std::uint64_t a, std::uint64_t b) {
  Random r(a * 0x9e3779b97f4a7c15ULL + b);
  return r.Next();
}

}  // namespace tandem::testing::sql_oracle

// Deterministic random datums and rows for property tests.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "base/row.h"

namespace tandem::testing {

class RowGenerator {
 public:
  explicit RowGenerator(std::uint64_t seed) : rng_(seed) {}

  // Datums biased towards edge cases and collisions, so that equal and adjacent values occur.
  Datum NextDatum() {
    switch (Pick(5)) {
      case 0:
        return Null{};
      case 1:
        return Pick(2) == 1;
      case 2: {
        static constexpr std::int64_t kEdges[] = {std::numeric_limits<std::int64_t>::min(), -1, 0,
                                                  1, std::numeric_limits<std::int64_t>::max()};
        if (Pick(4) == 0) return kEdges[Pick(5)];
        return static_cast<std::int64_t>(Pick(41)) - 20;
      }
      case 3: {
        static constexpr double kEdges[] = {-std::numeric_limits<double>::infinity(),
                                            -0.0,
                                            0.0,
                                            std::numeric_limits<double>::infinity(),
                                            std::numeric_limits<double>::quiet_NaN(),
                                            std::numeric_limits<double>::denorm_min(),
                                            -std::numeric_limits<double>::max()};
        if (Pick(3) == 0) return kEdges[Pick(7)];
        return (static_cast<double>(Pick(2001)) - 1000.0) / 8.0;
      }
      default: {
        std::string s;
        const int len = static_cast<int>(Pick(5));
        for (int i = 0; i < len; ++i) {
          static constexpr char kChars[] = {'\0', '\x01', 'a', 'b', '\xff', 'z'};
          s.push_back(kChars[Pick(6)]);
        }
        return s;
      }
    }
  }

  Row NextRow(int max_len = 4) {
    Row row;
    const int len = static_cast<int>(Pick(static_cast<std::uint64_t>(max_len) + 1));
    for (int i = 0; i < len; ++i) row.push_back(NextDatum());
    return row;
  }

  std::uint64_t Pick(std::uint64_t n) {
    return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng_);
  }
  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
};

}  // namespace tandem::testing

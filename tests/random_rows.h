// Deterministic random datums and rows for property tests.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <variant>

#include "base/count.h"
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
      default:
        return NextString();
    }
  }

  // A datum of any kind (every alternative of Datum), biased towards edges and near-collisions:
  // numerics of mixed scales and signs (1.5 and 1.50, values near 10^38 and 10^-38), negative
  // intervals and intervals of equal span (1 mon and 30 days), BC dates, times of 24:00:00.
  Datum NextDatumOfAnyKind() {
    const auto kind = Pick(std::variant_size_v<Datum>);
    if (kind < 5) return NextDatum();
    switch (kind) {
      case 5:
        return NextNumeric();
      case 6: {
        auto s = std::get<std::string>(NextString());
        return Bytes{std::move(s)};
      }
      case 7: {
        // 4713-11-24 BC (PostgreSQL's first date), 0001-01-01 BC, 1970-01-01, 2026-12-06, ...
        static constexpr std::int32_t kEdges[] = {-2440588, -719893, -719528, -1,
                                                  0,        1,       20793,   2147483647 - 2440588};
        if (Pick(3) == 0) return Date{kEdges[Pick(8)]};
        return Date{static_cast<std::int32_t>(Pick(2001)) - 1000};
      }
      case 8:
        if (Pick(3) == 0) return Time{Pick(2) == 0 ? 0 : kMicrosPerDay};
        return Time{static_cast<std::int64_t>(Pick(static_cast<std::uint64_t>(kMicrosPerDay)))};
      case 9:
        return Timestamp{NextMicros()};
      case 10:
        return TimestampTz{NextMicros()};
      case 11: {
        static constexpr std::int32_t kSmall[] = {-13, -1, 0, 1, 12, 30};
        Interval i;
        i.months = Pick(4) == 0 ? (Pick(2) == 0 ? -2147483647 - 1 : 2147483647) : kSmall[Pick(6)];
        i.days = Pick(8) == 0 ? (Pick(2) == 0 ? -2147483647 - 1 : 2147483647) : kSmall[Pick(6)];
        i.micros = Pick(3) == 0 ? static_cast<std::int64_t>(kSmall[Pick(6)]) * kMicrosPerDay
                                : NextMicros();
        return i;
      }
      default: {
        Uuid u;
        static constexpr std::uint8_t kBytes[] = {0x00, 0x01, 0x7f, 0x80, 0xff};
        const auto fill = kBytes[Pick(5)];
        for (auto& b : u.bytes) b = Pick(4) == 0 ? kBytes[Pick(5)] : fill;
        return u;
      }
    }
  }

  Row NextRowOfAnyKind(int max_len = 4) {
    Row row;
    const int len = static_cast<int>(Pick(static_cast<std::uint64_t>(max_len) + 1));
    for (int i = 0; i < len; ++i) row.push_back(NextDatumOfAnyKind());
    return row;
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
  Datum NextString() {
    std::string s;
    const int len = static_cast<int>(Pick(5));
    for (int i = 0; i < len; ++i) {
      static constexpr char kChars[] = {'\0', '\x01', 'a', 'b', '\xff', 'z'};
      s.push_back(kChars[Pick(6)]);
    }
    return s;
  }

  std::int64_t NextMicros() {
    static constexpr std::int64_t kEdges[] = {std::numeric_limits<std::int64_t>::min(), -1, 0, 1,
                                              std::numeric_limits<std::int64_t>::max()};
    if (Pick(4) == 0) return kEdges[Pick(5)];
    return (static_cast<std::int64_t>(Pick(41)) - 20) * (Pick(2) == 0 ? 1 : 500'000'000);
  }

  // coefficient × 10^-scale with |coefficient| < 10^38, scale in [0, 38].
  Numeric NextNumeric() {
    Int128 ten38 = 1;
    for (int i = 0; i < kNumericMaxDigits; ++i) ten38 *= 10;
    Int128 c = 0;
    switch (Pick(4)) {
      case 0:
        c = ten38 - 1 - static_cast<Int128>(Pick(3));  // 99…99 and its neighbours
        break;
      case 1:
        c = ten38 / 10;  // 10^37
        break;
      default:
        c = static_cast<Int128>(Pick(41)) - 20;
        break;
    }
    if (Pick(2) == 0) c = -c;
    int scale = static_cast<int>(Pick(5));
    if (Pick(4) == 0) scale = static_cast<int>(Pick(kNumericMaxDigits + 1));
    // Trailing zeros added to a small coefficient give 1.5 and 1.50 (the same value, two scales).
    const int zeros = static_cast<int>(Pick(3));
    for (int z = 0; z < zeros && scale < kNumericMaxDigits && c > -ten38 / 10 && c < ten38 / 10;
         ++z) {
      c *= 10;
      ++scale;
    }
    return Numeric::FromParts(c, scale);
  }

  std::mt19937_64 rng_;
};

}  // namespace tandem::testing

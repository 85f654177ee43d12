// Values of every type of DESIGN §16 for the binary format's suites (unit/binary_values_test.cc,
// integration/binary_values_oracle_test.cc): the datum a replica answers for a column of each
// PostgreSQL type, random over the type's whole range and biased to its edges — range ends, BC
// dates, 24:00:00, 1.5 and 1.50, 38-digit numerics and tiny ones, floats' NaN, infinities, -0 and
// denormals, multi-byte text with quotes and backslashes, intervals with mixed signs.
//
// Thread safety: a sampler is one thread's.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "base/count.h"
#include "base/datum_text.h"
#include "base/row.h"
#include "frontend/pgwire/pg_type.h"

namespace tandem::testing {

// `bytes` as lower-case hex digits, two per byte.
inline std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

// A PostgreSQL type the binary format covers: its OID, its name and send function in SQL, and
// the column kind whose text ParsePostgresText reads.
struct BinaryType {
  std::uint32_t oid;
  const char* name;  // "int4", "timestamptz"
  const char* send;  // "int4send", "timestamptz_send"
  ColumnType::Kind kind;
};

inline const std::vector<BinaryType>& BinaryTypes() {
  using K = ColumnType::Kind;
  static const std::vector<BinaryType> types = {
      {pgwire::kBool.oid, "bool", "boolsend", K::kBool},
      {pgwire::kInt2.oid, "int2", "int2send", K::kInt16},
      {pgwire::kInt4.oid, "int4", "int4send", K::kInt32},
      {pgwire::kInt8.oid, "int8", "int8send", K::kInt64},
      {pgwire::kFloat4.oid, "float4", "float4send", K::kFloat32},
      {pgwire::kFloat8.oid, "float8", "float8send", K::kFloat64},
      {pgwire::kNumeric.oid, "numeric", "numeric_send", K::kNumeric},
      {pgwire::kText.oid, "text", "textsend", K::kString},
      {pgwire::kVarchar.oid, "varchar", "varcharsend", K::kString},
      {pgwire::kBpchar.oid, "bpchar", "bpcharsend", K::kString},
      {pgwire::kName.oid, "name", "namesend", K::kString},
      {pgwire::kBytea.oid, "bytea", "byteasend", K::kBytea},
      {pgwire::kDate.oid, "date", "date_send", K::kDate},
      {pgwire::kTime.oid, "time", "time_send", K::kTime},
      {pgwire::kTimestamp.oid, "timestamp", "timestamp_send", K::kTimestamp},
      {pgwire::kTimestamptz.oid, "timestamptz", "timestamptz_send", K::kTimestampTz},
      {pgwire::kInterval.oid, "interval", "interval_send", K::kInterval},
      {pgwire::kUuid.oid, "uuid", "uuid_send", K::kUuid},
  };
  return types;
}

class BinarySampler {
 public:
  explicit BinarySampler(std::uint64_t seed) : rng_(seed) {}

  // A value of type `oid` (one of BinaryTypes()), as the datum kind its column holds: int64 for
  // int2/int4/int8, a double (a float value for float4) for the floats, a string for the text
  // types (at most 48 bytes, so a name too), … .
  Datum Next(std::uint32_t oid) {
    switch (oid) {
      case pgwire::kBool.oid:
        return Pick(2) == 1;
      case pgwire::kInt2.oid:
        return Integer(std::numeric_limits<std::int16_t>::min(),
                       std::numeric_limits<std::int16_t>::max());
      case pgwire::kInt4.oid:
        return Integer(std::numeric_limits<std::int32_t>::min(),
                       std::numeric_limits<std::int32_t>::max());
      case pgwire::kInt8.oid:
        return Integer(std::numeric_limits<std::int64_t>::min(),
                       std::numeric_limits<std::int64_t>::max());
      case pgwire::kFloat4.oid:
        return static_cast<double>(Float4());
      case pgwire::kFloat8.oid:
        return Float8();
      case pgwire::kNumeric.oid:
        return NextNumeric();
      case pgwire::kBytea.oid: {
        Bytes b;
        const auto n = Pick(17);
        for (std::uint64_t i = 0; i < n; ++i) b.bytes.push_back(static_cast<char>(Pick(256)));
        return b;
      }
      case pgwire::kDate.oid: {
        // PostgreSQL's first and last dates, 2000-01-01, 0001-01-01, 0001-12-31 BC, 1970-01-01.
        static constexpr std::int32_t kEdges[] = {
            kFirstDateDays, kLastDateDays, 10957, -719162, -719163, 0, -1};
        if (Pick(4) == 0) return Date{kEdges[Pick(std::size(kEdges))]};
        if (Pick(2) == 0) return Date{static_cast<std::int32_t>(Between(-800'000, 800'000))};
        return Date{static_cast<std::int32_t>(Between(kFirstDateDays, kLastDateDays))};
      }
      case pgwire::kTime.oid: {
        static constexpr std::int64_t kEdges[] = {0, 1, kMicrosPerDay - 1, kMicrosPerDay};
        if (Pick(4) == 0) return TimeOfDay{kEdges[Pick(std::size(kEdges))]};
        std::int64_t t = Between(0, kMicrosPerDay);
        if (Pick(2) == 0) t -= t % kMicrosPerSecond;
        return TimeOfDay{t};
      }
      case pgwire::kTimestamp.oid:
        return Timestamp{Micros()};
      case pgwire::kTimestamptz.oid:
        return TimestampTz{Micros()};
      case pgwire::kInterval.oid: {
        Interval i;
        i.months = static_cast<std::int32_t>(Pick(3) == 0 ? Between(-30, 30)
                                                          : Integer(INT32_MIN, INT32_MAX));
        i.days = static_cast<std::int32_t>(Pick(3) == 0 ? Between(-40, 40)
                                                        : Integer(INT32_MIN, INT32_MAX));
        switch (Pick(3)) {
          case 0:
            i.micros = Between(-3 * kMicrosPerDay, 3 * kMicrosPerDay);
            break;
          case 1:
            i.micros = Between(-100'000, 100'000) * kMicrosPerSecond;
            break;
          default:
            i.micros = Integer(INT64_MIN, INT64_MAX);
        }
        if (Pick(8) == 0) i = Interval{};
        return i;
      }
      case pgwire::kUuid.oid: {
        Uuid u;
        const bool same = Pick(4) == 0;
        const auto fill = static_cast<std::uint8_t>(Pick(2) == 0 ? 0x00 : 0xff);
        for (auto& b : u.bytes) b = same ? fill : static_cast<std::uint8_t>(Pick(256));
        return u;
      }
      default:  // the text types
        return Text(oid == pgwire::kBpchar.oid);
    }
  }

  std::uint64_t Pick(std::uint64_t n) {
    return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng_);
  }
  std::int64_t Between(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng_);
  }
  std::mt19937_64& rng() { return rng_; }

 private:
  // Uniform over [lo, hi], or one of its ends, -1, 0, 1, or a small number.
  std::int64_t Integer(std::int64_t lo, std::int64_t hi) {
    switch (Pick(6)) {
      case 0: {
        const std::int64_t edges[] = {lo, hi, -1, 0, 1, lo + 1, hi - 1};
        return edges[Pick(std::size(edges))];
      }
      case 1:
        return Between(-1000, 1000);
      default:
        return Between(lo, hi);
    }
  }

  float Float4() {
    static constexpr float kEdges[] = {0.0f,
                                       -0.0f,
                                       1.5f,
                                       0.1f,
                                       -3.25f,
                                       1e6f,
                                       std::numeric_limits<float>::infinity(),
                                       -std::numeric_limits<float>::infinity(),
                                       std::numeric_limits<float>::quiet_NaN(),
                                       std::numeric_limits<float>::denorm_min(),
                                       std::numeric_limits<float>::max(),
                                       -std::numeric_limits<float>::min()};
    switch (Pick(4)) {
      case 0:
        return kEdges[Pick(std::size(kEdges))];
      case 1:
        return static_cast<float>(Between(-100'000, 100'000)) / 64.0f;
      default:
        return std::bit_cast<float>(static_cast<std::uint32_t>(Pick(std::uint64_t{1} << 32)));
    }
  }

  double Float8() {
    static constexpr double kEdges[] = {0.0,
                                        -0.0,
                                        1.5,
                                        0.1,
                                        1e15,
                                        1e-5,
                                        123456789012345678.0,
                                        std::numeric_limits<double>::infinity(),
                                        -std::numeric_limits<double>::infinity(),
                                        std::numeric_limits<double>::quiet_NaN(),
                                        std::numeric_limits<double>::denorm_min(),
                                        std::numeric_limits<double>::max(),
                                        -std::numeric_limits<double>::min()};
    switch (Pick(4)) {
      case 0:
        return kEdges[Pick(std::size(kEdges))];
      case 1:
        return static_cast<double>(Between(-1'000'000, 1'000'000)) / 1024.0;
      default:
        return std::bit_cast<double>(static_cast<std::uint64_t>(rng_()));
    }
  }

  // coefficient × 10^-scale: up to 38 random digits (a 1 and zeros, all nines), scale 0 to 38;
  // zero at any scale.
  Numeric NextNumeric() {
    const int scale = static_cast<int>(Pick(3) == 0 ? Pick(39) : Pick(6));
    if (Pick(10) == 0) return Numeric::FromParts(0, scale);
    const int digits = static_cast<int>(Pick(2) == 0 ? 1 + Pick(38) : 1 + Pick(6));
    Int128 c = 0;
    const auto shape = Pick(5);
    for (int i = 0; i < digits; ++i) {
      const int d = shape == 0 ? 9 : shape == 1 ? (i == 0 ? 1 : 0) : static_cast<int>(Pick(10));
      c = c * 10 + d;
    }
    if (c == 0) c = 1;
    if (Pick(2) == 0) c = -c;
    return Numeric::FromParts(c, scale);
  }

  // Valid UTF-8 without NUL: ASCII (quotes and backslashes among it), 2-, 3- and 4-byte
  // characters; a char(n)'s value sometimes padded with blanks.
  std::string Text(bool padded) {
    std::string s;
    const auto n = Pick(13);
    for (std::uint64_t i = 0; i < n; ++i) {
      switch (Pick(8)) {
        case 0:
          s += "é";  // 2 bytes
          break;
        case 1:
          s += "€";  // 3 bytes
          break;
        case 2:
          s += "😀";  // 4 bytes
          break;
        case 3: {
          static constexpr char kSpecial[] = {'\'', '\\', '"', ' ', '\n', '\t', ',', '\x01'};
          s.push_back(kSpecial[Pick(std::size(kSpecial))]);
          break;
        }
        default:
          s.push_back(static_cast<char>(0x20 + Pick(0x5f)));
      }
    }
    if (padded && Pick(2) == 0) s.append(Pick(4), ' ');
    return s;
  }

  // A timestamp's microseconds since 1970: uniform over Tandem's range, whole seconds near now,
  // or an edge (the first timestamp, the last, 1970, 2000).
  std::int64_t Micros() {
    static constexpr std::int64_t kEdges[] = {kFirstTimestampMicros,
                                              std::numeric_limits<std::int64_t>::max(),
                                              0,
                                              -1,
                                              946'684'800'000'000,
                                              kFirstTimestampMicros + 1};
    switch (Pick(4)) {
      case 0:
        return kEdges[Pick(std::size(kEdges))];
      case 1:
        return Between(-5'000'000'000, 5'000'000'000) * kMicrosPerSecond;
      default:
        return Between(kFirstTimestampMicros, std::numeric_limits<std::int64_t>::max());
    }
  }

  std::mt19937_64 rng_;
};

}  // namespace tandem::testing

// Rows and their order-preserving byte encoding (DESIGN §2, §4 "Batches", §16).
//
// A Row is an ordered list of datums. Datums order first by kind, in the order of the variant —
// null < bool < int64 < float64 < string < numeric < bytea < date < time < timestamp <
// timestamptz < interval < uuid — then by value: false < true; integers numerically; floats
// numerically with -0.0 == 0.0 and every NaN equal to every other and greater than +inf; strings
// and bytea bytewise; numerics by CompareNumeric (value, then scale: 1.5 < 1.50 < 1.6); dates,
// times and timestamps by their count; intervals by CompareInterval (span, then months, then
// days); uuids bytewise. Rows order lexicographically by datum (a proper prefix sorts first).
// int2/int4 values are int64 datums and float4 values float64 datums: the column type says the
// width.
//
// EncodeRow produces bytes such that memcmp-order of encodings (shorter-is-less on a common
// prefix) equals the datum order of rows, and equal rows encode identically. Each datum's
// encoding is self-delimiting, which is what makes concatenation order-preserving. "Biased" is
// the two's complement value with its sign bit flipped, big-endian.
//   null        01
//   false       02          true 03
//   int64       04 + 8 bytes biased
//   float64     05 + 8 bytes big-endian of the IEEE bits, sign-flipped (positive) or all-flipped
//               (negative), after mapping -0.0 to 0.0 and every NaN to one quiet NaN
//   string      06 + bytes with 00 escaped as 00 FF, then the terminator 00 01
//   numeric     07 + the value + 1 byte scale. The value, trailing zeros stripped, is
//               0.D1 D2 … Dn × 100^E with base-100 digits, D1 and Dn not 0:
//                 zero      02
//                 positive  03, E + 64, each Di as Di + 1 (01..64 hex), terminator 00
//                 negative  01, then the positive form's bytes after 01, each complemented
//                           (255 - b; the terminator becomes FF)
//               (|value| < 10^38 and scale <= 38 keep E in [-18, 19] and n <= 20.)
//   bytea       08 + bytes escaped as a string's
//   date        09 + 4 bytes biased (days)
//   time        0A + 8 bytes biased (microseconds, in [0, 24h])
//   timestamp   0B + 8 bytes biased       timestamptz 0C + 8 bytes biased
//   interval    0D + 16 bytes biased of the span (IntervalSpan, 128-bit) + 4 bytes biased months
//               + 4 bytes biased days (the microseconds are what the span leaves)
//   uuid        0E + the 16 bytes
// DecodeRow accepts exactly the encodings EncodeRow produces (anything else is Corruption), so
// decoding and re-encoding gives the same bytes.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/datetime.h"
#include "base/numeric.h"
#include "base/status.h"

namespace tandem {

struct Null {
  friend bool operator==(Null, Null) { return true; }
};

// bytea: a byte string, kept apart from text (which is UTF-8).
struct Bytes {
  std::string bytes;
  friend auto operator<=>(const Bytes&, const Bytes&) = default;
};

struct Uuid {
  std::array<std::uint8_t, 16> bytes{};
  friend auto operator<=>(const Uuid&, const Uuid&) = default;
};

// The kinds keep their indices: new kinds are only ever appended (CompareDatum orders kinds by
// index, and the encoding's tags follow the same order).
using Datum = std::variant<Null, bool, std::int64_t, double, std::string, Numeric, Bytes, Date,
                           Time, Timestamp, TimestampTz, Interval, Uuid>;
using Row = std::vector<Datum>;

// Three-way comparison of datums and rows in the order described above (the reference order;
// it does not use the encoding).
int CompareDatum(const Datum& a, const Datum& b);
int CompareRow(const Row& a, const Row& b);

void AppendEncodedDatum(const Datum& d, std::string* out);
// The encoding of the int64 datum `v` (what AppendEncodedDatum appends for it), without a Datum or
// a string: for routing a generator's keys.
std::array<char, 9> EncodedInt64(std::int64_t v);
std::string EncodeRow(const Row& row);
void AppendEncodedRow(const Row& row, std::string* out);
Result<Row> DecodeRow(std::string_view bytes);

// memcmp order with shorter-is-less on a common prefix: the order of encoded rows.
inline int CompareEncoded(std::string_view a, std::string_view b) { return a.compare(b); }

}  // namespace tandem

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
//                 negative  01, then the bytes the positive form has after its 03, each
//                           complemented (255 - b; the terminator becomes FF)
//               (|value| < 10^38 and scale <= 38 keep E in [-18, 19] and n <= 20.)
//   bytea       08 + bytes escaped as a string's
//   date        09 + 4 bytes biased (days, in [kFirstDateDays, kLastDateDays])
//   time        0A + 8 bytes biased (microseconds, in [0, 24h])
//   timestamp   0B + 8 bytes biased       timestamptz 0C + 8 bytes biased (from
//               kFirstTimestampMicros)
//   interval    0D + 16 bytes biased of the span (IntervalSpan, 128-bit) + 4 bytes biased months
//               + 4 bytes biased days (the microseconds are what the span leaves)
//   uuid        0E + the 16 bytes
// DecodeRow refuses with Corruption whatever is no datum's encoding: an unknown tag, a datum cut
// short, a bad escape, a date, time or timestamp outside its range, an interval whose microseconds
// would not fit, and a numeric not in the one form EncodeRow gives its value and scale (leading or
// trailing zero digits, digits beyond its scale, a coefficient of more than 38 digits).
//
// Keys compare by value, as PostgreSQL's equality does: 1.5 = 1.50 = 1.500, and '1 mon' =
// '30 days' = '720:00:00' (an interval's span, months of 30 days and days of 24 hours). Every key —
// a join's, a group's (Reduce, TopK, Threshold: DISTINCT and the set operations take the whole row
// as the key), an index's, an upsert's, and the columns an exchange routes by — is encoded by
// AppendKeyDatum, which differs from AppendEncodedDatum for these two kinds only:
//   numeric     0F + the value as above (sign class, exponent, digits), no scale
//   interval    10 + 16 bytes biased of the span
// so that equal values encode identically and memcmp order is value order. (Within one key column
// every datum but null has one kind, so the two tags' place after uuid orders nothing.) A key does
// not hold the spelling: DecodeKey gives each numeric the smallest scale that holds its value and
// each interval the whole months, then whole days, its span holds (as far as the fields go), and
// refuses a row's 07 and 0D tags, as DecodeRow refuses a key's 0F and 10. Operators that print
// one spelling for a group of equal values print the smallest present (workers/README.md).
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

// The range of dates and timestamps a datum may hold: PostgreSQL 15's (base/datetime.h; psql:
// SELECT '4714-11-24 BC'::date - '1970-01-01'::date → -2440588, '5874897-12-31'::date -
// '1970-01-01'::date → 2145042905; the first timestamp is 4714-11-24 00:00:00 BC, a timestamp
// ends where int64 does). Nothing outside is decoded or accepted from the protocol.
inline constexpr std::int32_t kFirstDateDays = -2440588;
inline constexpr std::int32_t kLastDateDays = 2145042905;
inline constexpr std::int64_t kFirstTimestampMicros = std::int64_t{kFirstDateDays} * kMicrosPerDay;

// The kinds keep their indices: new kinds are only ever appended (CompareDatum orders kinds by
// index, and the encoding's tags follow the same order).
using Datum = std::variant<Null, bool, std::int64_t, double, std::string, Numeric, Bytes, Date,
                           TimeOfDay, Timestamp, TimestampTz, Interval, Uuid>;
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

// Keys (above): AppendKeyDatum of each datum of `key`, of `row`'s `columns`, or of every datum.
void AppendKeyDatum(const Datum& d, std::string* out);
void AppendKeyColumns(const Row& row, const std::vector<std::uint32_t>& columns, std::string* out);
void AppendKey(const Row& row, std::string* out);
std::string EncodeKey(const Row& key);
Result<Row> DecodeKey(std::string_view bytes);

// memcmp order with shorter-is-less on a common prefix: the order of encoded rows.
inline int CompareEncoded(std::string_view a, std::string_view b) { return a.compare(b); }

}  // namespace tandem

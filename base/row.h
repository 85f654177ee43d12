// Rows and their order-preserving byte encoding (DESIGN §2, §4 "Batches").
//
// A Row is an ordered list of datums: null, bool, int64, float64, string (UTF-8).
// Datums order first by type — null < bool < int64 < float64 < string — then by value:
// false < true; integers numerically; floats numerically with -0.0 == 0.0 and every NaN equal
// to every other and greater than +inf; strings bytewise. Rows order lexicographically by datum
// (a proper prefix sorts first).
//
// EncodeRow produces bytes such that memcmp-order of encodings (shorter-is-less on a common
// prefix) equals the datum order of rows, and equal rows encode identically. Each datum's
// encoding is self-delimiting, which is what makes concatenation order-preserving:
//   null    01
//   false   02          true 03
//   int64   04 + 8 bytes big-endian of (v XOR 1<<63)
//   float64 05 + 8 bytes big-endian of the IEEE bits, sign-flipped (positive) or all-flipped
//           (negative), after mapping -0.0 to 0.0 and every NaN to one quiet NaN
//   string  06 + bytes with 00 escaped as 00 FF, then the terminator 00 01
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/status.h"

namespace tandem {

struct Null {
  friend bool operator==(Null, Null) { return true; }
};

using Datum = std::variant<Null, bool, std::int64_t, double, std::string>;
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

// The reference evaluator's own order of datums and rows: written from the order DESIGN §2 and
// base/row.h document, not with the runtime's comparison (base/row.cc), so that a bug in the
// runtime's order shows as a difference in the differential suites instead of hiding in both.
//
//   type first: null < bool < int64 < float64 < string < numeric < bytea < date < time <
//   timestamp < timestamptz < interval < uuid;
//   then by value: false < true; integers numerically; floats numerically, -0.0 equal to 0.0,
//   every NaN equal to every other NaN and above +inf; strings and bytea bytewise (unsigned
//   bytes); numerics by value, then scale (1.5 < 1.50); dates, times and timestamps by their
//   count; intervals by span (30-day months, 24-hour days), then months, then days; uuids
//   bytewise;
//   rows lexicographically by datum, a proper prefix first.
#pragma once

#include "base/row.h"

namespace tandem::reference {

// Three-way: negative, zero or positive.
int OrderDatums(const Datum& a, const Datum& b);
int OrderRows(const Row& a, const Row& b);

struct RowLess {
  bool operator()(const Row& a, const Row& b) const { return OrderRows(a, b) < 0; }
};

}  // namespace tandem::reference

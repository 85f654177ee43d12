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
//
// Keys (join keys, group keys, distinct rows, top-k groups, upsert keys, a peek's keys) compare
// by value instead, as PostgreSQL's = does:
//
//   numerics by value alone (1.5 = 1.50 = 1.500); intervals by span alone ('1 mon' = '30 days' =
//   '720:00:00'); every other datum as above (null equals null here: a join drops null keys
//   itself);
//   keys lexicographically by datum, a proper prefix first.
//
// The key order is the datum order with scale, months and days left out, so the datum order
// refines it: keys equal by value (the spellings of one key) are ordered among themselves by
// OrderRows, and OrderRows(a, b) < 0 implies OrderKeys(a, b) <= 0.
#pragma once

#include "base/row.h"

namespace tandem::reference {

// Three-way: negative, zero or positive.
int OrderDatums(const Datum& a, const Datum& b);
int OrderRows(const Row& a, const Row& b);

struct RowLess {
  bool operator()(const Row& a, const Row& b) const { return OrderRows(a, b) < 0; }
};

// Three-way, by value: the key order.
int OrderKeyDatums(const Datum& a, const Datum& b);
int OrderKeys(const Row& a, const Row& b);

struct KeyLess {
  bool operator()(const Row& a, const Row& b) const { return OrderKeys(a, b) < 0; }
};

}  // namespace tandem::reference

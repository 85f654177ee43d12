// The spellings of one key: keys compare by value (base/row.h "Keys"), so one group of a Reduce or
// a Threshold may hold rows whose key is spelled apart (1.5 and 1.50; '1 mon' and '30 days'). The
// operator prints one spelling for the group: the smallest, in datum order, of those whose count
// is positive (the reference evaluator's rule too, so the printed row does not depend on which
// worker or which tick met a spelling first).
//
// Only keys with a numeric or an interval datum can be spelled apart; a group of any other key
// keeps no spellings (Spelled is false for each of its rows).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "base/count.h"
#include "base/row.h"

namespace tandem::workers {

class Spellings {
 public:
  // Whether `d` is a numeric or an interval: a kind whose values have several spellings.
  static bool Spelled(const Datum& d) {
    return std::holds_alternative<Numeric>(d) || std::holds_alternative<Interval>(d);
  }
  // Whether `row` (its `columns`) holds one.
  static bool Spelled(const Row& row) {
    for (const Datum& d : row) {
      if (Spelled(d)) return true;
    }
    return false;
  }
  static bool Spelled(const Row& row, const std::vector<std::uint32_t>& columns) {
    for (std::uint32_t c : columns) {
      if (Spelled(row[c])) return true;
    }
    return false;
  }

  // Counts `diff` more of the key spelled `spelling`.
  void Add(const Row& spelling, Int128 diff) {
    if (diff == 0) return;
    auto [it, fresh] = counts_.try_emplace(spelling, 0);
    it->second += diff;
    if (it->second == 0) counts_.erase(it);
  }

  // The spelling to print: the smallest whose count is positive; null when none is.
  const Row* Printed() const {
    for (const auto& [spelling, count] : counts_) {
      if (count > 0) return &spelling;
    }
    return nullptr;
  }

  // No spelling has a non-zero count: the key's state may go.
  bool empty() const { return counts_.empty(); }

 private:
  struct Less {
    bool operator()(const Row& a, const Row& b) const { return CompareRow(a, b) < 0; }
  };
  std::map<Row, Int128, Less> counts_;  // no count is 0
};

}  // namespace tandem::workers

// Partitioning: where a collection's rows are among a lockstep runtime's N workers (see below).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "base/row.h"
#include "shm/routing.h"

namespace tandem::workers {

// Where a node's rows are among the N workers: every row worker `me` emits has
// shm::WorkerOf(the key encoding of the row's `columns`, or of the whole row (base/row.h "Keys"),
// N) == me, so that equal values are on one worker — the rule by
// which exchanges route and the registry pairs workers (shm/routing.h). A property of the plan,
// the same on every worker, so every worker skips (or does) an exchange alike: an exchange by
// what its input is already partitioned by moves nothing, and is skipped ("route once").
// Errors are never partitioned: they are exchanged whatever the rows' partitioning.
struct Partitioning {
  enum class Kind { kUnknown, kColumns, kWholeRow };
  Kind kind = Kind::kUnknown;
  std::vector<std::uint32_t> columns;  // kColumns

  static Partitioning Unknown() { return {}; }
  static Partitioning By(std::vector<std::uint32_t> columns) {
    return {Kind::kColumns, std::move(columns)};
  }
  static Partitioning WholeRow() { return {Kind::kWholeRow, {}}; }
  // Whether an exchange by `key_columns` (or the whole row) would leave every row where it is.
  bool Satisfies(const std::vector<std::uint32_t>& key_columns, bool whole_row) const {
    return whole_row ? kind == Kind::kWholeRow : kind == Kind::kColumns && columns == key_columns;
  }
  bool operator==(const Partitioning&) const = default;
};

// The worker that owns the rows whose (one) partitioning column holds `d`: how a source emits
// rows partitioned by that column.
inline std::uint32_t OwnerOf(std::int64_t v, std::uint32_t workers) {
  const std::array<char, 9> key = EncodedInt64(v);
  return shm::WorkerOf(std::string_view(key.data(), key.size()), workers);
}

}  // namespace tandem::workers

// tandem::LocalReader — reading a replica's indexes in place from another process on the same host
// (DESIGN §11).
//
// A LocalReader maps the replica's data segment read-only and reads the shared arrangements where
// the maintenance runtime publishes them: point lookups by key and prefix or range scans, at the
// latest readable time or at a time t with since <= t < upper, with the answers a peek gives —
// the rows with their counts, or the index's error at that time (StatusCode::kDataError, with the
// message a peek would answer). Nothing is copied until the caller asks for an owned row
// (RowView::ToRow): a RowView points into the segment and is valid only inside the callback that
// receives it.
//
// What it costs the replica: nothing it waits for. Each read announces, in the replica's reader
// table (shm/reader_table.h), the batch-list version it reads, so the publisher frees no batch
// under it; the announcement ends with the read — a reader holds no compaction across calls, so
// a time it read may be compacted before its next call (then "compacted", or read at latest).
// A reader that dies is noticed by its lock and its announcement cleared by the supervisor; its
// death never affects the replica. The replica's death or restart makes the next call fail with
// kUnavailable ("replica gone" / "restarted"); Reattach() then attaches to the new incarnation.
//
// Permissions: the replica's user may attach; so may a group given with the supervisor's
// --reader-group (the segment is then 0640 and the reader table 0660). Anyone else is refused at
// Attach with a message saying so.
//
// Thread safety: one LocalReader per thread (it owns a reader-table entry per worker row, which
// announce one read at a time); a read from inside one of its own callbacks is refused
// (FailedPrecondition): use a second reader. Readers are cheap: a process may have many. In a
// forked child, a reader its parent attached refuses every call (it would share the parent's entry
// and lock): attach anew in the child.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/global_id.h"
#include "base/row.h"
#include "base/status.h"
#include "base/time.h"

namespace tandem {

namespace shm {
class Segment;
class Snapshot;
class ReaderTable;
class ReaderTableEntry;
}  // namespace shm

// One row of an answer as it lies in the segment.
class RowView {
 public:
  RowView(std::string_view key_bytes, std::string_view row_bytes, std::int64_t count)
      : key_(key_bytes), row_(row_bytes), count_(count) {}
  // The index key's encoding (base/row.h "Keys": numerics and intervals by value) and the row's.
  std::string_view key_bytes() const { return key_; }
  std::string_view row_bytes() const { return row_; }
  // The row's multiplicity at the time read (always > 0: a negative one is an error, as in a peek).
  std::int64_t count() const { return count_; }
  // The row, decoded and owned.
  Result<Row> ToRow() const { return DecodeRow(row_); }

 private:
  std::string_view key_, row_;
  std::int64_t count_;
};

// Which keys a scan reads. Bounds are key rows (datums of the index's key columns, a leading part
// of them allowed), compared in the encoded order of base/row.h.
struct KeyRange {
  std::optional<Row> prefix;  // keys whose leading columns equal these
  std::optional<Row> lower;   // keys >= lower
  std::optional<Row> upper;   // keys < upper
  static KeyRange All() { return {}; }
  static KeyRange Prefix(Row p) { return {std::move(p), std::nullopt, std::nullopt}; }
  static KeyRange Between(Row lo, Row hi) { return {std::nullopt, std::move(lo), std::move(hi)}; }
};

// An index the segment publishes, over every worker's row: since is the largest of the rows',
// upper the smallest (readable at t: since <= t < upper).
struct LocalIndexInfo {
  GlobalId id;
  Time as_of = 0;
  Frontier since, upper;
  std::uint64_t updates = 0, bytes = 0;
  std::uint32_t rows = 0;  // worker rows that publish it (all of them once it is filled in)
};

// An owned answer: the time read and its rows, in key then row order within each worker's part.
struct LocalAnswer {
  Time time = 0;
  std::vector<std::pair<Row, std::int64_t>> rows;
};

class LocalReader {
 public:
  // Attaches to the replica whose segment is /dev/shm/<segment_name> (the supervisor's
  // --shm-name, by default "tandem.<replica id>"). FailedPrecondition for a permission problem,
  // NotFound when no such replica runs, Unavailable while it starts, Corruption for a segment of
  // another build, ResourceExhausted when the reader table is full.
  [[nodiscard]] static Result<std::unique_ptr<LocalReader>> Attach(const std::string& segment_name);
  ~LocalReader();
  LocalReader(const LocalReader&) = delete;
  LocalReader& operator=(const LocalReader&) = delete;

  // Attaches again to whatever replica now has the name (after "restarted" or "gone").
  Status Reattach();

  using RowFn = std::function<bool(const RowView&)>;  // false: stop

  // The rows whose key is `key` at `at` (nullopt: the latest readable time). `key` must have every
  // key column, of its type: the segment does not know the index's schema, so another key simply
  // has no rows (use Scan with a prefix for a leading part).
  // Returns the time read. Errors: NotFound (no such index), FailedPrecondition (at < since:
  // compacted; at >= upper: not complete yet; not published yet), DataError (the index's error
  // at that time), OutOfRange (a count beyond int64), Unavailable (the replica is gone).
  Result<Time> Lookup(GlobalId index, const Row& key, std::optional<Time> at, const RowFn& fn);
  // Every row whose key is in `range`, worker part by worker part (key order within each). When it
  // fails, `fn` may already have had some rows (a later part's row error: a negative count, a
  // count beyond int64): discard them. The owned Scan below is all or nothing.
  Result<Time> Scan(GlobalId index, const KeyRange& range, std::optional<Time> at, const RowFn& fn);
  // Owned conveniences.
  Result<LocalAnswer> Lookup(GlobalId index, const Row& key, std::optional<Time> at = {});
  Result<LocalAnswer> Scan(GlobalId index, const KeyRange& range, std::optional<Time> at = {});

  // The indexes the segment publishes now (not one-shot results, which live in a runtime).
  Result<std::vector<LocalIndexInfo>> Indexes();
  // The latest time every worker's part of `index` can answer exactly.
  Result<Time> LatestReadable(GlobalId index);

  std::uint64_t generation() const { return generation_; }
  std::uint32_t workers() const { return workers_; }
  const std::string& segment_name() const { return name_; }

 private:
  LocalReader() = default;
  Status AttachNow();
  void Detach();
  // OK while the replica lives: the header's closed flag on every call, the supervisor's lock
  // at most once a millisecond. Sticky once gone.
  Status CheckAlive();
  // The slot of `index` in row `ordinal`, looked up again when the cached one was dropped.
  Result<std::uint32_t> SlotOf(GlobalId index, std::uint32_t ordinal, bool refresh);
  // A snapshot of row `ordinal`'s part of `index`, announced in that row's entry.
  Result<shm::Snapshot> Take(GlobalId index, std::uint32_t ordinal);
  // One worker part's rows of a read at t: hands them out when `deliver`, else only checks them;
  // DataError (a negative count) or OutOfRange (a count beyond int64) is the part's error.
  using PartReader = std::function<Status(const shm::Snapshot&, Time, bool deliver)>;
  // Reads `index` at `at` (latest if nullopt) as a peek does: each worker part answers its row's
  // first index error, else its rows' first error, else its rows — `read` of row `only_row` (a
  // lookup), or of every row in ordinal order (a scan); of several parts' errors, the first in
  // ErrorLess order. Nothing is handed out once an error is known.
  Result<Time> Read(GlobalId index, std::optional<Time> at, std::optional<std::uint32_t> only_row,
                    const PartReader& read);

  std::string name_;
  std::unique_ptr<shm::ReaderTable> table_;
  // One per worker row (a read holds every part at once); destroyed before table_.
  std::vector<std::unique_ptr<shm::ReaderTableEntry>> entries_;
  std::unique_ptr<shm::Segment> segment_;
  std::uint64_t generation_ = 0;
  std::uint32_t workers_ = 0;
  std::string gone_;                       // why the replica is gone (sticky until Reattach)
  bool busy_ = false;                      // a Lookup or Scan is running (callbacks may not read)
  std::uint64_t last_alive_check_ns_ = 0;  // CLOCK_MONOTONIC
  // Per index: its slot in each row (UINT32_MAX: not looked up).
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> slots_;
};

}  // namespace tandem

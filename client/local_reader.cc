#include "client/local_reader.h"

#include <time.h>

#include <algorithm>
#include <limits>

#include "base/count.h"
#include "base/error_order.h"
#include "shm/reader.h"
#include "shm/reader_table.h"
#include "shm/registry.h"
#include "shm/routing.h"
#include "shm/segment.h"

namespace tandem {

namespace {

constexpr std::uint32_t kNoSlot = std::numeric_limits<std::uint32_t>::max();
// How often a call asks the kernel whether the supervisor still holds its lock (the header's
// closed flag, checked on every call, covers every exit the supervisor lives to see).
constexpr std::uint64_t kAliveCheckNs = 1'000'000;
// A read at the latest time that finds a part not readable yet (passing states: not published
// yet in every row, one row compacted past another's upper) looks again this many times.
constexpr int kLatestAttempts = 4;

std::uint64_t MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

// The errors of a read's parts: a peek answers the first in ErrorLess order.
class PartErrors {
 public:
  void Add(Status s) {
    if (!first_ || ErrorLess(s.message(), first_->message())) first_ = std::move(s);
  }
  bool any() const { return first_.has_value(); }
  Status first() const { return *first_; }

 private:
  std::optional<Status> first_;
};

// The index's first error at t in `snap`, added to `errors` as that part's answer — a DataError,
// or OutOfRange when an error's count does not fit int64 (the peek's part then answers that).
// Whether there was one.
Result<bool> IndexError(const shm::Snapshot& snap, Time t, PartErrors* errors) {
  std::optional<std::string> error;
  const Status s = snap.FirstError(t, &error);
  if (s.code() == StatusCode::kOutOfRange) {
    errors->Add(s);
    return true;
  }
  TANDEM_RETURN_IF_ERROR(s);
  if (error) errors->Add(Status::DataError(*error));
  return error.has_value();
}

// A read from inside another read's callback would end the outer read's announcement (one entry
// announces one read) while its rows are still being handed out: refused.
Status Reentered() {
  return Status::FailedPrecondition(
      "a LocalReader reads one thing at a time, and this call came from inside one of its own "
      "read callbacks: use a second LocalReader for the inner read");
}

// Marks a reader busy for the length of a read.
class BusyScope {
 public:
  explicit BusyScope(bool* busy) : busy_(busy) { *busy_ = true; }
  ~BusyScope() { *busy_ = false; }
  BusyScope(const BusyScope&) = delete;
  BusyScope& operator=(const BusyScope&) = delete;

 private:
  bool* busy_;
};

const char kNegative[] = "the result has a row with negative multiplicity";

}  // namespace

LocalReader::~LocalReader() { Detach(); }

Result<std::unique_ptr<LocalReader>> LocalReader::Attach(const std::string& segment_name) {
  auto reader = std::unique_ptr<LocalReader>(new LocalReader());
  reader->name_ = segment_name;
  TANDEM_RETURN_IF_ERROR(reader->AttachNow());
  return reader;
}

void LocalReader::Detach() {
  segment_.reset();
  entries_.clear();
  table_.reset();
  slots_.clear();
}

Status LocalReader::Reattach() {
  if (busy_) return Reentered();
  Detach();
  return AttachNow();
}

Status LocalReader::AttachNow() {
  auto table = shm::ReaderTable::Open(name_);
  if (!table.ok()) {
    if (table.status().code() == StatusCode::kNotFound) {
      return Status::NotFound("no replica with segment '" + name_ + "' is running (" +
                              table.status().message() + ")");
    }
    return table.status();
  }
  if (!(*table)->SupervisorAlive()) {
    return Status::Unavailable("replica '" + name_ + "' is gone: its supervisor exited");
  }
  TANDEM_ASSIGN_OR_RETURN(auto segment, shm::Segment::OpenReadOnly(name_));
  if (segment->header().generation != (*table)->generation()) {
    return Status::Unavailable("replica '" + name_ +
                               "' is restarting (its segment and reader table are of different "
                               "incarnations); try again");
  }
  // One entry per worker row: a read holds every part of an index at once.
  std::vector<std::unique_ptr<shm::ReaderTableEntry>> entries;
  for (std::uint32_t o = 0; o < segment->workers(); ++o) {
    TANDEM_ASSIGN_OR_RETURN(auto entry, (*table)->Claim());
    entries.push_back(std::move(entry));
  }
  table_ = std::move(table).value();
  entries_ = std::move(entries);
  segment_ = std::move(segment);
  generation_ = segment_->header().generation;
  workers_ = segment_->workers();
  gone_.clear();
  last_alive_check_ns_ = MonotonicNs();
  return Status::Ok();
}

Status LocalReader::CheckAlive() {
  if (!segment_) return Status::Unavailable("not attached: call Reattach()");
  if (entries_.front()->inherited()) {
    return Status::FailedPrecondition(
        "this LocalReader was attached before fork(): a forked process attaches its own "
        "(it would share the parent's reader-table entry)");
  }
  if (gone_.empty()) {
    bool gone = segment_->closed();
    if (!gone) {
      const std::uint64_t now = MonotonicNs();
      if (now - last_alive_check_ns_ >= kAliveCheckNs) {
        last_alive_check_ns_ = now;
        gone = !table_->SupervisorAlive();
      }
    }
    if (!gone) return Status::Ok();
    // Restarted, or only gone? A new incarnation has a new table (nothing of ours is locked).
    gone_ = "replica '" + name_ + "' is gone (segment generation " + std::to_string(generation_) +
            "): its supervisor exited";
    if (auto now = shm::ReaderTable::Open(name_);
        now.ok() && (*now)->SupervisorAlive() && (*now)->generation() != generation_) {
      gone_ = "replica '" + name_ + "' restarted (segment generation " +
              std::to_string(generation_) + ", now " + std::to_string((*now)->generation()) +
              "): call Reattach()";
    }
  }
  return Status::Unavailable(gone_);
}

Result<std::uint32_t> LocalReader::SlotOf(GlobalId index, std::uint32_t ordinal, bool refresh) {
  auto& slots = slots_[index.Pack()];
  if (slots.size() != workers_) slots.assign(workers_, kNoSlot);
  if (slots[ordinal] != kNoSlot && !refresh) return slots[ordinal];
  // The live, not dropped slot of the id with the newest as_of (a dropped-and-recreated index
  // has a new one; the old slot lingers until every reader has let it go).
  shm::Registry registry(segment_.get());
  std::uint32_t best = kNoSlot;
  Time best_as_of = 0;
  for (std::uint32_t j = 0; j < registry.slots_per_row(); ++j) {
    const shm::SlotData& s = registry.slot(ordinal, j);
    if (s.state.load() != static_cast<std::uint32_t>(shm::SlotState::kLive)) continue;
    if (s.id.load() != index.Pack() || (s.flags.load() & shm::kSlotUnpublished)) continue;
    const Time as_of = s.as_of.load();
    if (best == kNoSlot || as_of > best_as_of) {
      best = j;
      best_as_of = as_of;
    }
  }
  slots[ordinal] = best;
  if (best == kNoSlot) {
    return Status::NotFound(index.ToString() + " is not an index of replica '" + name_ +
                            "' (not published in worker row " + std::to_string(ordinal) + ")");
  }
  return best;
}

Result<shm::Snapshot> LocalReader::Take(GlobalId index, std::uint32_t ordinal) {
  shm::Registry registry(segment_.get());
  for (int attempt = 0; attempt < 3; ++attempt) {
    TANDEM_ASSIGN_OR_RETURN(std::uint32_t slot, SlotOf(index, ordinal, attempt > 0));
    const shm::SlotKey key = registry.KeyOf(registry.slot(ordinal, slot));
    if (!(key.id == index)) continue;  // reused since it was cached: look it up again
    auto snap = shm::TakeAnnounced(*segment_, ordinal, slot, key, entries_[ordinal].get());
    const bool dropped = !snap.ok() || snap->unpublished();
    if (dropped && attempt < 2) continue;  // dropped meanwhile: a recreated one may be there
    return snap;
  }
  // Not Unavailable (the replica is there): the index went, and maybe came back, while we looked.
  return Status::NotFound(index.ToString() + " was dropped (or dropped and created again) while " +
                          "being read in worker row " + std::to_string(ordinal) + "; read again");
}

Result<Time> LocalReader::LatestReadable(GlobalId index) {
  TANDEM_RETURN_IF_ERROR(CheckAlive());
  shm::Registry registry(segment_.get());
  Frontier upper = Frontier::Empty();
  Frontier since = Frontier::Minimum();
  for (std::uint32_t o = 0; o < workers_; ++o) {
    TANDEM_ASSIGN_OR_RETURN(std::uint32_t slot, SlotOf(index, o, false));
    const shm::SlotData& s = registry.slot(o, slot);
    if (s.id.load() != index.Pack() || (s.flags.load() & shm::kSlotUnpublished)) {
      TANDEM_ASSIGN_OR_RETURN(slot, SlotOf(index, o, true));
    }
    const shm::SlotData& live = registry.slot(o, slot);
    if (!(live.flags.load() & shm::kSlotFilled)) {
      return Status::FailedPrecondition(index.ToString() + " is not published yet");
    }
    upper = Min(upper, Frontier::FromRaw(live.upper.load()));
    since = Max(since, Frontier::FromRaw(live.since.load()));
  }
  if (since.empty()) return Status::NotFound(index.ToString() + " was dropped");
  // Closed: every time from since on reads the same, its final contents — read at the largest
  // time, as `tandem-ctl peek --at latest` and `tandem-shm dump` do.
  if (upper.empty()) return kMaxTime;
  if (upper.time() == 0 || !since.LessEqual(upper.time() - 1)) {
    return Status::FailedPrecondition(index.ToString() +
                                      " has no time readable in every part yet"
                                      " (since " +
                                      since.ToString() + ", upper " + upper.ToString() + ")");
  }
  return upper.time() - 1;
}

Result<Time> LocalReader::Read(GlobalId index, std::optional<Time> at,
                               std::optional<std::uint32_t> only_row, const PartReader& read) {
  TANDEM_RETURN_IF_ERROR(CheckAlive());
  for (int attempt = 0;; ++attempt) {
    // Every worker's part at once, each announced in its own entry: a snapshot stays exact at any
    // time from its since on however far the slot compacts meanwhile (reader.h), so the time is
    // chosen from the snapshots themselves and nothing needs reading again.
    std::vector<shm::Snapshot> snaps;
    snaps.reserve(workers_);
    Status status;
    for (std::uint32_t o = 0; o < workers_ && status.ok(); ++o) {
      auto snap = Take(index, o);
      if (snap.ok()) {
        snaps.push_back(std::move(snap).value());
      } else {
        status = snap.status();
      }
    }
    Time t = at.value_or(0);
    if (status.ok() && !at) {
      // The latest time every part answers: min upper - 1 (a closed index, upper [] everywhere:
      // its final contents, at the largest time — as `tandem-ctl peek --at latest` reads it).
      Frontier upper = Frontier::Empty();
      for (const shm::Snapshot& snap : snaps) upper = Min(upper, snap.upper());
      t = upper.empty() ? kMaxTime : upper.time() - (upper.time() > 0);
    }
    for (std::size_t o = 0; o < snaps.size() && status.ok(); ++o) {
      status = snaps[o].CheckReadable(t);  // names the index and the time
    }
    if (!status.ok()) {
      // At the latest time, a part not published yet, or compacted past another's upper, is
      // passing: look again. Otherwise (or after a few looks) that is the answer.
      if (!at && status.code() == StatusCode::kFailedPrecondition &&
          attempt + 1 < kLatestAttempts) {
        continue;
      }
      // The replica may have gone while we read: say that rather than what it left behind.
      last_alive_check_ns_ = 0;
      TANDEM_RETURN_IF_ERROR(CheckAlive());
      return status;
    }
    // A peek is answered by every worker's part: the index's first error in that worker's row if
    // it has one, else the first error its rows meet (a negative count, a count beyond int64), else
    // its rows; of several parts' errors, the first in ErrorLess order. A lookup's rows are in its
    // key's row only. So: every row's index errors first (nothing handed out while one is known),
    // then the rows, part by part, each part's own first error kept.
    PartErrors errors;
    std::vector<bool> has_index_error(workers_, false);
    for (std::uint32_t o = 0; o < workers_; ++o) {
      TANDEM_ASSIGN_OR_RETURN(const bool found, IndexError(snaps[o], t, &errors));
      has_index_error[o] = found;
    }
    for (std::uint32_t o = 0; o < workers_; ++o) {
      if ((only_row && o != *only_row) || has_index_error[o]) continue;
      Status part = read(snaps[o], t, !errors.any());
      if (part.code() == StatusCode::kDataError || part.code() == StatusCode::kOutOfRange) {
        errors.Add(std::move(part));  // rows from here on are only checked, not handed out
      } else {
        TANDEM_RETURN_IF_ERROR(part);
      }
    }
    if (errors.any()) return errors.first();
    return t;
  }
}

Result<Time> LocalReader::Lookup(GlobalId index, const Row& key, std::optional<Time> at,
                                 const RowFn& fn) {
  if (busy_) return Reentered();
  BusyScope busy(&busy_);
  TANDEM_RETURN_IF_ERROR(CheckAlive());
  const std::string k = EncodeKey(key);
  std::vector<RowView> rows;
  return Read(index, at, shm::WorkerOf(k, workers_),
              [&](const shm::Snapshot& snap, Time t, bool deliver) {
                rows.clear();
                shm::MergeCursor c(snap.batches());
                // As a peek's lookup: every count under the key fits int64, then none is negative.
                for (c.SeekKey(k); c.Valid(); c.Next()) {
                  const Int128 n = c.CountAt(t);
                  if (!FitsInt64(n)) return Status::OutOfRange(kMultiplicityOverflow);
                  if (n != 0) rows.emplace_back(c.key(), c.val(), static_cast<std::int64_t>(n));
                }
                for (const RowView& r : rows) {
                  if (r.count() < 0) return Status::DataError(kNegative);
                }
                // Handed out only once every count is known good: a failed lookup delivers nothing.
                if (deliver) {
                  for (const RowView& r : rows) {
                    if (!fn(r)) break;
                  }
                }
                return Status::Ok();
              });
}

Result<Time> LocalReader::Scan(GlobalId index, const KeyRange& range, std::optional<Time> at,
                               const RowFn& fn) {
  if (busy_) return Reentered();
  BusyScope busy(&busy_);
  TANDEM_RETURN_IF_ERROR(CheckAlive());
  const std::string prefix = range.prefix ? EncodeKey(*range.prefix) : std::string();
  const std::optional<std::string> lower =
      range.lower ? std::optional(EncodeKey(*range.lower)) : std::nullopt;
  const std::optional<std::string> upper =
      range.upper ? std::optional(EncodeKey(*range.upper)) : std::nullopt;
  // The first key that can be in range: after the error keys, at the prefix and the lower bound.
  std::string start(1, static_cast<char>(0x01));
  if (prefix > start) start = prefix;
  if (lower && *lower > start) start = *lower;
  bool stopped = false;
  return Read(index, at, std::nullopt, [&](const shm::Snapshot& snap, Time t, bool deliver) {
    // The caller stopped: the rest is only checked for the error a peek would answer instead.
    deliver = deliver && !stopped;
    shm::MergeCursor c(snap.batches());
    c.SeekAtLeast(start);
    for (; c.Valid(); c.Next()) {
      if (!c.key().starts_with(prefix)) break;
      if (upper && c.key() >= *upper) break;
      const Int128 n = c.CountAt(t);
      if (!FitsInt64(n)) return Status::OutOfRange(kMultiplicityOverflow);
      if (n < 0) return Status::DataError(kNegative);
      if (n != 0 && deliver && !fn(RowView(c.key(), c.val(), static_cast<std::int64_t>(n)))) {
        stopped = true;
        deliver = false;
      }
    }
    return Status::Ok();
  });
}

namespace {

// Collects an owned answer; a row that does not decode is Corruption.
struct Collector {
  LocalAnswer answer;
  Status status;
  bool operator()(const RowView& r) {
    auto row = r.ToRow();
    if (!row.ok()) {
      status = Status::Corruption("a row of the index does not decode: " + row.status().message());
      return false;
    }
    answer.rows.emplace_back(std::move(row).value(), r.count());
    return true;
  }
};

}  // namespace

Result<LocalAnswer> LocalReader::Lookup(GlobalId index, const Row& key, std::optional<Time> at) {
  Collector c;
  TANDEM_ASSIGN_OR_RETURN(c.answer.time,
                          Lookup(index, key, at, [&](const RowView& r) { return c(r); }));
  TANDEM_RETURN_IF_ERROR(c.status);
  return std::move(c.answer);
}

Result<LocalAnswer> LocalReader::Scan(GlobalId index, const KeyRange& range,
                                      std::optional<Time> at) {
  Collector c;
  TANDEM_ASSIGN_OR_RETURN(c.answer.time,
                          Scan(index, range, at, [&](const RowView& r) { return c(r); }));
  TANDEM_RETURN_IF_ERROR(c.status);  // all or nothing: an error hands back no rows
  return std::move(c.answer);
}

Result<std::vector<LocalIndexInfo>> LocalReader::Indexes() {
  TANDEM_RETURN_IF_ERROR(CheckAlive());
  shm::Registry registry(segment_.get());
  std::vector<LocalIndexInfo> out;
  for (std::uint32_t o = 0; o < workers_; ++o) {
    for (std::uint32_t j = 0; j < registry.slots_per_row(); ++j) {
      const shm::SlotData& s = registry.slot(o, j);
      if (s.state.load() != static_cast<std::uint32_t>(shm::SlotState::kLive)) continue;
      const std::uint32_t flags = s.flags.load();
      if (!(flags & shm::kSlotFilled) || (flags & shm::kSlotUnpublished)) continue;
      const shm::SlotKey key = registry.KeyOf(s);
      auto it = std::find_if(out.begin(), out.end(), [&](const LocalIndexInfo& i) {
        return i.id == key.id && i.as_of == key.as_of;
      });
      if (it == out.end()) {
        out.push_back({key.id, key.as_of, Frontier::Minimum(), Frontier::Empty(), 0, 0, 0});
        it = out.end() - 1;
      }
      it->since = Max(it->since, Frontier::FromRaw(s.since.load()));
      it->upper = Min(it->upper, Frontier::FromRaw(s.upper.load()));
      it->updates += s.updates.load();
      it->bytes += s.bytes.load();
      ++it->rows;
    }
  }
  return out;
}

}  // namespace tandem

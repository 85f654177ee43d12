// Reading shared arrangements in place: Reader (interactive worker i's side of row i), Snapshot
// (a consistent view of one slot) and Inspector (tools reading a live or kept segment).
//
// Snapshot protocol (LMDB-style: the row's reading thread announces in the slot, tools and local
// readers in the reader table, shm/reader_table.h):
//   1. load upper                     — every batch below it is in any list installed before it
//   2. v = load list_version; announce v in the reader's entry (seq_cst)
//   3. load list                      — the publisher stores list before list_version, so this
//                                       list has version >= v: the announcement protects it
//   4. load since                     — the publisher raises since before it installs batches
//                                       compacted to it, so since bounds this list's compaction
// The publisher stores list, then version, then reads the announcements (all seq_cst). Either it
// sees our announcement, or our load of `list` sees its newest list: in both cases nothing we
// read is freed under us, and the publisher never waits for us.
//
// Thread safety: a Reader and its Snapshots belong to the thread that attached it (checked).
// An Inspector may be used by one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/time.h"
#include "shm/batch.h"
#include "shm/reader_table.h"
#include "shm/registry.h"
#include "shm/segment.h"
#include "shm/wake.h"

namespace tandem::shm {

struct ValueCount {
  std::string val;
  std::int64_t count;
};

class Snapshot {
 public:
  Snapshot(Snapshot&& other) noexcept;
  Snapshot& operator=(Snapshot&&) = delete;
  Snapshot(const Snapshot&) = delete;
  ~Snapshot();

  const SlotKey& key() const { return key_; }
  Frontier upper() const { return upper_; }
  Frontier since() const { return since_; }
  bool filled() const { return flags_ & kSlotFilled; }
  bool unpublished() const { return flags_ & kSlotUnpublished; }
  std::uint64_t list_version() const { return version_; }
  const std::vector<BatchView>& batches() const { return batches_; }

  // A snapshot of an index in process memory (a one-shot dataflow's transient index, DESIGN §8):
  // filled, with these frontiers and batches, which the caller keeps alive while it is used.
  static Snapshot OfLocal(SlotKey key, Frontier upper, Frontier since,
                          std::vector<BatchView> batches);

  // OK when this snapshot can answer exactly at t: published, not dropped, since <= t < upper.
  Status CheckReadable(Time t) const;
  // The values of `key` with their accumulated count at t (non-zero counts only, value order).
  // OutOfRange when one of those counts does not fit int64 (base/count.h).
  Status Lookup(std::string_view key, Time t, std::vector<ValueCount>* out) const;
  // The index's first error at t — of the error keys (shm::kErrorKeyPrefix) with a non-zero count,
  // the first in ErrorLess order — into *error (unset when none). OutOfRange when an error's count
  // does not fit int64. What a peek's part and a local read both answer: one definition.
  Status FirstError(Time t, std::optional<std::string>* error) const;
  // False when no batch holds a key starting with shm::kErrorKeyPrefix — error keys sort first,
  // so each batch's first key says — and then no read needs to look for errors: O(batches).
  bool MayHoldErrors() const;
  // Every (key, val, count) at t with a non-zero count, in key, val order, of the keys that start
  // with `key_prefix` (all keys when it is empty). `fn` returns false to stop early. OutOfRange
  // when a count it reaches does not fit int64.
  Status Scan(
      Time t,
      const std::function<bool(std::string_view key, std::string_view val, std::int64_t count)>& fn,
      std::string_view key_prefix = {}) const;

 private:
  friend class Reader;
  friend class Inspector;
  friend Result<Snapshot> TakeAnnouncedImpl(const Segment&, std::uint32_t, std::uint32_t,
                                            const SlotKey&, ReaderTableEntry*, bool);
  Snapshot() = default;
  // An empty snapshot whose release idles `entry`.
  static Snapshot Announced(ReaderTableEntry* entry);

  SlotKey key_;
  Frontier upper_, since_;
  std::uint32_t flags_ = 0;
  std::uint64_t version_ = 0;
  std::vector<BatchView> batches_;
  std::function<void()> release_;  // clears the announcement when the last snapshot goes
};

// A slot as the reader follows it.
struct FollowedRef {
  std::uint32_t index = 0;
  SlotKey key;
};

class Reader {
 public:
  [[nodiscard]] static Result<std::unique_ptr<Reader>> Attach(Segment* segment,
                                                              std::uint32_t ordinal);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // Follows `key` as a peer (from the broadcast CreateDataflow): binds or creates its slot and
  // places the peer hold at as_of (an atomic max: if the publisher registered it first, this is
  // a no-op). Idempotent.
  Result<FollowedRef> Follow(const SlotKey& key);

  // AllowCompaction on the reading runtime's stream: raises the controller's frontier (a lower
  // one changes nothing), and with it the peer hold, which is min(controller's frontier, every
  // read hold). The empty frontier releases the hold and forgets the peer.
  Status AdvanceHold(const FollowedRef& ref, Frontier frontier);
  // The published peer hold: nothing at a time at or past it is compacted (I1).
  Frontier hold(const FollowedRef& ref) const;

  // A read of the slot at `t` that must stay exact until it is done — a waiting peek, a one-shot
  // import (DESIGN §8) — holds the peer hold at t. Holds only rise, so a read below the
  // controller's frontier on this stream is not held: returns false and changes nothing (its
  // answer is "compacted"). The rule reads only the command stream, so every worker of the runtime
  // decides alike for its row (the peer hold itself may differ between rows while other reads
  // release theirs). Each successful Hold is undone by one Release of the same time.
  bool HoldRead(const FollowedRef& ref, Time t);
  // The controller's frontier for the slot as applied on this runtime's stream.
  Frontier allowed(const FollowedRef& ref);
  void ReleaseRead(const FollowedRef& ref, Time t);
  // Moves a placed read hold forward from `from` to `to` (a subscribe's progress, DESIGN §10) —
  // allowed even below the controller's frontier: the hold at `from` already keeps the peer hold
  // at or below `from`, so raising it never lowers what is published.
  // REQUIRES: from <= to, and a hold placed at `from`.
  void MoveRead(const FollowedRef& ref, Time from, Time to);

  // A consistent snapshot of the slot, without locks and without blocking the publisher.
  Result<Snapshot> Take(const FollowedRef& ref);

  // The ids the publisher changed since the last call. Wait sleeps (no CPU) until there is one.
  bool Poll(WakeDrain* out) { return wake_.Poll(out); }
  bool Wait(WakeDrain* out, std::chrono::nanoseconds timeout) { return wake_.Wait(out, timeout); }
  WakeReceiver& wake() { return wake_; }
  std::uint32_t ordinal() const { return ordinal_; }

 private:
  struct Followed {
    SlotKey key;
    int open_snapshots = 0;
    Frontier controller;             // the controller's frontier on this runtime's stream
    std::multiset<Time> read_holds;  // SlotData::reader_holds counts them
  };
  // Publishes peer hold = min(controller, read holds) (an atomic max: it only rises) and the count.
  void PublishHold(std::uint32_t index, const Followed& local);
  Reader(Segment* segment, std::uint32_t ordinal);
  void CheckThread() const;
  Result<Followed*> Local(const FollowedRef& ref);

  Segment* segment_;
  Registry registry_;
  std::uint32_t ordinal_;
  std::uint64_t thread_token_;
  WakeReceiver wake_;
  std::map<std::uint32_t, Followed> followed_;
};

// The most batches Inspector::Take accepts in one list (a spine keeps O(log n)).
inline constexpr std::uint64_t kMaxBatchesPerList = 4096;

// A local reader's snapshot (DESIGN §11) of slot `index` of row `ordinal` of a segment it maps
// read-only: the snapshot protocol above, announced in its reader-table entry instead of the
// slot (a local reader writes nothing in the segment). `expected` is the slot's key as the reader
// looked it up; Unavailable when the slot is no longer live with that key once announced (dropped
// and reused meanwhile: look it up again). The list and the batch headers are checked to lie in
// the segment; the batches' columns are trusted (a local reader trusts the replica it may read,
// as the runtimes trust each other). One snapshot per entry at a time; the entry outlives it.
[[nodiscard]] Result<Snapshot> TakeAnnounced(const Segment& segment, std::uint32_t ordinal,
                                             std::uint32_t index, const SlotKey& expected,
                                             ReaderTableEntry* entry);

// A slot as listed by a tool.
struct SlotInfo {
  std::uint32_t ordinal = 0, index = 0;
  SlotKey key;
  std::uint32_t flags = 0;
  Frontier upper, since, own_frontier, peer_hold;
  // The publisher's local importers' hold (empty when none) and how many importers hold it; the
  // holds the reading side keeps (one-shot imports, waiting peeks), which peer_hold includes.
  Frontier import_hold = Frontier::Empty();
  std::uint64_t importers = 0, reader_holds = 0;
  std::uint64_t list_version = 0, updates = 0, batches = 0, bytes = 0, merges = 0;
};

// Read-only access for tools (tandem-shm): writes nothing in the segment. On a live replica
// (with its reader table) each snapshot announces its batch list in a reader-table entry of the
// tool's own — the local readers' way (TakeAnnounced), so the publisher frees nothing under it and
// the supervisor clears the entry if the tool dies mid-read. On a segment nobody publishes to any
// more (PostMortem: its supervisor is gone, a kept segment, an image) it reads without
// announcing. Either way it validates every batch it follows, so a kept (post-mortem) segment
// cannot crash it. Snapshots must not outlive the Inspector; one thread at a time.
class Inspector {
 public:
  struct PostMortem {};  // a segment nobody publishes to any more: nothing to announce
  // Lists slots only: Take refuses (a live replica's reads must be announced).
  explicit Inspector(Segment* segment) : Inspector(segment, nullptr, false) {}
  // A live replica's segment and its reader table: every snapshot is announced there.
  Inspector(Segment* segment, ReaderTable* table) : Inspector(segment, table, false) {}
  // A kept segment, or an image: its supervisor is gone, so nothing is freed under a read.
  Inspector(Segment* segment, PostMortem) : Inspector(segment, nullptr, true) {}
  ~Inspector();
  Inspector(const Inspector&) = delete;
  Inspector& operator=(const Inspector&) = delete;
  std::vector<SlotInfo> Slots() const;
  // ResourceExhausted when the reader table is full; Unavailable when the slot changed identity
  // while we looked; FailedPrecondition for an Inspector made to list slots only.
  Result<Snapshot> Take(std::uint32_t ordinal, std::uint32_t index);

 private:
  Inspector(Segment* segment, ReaderTable* table, bool post_mortem);
  Segment* segment_;
  Registry registry_;
  ReaderTable* table_;
  bool post_mortem_;
  std::vector<std::unique_ptr<ReaderTableEntry>> entries_;  // claimed, for as long as we live
  std::vector<ReaderTableEntry*> free_entries_;             // of those, the ones no snapshot uses
};

}  // namespace tandem::shm

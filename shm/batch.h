// Batches: the immutable, columnar unit of a shared arrangement (DESIGN §4 "Batches").
//
// A batch is ONE allocation in the segment and is never modified after it is published; it is
// freed by the publisher once no reader can see it. It holds updates (key, val, time, diff)
// sorted by key, then val, then time, consolidated (no zero diffs; no two updates share key, val
// and time — except the parts of a consolidated count beyond int64, which base/count.h's
// PushCount keeps as several int64 diffs of one sign at that time), as a three-level trie:
//
//   keys      key_offsets[k..k+1) → bytes of key k in key_bytes     (keys strictly ascending)
//   values    key_vals[k..k+1)    → the values of key k              (ascending within a key)
//             val_offsets[v..v+1) → bytes of value v in val_bytes
//   updates   val_updates[v..v+1) → the updates of value v: times[u], diffs[u] (time ascending;
//             equal times only for the parts of one count beyond int64)
//
// Keys and values are rows in the order-preserving encoding of base/row.h, so ordering is
// memcmp. Offsets are uint32 from the start of each column, so a batch is below 4 GiB of key or
// value bytes and below 2^32 updates; every column reference is a byte offset from the batch
// start (no pointers), so the batch reads the same in every process.
//
// `since`: every time in the batch is >= since (times below it were advanced at build time).
//
// The key index (shm/key_index.h) after the columns answers LowerBound from one cache line per
// level instead of a binary search over the key column.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/count.h"
#include "base/status.h"
#include "base/time.h"
#include "shm/segment.h"

namespace tandem::shm {

// BatchHeader, the fixed part at the start of every batch, and kBatchMagic are in shm/layout.h
// with the other structs that live in the segment.

struct Update {
  std::string key;  // a key (base/row.h "Keys")
  std::string val;  // an encoded row
  Time time = 0;
  std::int64_t diff = 0;
};

// Updates to build one batch from, encoded once into one contiguous byte buffer: no allocation
// per update (the buffer and the entry vector grow geometrically and can be reused with Clear).
// Keys are key-encoded and values encoded rows (base/row.h), in any order; BuildBatch sorts them.
class UpdateBuffer {
 public:
  UpdateBuffer() = default;
  // Implicit on purpose: callers holding separate strings (tests, tools) pass them as they are.
  UpdateBuffer(const std::vector<Update>& updates);     // NOLINT(google-explicit-constructor)
  UpdateBuffer(std::initializer_list<Update> updates);  // NOLINT(google-explicit-constructor)

  void Reserve(std::size_t updates, std::size_t bytes);
  void Clear();
  // Copies `key` and `val` into the buffer.
  void Push(std::string_view key, std::string_view val, Time time, std::int64_t diff);

  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  std::size_t key_bytes() const { return key_bytes_; }  // sum over the updates
  std::size_t val_bytes() const { return bytes_.size() - key_bytes_; }
  std::string_view key(std::size_t i) const {
    return {bytes_.data() + entries_[i].at, entries_[i].key_len};
  }
  std::string_view val(std::size_t i) const {
    return {bytes_.data() + entries_[i].at + entries_[i].key_len, entries_[i].val_len};
  }
  Time time(std::size_t i) const { return entries_[i].time; }
  std::int64_t diff(std::size_t i) const { return entries_[i].diff; }
  // Cache hints for visiting the updates in sorted (random) order: the entry first, then, once
  // it has arrived, its bytes (see PrefetchSorted in batch.cc).
  void PrefetchEntry(std::size_t i) const { __builtin_prefetch(&entries_[i]); }
  void PrefetchBytes(std::size_t i) const {
    const Entry& e = entries_[i];
    __builtin_prefetch(bytes_.data() + e.at);
    __builtin_prefetch(bytes_.data() + e.at + std::max(e.key_len + e.val_len, 1u) - 1);
  }
  // Advances every time below `floor` to `floor` (logical compaction at build time).
  void AdvanceTimes(Time floor);

 private:
  struct Entry {
    std::uint64_t at;  // key bytes at bytes_[at], the val's right behind them
    std::uint32_t key_len, val_len;
    Time time;
    std::int64_t diff;
  };
  std::string bytes_;
  std::vector<Entry> entries_;
  std::size_t key_bytes_ = 0;
};

// Read access to one published batch. Cheap to copy; holds only the header pointer.
class BatchView {
 public:
  explicit BatchView(const BatchHeader* h) : h_(h), base_(reinterpret_cast<const char*>(h)) {}

  const BatchHeader& header() const { return *h_; }
  std::uint32_t key_count() const { return static_cast<std::uint32_t>(h_->key_count); }
  std::uint64_t update_count() const { return h_->update_count; }
  std::uint64_t total_bytes() const { return h_->total_bytes; }
  std::uint64_t key_bytes() const { return Col<std::uint32_t>(h_->key_offsets_at)[key_count()]; }
  std::uint64_t val_bytes() const { return Col<std::uint32_t>(h_->val_offsets_at)[h_->val_count]; }

  std::string_view key(std::uint32_t k) const {
    const auto* o = Col<std::uint32_t>(h_->key_offsets_at);
    return {base_ + h_->key_bytes_at + o[k], o[k + 1] - o[k]};
  }
  std::uint32_t vals_begin(std::uint32_t k) const { return Col<std::uint32_t>(h_->key_vals_at)[k]; }
  std::uint32_t vals_end(std::uint32_t k) const {
    return Col<std::uint32_t>(h_->key_vals_at)[k + 1];
  }
  std::string_view val(std::uint32_t v) const {
    const auto* o = Col<std::uint32_t>(h_->val_offsets_at);
    return {base_ + h_->val_bytes_at + o[v], o[v + 1] - o[v]};
  }
  std::uint32_t updates_begin(std::uint32_t v) const {
    return Col<std::uint32_t>(h_->val_updates_at)[v];
  }
  std::uint32_t updates_end(std::uint32_t v) const {
    return Col<std::uint32_t>(h_->val_updates_at)[v + 1];
  }
  Time time(std::uint32_t u) const { return Col<std::uint64_t>(h_->times_at)[u]; }
  std::int64_t diff(std::uint32_t u) const { return Col<std::int64_t>(h_->diffs_at)[u]; }

  // Index of the first key >= `key` (key_count() when none): through the key index, with memcmp
  // only among keys whose windows equal the probe's.
  std::uint32_t LowerBound(std::string_view key) const;
  // Index of `key` (key_count() when absent). An absent key whose window no key shares is refused
  // without comparing its bytes with a found key's (only the common prefix, with the first key's).
  std::uint32_t Find(std::string_view key) const;

  // Structural self-check for tools reading a segment post-mortem: every column inside the
  // allocation and monotone. A live publisher never produces a batch that fails it.
  Status Validate(std::uint64_t allocation_bytes) const;

 private:
  struct Search {
    std::uint32_t at;  // the lower bound
    bool may_equal;    // key(at)'s window is the probe's: only then can key(at) be the probe
  };
  Search Seek(std::string_view key) const;
  template <typename T>
  const T* Col(std::uint64_t at) const {
    return reinterpret_cast<const T*>(base_ + at);
  }
  const BatchHeader* h_;
  const char* base_;
};

// A batch in process memory rather than in the segment: the same format, read through the same
// BatchView (a one-shot dataflow's transient index lives in the interactive runtime's own memory,
// DESIGN §8). Owns its bytes (8-byte aligned); moving it keeps views of it valid.
class LocalBatch {
 public:
  explicit LocalBatch(std::uint64_t bytes)
      : words_(std::make_unique<std::uint64_t[]>((bytes + 7) / 8)), bytes_(bytes) {}
  char* data() { return reinterpret_cast<char*>(words_.get()); }
  BatchView view() const { return BatchView(reinterpret_cast<const BatchHeader*>(words_.get())); }
  std::uint64_t bytes() const { return bytes_; }

 private:
  std::unique_ptr<std::uint64_t[]> words_;
  std::uint64_t bytes_;
};

// Writes one batch from updates pushed in (key, val, time) order, already consolidated.
// Process-local staging; Finish makes the single allocation and copies the columns in. For merges,
// whose size is known only at their end (builds from an UpdateBuffer write straight into their
// allocation instead: BuildBatchInPlace).
class BatchWriter {
 public:
  // REQUIRES: (key, val, time) ascending across calls — strictly, but for the parts of one count
  // beyond int64 (PushCount); diff != 0.
  void Push(std::string_view key, std::string_view val, Time time, std::int64_t diff);
  // Capacity hint: avoids regrowing the staging columns while pushing.
  void Reserve(std::size_t updates, std::size_t key_bytes, std::size_t val_bytes);
  std::uint64_t update_count() const { return times_.size(); }
  // Allocates and fills the batch; returns its offset. ResourceExhausted when the segment is full
  // (nothing is allocated then), InvalidArgument when the batch exceeds the format's limits.
  Result<std::uint64_t> Finish(Segment& segment, Frontier since) const;
  // The same batch in process memory.
  Result<LocalBatch> FinishLocal(Frontier since) const;

 private:
  // The header of the batch (sizes and column offsets); InvalidArgument beyond the format's limits.
  Result<BatchHeader> Layout(Frontier since) const;
  // Writes the batch at `base`; places the key index on a 64-byte boundary of `base`'s address
  // (Layout leaves room), which is the same boundary in every process: the segment is mapped at a
  // page boundary.
  void WriteTo(char* base, BatchHeader h) const;
  std::string_view KeyAt(std::uint64_t k) const;  // key k pushed so far
  std::string key_bytes_, val_bytes_;
  std::vector<std::uint32_t> key_offsets_{0}, key_vals_{0}, val_offsets_{0}, val_updates_{0};
  std::vector<std::uint64_t> times_;
  std::vector<std::int64_t> diffs_;
};

// `updates` in (key, val, time) order: their own order when they are in it already (one check),
// else keys sort by an LSD radix sort on their first 16 bytes
// (zero-padded, which keeps memcmp order, see base/row.h) and length, then each run the radix
// sort could not tell apart by a comparison; so fixed-width keys cost a few linear passes and
// no key comparison at all.
struct SortedUpdates {
  std::vector<std::uint32_t> order;  // indices into the buffer
  std::vector<bool> new_key;         // new_key[i]: order[i]'s key differs from order[i - 1]'s
};
SortedUpdates SortUpdates(const UpdateBuffer& updates);

// Builds a batch from unordered updates: advances times below `since` to `since`, sorts,
// consolidates and drops zero diffs. Returns 0 (no allocation) when nothing survives. Two passes
// over the sorted updates, one counting and one writing the columns in place: no staging copy.
Result<std::uint64_t> BuildBatch(Segment& segment, UpdateBuffer updates, Frontier since);
// The same, advancing the times of `updates` in place and leaving them otherwise untouched: on
// failure they are still there (the same updates at every time >= since) for a retry.
Result<std::uint64_t> BuildBatchInPlace(Segment& segment, UpdateBuffer& updates, Frontier since);

// The same, into process memory (nullopt when nothing survives).
Result<std::optional<LocalBatch>> BuildLocalBatch(UpdateBuffer updates, Frontier since);

// Merges batches into one, advancing times to `since` and consolidating: the differential
// dataflow merge with logical compaction. Returns 0 when everything cancelled.
Result<std::uint64_t> MergeBatches(Segment& segment, std::span<const BatchView> batches,
                                   Frontier since);

class MergeCursor;

// The same merge done a piece at a time (differential dataflow's fueled merge): Work(fuel) merges
// (key, val) groups until about `fuel` input updates are read, Done() once all are, Finish writes
// the batch. The publisher spreads a large merge over the appends that follow it this way, so no
// one step pays for it all (shm/publisher.h). The inputs must stay mapped and unchanged until the
// merger is destroyed (the publisher keeps them in its spine meanwhile). Not movable: the cursor
// holds a span of the inputs it owns.
class BatchMerger {
 public:
  BatchMerger(std::vector<BatchView> inputs, Frontier since);
  ~BatchMerger();
  BatchMerger(const BatchMerger&) = delete;
  BatchMerger& operator=(const BatchMerger&) = delete;
  // Returns the input updates read: at least `fuel`, unless Done() first (a group is never split).
  std::uint64_t Work(std::uint64_t fuel);
  bool Done() const;
  std::uint64_t input_updates() const { return input_updates_; }
  // REQUIRES: Done(). The merged batch's offset, 0 when everything cancelled; ResourceExhausted
  // when the segment is full (nothing allocated; Finish may be called again).
  Result<std::uint64_t> Finish(Segment& segment) const;

 private:
  std::vector<BatchView> inputs_;  // before cursor_, which spans them
  Frontier since_;
  Time floor_;
  std::uint64_t input_updates_ = 0;
  std::unique_ptr<MergeCursor> cursor_;
  BatchWriter writer_;
  std::vector<std::pair<Time, std::int64_t>> group_;  // scratch: one group's updates
};

// Walks the (key, val) groups of several batches in merged order. Used by merges and readers.
// Not thread-safe; one per reading thread.
class MergeCursor {
 public:
  explicit MergeCursor(std::span<const BatchView> batches);
  // Restricts the walk to exactly `key` (a point lookup).
  void SeekKey(std::string_view key);
  // Starts the walk at the first key >= `key` (a range or prefix scan), through the last key.
  void SeekAtLeast(std::string_view key);
  bool Valid() const { return valid_; }
  std::string_view key() const { return key_; }
  std::string_view val() const { return val_; }
  // Calls fn(time, diff) for every update of the current group, batch by batch.
  template <typename F>
  void ForEachUpdate(F&& fn) const {
    for (std::size_t b : at_group_) {
      const BatchView& bv = batches_[b];
      const std::uint32_t v = pos_[b].v;
      for (std::uint32_t u = bv.updates_begin(v), e = bv.updates_end(v); u < e; ++u) {
        fn(bv.time(u), bv.diff(u));
      }
    }
  }
  // Sum of the diffs at times <= t: the count of (key, val) as of t. Exact: a batch may hold a
  // count beyond int64 as several parts (base/count.h).
  Int128 CountAt(Time t) const;
  void Next();

 private:
  struct Pos {
    std::uint32_t k = 0, kend = 0, v = 0;
  };
  void Settle();  // finds the smallest group among the positions
  void Advance(std::size_t b);

  std::span<const BatchView> batches_;
  std::vector<Pos> pos_;
  std::vector<std::size_t> at_group_;
  std::string_view key_, val_;
  bool valid_ = false;
};

}  // namespace tandem::shm

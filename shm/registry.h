// The sharing registry (DESIGN §4): one row per worker ordinal, each a fixed-capacity array of
// slots keyed by (collection id, as_of).
//
// Registry is a process-local view over RegistryData; it holds no state of its own and may be
// used from any thread. Who may call what is decided by the handles built on it: Publisher
// (maintenance worker i) and Reader (interactive worker i) each own their side of row i.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "base/global_id.h"
#include "base/status.h"
#include "base/time.h"
#include "shm/layout.h"
#include "shm/segment.h"

namespace tandem::shm {

// A slot's key: a dropped-and-recreated id gets a new as_of, so it never binds a stale slot.
struct SlotKey {
  GlobalId id;
  Time as_of = 0;
  std::string ToString() const { return id.ToString() + "@" + std::to_string(as_of); }
  friend bool operator==(const SlotKey&, const SlotKey&) = default;
};

// Checks the header's registry fields and RegistryData against the mapping (Segment::Open does,
// before anything reads a row): the counts within what Create allows and equal to the header's,
// the stride the one RegistryBytes implies, every row inside the segment and aligned. Corruption
// naming the inconsistency otherwise, so no row or slot address can fall outside the mapping.
Status CheckRegistry(const Segment& segment);
// What Create allows (and CheckRegistry demands).
inline constexpr std::uint32_t kMaxWorkers = 1024;
inline constexpr std::uint32_t kMaxSlotsPerRow = 65536;

// Bytes the registry takes in the managed area for this shape.
std::uint64_t RegistryBytes(std::uint32_t workers, std::uint32_t slots_per_row);
// Builds the registry inside a freshly created segment; returns its offset. Creator only.
Result<std::uint64_t> InitializeRegistry(Segment& segment, std::uint32_t workers,
                                         std::uint32_t slots_per_row);

// Which side of a row is looking. A publisher never binds a slot it has unpublished, a reader
// never binds one whose hold it has released: so after a drop, a create of the same key makes a
// fresh slot on both sides however far apart the two runtimes are in the command stream.
enum class Side { kPublisher, kReader };

// (pid << 32 | tid) of the calling thread: the owner token of a row side.
std::uint64_t CurrentThreadToken();
pid_t TokenPid(std::uint64_t token);
pid_t TokenTid(std::uint64_t token);
bool ProcessAlive(pid_t pid);
// The number of forks this process descends from, counted from when it was first asked: what a
// handle records when it is made, so that a forked child can tell it inherited it (no syscall).
std::uint64_t ForkGeneration();

// Raises `word` to at least `value` (an atomic max): how holds, since and own frontiers move.
// Returns the value before.
inline std::uint64_t RaiseAtomic(std::atomic<std::uint64_t>& word, std::uint64_t value) {
  std::uint64_t current = word.load(std::memory_order_seq_cst);
  while (current < value && !word.compare_exchange_weak(current, value)) {
  }
  return current;
}

class Registry {
 public:
  explicit Registry(Segment* segment);

  Segment& segment() const { return *segment_; }
  std::uint32_t workers() const { return data_->workers; }
  std::uint32_t slots_per_row() const { return data_->slots_per_row; }
  RowData& row(std::uint32_t ordinal) const;
  SlotData& slot(std::uint32_t ordinal, std::uint32_t index) const;
  SlotKey KeyOf(const SlotData& slot) const;

  // Claims one side of a row for the calling thread (publisher_owner or reader_owner). Refused
  // while another live thread holds it; taken over when its process is gone.
  Status ClaimSide(std::uint32_t ordinal, Side side);
  void ReleaseSide(std::uint32_t ordinal, Side side);

  // Finds the slot `side` binds for `key`, creating a placeholder (all frontiers the minimum
  // time, never empty) when there is none. ResourceExhausted when the row is full.
  Result<std::uint32_t> FindOrCreate(std::uint32_t ordinal, const SlotKey& key, Side side);
  std::optional<std::uint32_t> Find(std::uint32_t ordinal, const SlotKey& key, Side side) const;

  // Returns a slot to the free list. REQUIRES: the row's publisher, with the slot unpublished,
  // its hold released, and no batch of it still allocated.
  void Free(std::uint32_t ordinal, std::uint32_t index);

 private:
  class CreationLock;
  std::optional<std::uint32_t> FindLocked(std::uint32_t ordinal, const SlotKey& key,
                                          Side side) const;

  Segment* segment_;
  RegistryData* data_;
};

}  // namespace tandem::shm

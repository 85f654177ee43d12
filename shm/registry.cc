#include "shm/registry.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>

#include "base/check.h"

namespace tandem::shm {

namespace {

std::uint64_t RowStride(std::uint32_t slots_per_row) {
  const std::uint64_t raw = sizeof(RowData) + std::uint64_t{slots_per_row} * sizeof(SlotData);
  return (raw + 63) & ~std::uint64_t{63};
}

void InitPlaceholder(SlotData& s, const SlotKey& key) {
  s.flags.store(0, std::memory_order_relaxed);
  s.id.store(key.id.Pack(), std::memory_order_relaxed);
  s.as_of.store(key.as_of, std::memory_order_relaxed);
  s.upper.store(kMinTime, std::memory_order_relaxed);
  s.since.store(kMinTime, std::memory_order_relaxed);
  s.own_frontier.store(kMinTime, std::memory_order_relaxed);
  s.peer_hold.store(kMinTime, std::memory_order_relaxed);
  s.list.store(0, std::memory_order_relaxed);
  // Not s.list_version: it counts up over all the slot's lives, so that a version a tool read in
  // an earlier life (and announces late) is below every version of this one and protects all of
  // it, rather than aliasing one of its small numbers.
  // Not s.reader_version: only the row's reader writes it (layout.h), and it is idle here: a slot
  // is freed only after its reader released it with no snapshot open.
  s.updates.store(0, std::memory_order_relaxed);
  s.batches.store(0, std::memory_order_relaxed);
  s.bytes.store(0, std::memory_order_relaxed);
  s.merges.store(0, std::memory_order_relaxed);
  s.import_hold.store(Frontier::kEmptyRaw, std::memory_order_relaxed);
  s.importers.store(0, std::memory_order_relaxed);
  s.reader_holds.store(0, std::memory_order_relaxed);
}

std::atomic<std::uint64_t>& SideOwner(RowData& row, Side side) {
  return side == Side::kPublisher ? row.publisher_owner : row.reader_owner;
}

const char* SideName(Side side) { return side == Side::kPublisher ? "publisher" : "reader"; }

}  // namespace

namespace {
// Bumped in a forked child (pthread_atfork): tells every thread-local token cache that the
// process changed identity, without a getpid() system call on every check.
std::atomic<std::uint64_t> g_fork_generation{0};
void OnForkInChild() { g_fork_generation.fetch_add(1, std::memory_order_relaxed); }

}  // namespace

std::uint64_t ForkGeneration() {
  static const bool registered = pthread_atfork(nullptr, nullptr, OnForkInChild) == 0;
  TANDEM_CHECK(registered, "pthread_atfork failed");
  return g_fork_generation.load(std::memory_order_relaxed);
}

std::uint64_t CurrentThreadToken() {
  // Cached per thread, but renewed after a fork: a forked child's thread inherits the parent's
  // cache and must not act under the parent's identity (nor be refused as if it were the parent).
  thread_local std::uint64_t generation = ~std::uint64_t{0};
  thread_local std::uint64_t token = 0;
  const std::uint64_t now = ForkGeneration();
  if (now != generation) {
    generation = now;
    token = (static_cast<std::uint64_t>(getpid()) << 32) |
            static_cast<std::uint32_t>(syscall(SYS_gettid));
  }
  return token;
}
pid_t TokenPid(std::uint64_t token) { return static_cast<pid_t>(token >> 32); }
pid_t TokenTid(std::uint64_t token) { return static_cast<pid_t>(token & 0xffffffffu); }
bool ProcessAlive(pid_t pid) { return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM); }

// A spin lock over RowData::creation_lock, held for one scan of a row's slots at most.
class Registry::CreationLock {
 public:
  explicit CreationLock(RowData& row) : word_(row.creation_lock) {
    for (int spins = 0;; ++spins) {
      std::uint32_t expected = 0;
      if (word_.compare_exchange_weak(expected, 1, std::memory_order_acquire)) return;
      if (spins > 64) sched_yield();
    }
  }
  ~CreationLock() { word_.store(0, std::memory_order_release); }
  CreationLock(const CreationLock&) = delete;
  CreationLock& operator=(const CreationLock&) = delete;

 private:
  std::atomic<std::uint32_t>& word_;
};

std::uint64_t RegistryBytes(std::uint32_t workers, std::uint32_t slots_per_row) {
  return 64 + std::uint64_t{workers} * RowStride(slots_per_row) + 64;
}

Status CheckRegistry(const Segment& segment) {
  const SegmentHeader& h = segment.header();
  const std::string what = "segment '" + segment.name() + "': ";
  if (h.workers == 0 || h.workers > kMaxWorkers) {
    return Status::Corruption(what + "header: " + std::to_string(h.workers) +
                              " workers, outside [1, " + std::to_string(kMaxWorkers) + "]");
  }
  if (h.slots_per_row == 0 || h.slots_per_row > kMaxSlotsPerRow) {
    return Status::Corruption(what + "header: " + std::to_string(h.slots_per_row) +
                              " slots per row, outside [1, " + std::to_string(kMaxSlotsPerRow) +
                              "]");
  }
  const std::uint64_t at = h.registry_offset;
  if (at % alignof(RegistryData) != 0 || !segment.Contains(at, sizeof(RegistryData))) {
    return Status::Corruption(what + "header: registry offset " + std::to_string(at) +
                              " is outside the segment or misaligned");
  }
  const RegistryData& r = *segment.At<RegistryData>(at);
  if (r.workers != h.workers || r.slots_per_row != h.slots_per_row) {
    return Status::Corruption(what + "registry: " + std::to_string(r.workers) + " rows of " +
                              std::to_string(r.slots_per_row) + " slots, but the header says " +
                              std::to_string(h.workers) + " of " + std::to_string(h.slots_per_row));
  }
  if (r.row_stride != RowStride(r.slots_per_row)) {
    return Status::Corruption(what + "registry: row stride " + std::to_string(r.row_stride) +
                              ", but " + std::to_string(r.slots_per_row) + " slots take " +
                              std::to_string(RowStride(r.slots_per_row)));
  }
  const std::uint64_t rows_bytes = std::uint64_t{r.workers} * r.row_stride;
  if (r.rows_offset % alignof(RowData) != 0 || r.rows_offset < at + sizeof(RegistryData) ||
      !segment.Contains(r.rows_offset, rows_bytes)) {
    return Status::Corruption(what + "registry: rows at offset " + std::to_string(r.rows_offset) +
                              " (" + std::to_string(rows_bytes) +
                              " bytes) are outside the segment or misaligned");
  }
  return Status::Ok();
}

Result<std::uint64_t> InitializeRegistry(Segment& segment, std::uint32_t workers,
                                         std::uint32_t slots_per_row) {
  const std::uint64_t stride = RowStride(slots_per_row);
  TANDEM_ASSIGN_OR_RETURN(std::uint64_t offset,
                          segment.Allocate(RegistryBytes(workers, slots_per_row), "the registry"));
  auto* data = new (segment.At<void>(offset)) RegistryData();
  data->workers = workers;
  data->slots_per_row = slots_per_row;
  data->row_stride = stride;
  data->rows_offset = (offset + sizeof(RegistryData) + 63) & ~std::uint64_t{63};
  for (std::uint32_t i = 0; i < workers; ++i) {
    auto* row = new (segment.At<void>(data->rows_offset + i * stride)) RowData();
    row->publisher_owner.store(0);
    row->reader_owner.store(0);
    row->creation_lock.store(0);
    row->ordinal = i;
    new (&row->wake) WakeChannelData();
    row->wake.overflow.store(0);
    row->wake.seq.store(0);
    row->wake.sleeping.store(0);
    row->wake.wakes_sent.store(0);
    auto* slots = reinterpret_cast<SlotData*>(row + 1);
    for (std::uint32_t j = 0; j < slots_per_row; ++j) {
      auto* s = new (&slots[j]) SlotData();
      s->list_version.store(0, std::memory_order_relaxed);
      s->state.store(static_cast<std::uint32_t>(SlotState::kFree));
      InitPlaceholder(*s, SlotKey{});
      s->reader_version.store(kReaderIdle, std::memory_order_relaxed);
    }
  }
  return offset;
}

Registry::Registry(Segment* segment)
    : segment_(segment), data_(segment->At<RegistryData>(segment->header().registry_offset)) {}

RowData& Registry::row(std::uint32_t ordinal) const {
  TANDEM_CHECK(ordinal < data_->workers, "registry row ordinal out of range");
  return *segment_->At<RowData>(data_->rows_offset + ordinal * data_->row_stride);
}

SlotData& Registry::slot(std::uint32_t ordinal, std::uint32_t index) const {
  TANDEM_CHECK(index < data_->slots_per_row, "slot index out of range");
  return reinterpret_cast<SlotData*>(&row(ordinal) + 1)[index];
}

SlotKey Registry::KeyOf(const SlotData& s) const {
  auto id = GlobalId::Unpack(s.id.load(std::memory_order_relaxed));
  return SlotKey{id.value_or(GlobalId()), s.as_of.load(std::memory_order_relaxed)};
}

Status Registry::ClaimSide(std::uint32_t ordinal, Side side) {
  if (ordinal >= data_->workers) {
    return Status::InvalidArgument("worker ordinal " + std::to_string(ordinal) +
                                   " out of range: the segment has " +
                                   std::to_string(data_->workers) + " rows");
  }
  std::atomic<std::uint64_t>& owner = SideOwner(row(ordinal), side);
  const std::uint64_t me = CurrentThreadToken();
  std::uint64_t current = owner.load();
  for (;;) {
    if (current == me) {
      return Status::FailedPrecondition(std::string("this thread already is the ") +
                                        SideName(side) + " of row " + std::to_string(ordinal));
    }
    if (current != 0 && ProcessAlive(TokenPid(current))) {
      return Status::FailedPrecondition(
          "row " + std::to_string(ordinal) + " already has a " + SideName(side) + " (pid " +
          std::to_string(TokenPid(current)) + ", thread " + std::to_string(TokenTid(current)) +
          "); each row has exactly one publishing and one reading thread");
    }
    if (owner.compare_exchange_weak(current, me)) return Status::Ok();
  }
}

void Registry::ReleaseSide(std::uint32_t ordinal, Side side) {
  std::uint64_t me = CurrentThreadToken();
  SideOwner(row(ordinal), side).compare_exchange_strong(me, 0);
}

std::optional<std::uint32_t> Registry::FindLocked(std::uint32_t ordinal, const SlotKey& key,
                                                  Side side) const {
  const std::uint64_t packed = key.id.Pack();
  const std::uint32_t skip = side == Side::kPublisher ? kSlotUnpublished : kSlotHoldReleased;
  for (std::uint32_t j = 0; j < data_->slots_per_row; ++j) {
    const SlotData& s = slot(ordinal, j);
    if (s.state.load(std::memory_order_acquire) != static_cast<std::uint32_t>(SlotState::kLive)) {
      continue;
    }
    if (s.id.load(std::memory_order_relaxed) == packed &&
        s.as_of.load(std::memory_order_relaxed) == key.as_of && (s.flags.load() & skip) == 0) {
      return j;
    }
  }
  return std::nullopt;
}

std::optional<std::uint32_t> Registry::Find(std::uint32_t ordinal, const SlotKey& key,
                                            Side side) const {
  CreationLock lock(row(ordinal));
  return FindLocked(ordinal, key, side);
}

Result<std::uint32_t> Registry::FindOrCreate(std::uint32_t ordinal, const SlotKey& key, Side side) {
  CreationLock lock(row(ordinal));
  if (auto found = FindLocked(ordinal, key, side)) return *found;
  for (std::uint32_t j = 0; j < data_->slots_per_row; ++j) {
    SlotData& s = slot(ordinal, j);
    if (s.state.load(std::memory_order_acquire) == static_cast<std::uint32_t>(SlotState::kFree)) {
      InitPlaceholder(s, key);
      s.state.store(static_cast<std::uint32_t>(SlotState::kLive), std::memory_order_release);
      return j;
    }
  }
  return Status::ResourceExhausted("registry row " + std::to_string(ordinal) + " is full: all " +
                                   std::to_string(data_->slots_per_row) +
                                   " slots are live; cannot add " + key.ToString());
}

void Registry::Free(std::uint32_t ordinal, std::uint32_t index) {
  CreationLock lock(row(ordinal));
  SlotData& s = slot(ordinal, index);
  const std::uint32_t flags = s.flags.load();
  TANDEM_CHECK((flags & kSlotUnpublished) && (flags & kSlotHoldReleased),
               "freeing a slot that is still published or held");
  TANDEM_CHECK(s.list.load() == 0, "freeing a slot that still has batches");
  s.state.store(static_cast<std::uint32_t>(SlotState::kFree), std::memory_order_release);
}

}  // namespace tandem::shm

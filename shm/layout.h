// Plain data that lives in the shared-memory segment. Nothing here has behaviour: the
// operations live in process-local classes (Segment, Registry, Publisher, Reader, Inspector)
// that point at these structs, so the type you hold says which side you are.
//
// Rules for every struct in this file:
//  * No raw pointers: a segment is mapped at a different address in every process. References
//    are byte offsets from the segment base (0 means "none").
//  * Fields shared between processes are std::atomic of a lock-free, address-free width
//    (static_asserts below); the rest is written once before being published by a release store.
//  * Shared fate (DESIGN §5): if any process dies mid-write, the supervisor kills the replica and
//    removes the segment, so no struct needs to be repairable after a torn write. A kept segment
//    (--keep-segment-on-crash) is read post-mortem by tools that validate as they go.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <boost/lockfree/spsc_queue.hpp>

namespace tandem::shm {

static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "shared atomics must be lock-free to be address-free across processes");
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
static_assert(std::atomic<std::int32_t>::is_always_lock_free);

// "TANDSEG1", little-endian. Written last at creation (release), so an opener that sees it
// sees a fully initialised header.
inline constexpr std::uint64_t kSegmentMagic = 0x3147455344'4e4154ULL;
// Bump on any change to a struct in this file or to the batch format.
inline constexpr std::uint32_t kLayoutVersion = 1;
// The header occupies the first page; the managed (allocator) area starts right after it.
inline constexpr std::size_t kHeaderBytes = 4096;
inline constexpr std::size_t kReplicaIdBytes = 64;

enum class Mode : std::uint32_t { kSolo = 1, kTwoRuntime = 2 };

// Index into SegmentHeader::runtimes. A solo runtime uses kMaintenance's entry.
enum class RuntimeRole : std::uint32_t { kMaintenance = 0, kInteractive = 1 };
inline constexpr std::size_t kRuntimeEntries = 2;

enum class RuntimeState : std::uint32_t {
  kAbsent = 0,    // not spawned yet
  kStarting = 1,  // spawned, not yet attached
  kAttached = 2,  // opened the segment and took its registry rows
  kReady = 3,     // serving commands
  kStopping = 4,  // shutting down on request
};

// One runtime process as seen by the segment. Written by that runtime (and the supervisor, which
// writes kStarting and the pid after spawning); read by anyone.
struct RuntimeEntry {
  std::atomic<std::int32_t> pid;
  std::atomic<std::uint32_t> state;  // RuntimeState
};

// The segment header, at offset 0 of the segment.
//  Created by: the supervisor (Segment::Create), the only writer of every non-atomic field,
//              all written before `magic` is stored with release order; immutable afterwards.
//  Read by: every runtime and tool, after checking `magic` (acquire) and `layout_version`.
//  Liveness: the creator holds an exclusive flock(2) on the segment's descriptor for as long as
//            it lives; a segment whose lock can be taken is stale (its supervisor is gone).
struct SegmentHeader {
  std::atomic<std::uint64_t> magic;  // offset 0: kSegmentMagic
  std::uint32_t layout_version;      // offset 8: kLayoutVersion
  std::uint32_t header_bytes;        // kHeaderBytes
  std::uint64_t segment_bytes;       // total size of the segment, header included
  std::uint64_t generation;          // distinguishes successive incarnations of one replica
  std::int32_t supervisor_pid;
  std::uint32_t workers;  // N, equal for both runtimes
  std::uint32_t mode;     // Mode
  std::uint32_t slots_per_row;
  std::uint64_t created_unix_ns;
  std::uint64_t managed_offset;  // start of the Boost.Interprocess managed area
  std::uint64_t managed_bytes;
  std::uint64_t registry_offset;     // RegistryData, allocated in the managed area
  char replica_id[kReplicaIdBytes];  // NUL-terminated
  RuntimeEntry runtimes[kRuntimeEntries];
};
static_assert(offsetof(SegmentHeader, magic) == 0, "magic lives at a fixed offset");
static_assert(offsetof(SegmentHeader, layout_version) == 8, "version lives at a fixed offset");
static_assert(sizeof(SegmentHeader) <= kHeaderBytes);
static_assert(std::is_standard_layout_v<SegmentHeader>);

// What the publisher tells reader i: this slot changed (published, upper advanced, since
// advanced, unpublished). Trivially copyable for the lock-free queue.
struct ChangedSlot {
  std::uint64_t id;  // GlobalId::Pack()
  std::uint64_t as_of;
  std::uint32_t slot;  // index in the row
  std::uint32_t reserved;
};
static_assert(std::is_trivially_copyable_v<ChangedSlot>);

inline constexpr std::size_t kWakeQueueCapacity = 1024;

// Wake-ups from publisher i to reader i (DESIGN §4 "Wake-ups").
//  Producer: the publishing thread of the row only. Consumer: the reading thread of the row only.
//  Protocol (no lost wake): the producer pushes ids (or sets `overflow` when the queue is full),
//  then increments `seq`, then futex-wakes if `sleeping`. The consumer loads `seq`, drains, and
//  sleeps only while `seq` still has the loaded value (the futex re-checks it atomically).
//  All operations on seq/sleeping are seq_cst, which closes the sleeping-flag race.
struct WakeChannelData {
  boost::lockfree::spsc_queue<ChangedSlot, boost::lockfree::capacity<kWakeQueueCapacity>> queue;
  std::atomic<std::uint32_t> overflow;  // sticky until drained: "rescan every slot"
  std::atomic<std::uint32_t> seq;       // the futex word
  std::atomic<std::uint32_t> sleeping;  // consumer is (about to be) in futex_wait
  std::atomic<std::uint64_t> wakes_sent;
};
static_assert(sizeof(std::atomic<std::uint32_t>) == 4, "futex words are 32 bits");

// Slot lifecycle states.
enum class SlotState : std::uint32_t { kFree = 0, kLive = 1 };

// Slot flags (SlotData::flags), set with fetch_or, never cleared while the slot is live — except
// kSlotStalled, which only the publisher sets and clears (a status for operators, not a state).
inline constexpr std::uint32_t kSlotFilled = 1u << 0;        // publisher has published it
inline constexpr std::uint32_t kSlotUnpublished = 1u << 1;   // publisher dropped it
inline constexpr std::uint32_t kSlotHoldReleased = 1u << 2;  // reader released its peer hold
inline constexpr std::uint32_t kSlotStalled = 1u << 3;       // last Append found the segment full

// Version value meaning "this reader holds no snapshot".
inline constexpr std::uint64_t kReaderIdle = ~std::uint64_t{0};
// Announcement entries per slot: entry 0 is the row's reading thread; the rest are claimed by
// tools (tandem-shm) so that inspecting a live replica never takes the runtime's entry.
inline constexpr std::size_t kReaderEntries = 4;
inline constexpr std::size_t kRuntimeReaderEntry = 0;

// An LMDB-style reader announcement: the batch-list version a reader may be using.
//  Writer: the reader owning the entry (tools claim `owner` with a CAS from 0 to their pid).
//  Read by: the publisher, which frees a retired batch only if every announced version is idle or
//  newer than the batch's retirement version.
struct ReaderEntry {
  std::atomic<std::uint64_t> owner;    // 0 free; the pid of a tool; unused for entry 0
  std::atomic<std::uint64_t> version;  // kReaderIdle or a list version
};

// One shared arrangement: collection `id` as created at `as_of` (DESIGN §4).
//  Created by: whichever side of the row looks it up first, under RowData::creation_lock, as a
//              placeholder whose frontiers are all the minimum time (never empty).
//  Writers: the publisher writes upper, since, own_frontier, list, list_version, counters and the
//           Filled/Unpublished flags; the reader raises peer_hold and sets HoldReleased; both
//           raise peer_hold only by atomic max (holds only rise). Tools write nothing but their
//           own ReaderEntry.
//  Freed by: the publisher only, under creation_lock, once Unpublished and HoldReleased are both
//            set and every retired batch is freed.
//  Readers see a consistent snapshot by loading upper, then announcing and loading the list,
//  then loading since (see reader.h for why that order is the right one).
struct alignas(64) SlotData {
  std::atomic<std::uint32_t> state;  // SlotState
  std::atomic<std::uint32_t> flags;  // kSlot* bits
  std::uint64_t id;                  // GlobalId::Pack(); written before state becomes kLive
  std::uint64_t as_of;
  std::atomic<std::uint64_t> upper;         // Frontier raw
  std::atomic<std::uint64_t> since;         // Frontier raw: published compaction frontier
  std::atomic<std::uint64_t> own_frontier;  // Frontier raw: publisher's controller frontier
  std::atomic<std::uint64_t> peer_hold;     // Frontier raw: the reading runtime's hold
  std::atomic<std::uint64_t> list;          // offset of BatchListData, 0 = no batches
  std::atomic<std::uint64_t> list_version;  // version of `list` (0 = none yet)
  ReaderEntry readers[kReaderEntries];
  std::atomic<std::uint64_t> updates;  // in the current batch list
  std::atomic<std::uint64_t> batches;
  std::atomic<std::uint64_t> bytes;   // of the current batches
  std::atomic<std::uint64_t> merges;  // lifetime count
};

// An immutable list of batches, one allocation, replaced (never edited) by the publisher.
struct BatchListData {
  std::uint64_t version;
  std::uint64_t count;
  std::uint64_t batches[1];  // `count` offsets (flexible; allocated to size)
};

// One registry row per worker ordinal: exactly one publishing thread and one reading thread.
//  publisher_owner / reader_owner: (pid << 32 | tid) of the attached thread, 0 when free;
//  claimed by CAS at attach, so a second publisher (or reader) of a row is refused.
//  creation_lock: a spin lock held only while finding/creating/freeing a slot (never while
//  reading or publishing data); a holder dying takes the replica down with it.
struct alignas(64) RowData {
  std::atomic<std::uint64_t> publisher_owner;
  std::atomic<std::uint64_t> reader_owner;
  std::atomic<std::uint32_t> creation_lock;
  std::uint32_t ordinal;
  WakeChannelData wake;
  // followed by RegistryData::slots_per_row SlotData
};

// The registry: N rows. Created by the supervisor with the segment; immutable shape.
struct RegistryData {
  std::uint32_t workers;
  std::uint32_t slots_per_row;
  std::uint64_t row_stride;   // bytes from one RowData to the next
  std::uint64_t rows_offset;  // offset of row 0 from the segment base
};

}  // namespace tandem::shm

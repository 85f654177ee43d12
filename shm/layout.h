// Plain data that lives in the shared-memory segment. Nothing here has behaviour: the
// operations live in process-local classes (Segment, Registry, Publisher, Reader, Inspector)
// that point at these structs, so the type you hold says which side you are.
//
// Rules for every struct in this file:
//  * No raw pointers: a segment is mapped at a different address in every process. References
//    are byte offsets from the segment base (0 means "none").
//  * Fields shared between processes are std::atomic of a lock-free, address-free width
//    (static_asserts below); the rest is written once before being published by a release store.
//  * Every struct's size, alignment and field offsets are pinned by static_asserts at the end of
//    this file, and every field is listed in its struct's field table there (checked: the tables
//    must tile each struct exactly, so padding is explicit `reserved` space). The tables feed
//    kLayoutHash, which the creator stores in the header and every opener compares with its own:
//    a segment written by a build whose layout differs in any way (a field, a compiler, a Boost
//    version) is refused at attach instead of being misread.
//  * Shared fate (DESIGN §5): if any process dies mid-write, the supervisor kills the replica and
//    removes the segment, so no struct needs to be repairable after a torn write. A kept segment
//    (--keep-segment-on-crash) is read post-mortem by tools that validate as they go.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <type_traits>

#include <boost/lockfree/spsc_queue.hpp>
#include <boost/version.hpp>

#include "base/role.h"
#include "shm/routing.h"

namespace tandem::shm {

// "TANDSEG1", little-endian. Written last at creation (release), so an opener that sees it
// sees a fully initialised header.
inline constexpr std::uint64_t kSegmentMagic = 0x3147455344'4e4154ULL;
// The meaning of the layout, which no compiler can check: bump it on any change to what a field,
// flag or constant means, to the batch columns' encoding, to base/row.h's row encoding, or to a
// protocol step (reader.h, reader_table.h, peek_ring.h, WakeChannelData). Changes to the *shape*
// of a struct are caught by kLayoutHash (at the end of this file) without a bump.
// What a reader must check before it reads anything else (Segment::Open and its kin): `magic`
// (acquire), then `layout_version` == kLayoutVersion and `layout_hash` == kLayoutHash — the
// version for meaning, the hash for shape; either differing refuses the segment. Equal versions
// promise that both sides read these meanings alike:
//  * the header's `closed`: 1 once the supervisor is about to remove the segment; a local reader
//    that sees it fails its calls instead of answering from a dead replica;
//  * a slot's `reader_version` is only its row's reading thread's announcement; tools and local
//    readers announce in the reader table (shm/reader_table.h), and a publisher frees a retired
//    batch only once the slot's and every table entry's announcement allow it (publisher.h, P3);
//  * a batch ("TDBATCH2") carries a key index after its columns (BatchHeader::key_prefix_skip,
//    key_index_at; shm/key_index.h), which readers search instead of the key column;
//  * a batch's keys are key-encoded (base/row.h "Keys": numerics and intervals by value), its
//    values are encoded rows;
//  * `peek_rings_offset` names the peek rings (PeekRingsData, DESIGN §14), or is 0 for none; their
//    records follow shm/peek_ring.h.
inline constexpr std::uint32_t kLayoutVersion = 6;
// The header occupies the first page; the managed (allocator) area starts right after it.
inline constexpr std::size_t kHeaderBytes = 4096;
inline constexpr std::size_t kReplicaIdBytes = 64;

enum class Mode : std::uint32_t { kSolo = 1, kTwoRuntime = 2 };

// SegmentHeader::runtimes has one entry per runtime process: maintenance's (which a solo
// runtime uses) and interactive's.
inline constexpr std::size_t kRuntimeEntries = 2;
constexpr std::size_t RuntimeEntryOf(Role role) { return role == Role::kInteractive ? 1 : 0; }

enum class RuntimeState : std::uint32_t {
  kAbsent = 0,    // not spawned yet
  kStarting = 1,  // spawned, not yet attached
  kAttached = 2,  // opened the segment and took its registry rows
  kReady = 3,     // serving commands
  kStopping = 4,  // shutting down on request
};

// One runtime process as seen by the segment. Written by that runtime (and the supervisor, which
// writes kStarting and the pid after spawning); read by anyone.
//  progress: a counter the runtime's command thread raises (relaxed) about every 100 ms while its
//  command thread and every worker thread have each moved on since the last raise — turned its
//  loop, or finished a unit of work within a long turn (a message to the command thread) —
//  traffic or not (idle workers wake at least once a second). The supervisor's stall watch reads
//  it: a counter that stops moving means a stopped or wedged runtime — or a single unit of work
//  as long as the stall timeout (one maintenance step), not many short ones.
struct RuntimeEntry {
  std::atomic<std::int32_t> pid;
  std::atomic<std::uint32_t> state;  // RuntimeState
  std::atomic<std::uint64_t> progress;
};

// The segment header, at offset 0 of the segment.
//  Created by: the supervisor (Segment::Create), the only writer of every non-atomic field,
//              all written before `magic` is stored with release order; immutable afterwards.
//  Read by: every runtime and tool, after checking `magic` (acquire), `layout_version` and
//           `layout_hash`.
//  Liveness: the creator holds an exclusive flock(2) on the segment's descriptor for as long as
//            it lives; a segment whose lock can be taken is stale (its supervisor is gone).
//  The first 28 bytes (magic, version, header size, layout hash, Boost version) stay where they
//  are in every build, past and future, so that any build can say why it refuses a segment.
struct SegmentHeader {
  std::atomic<std::uint64_t> magic;  // offset 0: kSegmentMagic
  std::uint32_t layout_version;      // offset 8: kLayoutVersion
  std::uint32_t header_bytes;        // offset 12: kHeaderBytes
  std::uint64_t layout_hash;         // offset 16: kLayoutHash of the creating build
  std::uint32_t boost_version;       // offset 24: BOOST_VERSION of the creating build
  std::int32_t supervisor_pid;
  std::uint64_t segment_bytes;  // total size of the segment, header included
  std::uint64_t generation;     // distinguishes successive incarnations of one replica
  std::uint32_t workers;        // N, equal for both runtimes
  std::uint32_t mode;           // Mode
  std::uint32_t slots_per_row;
  // 0 while the replica lives; the supervisor stores 1 (release) before it removes the segment on
  // any exit it lives to see (shutdown, shared fate), so a local reader that still maps the
  // removed segment fails its next call instead of answering from a dead replica (DESIGN §11).
  std::atomic<std::uint32_t> closed;
  std::uint64_t created_unix_ns;
  std::uint64_t managed_offset;  // start of the Boost.Interprocess managed area
  std::uint64_t managed_bytes;
  std::uint64_t registry_offset;  // RegistryData, allocated in the managed area
  // PeekRingsData, allocated in the managed area; 0 when the replica has no peek fast path.
  std::uint64_t peek_rings_offset;
  // `workers` StepStatsData, one per worker of the lockstep runtime (maintenance, solo),
  // allocated in the managed area; 0 in a segment made without them (a test's image).
  std::uint64_t step_stats_offset;
  char replica_id[kReplicaIdBytes];  // NUL-terminated
  RuntimeEntry runtimes[kRuntimeEntries];
};

// What the publisher tells reader i: this slot changed (published, upper advanced, since
// advanced, unpublished). Trivially copyable for the lock-free queue.
struct ChangedSlot {
  std::uint64_t id;  // GlobalId::Pack()
  std::uint64_t as_of;
  std::uint32_t slot;  // index in the row
  std::uint32_t reserved;
};

inline constexpr std::size_t kWakeQueueCapacity = 1024;
// Lives inside the segment, so its layout is part of ours: pinned below, and in kLayoutHash
// (with BOOST_VERSION), so that a Boost upgrade cannot change the segment silently.
using WakeQueue =
    boost::lockfree::spsc_queue<ChangedSlot, boost::lockfree::capacity<kWakeQueueCapacity>>;

// Wake-ups from publisher i to reader i (DESIGN §4 "Wake-ups").
//  Producer: the publishing thread of the row only. Consumer: the reading thread of the row only.
//  Protocol (no lost wake): the producer pushes ids (or sets `overflow` when the queue is full),
//  then increments `seq`, then futex-wakes if `sleeping`. The consumer loads `seq`, drains, and
//  sleeps only while `seq` still has the loaded value (the futex re-checks it atomically).
//  All operations on seq/sleeping are seq_cst, which closes the sleeping-flag race.
struct WakeChannelData {
  WakeQueue queue;
  std::atomic<std::uint32_t> overflow;  // sticky until drained: "rescan every slot"
  std::atomic<std::uint32_t> seq;       // the futex word
  std::atomic<std::uint32_t> sleeping;  // consumer is (about to be) in futex_wait
  std::uint32_t reserved;               // 0
  std::atomic<std::uint64_t> wakes_sent;
};

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

// One shared arrangement: collection `id` as created at `as_of` (DESIGN §4).
//  Created by: whichever side of the row looks it up first, under RowData::creation_lock, as a
//              placeholder whose frontiers are all the minimum time (never empty).
//  Writers: the publisher writes upper, since, own_frontier, list, list_version, counters and the
//           Filled/Unpublished flags; the reader raises peer_hold and sets HoldReleased; both
//           raise peer_hold only by atomic max (holds only rise). Nobody else writes a slot: tools
//           and local readers announce in the reader table (shm/reader_table.h), beside the
//           segment.
//  Freed by: the publisher only, under creation_lock, once Unpublished and HoldReleased are both
//            set and every retired batch is freed.
//  Readers see a consistent snapshot by loading upper, then announcing and loading the list,
//  then loading since (see reader.h for why that order is the right one).
struct alignas(64) SlotData {
  std::atomic<std::uint32_t> state;  // SlotState
  std::atomic<std::uint32_t> flags;  // kSlot* bits
  // The slot's key: GlobalId::Pack() and as_of. Stored (relaxed) under RowData::creation_lock
  // before `state` becomes kLive (release), and again whenever the slot is reused; atomic because
  // tools read it without the lock and validate afterwards (Inspector::Take).
  std::atomic<std::uint64_t> id;
  std::atomic<std::uint64_t> as_of;
  std::atomic<std::uint64_t> upper;         // Frontier raw
  std::atomic<std::uint64_t> since;         // Frontier raw: published compaction frontier
  std::atomic<std::uint64_t> own_frontier;  // Frontier raw: publisher's controller frontier
  std::atomic<std::uint64_t> peer_hold;     // Frontier raw: the reading runtime's hold
  std::atomic<std::uint64_t> list;          // offset of BatchListData, 0 = no batches
  // Version of `list`: rises with each list the publisher installs, over all the slot's lives
  // (never reset on reuse: see registry.cc).
  std::atomic<std::uint64_t> list_version;
  // The row's reading thread's LMDB-style announcement: kReaderIdle, or the list version it may
  // be reading. Written by that thread only; read by the publisher, which frees a retired batch
  // only once this, and every announcement in the reader table that targets the slot, is idle or
  // at least the version that retired it (publisher.h, P3). Never reset on reuse: a slot is freed
  // only when it is idle.
  std::atomic<std::uint64_t> reader_version;
  std::atomic<std::uint64_t> updates;  // in the current batch list
  std::atomic<std::uint64_t> batches;
  std::atomic<std::uint64_t> bytes;   // of the current batches
  std::atomic<std::uint64_t> merges;  // lifetime count
  // Holds besides the peer hold, for operators and tools (tandem-shm). import_hold: the lowest
  // hold of the publisher's own importers (Maintained dataflows of the publishing runtime that
  // import this index, DESIGN §8), the empty frontier when there is none; written by the publisher
  // only, which compacts to min(own_frontier, peer_hold, import_hold). importers: how many such
  // holds. reader_holds: how many holds the reading side keeps under its controller frontier
  // (one-shot imports and waiting peeks); written by the reader only, which publishes
  // peer_hold = min(its controller frontier, every such hold).
  std::atomic<std::uint64_t> import_hold;  // Frontier raw
  std::atomic<std::uint64_t> importers;
  std::atomic<std::uint64_t> reader_holds;
  std::uint64_t reserved[7];  // 0; keeps a slot three whole cache lines
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
inline constexpr std::size_t kRowDataHead = 24;  // the bytes of RowData before `wake`
inline constexpr std::size_t kRowDataReserved = 64 - (kRowDataHead + sizeof(WakeChannelData)) % 64;
struct alignas(64) RowData {
  std::atomic<std::uint64_t> publisher_owner;
  std::atomic<std::uint64_t> reader_owner;
  std::atomic<std::uint32_t> creation_lock;
  std::uint32_t ordinal;
  WakeChannelData wake;
  std::uint8_t reserved[kRowDataReserved];  // 0; pads the row to a whole number of cache lines
  // followed by RegistryData::slots_per_row SlotData
};

// The registry: N rows. Created by the supervisor with the segment; immutable shape.
struct RegistryData {
  std::uint32_t workers;
  std::uint32_t slots_per_row;
  std::uint64_t row_stride;   // bytes from one RowData to the next
  std::uint64_t rows_offset;  // offset of row 0 from the segment base
};

// The peek fast path (DESIGN §14): a byte ring in the segment that carries Peek and CancelPeek
// commands from the supervisor to the runtime that serves peeks, and one that carries their
// PeekResponses back (shm/peek_ring.h has the protocol).
//  Producer: one thread of one process (the supervisor's loop; the runtime's command thread).
//  Consumer: one thread of the other. Nothing else writes a ring.
//  head: bytes ever pushed (producer; release after the record's bytes). tail: bytes ever
//  consumed (consumer; release after it is done with the record's bytes). A record is an 8-byte
//  RingRecordHeader and its payload, padded to 8 bytes, never split across the end: a record that
//  would be is preceded by a pad record to the end. sleeping: the consumer is (about to be) asleep
//  in poll(2) on its wake-up eventfd, which the producer then writes (seq_cst on both sides: no
//  lost wake-up). The counters are statistics (pushed, full and too_large are in /metrics).
struct alignas(64) PeekRingData {
  // The producer's cache line.
  std::atomic<std::uint64_t> head;
  std::atomic<std::uint64_t> pushed;      // records pushed
  std::atomic<std::uint64_t> full;        // pushes refused: not enough room now
  std::atomic<std::uint64_t> too_large;   // pushes refused: larger than max_record
  std::atomic<std::uint64_t> wakes_sent;  // eventfd writes
  std::uint64_t reserved0[3];             // 0
  // The consumer's cache line.
  std::atomic<std::uint64_t> tail;
  std::atomic<std::uint32_t> sleeping;
  std::uint32_t reserved1;     // 0
  std::uint64_t reserved2[6];  // 0
  // Written once at creation.
  std::uint64_t capacity;      // bytes of data: a power of two, at least kMinPeekRingBytes
  std::uint64_t data_offset;   // from the segment base: `capacity` bytes, 64-byte aligned
  std::uint64_t max_record;    // largest payload a push takes: capacity / 4
  std::uint64_t reserved3[5];  // 0
};
inline constexpr std::uint64_t kMinPeekRingBytes = 4096;
// Records' sizes fit 32 bits.
inline constexpr std::uint64_t kMaxPeekRingBytes = std::uint64_t{1} << 30;
// A ring capacity a segment may have: a power of two in [kMinPeekRingBytes, kMaxPeekRingBytes].
constexpr bool ValidPeekRingBytes(std::uint64_t n) {
  return n >= kMinPeekRingBytes && n <= kMaxPeekRingBytes && (n & (n - 1)) == 0;
}
// Before each record in a ring's data.
struct RingRecordHeader {
  std::uint32_t bytes;  // of the payload (a pad record: of the pad after this header)
  std::uint32_t kind;   // kRingRecord or kRingPad
};
inline constexpr std::uint32_t kRingRecord = 1;
inline constexpr std::uint32_t kRingPad = 2;
// The two rings of a replica with the fast path, one allocation (the data follows).
struct PeekRingsData {
  PeekRingData requests;  // supervisor → the runtime that serves peeks
  PeekRingData answers;   // that runtime → the supervisor
};

// Step statistics of one worker of the lockstep runtime (maintenance, solo; workers/step_stats.h),
// which the supervisor exports in /metrics (tandem_runtime_step_seconds and the worker's busy and
// waiting seconds). Statistics only: nothing decides anything on them.
//  Writer: that worker's thread only, relaxed adds (each word only rises). Readers: anyone,
//  relaxed loads; a reader may see one step's words half-updated (count before sum), which a
//  scrape tolerates.
//  step_buckets[i], i < kStepBuckets - 1: steps whose duration (wall time of Renderer::Step,
//  exchange barriers included) was at most 2^(kStepBucketMinLog2 + i) s and more than the bucket
//  before's bound (not cumulative); the last: longer than 2^(kStepBucketMinLog2 + kStepBuckets - 2)
//  s. step_count: steps; step_ns: their durations' sum. busy_ns: time in the lockstep loop doing
//  work (applying commands, serving solo's peeks, stepping, reporting), barrier waits excluded.
//  waiting_ns: time waiting at the loop's start and tick barriers and at exchange barriers. The
//  rest of the loop's wall time it sleeps for work (neither).
inline constexpr std::size_t kStepBuckets = 18;  // le 2^-16 s ... 2^0 s, then +Inf
inline constexpr int kStepBucketMinLog2 = -16;
struct alignas(64) StepStatsData {
  std::atomic<std::uint64_t> step_buckets[kStepBuckets];
  std::atomic<std::uint64_t> step_count;
  std::atomic<std::uint64_t> step_ns;
  std::atomic<std::uint64_t> busy_ns;
  std::atomic<std::uint64_t> waiting_ns;
  std::uint64_t reserved[2];  // 0; three whole cache lines: no two workers share one
};

inline constexpr std::uint64_t kBatchMagic = 0x3248435441424454ULL;  // "TDBATCH2"

// The fixed part at the start of every batch allocation (the columns follow; shm/batch.h).
// Written once by the publisher before the batch is reachable from any batch list; read-only
// afterwards.
struct BatchHeader {
  std::uint64_t magic;
  std::uint64_t total_bytes;
  std::uint64_t key_count, val_count, update_count;
  std::uint64_t since;  // Frontier raw
  std::uint64_t min_time, max_time;
  // Byte offsets from the batch start.
  std::uint64_t times_at, diffs_at, key_offsets_at, key_vals_at, val_offsets_at, val_updates_at,
      key_bytes_at, val_bytes_at;
  // The key search index (shm/batch.h "key index"): the bytes every key starts with, and where
  // the index's levels start (64-byte aligned in memory, wherever the batch is mapped).
  std::uint64_t key_prefix_skip, key_index_at;
};

// ---------------------------------------------------------------------------------------------
// The layout, checked. Everything below is compile time.

// Shared words are lock-free, hence address-free: the same atomic is mapped at a different address
// in every process, which only lock-free atomics survive. Boost.Lockfree's indices included (it
// uses std::atomic with GCC and Clang, boost::atomic elsewhere; either way this must hold).
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
static_assert(std::atomic<std::int32_t>::is_always_lock_free);
static_assert(boost::lockfree::detail::atomic<std::size_t>::is_always_lock_free);
static_assert(sizeof(std::atomic<std::uint64_t>) == 8 && alignof(std::atomic<std::uint64_t>) == 8);
static_assert(sizeof(std::atomic<std::uint32_t>) == 4, "futex words are 32 bits");
static_assert(std::endian::native == std::endian::little, "magic numbers are little-endian");

// Plain data copied as bytes (the queue copies ChangedSlot; batches and lists are written once):
// trivially copyable with no padding bits, so every byte is meaningful and defined.
static_assert(std::is_trivially_copyable_v<ChangedSlot> &&
              std::has_unique_object_representations_v<ChangedSlot>);
static_assert(std::is_trivially_copyable_v<BatchListData> &&
              std::has_unique_object_representations_v<BatchListData>);
static_assert(std::is_trivially_copyable_v<RegistryData> &&
              std::has_unique_object_representations_v<RegistryData>);
static_assert(std::is_trivially_copyable_v<BatchHeader> &&
              std::has_unique_object_representations_v<BatchHeader>);
static_assert(std::is_trivially_copyable_v<RingRecordHeader> &&
              std::has_unique_object_representations_v<RingRecordHeader>);
// Standard layout: offsetof is well-defined and the struct means the same to every compiler. Not
// WakeChannelData and RowData, which hold Boost's queue (a class hierarchy with data in a base
// and the derived class); their offsets are still pinned below, and the queue's size with them.
static_assert(std::is_standard_layout_v<RuntimeEntry>);
static_assert(std::is_standard_layout_v<SegmentHeader>);
static_assert(std::is_standard_layout_v<ChangedSlot>);
static_assert(std::is_standard_layout_v<SlotData>);
static_assert(std::is_standard_layout_v<BatchListData>);
static_assert(std::is_standard_layout_v<RegistryData>);
static_assert(std::is_standard_layout_v<BatchHeader>);
static_assert(std::is_standard_layout_v<PeekRingData>);
static_assert(std::is_standard_layout_v<PeekRingsData>);
static_assert(std::is_standard_layout_v<StepStatsData>);
// Nothing in the segment is ever destroyed (it is unmapped), so nothing may need its destructor.
// The queue's destructor only drains it, which ChangedSlot (trivially destructible) does not need.
static_assert(std::is_trivially_destructible_v<RuntimeEntry>);
static_assert(std::is_trivially_destructible_v<SegmentHeader>);
static_assert(std::is_trivially_destructible_v<SlotData>);
static_assert(std::is_trivially_destructible_v<ChangedSlot>);
static_assert(std::is_trivially_destructible_v<PeekRingsData>);
static_assert(std::is_trivially_destructible_v<StepStatsData>);

// Boost.Lockfree's queue as Boost 1.81 lays it out on LP64: write index, padding to a cache line,
// read index, then capacity + 1 elements. A Boost upgrade that changes it fails here first.
static_assert(sizeof(WakeQueue) == 64 + 8 + (kWakeQueueCapacity + 1) * sizeof(ChangedSlot));
static_assert(alignof(WakeQueue) == 8);

namespace layout_detail {

// FNV-1a of text: a field's name, a type's spelling.
constexpr std::uint64_t TextHash(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}
// The type T as the compiler spells it (this function's signature names it): two types of one
// size — int64 and uint64, a plain word and an atomic one — fold differently.
template <typename T>
constexpr std::uint64_t TypeHash() {
  return TextHash(__PRETTY_FUNCTION__);
}

// One field of a struct: where it starts, how many bytes it takes, its name and its type — so
// that two fields of one size swapped, or a field's type changed but not its size, change
// kLayoutHash too.
struct Field {
  std::size_t offset = 0, size = 0;
  std::uint64_t name = 0, type = 0;
};

// True when `fields`, in declaration order, tile a struct of `size` bytes exactly: each starts
// where the previous ended, the first at 0, the last ends at `size`. So a field added to a struct
// but not to its table (and so not to kLayoutHash) fails to compile, and padding is explicit.
template <std::size_t N>
constexpr bool Tiles(std::size_t size, const Field (&fields)[N]) {
  std::size_t end = 0;
  for (const Field& f : fields) {
    if (f.offset != end) return false;
    end = f.offset + f.size;
  }
  return end == size;
}

// FNV-1a over the 8 little-endian bytes of each value.
constexpr std::uint64_t Fold(std::uint64_t h, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) {
    h ^= (value >> (8 * i)) & 0xff;
    h *= 0x100000001b3ULL;
  }
  return h;
}
template <std::size_t N>
constexpr std::uint64_t FoldStruct(std::uint64_t h, std::size_t size, std::size_t align,
                                   const Field (&fields)[N]) {
  h = Fold(Fold(Fold(h, size), align), N);
  for (const Field& f : fields) h = Fold(Fold(Fold(Fold(h, f.offset), f.size), f.name), f.type);
  return h;
}

}  // namespace layout_detail

#define TANDEM_SHM_FIELD(S, f)                                                \
  ::tandem::shm::layout_detail::Field {                                       \
    offsetof(S, f), sizeof(S::f), ::tandem::shm::layout_detail::TextHash(#f), \
        ::tandem::shm::layout_detail::TypeHash<decltype(S::f)>()              \
  }

// offsetof on WakeChannelData and RowData, which are not standard-layout (see above): GCC and
// Clang define it for any class without virtual bases, which these have none of.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"

inline constexpr layout_detail::Field kRuntimeEntryFields[] = {
    TANDEM_SHM_FIELD(RuntimeEntry, pid), TANDEM_SHM_FIELD(RuntimeEntry, state),
    TANDEM_SHM_FIELD(RuntimeEntry, progress)};
inline constexpr layout_detail::Field kSegmentHeaderFields[] = {
    TANDEM_SHM_FIELD(SegmentHeader, magic),
    TANDEM_SHM_FIELD(SegmentHeader, layout_version),
    TANDEM_SHM_FIELD(SegmentHeader, header_bytes),
    TANDEM_SHM_FIELD(SegmentHeader, layout_hash),
    TANDEM_SHM_FIELD(SegmentHeader, boost_version),
    TANDEM_SHM_FIELD(SegmentHeader, supervisor_pid),
    TANDEM_SHM_FIELD(SegmentHeader, segment_bytes),
    TANDEM_SHM_FIELD(SegmentHeader, generation),
    TANDEM_SHM_FIELD(SegmentHeader, workers),
    TANDEM_SHM_FIELD(SegmentHeader, mode),
    TANDEM_SHM_FIELD(SegmentHeader, slots_per_row),
    TANDEM_SHM_FIELD(SegmentHeader, closed),
    TANDEM_SHM_FIELD(SegmentHeader, created_unix_ns),
    TANDEM_SHM_FIELD(SegmentHeader, managed_offset),
    TANDEM_SHM_FIELD(SegmentHeader, managed_bytes),
    TANDEM_SHM_FIELD(SegmentHeader, registry_offset),
    TANDEM_SHM_FIELD(SegmentHeader, peek_rings_offset),
    TANDEM_SHM_FIELD(SegmentHeader, step_stats_offset),
    TANDEM_SHM_FIELD(SegmentHeader, replica_id),
    TANDEM_SHM_FIELD(SegmentHeader, runtimes)};
inline constexpr layout_detail::Field kChangedSlotFields[] = {
    TANDEM_SHM_FIELD(ChangedSlot, id), TANDEM_SHM_FIELD(ChangedSlot, as_of),
    TANDEM_SHM_FIELD(ChangedSlot, slot), TANDEM_SHM_FIELD(ChangedSlot, reserved)};
inline constexpr layout_detail::Field kWakeChannelDataFields[] = {
    TANDEM_SHM_FIELD(WakeChannelData, queue),    TANDEM_SHM_FIELD(WakeChannelData, overflow),
    TANDEM_SHM_FIELD(WakeChannelData, seq),      TANDEM_SHM_FIELD(WakeChannelData, sleeping),
    TANDEM_SHM_FIELD(WakeChannelData, reserved), TANDEM_SHM_FIELD(WakeChannelData, wakes_sent)};
inline constexpr layout_detail::Field kSlotDataFields[] = {
    TANDEM_SHM_FIELD(SlotData, state),
    TANDEM_SHM_FIELD(SlotData, flags),
    TANDEM_SHM_FIELD(SlotData, id),
    TANDEM_SHM_FIELD(SlotData, as_of),
    TANDEM_SHM_FIELD(SlotData, upper),
    TANDEM_SHM_FIELD(SlotData, since),
    TANDEM_SHM_FIELD(SlotData, own_frontier),
    TANDEM_SHM_FIELD(SlotData, peer_hold),
    TANDEM_SHM_FIELD(SlotData, list),
    TANDEM_SHM_FIELD(SlotData, list_version),
    TANDEM_SHM_FIELD(SlotData, reader_version),
    TANDEM_SHM_FIELD(SlotData, updates),
    TANDEM_SHM_FIELD(SlotData, batches),
    TANDEM_SHM_FIELD(SlotData, bytes),
    TANDEM_SHM_FIELD(SlotData, merges),
    TANDEM_SHM_FIELD(SlotData, import_hold),
    TANDEM_SHM_FIELD(SlotData, importers),
    TANDEM_SHM_FIELD(SlotData, reader_holds),
    TANDEM_SHM_FIELD(SlotData, reserved)};
inline constexpr layout_detail::Field kBatchListDataFields[] = {
    TANDEM_SHM_FIELD(BatchListData, version), TANDEM_SHM_FIELD(BatchListData, count),
    TANDEM_SHM_FIELD(BatchListData, batches)};
inline constexpr layout_detail::Field kRowDataFields[] = {
    TANDEM_SHM_FIELD(RowData, publisher_owner),
    TANDEM_SHM_FIELD(RowData, reader_owner),
    TANDEM_SHM_FIELD(RowData, creation_lock),
    TANDEM_SHM_FIELD(RowData, ordinal),
    TANDEM_SHM_FIELD(RowData, wake),
    TANDEM_SHM_FIELD(RowData, reserved)};
inline constexpr layout_detail::Field kRegistryDataFields[] = {
    TANDEM_SHM_FIELD(RegistryData, workers), TANDEM_SHM_FIELD(RegistryData, slots_per_row),
    TANDEM_SHM_FIELD(RegistryData, row_stride), TANDEM_SHM_FIELD(RegistryData, rows_offset)};
inline constexpr layout_detail::Field kBatchHeaderFields[] = {
    TANDEM_SHM_FIELD(BatchHeader, magic),           TANDEM_SHM_FIELD(BatchHeader, total_bytes),
    TANDEM_SHM_FIELD(BatchHeader, key_count),       TANDEM_SHM_FIELD(BatchHeader, val_count),
    TANDEM_SHM_FIELD(BatchHeader, update_count),    TANDEM_SHM_FIELD(BatchHeader, since),
    TANDEM_SHM_FIELD(BatchHeader, min_time),        TANDEM_SHM_FIELD(BatchHeader, max_time),
    TANDEM_SHM_FIELD(BatchHeader, times_at),        TANDEM_SHM_FIELD(BatchHeader, diffs_at),
    TANDEM_SHM_FIELD(BatchHeader, key_offsets_at),  TANDEM_SHM_FIELD(BatchHeader, key_vals_at),
    TANDEM_SHM_FIELD(BatchHeader, val_offsets_at),  TANDEM_SHM_FIELD(BatchHeader, val_updates_at),
    TANDEM_SHM_FIELD(BatchHeader, key_bytes_at),    TANDEM_SHM_FIELD(BatchHeader, val_bytes_at),
    TANDEM_SHM_FIELD(BatchHeader, key_prefix_skip), TANDEM_SHM_FIELD(BatchHeader, key_index_at)};
inline constexpr layout_detail::Field kPeekRingDataFields[] = {
    TANDEM_SHM_FIELD(PeekRingData, head),       TANDEM_SHM_FIELD(PeekRingData, pushed),
    TANDEM_SHM_FIELD(PeekRingData, full),       TANDEM_SHM_FIELD(PeekRingData, too_large),
    TANDEM_SHM_FIELD(PeekRingData, wakes_sent), TANDEM_SHM_FIELD(PeekRingData, reserved0),
    TANDEM_SHM_FIELD(PeekRingData, tail),       TANDEM_SHM_FIELD(PeekRingData, sleeping),
    TANDEM_SHM_FIELD(PeekRingData, reserved1),  TANDEM_SHM_FIELD(PeekRingData, reserved2),
    TANDEM_SHM_FIELD(PeekRingData, capacity),   TANDEM_SHM_FIELD(PeekRingData, data_offset),
    TANDEM_SHM_FIELD(PeekRingData, max_record), TANDEM_SHM_FIELD(PeekRingData, reserved3)};
inline constexpr layout_detail::Field kRingRecordHeaderFields[] = {
    TANDEM_SHM_FIELD(RingRecordHeader, bytes), TANDEM_SHM_FIELD(RingRecordHeader, kind)};
inline constexpr layout_detail::Field kPeekRingsDataFields[] = {
    TANDEM_SHM_FIELD(PeekRingsData, requests), TANDEM_SHM_FIELD(PeekRingsData, answers)};
inline constexpr layout_detail::Field kStepStatsDataFields[] = {
    TANDEM_SHM_FIELD(StepStatsData, step_buckets), TANDEM_SHM_FIELD(StepStatsData, step_count),
    TANDEM_SHM_FIELD(StepStatsData, step_ns),      TANDEM_SHM_FIELD(StepStatsData, busy_ns),
    TANDEM_SHM_FIELD(StepStatsData, waiting_ns),   TANDEM_SHM_FIELD(StepStatsData, reserved)};

#pragma GCC diagnostic pop
#undef TANDEM_SHM_FIELD

static_assert(layout_detail::Tiles(sizeof(RuntimeEntry), kRuntimeEntryFields));
static_assert(layout_detail::Tiles(sizeof(SegmentHeader), kSegmentHeaderFields));
static_assert(layout_detail::Tiles(sizeof(ChangedSlot), kChangedSlotFields));
static_assert(layout_detail::Tiles(sizeof(WakeChannelData), kWakeChannelDataFields));
static_assert(layout_detail::Tiles(sizeof(SlotData), kSlotDataFields));
static_assert(layout_detail::Tiles(sizeof(BatchListData), kBatchListDataFields));
static_assert(layout_detail::Tiles(sizeof(RowData), kRowDataFields));
static_assert(layout_detail::Tiles(sizeof(RegistryData), kRegistryDataFields));
static_assert(layout_detail::Tiles(sizeof(BatchHeader), kBatchHeaderFields));
static_assert(layout_detail::Tiles(sizeof(PeekRingData), kPeekRingDataFields));
static_assert(layout_detail::Tiles(sizeof(RingRecordHeader), kRingRecordHeaderFields));
static_assert(layout_detail::Tiles(sizeof(PeekRingsData), kPeekRingsDataFields));
static_assert(layout_detail::Tiles(sizeof(StepStatsData), kStepStatsDataFields));

// Sizes and alignments (LP64 Linux, x86-64 and AArch64). Changing one is a layout change: make it
// on purpose, here, and kLayoutHash follows by itself.
static_assert(sizeof(RuntimeEntry) == 16 && alignof(RuntimeEntry) == 8);
static_assert(sizeof(SegmentHeader) == 208 && alignof(SegmentHeader) == 8);
static_assert(sizeof(SegmentHeader) <= kHeaderBytes);
static_assert(sizeof(ChangedSlot) == 24 && alignof(ChangedSlot) == 8);
static_assert(sizeof(WakeChannelData) == sizeof(WakeQueue) + 24 && alignof(WakeChannelData) == 8);
static_assert(sizeof(SlotData) == 192 && alignof(SlotData) == 64, "three cache lines per slot");
static_assert(sizeof(BatchListData) == 24 && alignof(BatchListData) == 8);
static_assert(sizeof(RowData) % 64 == 0 && alignof(RowData) == 64, "slots follow a row aligned");
static_assert(kRowDataFields[4].offset == kRowDataHead);  // `wake`, offsetof taken above
static_assert(sizeof(RegistryData) == 24 && alignof(RegistryData) == 8);
static_assert(sizeof(BatchHeader) == 144 && alignof(BatchHeader) == 8);
static_assert(sizeof(PeekRingData) == 192 && alignof(PeekRingData) == 64,
              "the producer's, the consumer's and the immutable words: one cache line each");
static_assert(offsetof(PeekRingData, tail) == 64 && offsetof(PeekRingData, capacity) == 128);
static_assert(sizeof(RingRecordHeader) == 8 && alignof(RingRecordHeader) == 4);
static_assert(sizeof(PeekRingsData) == 384 && alignof(PeekRingsData) == 64);
static_assert(sizeof(StepStatsData) == 192 && alignof(StepStatsData) == 64,
              "three cache lines per worker");
// The offsets that every build must agree on to even say why it refuses a segment.
static_assert(offsetof(SegmentHeader, magic) == 0);
static_assert(offsetof(SegmentHeader, layout_version) == 8);
static_assert(offsetof(SegmentHeader, header_bytes) == 12);
static_assert(offsetof(SegmentHeader, layout_hash) == 16);
static_assert(offsetof(SegmentHeader, boost_version) == 24);
// A batch list is `count` offsets right after two words (ListBytes in publisher.cc).
static_assert(offsetof(BatchListData, batches) == 16);

// The layout hash: every struct's size, alignment and field table, the constants that size or
// interpret them, the routing rule (shm/routing.h) and BOOST_VERSION (Boost's queue lives in the
// segment; an upgrade refuses old segments even if the asserts above still hold). Stored in the
// header by the creator; an opener with another hash refuses the segment (Segment::Open).
inline constexpr std::uint64_t kLayoutHash = [] {
  using layout_detail::Fold;
  using layout_detail::FoldStruct;
  std::uint64_t h = 0xcbf29ce484222325ULL;
  h = Fold(h, BOOST_VERSION);
  h = Fold(h, kSegmentMagic);
  h = Fold(h, kBatchMagic);
  h = Fold(h, kHeaderBytes);
  h = Fold(h, kReplicaIdBytes);
  h = Fold(h, kRuntimeEntries);
  h = Fold(h, kWakeQueueCapacity);
  h = Fold(h, kReaderIdle);
  for (std::uint32_t flag : {kSlotFilled, kSlotUnpublished, kSlotHoldReleased, kSlotStalled}) {
    h = Fold(h, flag);
  }
  for (Mode m : {Mode::kSolo, Mode::kTwoRuntime}) h = Fold(h, static_cast<std::uint32_t>(m));
  for (SlotState st : {SlotState::kFree, SlotState::kLive}) {
    h = Fold(h, static_cast<std::uint32_t>(st));
  }
  for (RuntimeState st : {RuntimeState::kAbsent, RuntimeState::kStarting, RuntimeState::kAttached,
                          RuntimeState::kReady, RuntimeState::kStopping}) {
    h = Fold(h, static_cast<std::uint32_t>(st));
  }
  h = Fold(h, StableHash("tandem routing"));
  h = Fold(h, WorkerOf("tandem routing", 7));
  h = Fold(h, static_cast<unsigned char>(kErrorKeyPrefix));
  h = Fold(Fold(Fold(Fold(h, kMinPeekRingBytes), kMaxPeekRingBytes), kRingRecord), kRingPad);
  h = FoldStruct(h, sizeof(RuntimeEntry), alignof(RuntimeEntry), kRuntimeEntryFields);
  h = FoldStruct(h, sizeof(SegmentHeader), alignof(SegmentHeader), kSegmentHeaderFields);
  h = FoldStruct(h, sizeof(ChangedSlot), alignof(ChangedSlot), kChangedSlotFields);
  h = Fold(Fold(h, sizeof(WakeQueue)), alignof(WakeQueue));
  h = FoldStruct(h, sizeof(WakeChannelData), alignof(WakeChannelData), kWakeChannelDataFields);
  h = FoldStruct(h, sizeof(SlotData), alignof(SlotData), kSlotDataFields);
  h = FoldStruct(h, sizeof(BatchListData), alignof(BatchListData), kBatchListDataFields);
  h = FoldStruct(h, sizeof(RowData), alignof(RowData), kRowDataFields);
  h = FoldStruct(h, sizeof(RegistryData), alignof(RegistryData), kRegistryDataFields);
  h = FoldStruct(h, sizeof(BatchHeader), alignof(BatchHeader), kBatchHeaderFields);
  h = FoldStruct(h, sizeof(PeekRingData), alignof(PeekRingData), kPeekRingDataFields);
  h = FoldStruct(h, sizeof(RingRecordHeader), alignof(RingRecordHeader), kRingRecordHeaderFields);
  h = FoldStruct(h, sizeof(PeekRingsData), alignof(PeekRingsData), kPeekRingsDataFields);
  h = Fold(Fold(h, kStepBuckets), static_cast<std::uint64_t>(kStepBucketMinLog2));
  h = FoldStruct(h, sizeof(StepStatsData), alignof(StepStatsData), kStepStatsDataFields);
  return h;
}();

}  // namespace tandem::shm

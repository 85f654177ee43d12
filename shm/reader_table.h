// The reader table (DESIGN §11): where local readers — processes outside the replica that map the
// data segment read-only (client/local_reader.h) — announce the batch-list version they read, so
// that a publisher never frees a batch under them. LMDB's reader table is the model.
//
// It is a file of its own, apart from the data segment, because a local reader never writes the
// data segment (it maps it PROT_READ) and may be another user, allowed by --reader-group to read
// the segment (0640) and to write this table. A reader that may write the table must not be able
// to stop the replica through it: the table is a memfd sealed against any change of size (a
// truncated mapping would kill its publishers with SIGBUS), with no name a reader could unlink or
// replace. It reaches readers through a Unix socket beside the segment, /dev/shm/<segment>.readers
// (shm/descriptor_handout.h: 0600, or 0660 for the --reader-group), which hands the table to
// whoever connects. What a reader can still do — scribble over it — loses at worst other readers'
// announcements; the supervisor puts the header back (Sweep) and says so.
//
// Liveness is a lock, never a pid: every entry's first byte is an OFD lock (fcntl F_OFD_SETLK)
// that its reader takes to claim the entry and keeps for as long as it lives. The kernel drops it
// when the reader's process dies, however it dies, and a pid reused by another process cannot take
// it over. The supervisor holds the lock of byte 0 (the table header) for its life: a reader
// tells a live replica from a dead one by asking who holds it (F_OFD_GETLK, which takes nothing).
//
// Who writes what:
//  * the supervisor creates the table and serves it (Create), sweeps it (Sweep: an entry whose
//    lock it can take belongs to a reader that died; it clears the entry under that lock, then
//    lets it go; a header that is not as it made it is rewritten) and removes the socket with the
//    segment;
//  * a reader writes only the entry it claimed (ReaderTableEntry), and only while it holds its
//  lock;
//  * publishers only read (OldestAnnounced).
// Announcement protocol (the snapshot protocol of shm/reader.h, with a target): a reader sets its
// entry's `target` (which slot of which row) while its `version` is idle, then announces the
// slot's list_version (seq_cst), then loads the list; it stores kReaderIdle when the read is done,
// before it changes target. A publisher loads `version`, then `target`: a version it pairs with the
// wrong target belongs to a read that is over or protects more than it needs — never less.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include <sys/types.h>

#include "base/status.h"
#include "shm/descriptor_handout.h"
#include "shm/layout.h"

namespace tandem::shm {

inline constexpr std::uint64_t kReaderTableMagic = 0x3154445244'4e4154ULL;  // "TANDRDT1"
// The table's own layout version: bump on any change to a field's meaning or the protocol above.
inline constexpr std::uint32_t kReaderTableVersion = 1;
// Announcements one replica admits at once: a local reader takes one per worker row, a tool one
// per snapshot it holds. Beyond it, ResourceExhausted. Publishers and the sweep look only below the
// highest entry ever claimed, so unused capacity costs nothing.
inline constexpr std::uint32_t kReaderTableEntries = 4095;

// At offset 0 of the table. Written by the supervisor before `magic` (release); immutable after,
// but for the counters.
struct alignas(64) ReaderTableHeader {
  std::atomic<std::uint64_t> magic;    // kReaderTableMagic
  std::uint32_t version;               // kReaderTableVersion
  std::uint32_t entries;               // kReaderTableEntries
  std::uint64_t layout_hash;           // the data segment's kLayoutHash
  std::uint64_t generation;            // the data segment's generation: the same incarnation
  std::atomic<std::uint64_t> claims;   // entries claimed so far (readers write, relaxed)
  std::atomic<std::uint64_t> cleared;  // dead readers' entries the supervisor cleared
  // 1 + the highest entry index ever claimed (readers raise it before they announce): publishers
  // look at entries below it only.
  std::atomic<std::uint64_t> high_water;
  std::uint64_t reserved;
};

// One local reader's announcement. Its first byte is the reader's lock (see above).
//  target: 0 none, else (ordinal + 1) << 32 | slot index. version: kReaderIdle or the announced
//  list_version of that slot. pid: the claimer's, for tools only (liveness is the lock).
struct alignas(64) ReaderTableSlot {
  std::atomic<std::uint64_t> target;
  std::atomic<std::uint64_t> version;
  std::atomic<std::int64_t> pid;
  std::atomic<std::uint64_t> claimed_unix_ns;
  std::atomic<std::uint64_t> reads;  // snapshots taken through this entry (its reader's count)
  std::uint64_t reserved[3];
};

static_assert(std::is_standard_layout_v<ReaderTableHeader> &&
              std::is_trivially_destructible_v<ReaderTableHeader>);
static_assert(std::is_standard_layout_v<ReaderTableSlot> &&
              std::is_trivially_destructible_v<ReaderTableSlot>);
static_assert(sizeof(ReaderTableHeader) == 64 && sizeof(ReaderTableSlot) == 64,
              "one cache line each: a reader's announcements never share a line with another's");
static_assert(offsetof(ReaderTableHeader, magic) == 0 && offsetof(ReaderTableSlot, target) == 0);
inline constexpr std::size_t kReaderTableBytes =
    sizeof(ReaderTableHeader) + kReaderTableEntries * sizeof(ReaderTableSlot);
static_assert(kReaderTableBytes == 256 * 1024);

constexpr std::uint64_t ReaderTarget(std::uint32_t ordinal, std::uint32_t slot) {
  return (std::uint64_t{ordinal} + 1) << 32 | slot;
}

// The name, in /dev/shm, of the socket that hands out a data segment's table.
inline std::string ReaderTableName(const std::string& segment_name) {
  return segment_name + ".readers";
}
// Segment names whose table socket path fits a Unix socket address.
inline constexpr std::size_t kMaxReaderTableSegmentName = 90;

// What a claimed entry lets its reader do. Owned by one thread at a time; releasing (destruction)
// idles the entry and lets its lock go. A forked child shares its parent's lock (an OFD lock
// belongs to the open file description, which fork shares): in a child, an entry it inherited is
// not its own — inherited() says so, its owner refuses to use it, and destroying it there only
// closes the child's descriptor, leaving the parent's entry and lock as they are.
class ReaderTableEntry {
 public:
  ~ReaderTableEntry();
  ReaderTableEntry(const ReaderTableEntry&) = delete;
  ReaderTableEntry& operator=(const ReaderTableEntry&) = delete;

  // Step 2 of the snapshot protocol for slot `target`: announces `version` (seq_cst).
  void Announce(std::uint64_t target, std::uint64_t version);
  void Idle() { slot_->version.store(kReaderIdle, std::memory_order_seq_cst); }
  std::uint32_t index() const { return index_; }
  // True in a process forked from the one that claimed the entry.
  bool inherited() const;

 private:
  friend class ReaderTable;
  ReaderTableEntry(int fd, std::uint32_t index, ReaderTableSlot* slot);
  int fd_;
  std::uint32_t index_;
  ReaderTableSlot* slot_;
  std::uint64_t target_ = 0;
  std::uint64_t fork_generation_;  // of the claiming process
};

// What Sweep saw.
struct SweepResult {
  std::uint32_t live = 0;        // entries held by a live reader
  std::uint32_t cleared = 0;     // entries of dead readers cleared now
  bool header_repaired = false;  // someone had overwritten the header; it is as made again
};

class ReaderTable {
 public:
  ~ReaderTable();
  ReaderTable(const ReaderTable&) = delete;
  ReaderTable& operator=(const ReaderTable&) = delete;

  // The supervisor's: creates the table for the segment's generation, holds byte 0's lock and
  // serves the table at /dev/shm/<segment>.readers until destroyed (a stale socket or table file
  // of ours under the name is replaced: its supervisor is gone — AlreadyExists when it is not).
  // `reader_gid`: the --reader-group (mode 0660, that group), else 0600.
  [[nodiscard]] static Result<std::unique_ptr<ReaderTable>> Create(const std::string& segment_name,
                                                                   std::uint64_t generation,
                                                                   std::uint64_t layout_hash,
                                                                   std::optional<gid_t> reader_gid);
  // A runtime's or a reader's: takes the table from its supervisor's socket, read-write, through
  // an open file description of its own, and checks it (sealed, its size, its header).
  [[nodiscard]] static Result<std::unique_ptr<ReaderTable>> Open(const std::string& segment_name);
  // A rendering runtime's: the table its supervisor handed down at spawn (`fd`, of Create's
  // inheritable_fd()), for the segment of `generation`. Checks that it is sealed and of the
  // table's size; not its header, which a reader may have scribbled over (the supervisor mends it).
  [[nodiscard]] static Result<std::unique_ptr<ReaderTable>> Inherit(int fd,
                                                                    std::uint64_t generation);
  // Removes the socket (the table itself goes with the last process that maps it).
  static Status Remove(const std::string& segment_name);

  const ReaderTableHeader& header() const { return *header_; }
  // The creator's: a descriptor of the table that holds no lock, for the runtimes it spawns
  // (Inherit): they get the table from their supervisor, never through the socket readers use.
  int inheritable_fd() const { return inheritable_fd_; }
  std::uint64_t generation() const { return generation_; }
  const std::string& path() const { return path_; }

  // True while the supervisor that created the table lives (it holds byte 0's lock). One
  // fcntl(F_OFD_GETLK): takes no lock, so it can never get in a new supervisor's way.
  bool SupervisorAlive() const;

  // A reader's: claims a free entry (one whose lock it can take), through a descriptor of its own.
  // ResourceExhausted when every entry is held by a live reader.
  [[nodiscard]] Result<std::unique_ptr<ReaderTableEntry>> Claim();

  // The supervisor's: clears the entries of readers that died, and rewrites a header that is not
  // as Create made it. Never waits for a reader.
  SweepResult Sweep();

  // A publisher's: the oldest version announced for `target` (kReaderIdle: none). Writes nothing.
  std::uint64_t OldestAnnounced(std::uint64_t target) const;

  const ReaderTableSlot& slot(std::uint32_t i) const { return slots_[i]; }

 private:
  ReaderTable() = default;
  // Maps `fd` (the table, already checked to be sealed and of kReaderTableBytes).
  Status Map(int fd, bool create);
  // The header's fields that never change after Create, written or rewritten.
  void WriteHeader();

  std::string path_;                            // of the socket
  std::uint64_t generation_ = 0;                // as created (Create) or as read (Open)
  std::uint64_t layout_hash_ = 0;               // as created
  int inheritable_fd_ = -1;                     // the creator's
  std::unique_ptr<DescriptorHandout> handout_;  // the creator's
  int fd_ = -1;
  char* base_ = nullptr;
  ReaderTableHeader* header_ = nullptr;
  ReaderTableSlot* slots_ = nullptr;
};

}  // namespace tandem::shm

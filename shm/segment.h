// The shared-memory segment of one replica (DESIGN §4): lifecycle, header, allocation.
//
// Thread safety: a Segment object may be shared by all threads of a process. Allocate and
// Deallocate are safe from any thread of any process (the managed area's allocator takes a
// process-shared mutex internally; only publishers allocate on hot paths).
//
// Ownership: only the supervisor creates a segment (Create); it keeps an exclusive flock on it
// for its lifetime, which is how everyone else tells a live segment from a stale one. Runtimes
// and tools Open it. Remove unlinks the name; mappings stay valid until unmapped.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "shm/layout.h"

namespace tandem::shm {

struct SegmentOptions {
  std::string name;        // e.g. "tandem.r1" → /dev/shm/tandem.r1
  std::string replica_id;  // at most kReplicaIdBytes-1 bytes
  std::uint64_t size_bytes = 64ull << 20;
  std::uint32_t workers = 1;
  Mode mode = Mode::kTwoRuntime;
  std::uint32_t slots_per_row = 64;
  std::uint64_t generation = 0;  // 0: derive from the creation time
  // --reader-group: the segment becomes 0640 and that group's (local readers, DESIGN §11);
  // otherwise it stays 0600.
  std::optional<gid_t> reader_gid;
  // The peek fast path's rings (DESIGN §14; shm/peek_ring.h): each ring's bytes, a power of two
  // of at least kMinPeekRingBytes; 0: no rings.
  std::uint64_t peek_ring_bytes = 0;
};

// A plain copy of a SegmentHeader (the header itself has atomics and is not copyable).
struct HeaderInfo {
  std::uint32_t layout_version = 0;
  std::uint64_t layout_hash = 0;    // kLayoutHash of the build that created the segment
  std::uint32_t boost_version = 0;  // BOOST_VERSION of that build
  std::uint64_t segment_bytes = 0;
  std::uint64_t generation = 0;
  std::int32_t supervisor_pid = 0;
  std::uint32_t workers = 0;
  Mode mode = Mode::kTwoRuntime;
  std::uint32_t slots_per_row = 0;
  std::uint64_t created_unix_ns = 0;
  std::string replica_id;
  struct Runtime {
    std::int32_t pid = 0;
    RuntimeState state = RuntimeState::kAbsent;
  } runtimes[kRuntimeEntries];
};
HeaderInfo CopyHeader(const SegmentHeader& header);

// What can be read from a segment without attaching to it (tandem-shm ls, stale checks).
struct SegmentProbe {
  std::string name;
  std::uint64_t file_bytes = 0;
  bool supervisor_alive = false;  // the creator still holds the segment's lock
  bool valid = false;             // magic, layout version and layout hash are ours
  bool regular_file = true;       // false: a FIFO, directory, device… (never opened as a segment)
  std::uint32_t owner_uid = 0;    // the file's owner
  std::uint64_t magic = 0;        // as found (0: creation never finished, or not a segment)
  std::string problem;            // why not valid
  // Copied out when at least the magic matched — but only its fixed prefix (layout version and
  // hash, Boost version; the rest zero) unless `valid`: another build's header is not ours to
  // read.
  std::optional<HeaderInfo> header;
};

class Segment {
 public:
  ~Segment();
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  // Creates and reserves the whole segment (posix_fallocate), so a /dev/shm too small for it
  // fails here with the size asked and the room available, never with SIGBUS later. The calling
  // process becomes the segment's supervisor. The name is taken with O_CREAT|O_EXCL (never
  // following a symbolic link); when a file already has it:
  //  * not a regular file (a symlink, FIFO, directory…), or owned by another uid: never opened
  //    as ours, never removed — FailedPrecondition naming the file and its owner;
  //  * ours, and some process holds its lock: a live supervisor (or something of ours using it)
  //    — AlreadyExists;
  //  * ours, lock free: stale — a dead supervisor's segment, an unfinished one, or garbage under
  //    our name. Removed (after taking its lock and checking the name still points at the file
  //    locked) and recreated; replaced() says what was found.
  [[nodiscard]] static Result<std::unique_ptr<Segment>> Create(const SegmentOptions& options);
  // Attaches to an existing segment, refusing a wrong magic, layout version, layout hash (a
  // segment created by another build), size, or a header or registry whose offsets and counts
  // do not fit the mapping (Corruption naming the inconsistency).
  [[nodiscard]] static Result<std::unique_ptr<Segment>> Open(const std::string& name);
  // A local reader's attach (DESIGN §11): opened O_RDONLY and mapped PROT_READ, so nothing this
  // process does can write the segment; no managed area (Allocate, Deallocate and the byte counts
  // are the replica's business and abort here). The same checks as Open. A permission error says
  // what would allow it (--reader-group).
  [[nodiscard]] static Result<std::unique_ptr<Segment>> OpenReadOnly(const std::string& name);
  // The same checks on a copy of a segment in any regular file (tandem-shm on a saved image):
  // mapped copy-on-write, so what a reader writes (its announcement entry) never reaches the file.
  [[nodiscard]] static Result<std::unique_ptr<Segment>> OpenFile(const std::string& path);
  // The same checks on `size` bytes at `base` (64-byte aligned, as a mapping is, outliving the
  // Segment, which neither copies nor unmaps them): the fuzz target's way in.
  [[nodiscard]] static Result<std::unique_ptr<Segment>> OpenImage(const std::string& label,
                                                                  char* base, std::uint64_t size);
  // Reads the header and liveness of a segment without attaching. Never blocks (a FIFO under the
  // name is reported, not opened for reading) and never follows a symbolic link.
  [[nodiscard]] static Result<SegmentProbe> Probe(const std::string& name);
  // Probe of a segment image in any regular file (liveness: whether someone holds its lock).
  [[nodiscard]] static Result<SegmentProbe> ProbeFile(const std::string& path);
  // Unlinks the name, and its reader table's. NotFound when there is no such segment.
  static Status Remove(const std::string& name);
  // Lists the names of the segments in /dev/shm that begin with `prefix` (not reader tables).
  static std::vector<std::string> List(const std::string& prefix = "tandem.");
  static std::string PathOf(const std::string& name) { return "/dev/shm/" + name; }

  const std::string& name() const { return name_; }
  bool is_creator() const { return creator_; }
  // What Create found under the name and replaced (a stale segment, garbage), empty if nothing:
  // for the creator's log.
  const std::string& replaced() const { return replaced_; }
  const SegmentHeader& header() const { return *header_; }
  SegmentHeader& mutable_header() { return *header_; }
  std::uint32_t workers() const { return header_->workers; }
  // Worker `worker`'s step statistics (StepStatsData; the lockstep runtime's), nullptr when the
  // segment has none or there is no such worker.
  StepStatsData* step_stats(std::uint32_t worker) const;
  Mode mode() const { return static_cast<Mode>(header_->mode); }

  // Offsets are from the segment base; 0 never names an allocation (it is the header).
  template <typename T>
  T* At(std::uint64_t offset) const {
    return reinterpret_cast<T*>(base_ + offset);
  }
  std::uint64_t OffsetOf(const void* p) const {
    return static_cast<std::uint64_t>(static_cast<const char*>(p) - base_);
  }
  bool Contains(std::uint64_t offset, std::uint64_t bytes) const {
    return offset >= kHeaderBytes && offset <= size_ && bytes <= size_ - offset;
  }

  // Allocates from the managed area. A full segment is ResourceExhausted naming the bytes asked,
  // `what` they were for, and the bytes free — never a crash.
  [[nodiscard]] Result<std::uint64_t> Allocate(std::uint64_t bytes, const char* what);
  void Deallocate(std::uint64_t offset);

  std::uint64_t size_bytes() const { return size_; }
  std::uint64_t free_bytes() const;
  std::uint64_t used_bytes() const;  // of the managed area, including allocator overhead

  void SetRuntime(Role role, pid_t pid, RuntimeState state);
  // The creator's, before it removes the segment: local readers still mapping it fail from now on.
  void MarkClosed() { header_->closed.store(1, std::memory_order_release); }
  bool closed() const { return header_->closed.load(std::memory_order_acquire) != 0; }
  bool read_only() const { return read_only_; }

 private:
  Segment() = default;
  // Open and OpenFile after their probe: checks `fd` still is the `expected` bytes the probe saw
  // (`what` names it in the error), maps it with `map_flags` (PROT_READ only when `read_only`) and
  // attaches. Takes `fd`.
  [[nodiscard]] static Result<std::unique_ptr<Segment>> MapAndAttach(std::string name,
                                                                     const std::string& what,
                                                                     int fd, std::uint64_t expected,
                                                                     int map_flags, bool read_only);
  struct ManagedHolder;  // the Boost.Interprocess managed area over [managed_offset, size)
  // Checks the header's and the registry's shape against the mapping, then opens the managed
  // area. `base_`, `size_` and `name_` are set.
  Status Attach();

  std::string name_;
  int fd_ = -1;
  bool creator_ = false;
  bool owns_mapping_ = true;  // false for OpenImage
  bool read_only_ = false;    // OpenReadOnly: PROT_READ, no managed area
  std::string replaced_;
  char* base_ = nullptr;
  std::uint64_t size_ = 0;
  SegmentHeader* header_ = nullptr;
  std::unique_ptr<ManagedHolder> managed_;
};

// Removes the segment when it goes out of scope (tests, tools); the supervisor decides itself.
class ScopedSegmentRemover {
 public:
  explicit ScopedSegmentRemover(std::string name) : name_(std::move(name)) {}
  ~ScopedSegmentRemover() { (void)Segment::Remove(name_); }
  ScopedSegmentRemover(const ScopedSegmentRemover&) = delete;
  ScopedSegmentRemover& operator=(const ScopedSegmentRemover&) = delete;

 private:
  std::string name_;
};

}  // namespace tandem::shm

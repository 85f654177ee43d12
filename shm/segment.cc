#include "shm/segment.h"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <boost/interprocess/managed_external_buffer.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <new>

#include "base/check.h"
#include "shm/peek_ring.h"
#include "shm/reader_table.h"
#include "shm/registry.h"

namespace tandem::shm {

namespace bip = boost::interprocess;

// NOT bip::managed_external_buffer: that typedef uses null_mutex_family (no locking). Publishers
// of different rows, in different processes, allocate concurrently, so the allocator must take a
// process-shared mutex.
using SharedArea = bip::basic_managed_external_buffer<char, bip::rbtree_best_fit<bip::mutex_family>,
                                                      bip::iset_index>;

struct Segment::ManagedHolder {
  SharedArea buffer;
};

namespace {

std::string Hex(std::uint64_t value) {
  char buf[19];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(value));
  return buf;
}

std::string BoostVersion(std::uint32_t v) {
  return std::to_string(v / 100000) + "." + std::to_string(v / 100 % 1000) + "." +
         std::to_string(v % 100);
}

std::string Mib(std::uint64_t bytes) {
  return std::to_string(bytes) + " bytes (" + std::to_string(bytes >> 20) + " MiB)";
}

Status ValidateName(const std::string& name) {
  if (name.empty() || name.size() > 200 || name.find('/') != std::string::npos || name == "." ||
      name == "..") {
    return Status::InvalidArgument("invalid segment name '" + name +
                                   "': a non-empty file name without '/'");
  }
  if (name.ends_with(".readers")) {
    return Status::InvalidArgument("invalid segment name '" + name +
                                   "': names ending in .readers are segments' reader tables");
  }
  return Status::Ok();
}

// True when some process holds the segment's creation lock, i.e. its supervisor is alive.
bool LockHeldByOther(int fd) {
  if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
    flock(fd, LOCK_UN);
    return false;
  }
  return errno == EWOULDBLOCK;
}

struct MappedFile {
  int fd = -1;
  char* base = nullptr;
  std::uint64_t size = 0;
  ~MappedFile() {
    if (base) munmap(base, size);
    if (fd >= 0) close(fd);
  }
};

}  // namespace

HeaderInfo CopyHeader(const SegmentHeader& h) {
  HeaderInfo info;
  info.layout_version = h.layout_version;
  info.layout_hash = h.layout_hash;
  info.boost_version = h.boost_version;
  info.segment_bytes = h.segment_bytes;
  info.generation = h.generation;
  info.supervisor_pid = h.supervisor_pid;
  info.workers = h.workers;
  info.mode = static_cast<Mode>(h.mode);
  info.slots_per_row = h.slots_per_row;
  info.created_unix_ns = h.created_unix_ns;
  info.replica_id.assign(h.replica_id, strnlen(h.replica_id, sizeof h.replica_id));
  for (std::size_t i = 0; i < kRuntimeEntries; ++i) {
    info.runtimes[i].pid = h.runtimes[i].pid.load();
    info.runtimes[i].state = static_cast<RuntimeState>(h.runtimes[i].state.load());
  }
  return info;
}

Segment::~Segment() {
  managed_.reset();
  if (base_ && owns_mapping_) munmap(base_, size_);
  if (fd_ >= 0) close(fd_);  // releases the creator's lock
}

namespace {

const char* FileKind(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

std::string UidText(uid_t uid) {
  std::string text = "uid " + std::to_string(uid);
  char buf[1024];
  passwd pw{};
  passwd* found = nullptr;
  if (getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found != nullptr) {
    text += std::string(" (") + found->pw_name + ")";
  }
  return text;
}

// Opens `path` to look at it: read-only, never following a symbolic link, never blocking (a
// FIFO without a writer would otherwise block the open), never becoming a controlling terminal.
int OpenToLook(const std::string& path) {
  return open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
}

// Probe of the file open at `fd` (see Segment::Probe); `file.fd` takes ownership.
Result<SegmentProbe> ProbeOpen(const std::string& name, int fd) {
  MappedFile file;
  file.fd = fd;
  SegmentProbe probe;
  probe.name = name;
  struct stat st {};
  if (fstat(fd, &st) != 0) return Status::Internal(ErrnoMessage("fstat"));
  probe.owner_uid = st.st_uid;
  probe.regular_file = S_ISREG(st.st_mode);
  if (!probe.regular_file) {
    probe.problem = std::string("not a Tandem segment: ") + FileKind(st.st_mode) + " owned by " +
                    UidText(st.st_uid);
    return probe;
  }
  probe.file_bytes = static_cast<std::uint64_t>(st.st_size);
  probe.supervisor_alive = LockHeldByOther(fd);
  if (probe.file_bytes < kHeaderBytes) {
    probe.problem = "not a Tandem segment: " + std::to_string(probe.file_bytes) +
                    " bytes, smaller than the " + std::to_string(kHeaderBytes) + "-byte header";
    return probe;
  }
  void* p = mmap(nullptr, kHeaderBytes, PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return Status::Internal(ErrnoMessage("mmap header"));
  file.base = static_cast<char*>(p);
  file.size = kHeaderBytes;
  const auto* header = reinterpret_cast<const SegmentHeader*>(p);
  const std::uint64_t magic = header->magic.load(std::memory_order_acquire);
  probe.magic = magic;
  if (magic != kSegmentMagic) {
    probe.problem =
        "not a Tandem segment (magic " + Hex(magic) + ", expected " + Hex(kSegmentMagic) + ")";
    if (magic == 0) probe.problem += ", or its creation never finished";
    return probe;
  }
  // Only the fixed prefix (magic, version, hash, Boost version) reads the same in every build:
  // the rest of another build's header is copied only once the version and hash match.
  HeaderInfo prefix;
  prefix.layout_version = header->layout_version;
  prefix.layout_hash = header->layout_hash;
  prefix.boost_version = header->boost_version;
  probe.header = prefix;
  if (header->layout_version != kLayoutVersion) {
    probe.problem = "layout version " + std::to_string(header->layout_version) +
                    ", but this build reads version " + std::to_string(kLayoutVersion);
    return probe;
  }
  if (header->layout_hash != kLayoutHash) {
    probe.problem = "layout hash " + Hex(header->layout_hash) + " (a build with Boost " +
                    BoostVersion(header->boost_version) + "), but this build's layout hash is " +
                    Hex(kLayoutHash) + " (Boost " + BoostVersion(BOOST_VERSION) +
                    "): it was created by a build of Tandem whose shared-memory structs differ; "
                    "run the supervisor, the runtimes and the tools from one build";
    return probe;
  }
  probe.header = CopyHeader(*header);
  probe.valid = true;
  return probe;
}

Result<SegmentProbe> ProbePath(const std::string& name, const std::string& path,
                               const std::string& what) {
  const int fd = OpenToLook(path);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound("no " + what + " named '" + name + "'");
    if (errno == ELOOP) {
      return Status::FailedPrecondition("'" + path +
                                        "' is a symbolic link: not a Tandem segment (links are "
                                        "never followed)");
    }
    return Status::Internal(ErrnoMessage("open " + path));
  }
  return ProbeOpen(name, fd);
}

}  // namespace

Result<SegmentProbe> Segment::Probe(const std::string& name) {
  TANDEM_RETURN_IF_ERROR(ValidateName(name));
  return ProbePath(name, PathOf(name), "segment");
}

Result<SegmentProbe> Segment::ProbeFile(const std::string& path) {
  return ProbePath(path, path, "file");
}

namespace {

// What Create does with a file already under the name (Segment::Create): Ok when it removed a
// stale file of ours (described in *replaced), NotFound when the name vanished meanwhile (try
// again), otherwise the refusal.
Status ReclaimIfStale(const std::string& name, std::string* replaced) {
  const std::string path = Segment::PathOf(name);
  const int fd = OpenToLook(path);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound("gone");
    if (errno == ELOOP) {
      struct stat st {};
      const std::string owner = lstat(path.c_str(), &st) == 0 ? UidText(st.st_uid) : "?";
      return Status::FailedPrecondition(
          "'" + path + "' exists and is a symbolic link owned by " + owner +
          ": refusing to follow or remove it; remove it as its owner, or choose another "
          "--replica-id or --shm-name");
    }
    return Status::Internal(ErrnoMessage("open " + path));
  }
  struct Closer {
    int fd;
    ~Closer() { close(fd); }  // also drops our lock, after the unlink
  } closer{fd};
  struct stat st {};
  if (fstat(fd, &st) != 0) return Status::Internal(ErrnoMessage("fstat"));
  const uid_t me = geteuid();
  if (!S_ISREG(st.st_mode)) {
    return Status::FailedPrecondition(
        "'" + path + "' exists and is " + FileKind(st.st_mode) + " owned by " + UidText(st.st_uid) +
        ", not a segment: refusing to open or remove it; remove it as its owner, or choose "
        "another --replica-id or --shm-name");
  }
  if (st.st_uid != me) {
    return Status::FailedPrecondition(
        "'" + path + "' exists and is owned by " + UidText(st.st_uid) + ", not by this user (" +
        UidText(me) +
        "): a file another user made is never used or removed as this replica's segment; "
        "choose another --replica-id or --shm-name, or have its owner (or root) remove it");
  }
  auto probe = ProbeOpen(name, dup(fd));
  if (!probe.ok()) return probe.status();
  if (probe->supervisor_alive || flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (probe->valid) {
      return Status::AlreadyExists("segment '" + name + "' belongs to a live supervisor (pid " +
                                   std::to_string(probe->header->supervisor_pid) +
                                   "); refusing to replace it");
    }
    return Status::AlreadyExists("'" + path + "' is in use: a process holds its lock (" +
                                 probe->problem + "); refusing to replace it");
  }
  // We hold its lock, so no supervisor is alive on it. Remove it only if the name still names
  // the file we locked (another supervisor may have replaced it meanwhile).
  struct stat named {};
  if (lstat(path.c_str(), &named) != 0 || named.st_ino != st.st_ino || named.st_dev != st.st_dev) {
    return Status::NotFound("replaced meanwhile");
  }
  if (probe->valid) {
    *replaced = "a stale segment of supervisor pid " +
                std::to_string(probe->header->supervisor_pid) + " (gone)";
  } else if (probe->magic == 0) {
    *replaced =
        "a segment whose creation never finished (" + std::to_string(probe->file_bytes) + " bytes)";
  } else {
    *replaced = "a file of this user under the segment's name: " + probe->problem + ", " +
                std::to_string(probe->file_bytes) + " bytes";
  }
  if (shm_unlink(("/" + name).c_str()) != 0 && errno != ENOENT) {
    return Status::Internal(ErrnoMessage("removing stale segment " + name));
  }
  return Status::Ok();
}

}  // namespace

namespace {

// The lockstep workers' step statistics (StepStatsData): zeroed, 64-byte aligned.
Result<std::uint64_t> InitializeStepStats(Segment& segment, std::uint32_t workers) {
  constexpr std::uint64_t kAlign = alignof(StepStatsData);
  TANDEM_ASSIGN_OR_RETURN(
      std::uint64_t raw,
      segment.Allocate(kAlign + std::uint64_t{workers} * sizeof(StepStatsData), "step statistics"));
  const std::uint64_t at = (raw + kAlign - 1) & ~(kAlign - 1);
  for (std::uint32_t i = 0; i < workers; ++i) {
    auto* s = new (segment.At<void>(at + i * sizeof(StepStatsData))) StepStatsData();
    for (auto& b : s->step_buckets) b.store(0, std::memory_order_relaxed);
    for (auto* w : {&s->step_count, &s->step_ns, &s->busy_ns, &s->waiting_ns}) {
      w->store(0, std::memory_order_relaxed);
    }
    for (auto& r : s->reserved) r = 0;
  }
  return at;
}

Status CheckStepStats(const Segment& segment) {
  const std::uint64_t at = segment.header().step_stats_offset;
  if (at == 0) return Status::Ok();
  if (at % alignof(StepStatsData) != 0 ||
      !segment.Contains(at, std::uint64_t{segment.workers()} * sizeof(StepStatsData))) {
    return Status::Corruption("segment '" + segment.name() + "': header: step statistics offset " +
                              std::to_string(at) + " is outside the segment or misaligned");
  }
  return Status::Ok();
}

}  // namespace

StepStatsData* Segment::step_stats(std::uint32_t worker) const {
  const std::uint64_t at = header_->step_stats_offset;
  if (at == 0 || worker >= header_->workers) return nullptr;
  return At<StepStatsData>(at + std::uint64_t{worker} * sizeof(StepStatsData));
}

Result<std::unique_ptr<Segment>> Segment::Create(const SegmentOptions& options) {
  TANDEM_RETURN_IF_ERROR(ValidateName(options.name));
  if (options.replica_id.size() >= kReplicaIdBytes) {
    return Status::InvalidArgument("replica id '" + options.replica_id + "' is longer than " +
                                   std::to_string(kReplicaIdBytes - 1) + " bytes");
  }
  if (options.workers == 0 || options.workers > kMaxWorkers) {
    return Status::InvalidArgument("worker count must be in [1, " + std::to_string(kMaxWorkers) +
                                   "], got " + std::to_string(options.workers));
  }
  if (options.slots_per_row == 0 || options.slots_per_row > kMaxSlotsPerRow) {
    return Status::InvalidArgument("slots per row must be in [1, " +
                                   std::to_string(kMaxSlotsPerRow) + "]");
  }
  const std::uint64_t ring = options.peek_ring_bytes;
  if (ring != 0 && !ValidPeekRingBytes(ring)) {
    return Status::InvalidArgument("peek ring size " + std::to_string(ring) +
                                   " bytes is not a power of two in [" +
                                   std::to_string(kMinPeekRingBytes) + ", " +
                                   std::to_string(kMaxPeekRingBytes) + "] (or 0: none)");
  }
  const std::uint64_t registry_bytes = RegistryBytes(options.workers, options.slots_per_row);
  // The managed area needs room for its own bookkeeping besides the registry and the rings.
  const std::uint64_t rings_bytes = ring == 0 ? 0 : 64 + sizeof(PeekRingsData) + 2 * ring;
  const std::uint64_t min_size = kHeaderBytes + registry_bytes + rings_bytes + (64u << 10);
  if (options.size_bytes < min_size) {
    return Status::InvalidArgument(
        "segment size " + Mib(options.size_bytes) + " is too small for " +
        std::to_string(options.workers) + " registry rows" +
        (ring == 0 ? std::string() : " and two peek rings of " + std::to_string(ring) + " bytes") +
        "; at least " + Mib(min_size) + " is needed");
  }
  const std::string shm_name = "/" + options.name;

  // Take the name: create it exclusively (shm_open adds O_NOFOLLOW); if it exists, remove it
  // only when it is ours and stale (ReclaimIfStale).
  int fd = -1;
  std::string replaced;
  for (int attempt = 0; attempt < 3 && fd < 0; ++attempt) {
    fd = shm_open(shm_name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) break;
    if (errno != EEXIST) return Status::Internal(ErrnoMessage("shm_open " + options.name));
    Status reclaimed = ReclaimIfStale(options.name, &replaced);
    if (!reclaimed.ok() && reclaimed.code() != StatusCode::kNotFound) return reclaimed;
  }
  if (fd < 0) return Status::Internal("could not create segment '" + options.name + "'");

  auto seg = std::unique_ptr<Segment>(new Segment());
  seg->name_ = options.name;
  seg->fd_ = fd;
  seg->creator_ = true;
  seg->replaced_ = replaced;
  auto fail = [&](Status s) -> Result<std::unique_ptr<Segment>> {
    seg.reset();
    shm_unlink(shm_name.c_str());
    return s;
  };
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) return fail(Status::Internal(ErrnoMessage("flock")));
  if (options.reader_gid) {
    // --reader-group: that group may map it read-only (local readers); nobody else.
    if (fchown(fd, static_cast<uid_t>(-1), *options.reader_gid) != 0) {
      return fail(Status::FailedPrecondition(ErrnoMessage(
          ("giving segment '" + options.name + "' to group " + std::to_string(*options.reader_gid))
              .c_str())));
    }
    if (fchmod(fd, 0640) != 0) return fail(Status::Internal(ErrnoMessage("fchmod")));
  } else if (fchmod(fd, 0600) != 0) {
    return fail(Status::Internal(ErrnoMessage("fchmod")));
  }

  // Reserve everything now: tmpfs pages are otherwise allocated on first touch, and a full
  // /dev/shm would then kill a runtime with SIGBUS in the middle of a publish.
  struct statvfs vfs {};
  if (statvfs("/dev/shm", &vfs) == 0) {
    const std::uint64_t avail = static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize;
    if (avail < options.size_bytes) {
      return fail(Status::ResourceExhausted("segment '" + options.name + "' needs " +
                                            Mib(options.size_bytes) + " but /dev/shm has only " +
                                            Mib(avail) + " available"));
    }
  }
  if (ftruncate(fd, static_cast<off_t>(options.size_bytes)) != 0) {
    return fail(Status::Internal(ErrnoMessage("ftruncate")));
  }
  if (int err = posix_fallocate(fd, 0, static_cast<off_t>(options.size_bytes)); err != 0) {
    if (err == ENOSPC) {
      struct statvfs now {};
      statvfs("/dev/shm", &now);
      return fail(Status::ResourceExhausted(
          "segment '" + options.name + "' needs " + Mib(options.size_bytes) +
          " but /dev/shm ran out of room reserving it (" +
          Mib(static_cast<std::uint64_t>(now.f_bavail) * now.f_frsize) + " available now)"));
    }
    return fail(Status::Internal(std::string("posix_fallocate: ") + std::strerror(err)));
  }
  void* p = mmap(nullptr, options.size_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return fail(Status::Internal(ErrnoMessage("mmap")));
  seg->base_ = static_cast<char*>(p);
  seg->size_ = options.size_bytes;
  seg->header_ = new (seg->base_) SegmentHeader();

  SegmentHeader& h = *seg->header_;
  h.layout_version = kLayoutVersion;
  h.header_bytes = kHeaderBytes;
  h.layout_hash = kLayoutHash;
  h.boost_version = BOOST_VERSION;
  h.segment_bytes = options.size_bytes;
  const auto now_ns =
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count());
  h.generation = options.generation != 0 ? options.generation : now_ns;
  h.supervisor_pid = getpid();
  h.workers = options.workers;
  h.mode = static_cast<std::uint32_t>(options.mode);
  h.slots_per_row = options.slots_per_row;
  h.created_unix_ns = now_ns;
  h.managed_offset = kHeaderBytes;
  h.managed_bytes = options.size_bytes - kHeaderBytes;
  std::memset(h.replica_id, 0, sizeof h.replica_id);
  std::memcpy(h.replica_id, options.replica_id.data(), options.replica_id.size());
  for (auto& r : h.runtimes) {
    r.pid.store(0);
    r.state.store(static_cast<std::uint32_t>(RuntimeState::kAbsent));
  }
  try {
    seg->managed_.reset(new ManagedHolder{
        SharedArea(bip::create_only, seg->base_ + h.managed_offset, h.managed_bytes)});
  } catch (const std::exception& e) {
    return fail(Status::Internal(std::string("initialising the managed area: ") + e.what()));
  }
  auto registry = InitializeRegistry(*seg, options.workers, options.slots_per_row);
  if (!registry.ok()) return fail(registry.status());
  h.registry_offset = *registry;
  h.peek_rings_offset = 0;
  if (options.peek_ring_bytes != 0) {
    auto rings = InitializePeekRings(*seg, options.peek_ring_bytes);
    if (!rings.ok()) return fail(rings.status());
    h.peek_rings_offset = *rings;
  }
  auto stats = InitializeStepStats(*seg, options.workers);
  if (!stats.ok()) return fail(stats.status());
  h.step_stats_offset = *stats;
  h.magic.store(kSegmentMagic, std::memory_order_release);
  return seg;
}

namespace {

// The size a valid probe's header claims against the file's.
Status CheckSize(const std::string& name, const SegmentProbe& probe) {
  const std::uint64_t expected = probe.header->segment_bytes;
  if (expected != probe.file_bytes) {
    return Status::Corruption("segment '" + name + "': header says " + Mib(expected) +
                              " but the file has " + Mib(probe.file_bytes));
  }
  return Status::Ok();
}

}  // namespace

Status Segment::Attach() {
  const SegmentHeader& h = *header_;
  const std::string what = "segment '" + name_ + "': ";
  if (h.segment_bytes != size_) {
    return Status::Corruption(what + "header says " + Mib(h.segment_bytes) + " but there are " +
                              Mib(size_));
  }
  if (h.header_bytes != kHeaderBytes || h.managed_offset != kHeaderBytes ||
      h.managed_bytes > size_ || h.managed_offset + h.managed_bytes != size_) {
    return Status::Corruption(
        what + "header offsets are out of range (header " + std::to_string(h.header_bytes) +
        " bytes, managed area at " + std::to_string(h.managed_offset) + " of " +
        std::to_string(h.managed_bytes) + " bytes, segment " + std::to_string(size_) + " bytes)");
  }
  if (h.mode != static_cast<std::uint32_t>(Mode::kSolo) &&
      h.mode != static_cast<std::uint32_t>(Mode::kTwoRuntime)) {
    return Status::Corruption(what + "header: mode " + std::to_string(h.mode) +
                              " is neither solo (1) nor two-runtime (2)");
  }
  TANDEM_RETURN_IF_ERROR(CheckRegistry(*this));
  TANDEM_RETURN_IF_ERROR(CheckPeekRings(*this));
  TANDEM_RETURN_IF_ERROR(CheckStepStats(*this));
  if (read_only_) return Status::Ok();  // the allocator is the replica's, never a reader's
  try {
    managed_.reset(
        new ManagedHolder{SharedArea(bip::open_only, base_ + h.managed_offset, h.managed_bytes)});
  } catch (const std::exception& e) {
    return Status::Corruption(what + "managed area unreadable: " + e.what());
  }
  const std::uint64_t area = managed_->buffer.get_size();
  if (area > h.managed_bytes || managed_->buffer.get_free_memory() > area) {
    const std::uint64_t free = managed_->buffer.get_free_memory();
    managed_.reset();
    return Status::Corruption(what + "the allocator's header is inconsistent (size " +
                              std::to_string(area) + ", free " + std::to_string(free) +
                              ", managed area " + std::to_string(h.managed_bytes) + " bytes)");
  }
  return Status::Ok();
}

Result<std::unique_ptr<Segment>> Segment::MapAndAttach(std::string name, const std::string& what,
                                                       int fd, std::uint64_t expected,
                                                       int map_flags, bool read_only) {
  auto seg = std::unique_ptr<Segment>(new Segment());
  seg->name_ = std::move(name);
  seg->fd_ = fd;  // closed by ~Segment, whatever fails below
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<std::uint64_t>(st.st_size) != expected) {
    return Status::Corruption(what + " changed while it was being opened");
  }
  seg->read_only_ = read_only;
  void* p =
      mmap(nullptr, expected, read_only ? PROT_READ : PROT_READ | PROT_WRITE, map_flags, fd, 0);
  if (p == MAP_FAILED) return Status::Internal(ErrnoMessage("mmap"));
  seg->base_ = static_cast<char*>(p);
  seg->size_ = expected;
  seg->header_ = reinterpret_cast<SegmentHeader*>(seg->base_);
  TANDEM_RETURN_IF_ERROR(seg->Attach());
  return seg;
}

Result<std::unique_ptr<Segment>> Segment::Open(const std::string& name) {
  TANDEM_RETURN_IF_ERROR(ValidateName(name));
  auto probe = Probe(name);
  if (!probe.ok()) return probe.status();
  if (!probe->valid) return Status::Corruption("segment '" + name + "': " + probe->problem);
  TANDEM_RETURN_IF_ERROR(CheckSize(name, *probe));
  const int fd = shm_open(("/" + name).c_str(), O_RDWR | O_CLOEXEC, 0);
  if (fd < 0) return Status::Internal(ErrnoMessage("shm_open " + name));
  return MapAndAttach(name, "segment '" + name + "'", fd, probe->header->segment_bytes, MAP_SHARED,
                      false);
}

Result<std::unique_ptr<Segment>> Segment::OpenReadOnly(const std::string& name) {
  TANDEM_RETURN_IF_ERROR(ValidateName(name));
  const std::string path = PathOf(name);
  // Opened first, so that a permission problem is named as one (Probe would call it "not found").
  const int fd = shm_open(("/" + name).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0);
  if (fd < 0) {
    if (errno == ENOENT)
      return Status::NotFound("no segment " + path + " (is the replica running?)");
    if (errno == EACCES) {
      struct stat st {};
      std::string owner;
      if (stat(path.c_str(), &st) == 0) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
        owner = " (mode " + std::string(mode) + ", uid " + std::to_string(st.st_uid) + ", gid " +
                std::to_string(st.st_gid) + ")";
      }
      return Status::FailedPrecondition(
          "permission denied reading " + path + owner +
          ": only the replica's user may read it, unless its supervisor was started with "
          "--reader-group naming a group this user is in");
    }
    return Status::Internal(ErrnoMessage("shm_open " + name));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<std::uint64_t>(st.st_size) < kHeaderBytes) {
    close(fd);
    return Status::Corruption(path + " is not a Tandem segment");
  }
  // The header, as Probe reads it, from this descriptor.
  void* h = mmap(nullptr, kHeaderBytes, PROT_READ, MAP_SHARED, fd, 0);
  if (h == MAP_FAILED) {
    close(fd);
    return Status::Internal(ErrnoMessage("mmap header"));
  }
  const auto* header = static_cast<const SegmentHeader*>(h);
  std::string problem;
  if (header->magic.load(std::memory_order_acquire) != kSegmentMagic) {
    problem = "not a Tandem segment, or its creation has not finished";
  } else if (header->layout_version != kLayoutVersion || header->layout_hash != kLayoutHash) {
    problem = "created by another build of Tandem (layout version " +
              std::to_string(header->layout_version) + ", hash " + Hex(header->layout_hash) +
              "; this build reads version " + std::to_string(kLayoutVersion) + ", hash " +
              Hex(kLayoutHash) + "): run readers and the replica from one build";
  } else if (header->segment_bytes != static_cast<std::uint64_t>(st.st_size)) {
    problem = "header says " + Mib(header->segment_bytes) + " but the file has " +
              Mib(static_cast<std::uint64_t>(st.st_size));
  }
  const std::uint64_t bytes = header->segment_bytes;
  munmap(h, kHeaderBytes);
  if (!problem.empty()) {
    close(fd);
    return Status::Corruption("segment '" + name + "': " + problem);
  }
  return MapAndAttach(name, "segment '" + name + "'", fd, bytes, MAP_SHARED, true);
}

Result<std::unique_ptr<Segment>> Segment::OpenFile(const std::string& path) {
  auto probe = ProbeFile(path);
  if (!probe.ok()) return probe.status();
  if (!probe->valid) return Status::Corruption("'" + path + "': " + probe->problem);
  TANDEM_RETURN_IF_ERROR(CheckSize(path, *probe));
  const int fd = OpenToLook(path);
  if (fd < 0) return Status::Internal(ErrnoMessage("open " + path));
  // Private: a tool's announcement entry (the only thing it writes) stays in its own copy.
  return MapAndAttach(path, "'" + path + "'", fd, probe->header->segment_bytes, MAP_PRIVATE, false);
}

Result<std::unique_ptr<Segment>> Segment::OpenImage(const std::string& label, char* base,
                                                    std::uint64_t size) {
  const std::string what = "segment '" + label + "': ";
  if (size < kHeaderBytes) {
    return Status::Corruption(what + "not a Tandem segment: " + std::to_string(size) +
                              " bytes, smaller than the " + std::to_string(kHeaderBytes) +
                              "-byte header");
  }
  if (reinterpret_cast<std::uintptr_t>(base) % 64 != 0) {
    return Status::InvalidArgument(what + "the image must be 64-byte aligned");
  }
  const auto* h = reinterpret_cast<const SegmentHeader*>(base);
  const std::uint64_t magic = h->magic.load(std::memory_order_acquire);
  if (magic != kSegmentMagic) {
    return Status::Corruption(what + "not a Tandem segment (magic " + Hex(magic) + ", expected " +
                              Hex(kSegmentMagic) + ")");
  }
  if (h->layout_version != kLayoutVersion || h->layout_hash != kLayoutHash) {
    return Status::Corruption(what + "layout version " + std::to_string(h->layout_version) +
                              " / hash " + Hex(h->layout_hash) + " are not this build's");
  }
  auto seg = std::unique_ptr<Segment>(new Segment());
  seg->name_ = label;
  seg->owns_mapping_ = false;
  seg->base_ = base;
  seg->size_ = size;
  seg->header_ = reinterpret_cast<SegmentHeader*>(base);
  TANDEM_RETURN_IF_ERROR(seg->Attach());
  return seg;
}

Status Segment::Remove(const std::string& name) {
  TANDEM_RETURN_IF_ERROR(ValidateName(name));
  // Its reader table (shm/reader_table.h) goes with it, if it is still there.
  (void)shm_unlink(("/" + ReaderTableName(name)).c_str());
  if (shm_unlink(("/" + name).c_str()) != 0) {
    if (errno == ENOENT) return Status::NotFound("no segment named '" + name + "'");
    return Status::Internal(ErrnoMessage("shm_unlink " + name));
  }
  return Status::Ok();
}

std::vector<std::string> Segment::List(const std::string& prefix) {
  std::vector<std::string> names;
  if (DIR* dir = opendir("/dev/shm")) {
    while (const dirent* e = readdir(dir)) {
      const std::string n = e->d_name;
      // A segment's reader table (shm/reader_table.h) is not a segment: it goes with its segment.
      if (n.rfind(prefix, 0) == 0 && !n.ends_with(".readers")) names.push_back(n);  // not a table
    }
    closedir(dir);
  }
  return names;
}

Result<std::uint64_t> Segment::Allocate(std::uint64_t bytes, const char* what) {
  TANDEM_CHECK(!read_only_, "a read-only segment (a local reader's) never allocates");
  void* p = managed_->buffer.allocate(bytes, std::nothrow);
  if (p == nullptr) {
    const std::string never = bytes > managed_->buffer.get_size()
                                  ? " (more than the whole segment: it can never fit)"
                                  : "";
    return Status::ResourceExhausted("segment '" + name_ + "' is full: " + what + " needs " +
                                     std::to_string(bytes) + " bytes, " +
                                     std::to_string(free_bytes()) + " of " + std::to_string(size_) +
                                     " bytes are free" + never);
  }
  return OffsetOf(p);
}

void Segment::Deallocate(std::uint64_t offset) {
  TANDEM_CHECK(!read_only_, "a read-only segment (a local reader's) never frees");
  TANDEM_CHECK(offset != 0, "deallocating offset 0");
  managed_->buffer.deallocate(At<void>(offset));
}

std::uint64_t Segment::free_bytes() const {
  return managed_ ? managed_->buffer.get_free_memory() : 0;  // 0: read-only, not ours to know
}

std::uint64_t Segment::used_bytes() const {
  if (!managed_) return 0;  // read-only
  return managed_->buffer.get_size() - managed_->buffer.get_free_memory();
}

void Segment::SetRuntime(Role role, pid_t pid, RuntimeState state) {
  RuntimeEntry& e = header_->runtimes[RuntimeEntryOf(role)];
  e.pid.store(pid, std::memory_order_relaxed);
  e.state.store(static_cast<std::uint32_t>(state), std::memory_order_release);
}

}  // namespace tandem::shm

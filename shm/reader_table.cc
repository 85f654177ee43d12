#include "shm/reader_table.h"

#include "shm/registry.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace tandem::shm {

namespace {

// Byte `at` of the table as an OFD lock: owned by the open file description, so dropped by the
// kernel when the last descriptor of it closes — when its process dies, whatever kills it.
struct flock ByteLock(short type, off_t at) {
  struct flock fl {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = at;
  fl.l_len = 1;
  return fl;
}
bool TryLockByte(int fd, off_t at) {
  struct flock fl = ByteLock(F_WRLCK, at);
  return fcntl(fd, F_OFD_SETLK, &fl) == 0;
}
void UnlockByte(int fd, off_t at) {
  struct flock fl = ByteLock(F_UNLCK, at);
  (void)fcntl(fd, F_OFD_SETLK, &fl);
}
// Whether another open file description holds byte `at`. Takes nothing.
bool HeldByOther(int fd, off_t at) {
  struct flock fl = ByteLock(F_WRLCK, at);
  if (fcntl(fd, F_OFD_GETLK, &fl) != 0) return true;  // cannot tell: assume alive
  return fl.l_type != F_UNLCK;
}

off_t EntryLockByte(std::uint32_t index) {
  return static_cast<off_t>(sizeof(ReaderTableHeader) + index * sizeof(ReaderTableSlot));
}

std::uint64_t NowUnixNs() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

std::string SocketPath(const std::string& segment_name) {
  return "/dev/shm/" + ReaderTableName(segment_name);
}

// How long a reader waits for a live supervisor to hand it the table: its handout thread answers
// at once, so only a stopped or overloaded supervisor takes this long.
constexpr std::chrono::milliseconds kHandoutWait{5000};

// The seals that make the table's size fixed for good.
constexpr int kTableSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;

// An open file description of our own for `fd` (no locks shared with whoever handed it to us).
int ReopenOwn(int fd) {
  return open(("/proc/self/fd/" + std::to_string(fd)).c_str(), O_RDWR | O_CLOEXEC);
}

// A table whose size nobody can change: a regular file of kReaderTableBytes, sealed.
Status CheckSealed(int fd, const std::string& what) {
  struct stat st {};
  const int seals = fcntl(fd, F_GET_SEALS);
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<std::size_t>(st.st_size) != kReaderTableBytes || seals < 0 ||
      (seals & kTableSeals) != kTableSeals) {
    return Status::Corruption(what + " is not a sealed reader table (" +
                              std::to_string(static_cast<long long>(st.st_size)) + " bytes, " +
                              std::to_string(kReaderTableBytes) + " expected)");
  }
  return Status::Ok();
}

// Whatever is under a table socket's name that a new supervisor may take over. Two supervisors of
// one name never race here: the segment is created first, exclusively (shm/segment.h), and only
// its creator goes on to make the table. (A socket between bind and listen looks dead to
// HandoutServed: that order must stay.): nothing, or ours
// and dead (a socket nobody serves; a table file of an older build whose byte 0 nobody holds).
Status ClearStaleName(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) {
    return errno == ENOENT ? Status::Ok() : Status::FromErrno("lstat " + path);
  }
  if (st.st_uid != geteuid()) {
    return Status::FailedPrecondition(path + " is not a reader table of ours (uid " +
                                      std::to_string(st.st_uid) + "); it is never removed");
  }
  if (S_ISSOCK(st.st_mode)) {
    if (HandoutServed(path)) return Status::AlreadyExists(path + " is served by a live supervisor");
  } else if (S_ISREG(st.st_mode)) {
    const int old = open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    const bool held = old >= 0 && HeldByOther(old, 0);
    if (old >= 0) close(old);
    if (held) return Status::AlreadyExists(path + " is held by a live supervisor");
  } else {
    return Status::FailedPrecondition(path +
                                      " is neither a socket nor a file of Tandem's; it is "
                                      "never removed");
  }
  if (unlink(path.c_str()) != 0 && errno != ENOENT) return Status::FromErrno("unlink " + path);
  return Status::Ok();
}

}  // namespace

ReaderTableEntry::ReaderTableEntry(int fd, std::uint32_t index, ReaderTableSlot* slot)
    : fd_(fd), index_(index), slot_(slot), fork_generation_(ForkGeneration()) {}

bool ReaderTableEntry::inherited() const { return ForkGeneration() != fork_generation_; }

ReaderTableEntry::~ReaderTableEntry() {
  if (inherited()) {
    close(fd_);  // the parent's descriptor stays open: its lock and its entry are untouched
    return;
  }
  slot_->version.store(kReaderIdle, std::memory_order_seq_cst);
  slot_->target.store(0, std::memory_order_seq_cst);
  slot_->pid.store(0, std::memory_order_relaxed);
  UnlockByte(fd_, EntryLockByte(index_));
  close(fd_);
}

void ReaderTableEntry::Announce(std::uint64_t target, std::uint64_t version) {
  if (target != target_) {
    // Retarget only while idle: a publisher that pairs the old version with the new target
    // protects too much, never too little (reader_table.h).
    slot_->version.store(kReaderIdle, std::memory_order_seq_cst);
    slot_->target.store(target, std::memory_order_seq_cst);
    target_ = target;
  }
  slot_->version.store(version, std::memory_order_seq_cst);
  slot_->reads.store(slot_->reads.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

ReaderTable::~ReaderTable() {
  handout_.reset();  // it reopens fd_ until its thread stops
  if (base_) munmap(base_, kReaderTableBytes);
  if (inheritable_fd_ >= 0) close(inheritable_fd_);
  if (fd_ >= 0) close(fd_);  // drops the supervisor's lock of byte 0 with it
}

Status ReaderTable::Map(int fd, bool create) {
  fd_ = fd;
  void* p = mmap(nullptr, kReaderTableBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return Status::Internal(ErrnoMessage("mmap " + path_));
  base_ = static_cast<char*>(p);
  header_ = reinterpret_cast<ReaderTableHeader*>(base_);
  slots_ = reinterpret_cast<ReaderTableSlot*>(base_ + sizeof(ReaderTableHeader));
  if (create) return Status::Ok();
  if (header_->magic.load(std::memory_order_acquire) != kReaderTableMagic) {
    return Status::Unavailable(path_ + " is not initialised (its replica is starting or gone)");
  }
  if (header_->version != kReaderTableVersion || header_->entries != kReaderTableEntries ||
      header_->layout_hash != kLayoutHash) {
    return Status::Corruption(path_ + " was made by another build of Tandem (table version " +
                              std::to_string(header_->version) + ", " +
                              std::to_string(header_->entries) +
                              " entries): run readers and the replica from one build");
  }
  return Status::Ok();
}

Result<std::unique_ptr<ReaderTable>> ReaderTable::Create(const std::string& segment_name,
                                                         std::uint64_t generation,
                                                         std::uint64_t layout_hash,
                                                         std::optional<gid_t> reader_gid) {
  auto table = std::unique_ptr<ReaderTable>(new ReaderTable());
  table->path_ = SocketPath(segment_name);
  table->generation_ = generation;
  table->layout_hash_ = layout_hash;
  if (segment_name.size() > kMaxReaderTableSegmentName) {
    return Status::InvalidArgument("segment name '" + segment_name + "' is longer than " +
                                   std::to_string(kMaxReaderTableSegmentName) +
                                   " bytes: its reader table socket would not fit a Unix socket");
  }
  TANDEM_RETURN_IF_ERROR(ClearStaleName(table->path_));
  const int fd =
      memfd_create(("tandem-readers:" + segment_name).c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return Status::FromErrno("memfd_create for " + table->path_);
  if (ftruncate(fd, static_cast<off_t>(kReaderTableBytes)) != 0 ||
      fcntl(fd, F_ADD_SEALS, kTableSeals) != 0) {
    close(fd);
    return Status::FromErrno("sizing and sealing the reader table");
  }
  if (!TryLockByte(fd, 0)) {
    close(fd);
    return Status::FromErrno("locking the reader table");
  }
  TANDEM_RETURN_IF_ERROR(table->Map(fd, true));
  new (table->base_) ReaderTableHeader();
  for (std::uint32_t i = 0; i < kReaderTableEntries; ++i) {
    ReaderTableSlot& s = *new (&table->slots_[i]) ReaderTableSlot();
    s.version.store(kReaderIdle, std::memory_order_relaxed);
  }
  table->WriteHeader();
  // The runtimes' (Inherit): a description of its own, holding no lock.
  table->inheritable_fd_ = ReopenOwn(fd);
  if (table->inheritable_fd_ < 0) return Status::FromErrno("reopening the reader table");
  TANDEM_ASSIGN_OR_RETURN(
      table->handout_,
      DescriptorHandout::Start(table->path_, fd, reader_gid ? 0660 : 0600, reader_gid));
  return table;
}

void ReaderTable::WriteHeader() {
  ReaderTableHeader& h = *header_;
  h.version = kReaderTableVersion;
  h.entries = kReaderTableEntries;
  h.layout_hash = layout_hash_;
  h.generation = generation_;
  h.magic.store(kReaderTableMagic, std::memory_order_release);
}

Result<std::unique_ptr<ReaderTable>> ReaderTable::Open(const std::string& segment_name) {
  const std::string path = SocketPath(segment_name);
  auto received = ReceiveDescriptor(path, kHandoutWait);
  if (!received.ok()) {
    const Status& s = received.status();
    if (s.code() == StatusCode::kNotFound) return Status::NotFound("no reader table " + path);
    if (s.code() == StatusCode::kFailedPrecondition && s.message().starts_with("permission")) {
      return Status::FailedPrecondition(
          "permission denied opening " + path +
          ": local readers need the replica's user, or a supervisor started with "
          "--reader-group naming a group this user is in");
    }
    if (s.code() == StatusCode::kUnavailable && s.message().starts_with("nobody serves")) {
      return Status::Unavailable("the replica of " + path + " is gone: its supervisor exited");
    }
    return s;
  }
  const int given = received->fd;
  // Served by the segment's owner: anyone else under the name is not its replica.
  struct stat seg {};
  if (stat(("/dev/shm/" + segment_name).c_str(), &seg) != 0) {
    close(given);
    return Status::Unavailable("no segment /dev/shm/" + segment_name + " beside " + path +
                               " (its replica is gone)");
  }
  if (seg.st_uid != received->server_uid) {
    close(given);
    return Status::FailedPrecondition(
        path + " is served by uid " + std::to_string(received->server_uid) +
        ", not by the segment's owner (uid " + std::to_string(seg.st_uid) + ")");
  }
  TANDEM_RETURN_IF_ERROR(CheckSealed(given, path));
  // The handed descriptor is an open file description of our own (DescriptorHandout): the
  // entries we lock through it are ours alone, and the supervisor's lock of byte 0 stays its own.
  auto table = std::unique_ptr<ReaderTable>(new ReaderTable());
  table->path_ = path;
  TANDEM_RETURN_IF_ERROR(table->Map(given, false));
  table->generation_ = table->header_->generation;
  return table;
}

Result<std::unique_ptr<ReaderTable>> ReaderTable::Inherit(int fd, std::uint64_t generation) {
  if (fcntl(fd, F_GETFD) < 0) {
    return Status::InvalidArgument("reader table descriptor " + std::to_string(fd) +
                                   " is not open (the supervisor hands it down at spawn)");
  }
  const std::string what = "reader table descriptor " + std::to_string(fd);
  if (Status s = CheckSealed(fd, what); !s.ok()) {
    close(fd);
    return s;
  }
  (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
  auto table = std::unique_ptr<ReaderTable>(new ReaderTable());
  table->path_ = what;
  // The header is not checked: a reader may have scribbled over it, and the supervisor that
  // made the table (for this very segment, `generation`) puts it back.
  TANDEM_RETURN_IF_ERROR(table->Map(fd, true));
  table->generation_ = generation;
  return table;
}

Status ReaderTable::Remove(const std::string& segment_name) {
  const std::string path = SocketPath(segment_name);
  if (unlink(path.c_str()) != 0) {
    if (errno == ENOENT) return Status::NotFound("no reader table " + path);
    return Status::FromErrno("unlink " + path);
  }
  return Status::Ok();
}

bool ReaderTable::SupervisorAlive() const { return HeldByOther(fd_, 0); }

Result<std::unique_ptr<ReaderTableEntry>> ReaderTable::Claim() {
  // A descriptor of our own: the entry's lock belongs to it alone, so two readers of one process
  // are two owners, and closing it (or dying) lets the entry go.
  // Through /proc/self/fd: the very file mapped, even if a new incarnation took the name since.
  const std::string self = "/proc/self/fd/" + std::to_string(fd_);
  const int own = open(self.c_str(), O_RDWR | O_CLOEXEC);
  if (own < 0) return Status::Internal(ErrnoMessage("reopening " + path_ + " (" + self + ")"));
  for (std::uint32_t i = 0; i < kReaderTableEntries; ++i) {
    if (!TryLockByte(own, EntryLockByte(i))) continue;
    ReaderTableSlot& s = slots_[i];
    // A dead reader's entry not swept yet: take it over (its announcement is ours to clear now).
    s.version.store(kReaderIdle, std::memory_order_seq_cst);
    s.target.store(0, std::memory_order_seq_cst);
    s.pid.store(getpid(), std::memory_order_relaxed);
    s.claimed_unix_ns.store(NowUnixNs(), std::memory_order_relaxed);
    s.reads.store(0, std::memory_order_relaxed);
    std::uint64_t hw = header_->high_water.load(std::memory_order_seq_cst);
    while (hw < i + 1 && !header_->high_water.compare_exchange_weak(hw, i + 1)) {
    }
    header_->claims.fetch_add(1, std::memory_order_relaxed);
    return std::unique_ptr<ReaderTableEntry>(new ReaderTableEntry(own, i, &s));
  }
  close(own);
  return Status::ResourceExhausted(path_ + ": all " + std::to_string(kReaderTableEntries) +
                                   " local reader entries are held by live readers");
}

SweepResult ReaderTable::Sweep() {
  SweepResult result;
  const ReaderTableHeader& h = *header_;
  if (h.magic.load(std::memory_order_acquire) != kReaderTableMagic ||
      h.version != kReaderTableVersion || h.entries != kReaderTableEntries ||
      h.layout_hash != layout_hash_ || h.generation != generation_) {
    WriteHeader();
    result.header_repaired = true;
  }
  // Every entry, not only those below high_water: a reader may have lowered it. An empty entry
  // costs three loads; a claimed one a lock test.
  for (std::uint32_t i = 0; i < kReaderTableEntries; ++i) {
    ReaderTableSlot& s = slots_[i];
    if (s.pid.load() == 0 && s.target.load() == 0 && s.version.load() == kReaderIdle) continue;
    if (!TryLockByte(fd_, EntryLockByte(i))) {
      ++result.live;
      // A reader raises it after it claims its entry, so one just claimed may be above it for a
      // moment: raised here too, which is no repair.
      RaiseAtomic(header_->high_water, i + 1);
      continue;
    }
    // Nobody holds the entry: its reader died. Cleared under its lock, so no reader claims it
    // meanwhile; the publisher then frees what only that announcement kept.
    s.version.store(kReaderIdle, std::memory_order_seq_cst);
    s.target.store(0, std::memory_order_seq_cst);
    s.pid.store(0, std::memory_order_relaxed);
    UnlockByte(fd_, EntryLockByte(i));
    header_->cleared.fetch_add(1, std::memory_order_relaxed);
    ++result.cleared;
  }
  return result;
}

std::uint64_t ReaderTable::OldestAnnounced(std::uint64_t target) const {
  std::uint64_t oldest = kReaderIdle;
  const auto high = static_cast<std::uint32_t>(std::min<std::uint64_t>(
      header_->high_water.load(std::memory_order_seq_cst), kReaderTableEntries));
  for (std::uint32_t i = 0; i < high; ++i) {
    const ReaderTableSlot& s = slots_[i];
    const std::uint64_t v = s.version.load(std::memory_order_seq_cst);
    if (v >= oldest) continue;
    if (s.target.load(std::memory_order_seq_cst) == target) oldest = v;
  }
  return oldest;
}

}  // namespace tandem::shm

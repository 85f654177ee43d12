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

// Opens the table file with `flags`, refusing anything but a regular file of the table's size.
Result<int> OpenTableFile(const std::string& name, int flags) {
  const std::string path = "/dev/shm/" + name;
  // O_NONBLOCK: a FIFO squatting the name must not block the open (it is refused below).
  const int fd = shm_open(("/" + name).c_str(), flags | O_CLOEXEC | O_NONBLOCK, 0);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound("no reader table " + path);
    if (errno == EACCES) {
      return Status::FailedPrecondition(
          "permission denied opening " + path +
          ": local readers need the replica's user, or a supervisor started with "
          "--reader-group naming a group this user is in");
    }
    return Status::Internal(ErrnoMessage("shm_open " + path));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<std::size_t>(st.st_size) != kReaderTableBytes) {
    close(fd);
    return Status::Corruption(path + " is not a reader table (" +
                              std::to_string(static_cast<long long>(st.st_size)) + " bytes, " +
                              std::to_string(kReaderTableBytes) + " expected)");
  }
  return fd;
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
  if (base_) munmap(base_, kReaderTableBytes);
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
  const std::string name = ReaderTableName(segment_name);
  auto table = std::unique_ptr<ReaderTable>(new ReaderTable());
  table->path_ = "/dev/shm/" + name;
  int fd = -1;
  for (int attempt = 0; attempt < 3 && fd < 0; ++attempt) {
    fd = shm_open(("/" + name).c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) break;
    if (errno != EEXIST) return Status::Internal(ErrnoMessage("shm_open " + table->path_));
    // A file under the name: ours, a regular file, and nobody holds byte 0 (its supervisor is
    // gone, whatever state it left the file in) → stale: replaced. Anything else is never removed.
    const int old = shm_open(("/" + name).c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0);
    if (old < 0) {
      if (errno == ENOENT) continue;  // gone meanwhile
      return Status::FailedPrecondition(ErrnoMessage("cannot take " + table->path_));
    }
    struct stat st {};
    const bool regular = fstat(old, &st) == 0 && S_ISREG(st.st_mode);
    const bool ours = regular && st.st_uid == geteuid();
    const bool held = regular && HeldByOther(old, 0);
    close(old);
    if (!ours) {
      return Status::FailedPrecondition(table->path_ + " is not a reader table of ours (uid " +
                                        std::to_string(st.st_uid) + "); it is never removed");
    }
    if (held) return Status::AlreadyExists(table->path_ + " is held by a live supervisor");
    (void)shm_unlink(("/" + name).c_str());
  }
  if (fd < 0) return Status::Internal("could not create " + table->path_);
  auto fail = [&](Status s) -> Result<std::unique_ptr<ReaderTable>> {
    table.reset();
    (void)shm_unlink(("/" + name).c_str());
    return s;
  };
  if (!TryLockByte(fd, 0)) {
    close(fd);
    return fail(Status::Internal(ErrnoMessage("locking " + table->path_)));
  }
  if (ftruncate(fd, static_cast<off_t>(kReaderTableBytes)) != 0) {
    close(fd);
    return fail(Status::Internal(ErrnoMessage("ftruncate " + table->path_)));
  }
  if (reader_gid) {
    if (fchown(fd, static_cast<uid_t>(-1), *reader_gid) != 0 || fchmod(fd, 0660) != 0) {
      close(fd);
      return fail(Status::FailedPrecondition(
          ErrnoMessage("giving " + table->path_ + " to group " + std::to_string(*reader_gid))));
    }
  }
  if (Status s = table->Map(fd, true); !s.ok()) return fail(s);
  ReaderTableHeader& h = *new (table->base_) ReaderTableHeader();
  h.version = kReaderTableVersion;
  h.entries = kReaderTableEntries;
  h.layout_hash = layout_hash;
  h.generation = generation;
  for (std::uint32_t i = 0; i < kReaderTableEntries; ++i) {
    ReaderTableSlot& s = *new (&table->slots_[i]) ReaderTableSlot();
    s.version.store(kReaderIdle, std::memory_order_relaxed);
  }
  h.magic.store(kReaderTableMagic, std::memory_order_release);
  return table;
}

Result<std::unique_ptr<ReaderTable>> ReaderTable::Open(const std::string& segment_name) {
  const std::string name = ReaderTableName(segment_name);
  TANDEM_ASSIGN_OR_RETURN(int fd, OpenTableFile(name, O_RDWR | O_NOFOLLOW));
  auto table = std::unique_ptr<ReaderTable>(new ReaderTable());
  table->path_ = "/dev/shm/" + name;
  TANDEM_RETURN_IF_ERROR(table->Map(fd, false));
  return table;
}

Status ReaderTable::Remove(const std::string& segment_name) {
  const std::string name = ReaderTableName(segment_name);
  if (shm_unlink(("/" + name).c_str()) != 0) {
    if (errno == ENOENT) return Status::NotFound("no reader table /dev/shm/" + name);
    return Status::Internal(ErrnoMessage("shm_unlink /dev/shm/" + name));
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
  const auto high = static_cast<std::uint32_t>(std::min<std::uint64_t>(
      header_->high_water.load(std::memory_order_seq_cst), kReaderTableEntries));
  for (std::uint32_t i = 0; i < high; ++i) {
    ReaderTableSlot& s = slots_[i];
    if (s.pid.load() == 0 && s.target.load() == 0 && s.version.load() == kReaderIdle) continue;
    if (!TryLockByte(fd_, EntryLockByte(i))) {
      ++result.live;
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

#include "workers/tables/table_log.h"

#include <fcntl.h>
#include <stdio.h>  // renameat2
#include <sys/stat.h>
#include <unistd.h>

#include <boost/crc.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <string_view>
#include <unordered_set>

#include "base/datum_text.h"
#include "ipc/rows.h"
#include "ipc/table_write.h"
#include "workers/tables/data_dir.h"

namespace tandem::workers {

namespace {

// The first payload byte of every record after the header: TableLogRecord field 2 (write),
// length-delimited.
constexpr std::uint8_t kWriteTag = (2 << 3) | 2;

std::uint32_t Crc32(const char* data, std::size_t size) {
  boost::crc_32_type crc;
  crc.process_bytes(data, size);
  return crc.checksum();
}

void PutLe32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint32_t GetLe32(const char* p) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

bool AllZero(const std::string& bytes, std::uint64_t from) {
  for (std::uint64_t i = from; i < bytes.size(); ++i) {
    if (bytes[i] != '\0') return false;
  }
  return true;
}

// The most bytes RecordFollows checksums in one search (~1 s here): past it, it answers yes.
constexpr std::uint64_t kRecordSearchBytes = std::uint64_t{512} << 20;

// Whether a frame header that could be a write's starts at `p`: a length that is not 0, at most
// kMaxTableLogRecord and fits the file, and the write tag as the payload's first byte.
bool WriteFrameAt(const std::string& bytes, std::uint64_t p) {
  if (p + kTableLogFrame >= bytes.size()) return false;
  const std::uint32_t len = GetLe32(bytes.data() + p);
  return len != 0 && len <= kMaxTableLogRecord && p + kTableLogFrame + len <= bytes.size() &&
         static_cast<std::uint8_t>(bytes[p + kTableLogFrame]) == kWriteTag;
}

// Whether what starts at `p` can follow a record: the end of the file, a zero length (a torn
// tail's zeros), or another write's frame.
bool FrameOrEndAt(const std::string& bytes, std::uint64_t p) {
  if (p == bytes.size()) return true;
  if (p + kTableLogFrame < bytes.size() && GetLe32(bytes.data() + p) == 0) return true;
  return WriteFrameAt(bytes, p);
}

bool RecordFollows(const std::string& bytes, std::uint64_t from) {
  const std::uint64_t size = bytes.size();
  std::uint64_t checked = 0;
  for (std::uint64_t p = from; p + kTableLogFrame < size; ++p) {
    if (!WriteFrameAt(bytes, p)) continue;
    const std::uint32_t len = GetLe32(bytes.data() + p);
    const char* payload = bytes.data() + p + kTableLogFrame;
    if (!FrameOrEndAt(bytes, p + kTableLogFrame + len)) continue;
    checked += len;
    if (checked > kRecordSearchBytes) return true;
    if (Crc32(payload, len) != GetLe32(bytes.data() + p + 4)) continue;
    ipc::pb::TableLogRecord record;
    if (record.ParseFromArray(payload, static_cast<int>(len)) && record.has_write()) return true;
  }
  return false;
}

std::string DescribeSchema(const ipc::pb::Schema& schema) {
  std::string out = "(";
  for (int i = 0; i < schema.columns_size(); ++i) {
    const auto& c = schema.columns(i);
    if (i > 0) out += ", ";
    const ColumnType type = ipc::ColumnTypeOf(c);
    out += c.name() + ":" +
           (type.kind == ColumnType::Kind::kAny ? "unknown" : ColumnTypeName(type)) +
           (c.nullable() ? " nullable" : "");
  }
  return out + ")";
}

std::string DescribeKey(const ipc::pb::TableLogHeader& header) {
  if (header.upsert_key_size() == 0) return "none";
  std::string out = "(";
  for (int i = 0; i < header.upsert_key_size(); ++i) {
    const std::uint32_t k = header.upsert_key(i);
    if (i > 0) out += ", ";
    out += static_cast<int>(k) < header.schema().columns_size()
               ? header.schema().columns(static_cast<int>(k)).name()
               : "#" + std::to_string(k);
  }
  return out + ")";
}

bool SameSchema(const ipc::pb::Schema& a, const ipc::pb::Schema& b) {
  if (a.columns_size() != b.columns_size()) return false;
  for (int i = 0; i < a.columns_size(); ++i) {
    const auto& x = a.columns(i);
    const auto& y = b.columns(i);
    if (x.name() != y.name() || x.type() != y.type() || x.nullable() != y.nullable()) return false;
  }
  return true;
}

// What differs between the header in the file and the table's: empty when they agree.
std::string HeaderDifference(const ipc::pb::TableLogHeader& file,
                             const ipc::pb::TableLogHeader& want) {
  std::string out;
  auto add = [&out](const std::string& s) { out += (out.empty() ? "" : "; ") + s; };
  if (file.format() == kTableLogFormatKeyedBySpelling && want.format() == kTableLogFormat) {
    for (std::uint32_t c : file.upsert_key()) {
      if (static_cast<int>(c) >= file.schema().columns_size()) continue;  // differs below
      const auto type = file.schema().columns(static_cast<int>(c)).type();
      if (type == ipc::pb::NUMERIC || type == ipc::pb::INTERVAL) {
        add("it has format 1, whose upsert key told equal values spelled apart (1.5 and 1.50) "
            "apart, and its upsert key has the " +
            std::string(type == ipc::pb::NUMERIC ? "numeric" : "interval") + " column " +
            file.schema().columns(static_cast<int>(c)).name() +
            " (this build reads format 2: keys by value; re-create the table and write its rows "
            "again)");
        break;
      }
    }
  } else if (file.format() != want.format()) {
    add("it has format " + std::to_string(file.format()) + " (this build reads " +
        std::to_string(want.format()) + ")");
  }
  if (file.id() != want.id()) add("written for table " + file.id() + ", not " + want.id());
  if (!SameSchema(file.schema(), want.schema())) {
    add("written for schema " + DescribeSchema(file.schema()) + ", this table has schema " +
        DescribeSchema(want.schema()));
  }
  if (!std::equal(file.upsert_key().begin(), file.upsert_key().end(), want.upsert_key().begin(),
                  want.upsert_key().end())) {
    add("written for upsert key " + DescribeKey(file) + ", this table has upsert key " +
        DescribeKey(want));
  }
  return out;
}

bool ValidId(const std::string& id) {
  return !id.empty() && id != "." && id != ".." && id.find('/') == std::string::npos &&
         id.find('\0') == std::string::npos;
}

Status ReadAll(int fd, const std::string& path, std::string& out) {
  out.clear();
  struct stat st {};
  if (fstat(fd, &st) == 0 && st.st_size > 0) out.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = pread(fd, buf, sizeof buf, static_cast<off_t>(out.size()));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno("read " + path);
    }
    if (n == 0) return Status::Ok();
    out.append(buf, static_cast<std::size_t>(n));
  }
}

// write(2)s all of `bytes` (O_APPEND: at the end), retrying short writes and EINTR; on failure
// `written` says how much made it and `error` is the errno.
Status WriteAll(int fd, const std::string& path, std::string_view bytes, std::size_t& written,
                int& error) {
  written = 0;
  error = 0;
  while (written < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      error = errno;
      return Status::FromErrno("write " + path);
    }
    if (n == 0) {
      error = EIO;
      return Status::Internal("write " + path + ": wrote nothing");
    }
    written += static_cast<std::size_t>(n);
  }
  return Status::Ok();
}

Status SyncFile(int fd, const std::string& path, bool data_only) {
  int rc;
  do {
    rc = data_only ? fdatasync(fd) : fsync(fd);
  } while (rc != 0 && errno == EINTR);
  return rc == 0 ? Status::Ok() : Status::FromErrno((data_only ? "fdatasync " : "fsync ") + path);
}

// Writes `tail` (what follows the last good record at `offset`) to a new file beside the log,
// <id>.log.torn-<offset>-<unix ms>, mode 0600, durable (file and directory fsynced) before the
// log is cut. Returns its path.
Result<std::string> KeepTornTail(const std::string& tables_dir, const std::string& id,
                                 std::uint64_t offset, std::string_view tail) {
  std::uint64_t ms = WallClockMs();
  for (;; ++ms) {
    const std::string path =
        tables_dir + "/" + id + ".log.torn-" + std::to_string(offset) + "-" + std::to_string(ms);
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) return Status::FromErrno("create " + path);
    std::size_t written = 0;
    int error = 0;
    Status status = WriteAll(fd, path, tail, written, error);
    if (status.ok()) status = SyncFile(fd, path, /*data_only=*/false);
    close(fd);
    if (!status.ok()) {
      unlink(path.c_str());
      return status;
    }
    TANDEM_RETURN_IF_ERROR(SyncDirectory(tables_dir));
    return path;
  }
}

// The file's records as far as they are good, and what follows them.
struct Scan {
  std::optional<ipc::pb::TableLogHeader> header;  // the first record, when good
  std::vector<ipc::pb::TableLogWrite> writes;
  std::uint64_t good_end = 0;  // where the last good record ends
  // The first bad record, when there is one: why it is bad, and whether it is a torn tail.
  std::string bad;
  bool torn = false;
  std::unordered_set<std::string> uuids;  // of `writes`
};

// Why a write read back (its checksum good) cannot be one the table writer made, or empty. The
// rules a write is made by: its updates fit the header's schema and upsert key as a WriteTable's
// do (ipc::CheckTableUpdates); its uuid is a client's (1 to kMaxUuidBytes bytes) and in no
// earlier write (a retry is answered, never appended); its time is at or after the one before
// (group commits are timed max(clock, upper)) and at most kMaxTableWriteTime.
std::string WriteProblem(const ipc::pb::TableLogWrite& write, const ipc::pb::TableLogHeader& header,
                         const Scan& scan) {
  const std::string& uuid = write.uuid();
  const std::string named = "uuid " + ipc::Printable(uuid);
  if (std::string why = LogWriteProblem(uuid, write.time()); !why.empty()) {
    return named + ", " + why;
  }
  if (scan.uuids.count(uuid) != 0) return named + ", is a second write with that uuid";
  if (!scan.writes.empty() && write.time() < scan.writes.back().time()) {
    return named + ", is at time " + std::to_string(write.time()) + ", before the write ahead " +
           "of it (" + std::to_string(scan.writes.back().time()) + ")";
  }
  const std::vector<std::uint32_t> key(header.upsert_key().begin(), header.upsert_key().end());
  if (Status fits = ipc::CheckTableUpdates(header.id(), write.updates(), header.schema(), key);
      !fits.ok()) {
    return named + ", does not fit the table: " + fits.message();
  }
  return "";
}

Scan ScanLog(const std::string& bytes) {
  Scan scan;
  const std::uint64_t size = bytes.size();
  std::uint64_t pos = 0;
  while (pos < size) {
    const std::uint64_t left = size - pos;
    if (left < kTableLogFrame) {
      scan.bad = "a record frame cut short (" + std::to_string(left) + " of " +
                 std::to_string(kTableLogFrame) + " bytes)";
      scan.torn = true;  // runs to the end of the file
      break;
    }
    const std::uint32_t len = GetLe32(bytes.data() + pos);
    const std::uint32_t crc = GetLe32(bytes.data() + pos + 4);
    if (len == 0 || len > kMaxTableLogRecord) {
      scan.bad = "a record with a bad length (" + std::to_string(len) + ")";
      // Its extent is unknown: torn only if nothing but zeros is there from its frame on.
      scan.torn = AllZero(bytes, pos);
      break;
    }
    const std::uint64_t end = pos + kTableLogFrame + len;
    if (end > size) {
      scan.bad = "a record of " + std::to_string(len) + " bytes cut short (" +
                 std::to_string(left - kTableLogFrame) + " there)";
      // Cut short by a crash, or a damaged length with the records after it still there.
      scan.torn = !RecordFollows(bytes, pos + 1);
      break;
    }
    const char* payload = bytes.data() + pos + kTableLogFrame;
    if (Crc32(payload, len) != crc) {
      scan.bad = "a record of " + std::to_string(len) + " bytes whose checksum fails";
      scan.torn = AllZero(bytes, end);
      break;
    }
    // From here the bytes are what was written: a bad record is never a torn append.
    ipc::pb::TableLogRecord record;
    if (!record.ParseFromArray(payload, static_cast<int>(len))) {
      scan.bad = "a record of " + std::to_string(len) + " bytes that does not parse";
      break;
    }
    if (!scan.header) {
      if (!record.has_header()) {
        scan.bad = "a first record that is not a header";
        break;
      }
      scan.header = std::move(*record.mutable_header());
    } else {
      if (!record.has_write()) {
        scan.bad = "a record that is not a write (after the header)";
        break;
      }
      if (std::string why = WriteProblem(record.write(), *scan.header, scan); !why.empty()) {
        scan.bad = "write " + std::to_string(scan.writes.size() + 1) + ", " + why;
        break;
      }
      scan.uuids.insert(record.write().uuid());
      scan.writes.push_back(std::move(*record.mutable_write()));
    }
    pos = end;
    scan.good_end = end;
  }
  return scan;
}

}  // namespace

std::string LogWriteProblem(std::string_view uuid, Time time) {
  if (uuid.empty() || uuid.size() > ipc::WriteBounds::kMaxUuidBytes) {
    return "has a uuid of " + std::to_string(uuid.size()) + " bytes (a write's has 1 to " +
           std::to_string(ipc::WriteBounds::kMaxUuidBytes) + ")";
  }
  if (time > kMaxTableWriteTime) {
    return "is at time " + std::to_string(time) + ", past the last a write can have (" +
           std::to_string(kMaxTableWriteTime) + ")";
  }
  return "";
}

std::string FrameTableLogRecord(const std::string& payload) {
  std::string out;
  out.reserve(kTableLogFrame + payload.size());
  PutLe32(out, static_cast<std::uint32_t>(payload.size()));
  PutLe32(out, Crc32(payload.data(), payload.size()));
  out += payload;
  return out;
}

Result<TableLog::Opened> TableLog::Open(const std::string& tables_dir,
                                        const ipc::pb::TableLogHeader& header) {
  if (!ValidId(header.id())) {
    return Status::InvalidArgument("a table log for id '" + header.id() + "' (not a file name)");
  }
  if (header.format() != kTableLogFormat) {
    return Status::InvalidArgument("a table log header must have format " +
                                   std::to_string(kTableLogFormat));
  }
  const std::string path = tables_dir + "/" + header.id() + ".log";
  constexpr int kFlags = O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY;
  bool created = false;
  int fd = open(path.c_str(), kFlags);
  if (fd < 0 && errno == ENOENT) {
    fd = open(path.c_str(), kFlags | O_CREAT | O_EXCL, 0600);
    created = fd >= 0;
  }
  if (fd < 0) {
    if (errno == ELOOP) return Status::FailedPrecondition(path + " is a symlink");
    return Status::FromErrno("open " + path);
  }
  // The fd is the log's from here (closed by its destructor on every error path).
  std::unique_ptr<TableLog> log(new TableLog(path, tables_dir, header.id(), fd, 0));
  struct stat st {};
  if (fstat(fd, &st) != 0) return Status::FromErrno("stat " + path);
  if (!S_ISREG(st.st_mode)) return Status::FailedPrecondition(path + " is not a regular file");

  Opened opened;
  std::string bytes;
  TANDEM_RETURN_IF_ERROR(ReadAll(fd, path, bytes));
  Scan scan = ScanLog(bytes);
  const std::uint64_t file_size = bytes.size();
  // A torn tail is cut off, but not before a copy of it is durable beside the log: the rules
  // above prove it unacknowledged unless the damage is in the last record itself (a length or
  // payload changed after it was written), and that copy is then all that is left of it. Zeros
  // hold nothing to keep. Returns what the warning says of the copy.
  auto keep_tail = [&]() -> Result<std::string> {
    if (AllZero(bytes, scan.good_end)) return std::string("; it was all zeros");
    auto copy = KeepTornTail(tables_dir, header.id(), scan.good_end,
                             std::string_view(bytes).substr(scan.good_end));
    if (!copy.ok()) {
      return Status(
          copy.status().code(),
          "table log " + path + ": " + scan.bad + " at byte offset " +
              std::to_string(scan.good_end) + " looks like a torn tail, but a copy " +
              "of it could not be kept, so it is left as it is: " + copy.status().message());
    }
    return "; a copy is in " + *copy;
  };

  if (!scan.header) {
    // Nothing good in the file. Empty, or only a torn header: the header was never durable, so
    // no write after it was acknowledged. Write it (again).
    if (!created && scan.torn) {
      TANDEM_ASSIGN_OR_RETURN(const std::string kept, keep_tail());
      opened.warning = "table log " + path + ": rewrote its header (the file held only " +
                       scan.bad + ", a torn header: nothing was ever acknowledged in it" + kept +
                       ")";
    } else if (!created && !scan.bad.empty()) {
      return Status::Corruption("table log " + path + " is corrupt (data loss?): " + scan.bad +
                                " at byte offset 0, followed by more data; left as it is");
    }
    if (!created && ftruncate(fd, 0) != 0) return Status::FromErrno("truncate " + path);
    ipc::pb::TableLogRecord record;
    *record.mutable_header() = header;
    std::string payload;
    if (!record.SerializeToString(&payload) || payload.size() > kMaxTableLogRecord) {
      return Status::InvalidArgument("a table log header of " + std::to_string(payload.size()) +
                                     " bytes (the most is " + std::to_string(kMaxTableLogRecord) +
                                     ")");
    }
    TANDEM_RETURN_IF_ERROR(log->AppendRecord(FrameTableLogRecord(payload)));
    TANDEM_RETURN_IF_ERROR(SyncFile(fd, path, /*data_only=*/false));
  } else {
    const std::string difference = HeaderDifference(*scan.header, header);
    if (!difference.empty()) {
      return Status::FailedPrecondition("table log " + path +
                                        " is not this table's: " + difference);
    }
    if (!scan.bad.empty() && !scan.torn) {
      return Status::Corruption("table log " + path + " is corrupt (data loss?): " + scan.bad +
                                " at byte offset " + std::to_string(scan.good_end) +
                                ", followed by more data; left as it is");
    }
    if (scan.torn) {
      const std::uint64_t cut = file_size - scan.good_end;
      TANDEM_ASSIGN_OR_RETURN(const std::string kept, keep_tail());
      if (ftruncate(fd, static_cast<off_t>(scan.good_end)) != 0)
        return Status::FromErrno("truncate " + path);
      TANDEM_RETURN_IF_ERROR(SyncFile(fd, path, /*data_only=*/false));
      opened.warning = "table log " + path + ": dropped a torn tail at byte offset " +
                       std::to_string(scan.good_end) + " (" + scan.bad + "; " +
                       std::to_string(cut) + " bytes cut after " +
                       std::to_string(scan.writes.size()) + " good writes" + kept +
                       "): it was never acknowledged, unless the damage was in the last record "
                       "itself";
    }
    log->bytes_ = scan.good_end;
  }
  bytes.clear();
  bytes.shrink_to_fit();
  // Always, not only when the file was created here: a previous run may have died between
  // creating it and making its name durable.
  TANDEM_RETURN_IF_ERROR(SyncDirectory(tables_dir));
  opened.log = std::move(log);
  opened.writes = std::move(scan.writes);
  return opened;
}

TableLog::~TableLog() {
  if (fd_ >= 0) close(fd_);
}

Status TableLog::Append(const ipc::pb::TableLogWrite& write) {
  // The record is TableLogRecord{write}: field 2, length-delimited, then the write itself —
  // encoded here around the write's own serialization so that a large write is not copied into
  // a record first.
  const std::size_t write_size = write.ByteSizeLong();
  std::string varint;
  for (std::uint64_t v = write_size;; v >>= 7) {
    if (v < 0x80) {
      varint.push_back(static_cast<char>(v));
      break;
    }
    varint.push_back(static_cast<char>((v & 0x7f) | 0x80));
  }
  const std::size_t size = 1 + varint.size() + write_size;
  if (size > kMaxTableLogRecord) {
    return Status::InvalidArgument("a write of " + std::to_string(size) +
                                   " bytes is over the table log's limit of " +
                                   std::to_string(kMaxTableLogRecord) + " bytes per write");
  }
  std::string frame(kTableLogFrame, '\0');
  frame.reserve(kTableLogFrame + size);
  frame.push_back(static_cast<char>(kWriteTag));
  frame += varint;
  frame.resize(kTableLogFrame + size);
  char* payload = frame.data() + kTableLogFrame;
  if (!write.SerializeToArray(payload + 1 + varint.size(), static_cast<int>(write_size))) {
    return Status::InvalidArgument("a write that does not serialize");
  }
  std::string head;
  PutLe32(head, static_cast<std::uint32_t>(size));
  PutLe32(head, Crc32(payload, size));
  frame.replace(0, kTableLogFrame, head);
  return AppendRecord(frame);
}

Status TableLog::AppendRecord(const std::string& frame) {
  if (fd_ < 0) return Status::FailedPrecondition("table log " + path_ + " was retired");
  if (!broken_.ok()) return broken_;
  std::size_t written = 0;
  int error = 0;
  const Status status = WriteAll(fd_, path_, frame, written, error);
  if (!status.ok()) {
    // Out of room is a condition the log survives; any other failed write(2) (EIO…) leaves it
    // unknown what the file holds.
    const bool survivable = error == ENOSPC || error == EDQUOT || error == EFBIG;
    // Cut off what part of the record made it, so that the next record follows a good one.
    if (written > 0 && ftruncate(fd_, static_cast<off_t>(bytes_)) != 0) {
      broken_ = Status::Internal(status.message() +
                                 "; and cutting the partial record off: " + std::strerror(errno));
      return broken_;
    }
    if (!survivable) broken_ = status;
    return status;
  }
  bytes_ += frame.size();
  return Status::Ok();
}

Status TableLog::Sync() {
  if (fd_ < 0) return Status::FailedPrecondition("table log " + path_ + " was retired");
  if (!broken_.ok()) return broken_;
  Status status = SyncFile(fd_, path_, /*data_only=*/true);
  if (!status.ok()) broken_ = status;  // what is on disk is unknown now
  return status;
}

Status TableLog::Retire(const std::string& dropped_dir) {
  if (fd_ < 0) return Status::FailedPrecondition("table log " + path_ + " was retired");
  TANDEM_RETURN_IF_ERROR(SyncFile(fd_, path_, /*data_only=*/false));
  std::uint64_t ms = WallClockMs();
  std::string target;
  for (;; ++ms) {
    target = dropped_dir + "/" + id_ + "-" + std::to_string(ms) + ".log";
    if (renameat2(AT_FDCWD, path_.c_str(), AT_FDCWD, target.c_str(), RENAME_NOREPLACE) == 0) {
      break;
    }
    if (errno == EEXIST) continue;
    if (errno == EINVAL || errno == ENOSYS) {  // a file system without RENAME_NOREPLACE
      struct stat st {};
      if (lstat(target.c_str(), &st) == 0) continue;
      if (rename(path_.c_str(), target.c_str()) == 0) break;
    }
    return Status::FromErrno("rename " + path_ + " to " + target);
  }
  close(fd_);
  fd_ = -1;
  path_ = target;
  TANDEM_RETURN_IF_ERROR(SyncDirectory(dropped_dir));
  return SyncDirectory(tables_dir_);
}

}  // namespace tandem::workers

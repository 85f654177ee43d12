// One table's log (DESIGN §9): DIR/tables/<id>.log, the durable storage of its acknowledged
// writes. A write is acknowledged only after Append + Sync returned OK, so everything up to the
// last successful Sync must come back from Open, in order, and nothing after it may be taken for
// data that was acknowledged.
//
// Format: records, each `u32 LE payload length | u32 LE CRC-32 (boost::crc_32_type) of the
// payload | payload = serialized ipc::pb::TableLogRecord`. The first record is the header
// (TableLogHeader: format, id, schema, upsert key); every later one a TableLogWrite. A length of
// 0 or over kMaxTableLogRecord is a bad record, as is one whose CRC fails, whose payload does not
// parse, whose kind is out of place (a write first, a header later), or a write the table writer
// cannot have made (read back, each is checked as a WriteTable is: updates against the header's
// schema and upsert key, a uuid of 1 to 128 bytes and no earlier write's, a time at or after the
// previous write's and at most kMaxTableWriteTime). Such a record is never a torn tail: its
// checksum says it is what was written.
//
// Reading (Open) — what a crash can leave, and what it cannot:
//   * Torn tail: the bytes appended after the last Sync may be missing, cut short, or read as
//     zeros (file size extended before the data blocks were written); a crash cuts the end of
//     what was appended, it does not damage what comes before. So a bad last record that is
//     followed only by zero bytes, or whose length runs past the end of the file with no good
//     record starting anywhere after it, was never acknowledged: it is dropped — first copied,
//     durably, to <id>.log.torn-<offset>-<unix ms> beside the log (a damaged length or payload
//     in the last record itself looks the same, and the copy is then what is left of it) — the
//     file truncated to the last good record (ftruncate + fsync), and Opened::warning says what
//     was dropped, where, and where the copy is.
//   * Anything else bad — a bad record followed by more (non-zero) bytes, a length past the end
//     with a good record after it, a record of the wrong kind or a write that does not check —
//     is damage to data that may have been acknowledged: Corruption ("data loss"), and the file
//     is left as it is for an operator to look at. The table is then broken: its collection gets
//     that error, and every write to it is refused with it (workers/tables/table.h).
//   * A file that is empty, or holds only a torn header, never acknowledged anything (the header
//     is made durable before the first write is appended): the header is written anew.
//   * A good header for another table definition: FailedPrecondition naming what differs.
//
// Writing: Append write(2)s one whole record (retrying short writes and EINTR) to a file opened
// O_APPEND, mode 0600; Sync fdatasyncs. A failed Append cuts what part of its record was written
// back off the file (ftruncate to bytes()) and returns the error; out of room (ENOSPC, EDQUOT,
// EFBIG) the log stays usable. If the cut fails too, write(2) fails otherwise, or fdatasync fails
// (what is on disk is unknown then: the kernel may have dropped the dirty pages), the log is broken
// for good: every later Append/Sync fails with that first error, and the runtime must stop (shared
// fate) and Open the log again, which finds what is really there.
//
// Thread safety: none. A TableLog is used by one thread at a time — the runtime's table writer
// thread (workers/tables/table.h) for Append/Sync/Retire; Open may run on any one thread before
// the log is handed to the writer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/time.h"
#include "ipc/codec.h"

namespace tandem::workers {

// Format 2: an upsert key compares by value (base/row.h "Keys": 1.5 and 1.50 are one key). A
// format-1 log meant the same unless its upsert key has a numeric or an interval column, whose
// spellings were keys apart: Open reads such a log only with that difference refused
// (HeaderDifference), since replaying it by value could merge rows that were acknowledged apart.
inline constexpr std::uint32_t kTableLogFormat = 2;
inline constexpr std::uint32_t kTableLogFormatKeyedBySpelling = 1;
// The largest payload of one record (a header or one write's updates).
inline constexpr std::uint32_t kMaxTableLogRecord = 64u << 20;
// Bytes of framing before each payload: length and CRC.
inline constexpr std::size_t kTableLogFrame = 8;
// The latest time a write may have: the table's upper after it (time + 1) is a time, and
// UINT64_MAX is not one (it is the closed frontier). The table writer refuses writes past it.
inline constexpr Time kMaxTableWriteTime = kMaxTime - 1;

// Why a write of `uuid` at `time` cannot be in a table log, or empty: a uuid of 1 to
// ipc::WriteBounds::kMaxUuidBytes bytes and a time of at most kMaxTableWriteTime. The table
// writer refuses such a write; Open finds a record of one damage.
std::string LogWriteProblem(std::string_view uuid, Time time);

class TableLog {
 public:
  struct Opened {
    std::unique_ptr<TableLog> log;
    std::vector<ipc::pb::TableLogWrite> writes;  // every write in the log, in order
    std::string warning;  // non-empty when a torn tail was dropped (what and where)
  };

  // Opens the log of the table `header.id()` in `tables_dir` (which exists), creating it (header
  // record, fsync of file and directory) when missing. `header.format()` must be
  // kTableLogFormat. Errors: InvalidArgument for an id that cannot be a file name;
  // FailedPrecondition when the file's header differs from `header` (naming what differs:
  // "written for schema … / upsert key …") or the path is not a regular file; Corruption (data
  // loss) for a bad record followed by more data (the file is left as is); I/O errors as
  // Internal with errno text. Torn tails: see the file comment.
  static Result<Opened> Open(const std::string& tables_dir, const ipc::pb::TableLogHeader& header);
  ~TableLog();
  TableLog(const TableLog&) = delete;
  TableLog& operator=(const TableLog&) = delete;

  // Appends one record for `write` (buffered write(2)s: not yet durable). InvalidArgument when
  // its record would be over kMaxTableLogRecord (the log is not broken by that).
  Status Append(const ipc::pb::TableLogWrite& write);
  // fdatasync: everything appended so far is durable once this returns OK.
  Status Sync();
  // Moves the log to `dropped_dir`/<id>-<unix ms>.log (another name's ms + 1 if that one is
  // taken) and fsyncs both directories: once this returns OK, an Open of the same id in the same
  // tables dir starts an empty log even after a crash. The log is closed: every later call fails.
  Status Retire(const std::string& dropped_dir);

  // False once the log is broken for good (a failed fdatasync, a write error other than out of
  // room, a failed cut) or retired: Append and Sync can only fail then.
  bool usable() const { return fd_ >= 0 && broken_.ok(); }
  const std::string& path() const { return path_; }
  std::uint64_t bytes() const { return bytes_; }  // file size (what has been appended)

 private:
  TableLog(std::string path, std::string tables_dir, std::string id, int fd, std::uint64_t bytes)
      : path_(std::move(path)),
        tables_dir_(std::move(tables_dir)),
        id_(std::move(id)),
        fd_(fd),
        bytes_(bytes) {}
  // Appends one framed record (its size already checked); see the file comment for failures.
  Status AppendRecord(const std::string& frame);

  std::string path_;  // the log's path (in dropped/ once retired)
  std::string tables_dir_;
  std::string id_;
  int fd_;  // O_RDWR | O_APPEND; -1 once retired
  std::uint64_t bytes_;
  Status broken_;  // the first failure of Append/Sync (OK while none)
};

// The framing of one record around `payload` (exposed for tests that build logs by hand).
std::string FrameTableLogRecord(const std::string& payload);

}  // namespace tandem::workers

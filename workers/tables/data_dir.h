// The runtime's --data-dir (DESIGN §9): where the tables' logs live.
//
//   DIR/LOCK                    flocked (LOCK_EX) by the one runtime that writes tables; holds
//                               "<pid>\n" of the holder (informational: the flock is the lock)
//   DIR/tables/<id>.log         a table's log (workers/tables/table_log.h)
//   DIR/tables/<id>.log.torn-<offset>-<ms>
//                               a copy of a torn tail cut off that log (kept, never read)
//   DIR/dropped/<id>-<ms>.log   a dropped table's log, moved there (never deleted)
//
// Choices:
//   * DIR is created with its missing parents, each 0700. An existing DIR is used as it is
//     (its mode is not changed: it is the operator's); DIR may be a symlink to a directory (data
//     volumes are often linked in), but anything else that is not a directory is refused.
//   * LOCK, tables/ and dropped/ are ours: opened/checked without following symlinks, and
//     refused when they are symlinks or of the wrong kind.
//   * Every directory created here is made durable (its parent fsynced).
//
// Thread safety: Open is a free function of the path; a DataDir is immutable after Open, so its
// accessors may be called from any thread. It keeps the LOCK fd (and so the lock) for its whole
// life; the lock also ends with the process (a SIGKILLed runtime frees it).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "base/status.h"

namespace tandem::workers {

class DataDir {
 public:
  // Creates DIR (0700, with parents), tables/ and dropped/, and takes LOCK. Waits up to `wait`
  // for the lock (another runtime of this data dir may be dying: shared fate kills it), trying
  // every 20 ms; after that FailedPrecondition "data dir DIR is in use by pid N (another
  // replica?)", N read from LOCK. Then writes this process's "<pid>\n" into LOCK.
  // Errors: FailedPrecondition when DIR (or one of ours inside it) is not what it must be;
  // Internal with the errno text when a system call fails.
  static Result<std::unique_ptr<DataDir>> Open(const std::string& path,
                                               std::chrono::milliseconds wait);
  ~DataDir();
  DataDir(const DataDir&) = delete;
  DataDir& operator=(const DataDir&) = delete;

  const std::string& path() const { return path_; }
  std::string TablesDir() const { return path_ + "/tables"; }    // created by Open
  std::string DroppedDir() const { return path_ + "/dropped"; }  // created by Open

 private:
  DataDir(std::string path, int lock_fd) : path_(std::move(path)), lock_fd_(lock_fd) {}

  std::string path_;
  int lock_fd_;  // LOCK, flocked LOCK_EX for the DataDir's life
};

// fsync(2) of the directory `dir` (so that entries created, renamed or removed in it are
// durable). Internal with the errno text on failure. Shared with table_log.cc.
Status SyncDirectory(const std::string& dir);

}  // namespace tandem::workers

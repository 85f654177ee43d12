// The log source (workers/README.md "The log source format"): an append-only regular file of
// updates and progress marks, tailed as it grows — and followed like `tail -F` when the file at
// its path is replaced (rotated).
//
// Thread safety: none. The runtime reads it from one thread (a barrier's completion step).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "workers/sources/log_parse.h"

namespace tandem::workers {

class LogTailer {
 public:
  LogTailer(std::string path, ipc::pb::Schema schema)
      : path_(std::move(path)), schema_(std::move(schema)) {}
  ~LogTailer();
  LogTailer(const LogTailer&) = delete;
  LogTailer& operator=(const LogTailer&) = delete;

  // Reads complete lines appended since the last call, at most `max_lines` of them (blank,
  // comment and over-long lines count too) and about `max_bytes` (at least one line of
  // kMaxLogLineBytes) — the rest waits for the next call, so one call's work is bounded by the
  // caller's step budget. It never blocks: the file is opened O_NONBLOCK, and only a regular
  // file is read.
  //   * A file that does not exist (yet) reads as empty and sets missing().
  //   * A path that is not a regular file (a device, FIFO, socket, directory) is never read:
  //     broken() says why, and nothing is read again.
  //   * A line over kMaxLogLineBytes is a kError record naming it; its bytes are skipped.
  //   * A file shorter than what was read (truncated; the format is append-only) is broken().
  //   * A file replaced at the path (another inode: rotation) is followed: what was appended to
  //     the old one is read to its end (an incomplete last line there is a kError record), then
  //     the new file from its start, its lines numbered from 1.
  std::vector<LogRecord> ReadNew(std::size_t max_lines, std::size_t max_bytes);
  // Whether the last ReadNew stopped at its budget with more of the file already there (or with
  // a replaced file to go on with).
  bool more() const { return more_; }
  // Whether the file could not be opened by the last ReadNew.
  bool missing() const { return missing_; }
  // Why the file can no longer be read (empty while it can): the source ends with this error.
  const std::string& broken() const { return broken_; }
  // How many times a replaced file was followed.
  std::uint64_t rotations() const { return rotations_; }
  const std::string& path() const { return path_; }

 private:
  bool Open();   // opens path_ (false: missing or broken)
  void Close();  // closes the file, forgets the position
  // The record for the line being read now, numbered.
  LogRecord Error(std::string why);

  std::string path_;
  ipc::pb::Schema schema_;
  int fd_ = -1;
  dev_t dev_ = 0;  // the open file's identity
  ino_t ino_ = 0;
  std::uint64_t offset_ = 0;  // bytes consumed: every complete line before it was read
  std::uint64_t line_ = 0;    // lines consumed
  LineFramer framer_;
  bool more_ = false;
  bool missing_ = false;
  std::string broken_;
  std::uint64_t rotations_ = 0;
};

}  // namespace tandem::workers

// Tailing a file (the log source, workers/README.md "The log source format"; the CSV and
// JSON-lines sources): an append-only regular file of lines, tailed as it grows — and followed like
// `tail -F` when the file at its path is replaced (rotated).
//
// Thread safety: none. The runtime reads it from one thread (a barrier's completion step).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/formats/log_parse.h"

namespace tandem::workers {

// What a LineTailer hands the lines it reads to (the log, CSV and JSON-lines formats).
class LineSink {
 public:
  virtual ~LineSink() = default;
  // A complete line (without its newline), numbered from 1 in its file.
  virtual void Line(std::string_view line, std::uint64_t number) = 0;
  // A line longer than `max_line` bytes: its bytes were dropped.
  virtual void Overlong(std::uint64_t number, std::size_t max_line) = 0;
  // The file was replaced at the path and the old one is read to its end; the next line is the
  // new file's first. `incomplete`: the number of the old file's last line, which had no newline
  // (skipped), or 0.
  virtual void Replaced(std::uint64_t incomplete) = 0;
};

// Tails an append-only regular file line by line, following it when it is replaced. The file
// rules of every tailed source (workers/README.md "The log source format"):
//   * A file that does not exist (yet) reads as empty and sets missing().
//   * A path that is not a regular file (a device, FIFO, socket, directory) is never read:
//     broken() says why, and nothing is read again. The file is opened O_NONBLOCK.
//   * A line over kMaxLogLineBytes is handed as Overlong; its bytes are skipped.
//   * A file shorter than what was read (truncated; the format is append-only) is broken().
//   * A file replaced at the path (another inode: rotation) is followed: what was appended to
//     the old one is read to its end, then Replaced, then the new file from its start, its lines
//     numbered from 1.
class LineTailer {
 public:
  // `noun` names the source in broken() ("log": "a log source reads only regular files").
  LineTailer(std::string path, std::string noun) : path_(std::move(path)), noun_(std::move(noun)) {}
  ~LineTailer();
  LineTailer(const LineTailer&) = delete;
  LineTailer& operator=(const LineTailer&) = delete;

  // Hands `sink` the complete lines appended since the last call, at most `max_lines` of them
  // (blank, comment and over-long lines count too) and about `max_bytes` (at least one line of
  // kMaxLogLineBytes) — the rest waits for the next call, so one call's work is bounded by the
  // caller's step budget. It never blocks.
  void ReadNew(LineSink& sink, std::size_t max_lines, std::size_t max_bytes);
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

  std::string path_;
  std::string noun_;
  int fd_ = -1;
  dev_t dev_ = 0;  // the open file's identity
  ino_t ino_ = 0;
  std::uint64_t offset_ = 0;  // bytes consumed: every complete line before it was read
  std::uint64_t line_ = 0;    // lines consumed
  ipc::LineFramer framer_;
  bool more_ = false;
  bool missing_ = false;
  std::string broken_;
  std::uint64_t rotations_ = 0;
};

// The log source's records: a LineTailer whose lines are parsed by ParseLogLine. Bad lines are
// kError records ("log line 7: …"); so are over-long lines and an incomplete last line of a
// replaced file.
class LogTailer {
 public:
  LogTailer(std::string path, ipc::pb::Schema schema, std::vector<std::uint32_t> upsert_key = {})
      : lines_(std::move(path), "log"), schema_(std::move(schema)), key_(std::move(upsert_key)) {}

  // The records of LineTailer::ReadNew's lines (blank and comment lines give none).
  std::vector<ipc::LogRecord> ReadNew(std::size_t max_lines, std::size_t max_bytes);
  bool more() const { return lines_.more(); }
  bool missing() const { return lines_.missing(); }
  const std::string& broken() const { return lines_.broken(); }
  std::uint64_t rotations() const { return lines_.rotations(); }
  const std::string& path() const { return lines_.path(); }

 private:
  LineTailer lines_;
  ipc::pb::Schema schema_;
  std::vector<std::uint32_t> key_;
};

}  // namespace tandem::workers

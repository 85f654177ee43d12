// The log source (workers/README.md "The log source format"): an append-only text file of
// updates and progress marks, tailed as it grows.
//
// Thread safety: none. The runtime reads it from one thread (a barrier's completion step).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/row.h"
#include "base/status.h"
#include "base/time.h"
#include "ipc/codec.h"

namespace tandem::workers {

struct LogRecord {
  enum class Kind { kUpdate, kProgress, kClose, kError };
  Kind kind = Kind::kUpdate;
  Row row;
  Time time = 0;
  std::int64_t diff = 0;
  std::string error;       // kError: what was wrong with the line
  std::uint64_t line = 0;  // 1-based line number in the file (set by LogTailer)
};

// Parses one line (without its newline). nullopt for blank and comment lines.
std::optional<LogRecord> ParseLogLine(std::string_view line, const ipc::pb::Schema& schema);

class LogTailer {
 public:
  LogTailer(std::string path, ipc::pb::Schema schema)
      : path_(std::move(path)), schema_(std::move(schema)) {}

  // Reads complete lines appended since the last call, at most `max_lines` of them (blank and
  // comment lines count too) — the rest waits for the next call, so one call's work is bounded
  // by the caller's step budget. A file that does not exist (yet) reads as empty and sets
  // missing().
  std::vector<LogRecord> ReadNew(std::size_t max_lines);
  // Whether the last ReadNew stopped at max_lines with more of the file already there.
  bool more() const { return more_; }
  // Whether the file could not be opened by the last ReadNew.
  bool missing() const { return missing_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  ipc::pb::Schema schema_;
  std::uint64_t offset_ = 0;  // bytes consumed: every complete line before it was read
  std::uint64_t line_ = 0;    // lines consumed
  bool more_ = false;
  bool missing_ = false;
};

}  // namespace tandem::workers

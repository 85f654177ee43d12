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
  std::string error;  // kError: what was wrong with the line
};

// Parses one line (without its newline). nullopt for blank and comment lines.
std::optional<LogRecord> ParseLogLine(std::string_view line, const ipc::pb::Schema& schema);

class LogTailer {
 public:
  LogTailer(std::string path, ipc::pb::Schema schema)
      : path_(std::move(path)), schema_(std::move(schema)) {}

  // Reads the complete lines appended since the last call. A file that does not exist yet is
  // simply empty.
  std::vector<LogRecord> ReadNew();
  std::uint64_t line() const { return line_; }

 private:
  std::string path_;
  ipc::pb::Schema schema_;
  std::uint64_t offset_ = 0;
  std::uint64_t line_ = 0;
};

}  // namespace tandem::workers

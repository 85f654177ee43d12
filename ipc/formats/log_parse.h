// The log source's format (workers/README.md "The log source format"), as pure functions of
// bytes: ParseLogLine reads one line, LineFramer cuts a byte stream into lines of bounded length.
// Neither does I/O (LogTailer in log_file.h does), so both are tested and fuzzed alone
// (tests/fuzz/fuzz_log_parse.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/row.h"
#include "base/time.h"
#include "ipc/codec.h"

namespace tandem::ipc {

// The longest line a log source reads, in bytes before its newline. A longer one is bad data:
// an error of the collection naming the line, skipped without being buffered.
inline constexpr std::size_t kMaxLogLineBytes = std::size_t{1} << 20;

struct LogRecord {
  // kUpsert (`S`) and kDelete (`D`): only in a log source with an upsert key.
  enum class Kind { kUpdate, kProgress, kClose, kError, kUpsert, kDelete };
  Kind kind = Kind::kUpdate;
  Row row;  // kUpdate, kUpsert: the whole row; kDelete: the key columns, in upsert-key order
  Time time = 0;
  std::int64_t diff = 0;
  std::string error;       // kError: what was wrong with the line
  std::uint64_t line = 0;  // 1-based line number in the file (set by LogTailer)
};

// Parses one line (without its newline). nullopt for blank and comment lines. `upsert_key`: the
// source's (SourceImport.upsert_key): empty, `U` lines are read and `S`/`D` are bad data; set, the
// other way round (a `D` line's datums are the key columns', in this order).
std::optional<LogRecord> ParseLogLine(std::string_view line, const pb::Schema& schema,
                                      const std::vector<std::uint32_t>& upsert_key = {});

// Cuts a byte stream into lines. Next() is handed the bytes after everything earlier calls
// consumed and says what comes first:
//   * kLine: a complete line of at most max_line bytes (its "\n" and a "\r" before it removed;
//     `line` points into `data`), `consumed` bytes through its newline;
//   * kOverlong: max_line + 1 bytes without a newline — a line too long. Its bytes are dropped:
//     they and the rest of the line, up to its newline, are consumed without being kept (the
//     rest over as many later calls as it takes);
//   * kNone: no complete line in `data`; `consumed` bytes (of an over-long line's rest) may
//     still be dropped, the others are to be handed again with more after them.
// Memory: none beyond the caller's buffer, which never needs more than max_line + 1 bytes.
class LineFramer {
 public:
  explicit LineFramer(std::size_t max_line = kMaxLogLineBytes) : max_line_(max_line) {}
  struct Event {
    enum Kind { kNone, kLine, kOverlong } kind;
    std::size_t consumed;
    std::string_view line;
  };
  Event Next(std::string_view data);
  // Inside an over-long line (its rest is being dropped).
  bool skipping() const { return skipping_; }
  std::size_t max_line() const { return max_line_; }

 private:
  std::size_t max_line_;
  bool skipping_ = false;
};

}  // namespace tandem::ipc

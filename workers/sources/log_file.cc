#include "workers/sources/log_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tandem::workers {

namespace {

std::string KindOf(mode_t mode) {
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  return "not a regular file";
}

}  // namespace

LogTailer::~LogTailer() { Close(); }

void LogTailer::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  offset_ = 0;
  line_ = 0;
  framer_ = LineFramer(framer_.max_line());
}

bool LogTailer::Open() {
  // Look before opening: opening a device or a FIFO can block or have effects of its own.
  struct stat st {};
  if (stat(path_.c_str(), &st) != 0) {
    missing_ = true;
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    broken_ = path_ + " is " + KindOf(st.st_mode) +
              ", not a regular file: a log source reads "
              "only regular files";
    return false;
  }
  const int fd = open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    missing_ = true;  // gone since, or not readable
    return false;
  }
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {  // replaced between stat and open
    close(fd);
    broken_ = path_ + " is not a regular file: a log source reads only regular files";
    return false;
  }
  fd_ = fd;
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  missing_ = false;
  return true;
}

LogRecord LogTailer::Error(std::string why) {
  LogRecord r;
  r.kind = LogRecord::Kind::kError;
  r.line = line_;
  r.error = "log line " + std::to_string(line_) + ": " + why;
  return r;
}

std::vector<LogRecord> LogTailer::ReadNew(std::size_t max_lines, std::size_t max_bytes) {
  std::vector<LogRecord> out;
  more_ = false;
  if (!broken_.empty()) return out;
  if (fd_ < 0 && !Open()) return out;
  struct stat st {};
  if (fstat(fd_, &st) != 0) return out;
  if (static_cast<std::uint64_t>(st.st_size) < offset_) {
    broken_ = path_ + " was truncated (to " + std::to_string(st.st_size) + " bytes; " +
              std::to_string(offset_) + " bytes had been read): a log is append-only";
    Close();
    return out;
  }
  // Read in chunks with pread; `pending` holds the bytes from `offset_` on that are not consumed
  // yet (at most one line's worth plus a chunk). Every line counts against the budget, blank,
  // comment and over-long lines too (they cost a read as well).
  constexpr std::size_t kChunk = 1 << 16;
  const std::size_t byte_budget = std::max(max_bytes, framer_.max_line() + 1);
  std::string pending;
  std::size_t lines = 0, read_bytes = 0;
  bool eof = false;
  while (!eof && lines < max_lines && read_bytes < byte_budget) {
    const std::size_t had = pending.size();
    pending.resize(had + kChunk);
    const ssize_t n = pread(fd_, pending.data() + had, kChunk, static_cast<off_t>(offset_ + had));
    if (n < 0 && errno == EINTR) {
      pending.resize(had);
      continue;
    }
    pending.resize(had + static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
    read_bytes += static_cast<std::size_t>(std::max<ssize_t>(n, 0));
    eof = n <= 0;
    std::size_t start = 0;
    while (lines < max_lines) {
      const LineFramer::Event e = framer_.Next(std::string_view(pending).substr(start));
      start += e.consumed;
      if (e.kind == LineFramer::Event::kNone) break;
      ++line_;
      ++lines;
      if (e.kind == LineFramer::Event::kOverlong) {
        out.push_back(
            Error("longer than " + std::to_string(framer_.max_line()) + " bytes (skipped)"));
        continue;
      }
      if (auto r = ParseLogLine(e.line, schema_)) {
        r->line = line_;
        if (r->kind == LogRecord::Kind::kError)
          r->error = "log line " + std::to_string(line_) + ": " + r->error;
        out.push_back(std::move(*r));
      }
    }
    offset_ += start;  // complete lines, and the dropped bytes of an over-long one
    pending.erase(0, start);
  }
  if (!eof) {  // stopped by the budget: is there more already?
    more_ = offset_ + pending.size() < static_cast<std::uint64_t>(st.st_size) ||
            pending.find('\n') != std::string::npos;
    return out;
  }
  // At the end of the open file: has the path been given to another one (rotation)? Follow it
  // once the old file is read to its end (what was appended to it before the rename is there).
  struct stat now {};
  if (stat(path_.c_str(), &now) == 0 && (now.st_dev != dev_ || now.st_ino != ino_)) {
    if (!pending.empty() && !framer_.skipping()) {
      ++line_;
      out.push_back(Error("incomplete (no newline) when " + path_ +
                          " was replaced by another file (skipped)"));
    }
    Close();
    ++rotations_;
    more_ = true;  // go on with the new file at once
  }
  return out;
}

}  // namespace tandem::workers

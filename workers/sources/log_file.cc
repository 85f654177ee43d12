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

LineTailer::~LineTailer() { Close(); }

void LineTailer::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  offset_ = 0;
  line_ = 0;
  framer_ = ipc::LineFramer(framer_.max_line());
}

bool LineTailer::Open() {
  // Look before opening: opening a device or a FIFO can block or have effects of its own.
  struct stat st {};
  if (stat(path_.c_str(), &st) != 0) {
    missing_ = true;
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    broken_ = path_ + " is " + KindOf(st.st_mode) + ", not a regular file: a " + noun_ +
              " source reads only regular files";
    return false;
  }
  const int fd = open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    missing_ = true;  // gone since, or not readable
    return false;
  }
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {  // replaced between stat and open
    close(fd);
    broken_ = path_ + " is not a regular file: a " + noun_ + " source reads only regular files";
    return false;
  }
  fd_ = fd;
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  missing_ = false;
  return true;
}

void LineTailer::ReadNew(LineSink& sink, std::size_t max_lines, std::size_t max_bytes) {
  more_ = false;
  if (!broken_.empty()) return;
  if (fd_ < 0 && !Open()) return;
  struct stat st {};
  if (fstat(fd_, &st) != 0) return;
  if (static_cast<std::uint64_t>(st.st_size) < offset_) {
    broken_ = path_ + " was truncated (to " + std::to_string(st.st_size) + " bytes; " +
              std::to_string(offset_) + " bytes had been read): " +
              (noun_ == "log" ? std::string("a log") : "a " + noun_ + " source's file") +
              " is append-only";
    Close();
    return;
  }
  // Has the path been given to another file (rotation)? Looked at before reading, so that once
  // this read reaches the old file's end, everything appended to it before the rename has been
  // read: a rename seen here happened after those appends. (Looking only after reaching the end
  // lost a line appended and renamed between the last read and the look.)
  struct stat now {};
  const bool replaced =
      stat(path_.c_str(), &now) == 0 && (now.st_dev != dev_ || now.st_ino != ino_);
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
      const ipc::LineFramer::Event e = framer_.Next(std::string_view(pending).substr(start));
      start += e.consumed;
      if (e.kind == ipc::LineFramer::Event::kNone) break;
      ++line_;
      ++lines;
      if (e.kind == ipc::LineFramer::Event::kOverlong) {
        sink.Overlong(line_, framer_.max_line());
        continue;
      }
      sink.Line(e.line, line_);
    }
    offset_ += start;  // complete lines, and the dropped bytes of an over-long one
    pending.erase(0, start);
  }
  if (!eof) {  // stopped by the budget: is there more already?
    more_ = offset_ + pending.size() < static_cast<std::uint64_t>(st.st_size) ||
            pending.find('\n') != std::string::npos;
    return;
  }
  // At the end of the old file of a rotation: follow the path to its new file.
  if (replaced) {
    const std::uint64_t incomplete = !pending.empty() && !framer_.skipping() ? line_ + 1 : 0;
    Close();
    ++rotations_;
    more_ = true;  // go on with the new file at once
    sink.Replaced(incomplete);
  }
}

namespace {

class LogSink final : public LineSink {
 public:
  LogSink(const std::string& path, const ipc::pb::Schema& schema,
          const std::vector<std::uint32_t>& key, std::vector<ipc::LogRecord>* out)
      : path_(path), schema_(schema), key_(key), out_(out) {}
  void Line(std::string_view line, std::uint64_t number) override {
    if (auto r = ipc::ParseLogLine(line, schema_, key_)) {
      r->line = number;
      if (r->kind == ipc::LogRecord::Kind::kError)
        r->error = "log line " + std::to_string(number) + ": " + r->error;
      out_->push_back(std::move(*r));
    }
  }
  void Overlong(std::uint64_t number, std::size_t max_line) override {
    Error(number, "longer than " + std::to_string(max_line) + " bytes (skipped)");
  }
  void Replaced(std::uint64_t incomplete) override {
    if (incomplete != 0) {
      Error(incomplete,
            "incomplete (no newline) when " + path_ + " was replaced by another file (skipped)");
    }
  }

 private:
  void Error(std::uint64_t number, std::string why) {
    ipc::LogRecord r;
    r.kind = ipc::LogRecord::Kind::kError;
    r.line = number;
    r.error = "log line " + std::to_string(number) + ": " + why;
    out_->push_back(std::move(r));
  }
  const std::string& path_;
  const ipc::pb::Schema& schema_;
  const std::vector<std::uint32_t>& key_;
  std::vector<ipc::LogRecord>* out_;
};

}  // namespace

std::vector<ipc::LogRecord> LogTailer::ReadNew(std::size_t max_lines, std::size_t max_bytes) {
  std::vector<ipc::LogRecord> out;
  LogSink sink(lines_.path(), schema_, key_, &out);
  lines_.ReadNew(sink, max_lines, max_bytes);
  return out;
}

}  // namespace tandem::workers

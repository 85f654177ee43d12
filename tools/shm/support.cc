#include "tools/shm/support.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <thread>
#include <tuple>
#include <utility>

#include "base/global_id.h"
#include "base/json.h"
#include "base/row.h"
#include "shm/registry.h"
#include "shm/routing.h"
#include "shm/segment.h"

namespace tandem::tools {

// ---------------------------------------------------------------------------------------------
// Table

Table::Table(std::vector<std::string> headers, std::vector<bool> right_aligned)
    : headers_(std::move(headers)), right_(std::move(right_aligned)) {
  right_.resize(headers_.size(), false);
}

void Table::Add(std::vector<std::string> row) {
  row.resize(headers_.size());
  rows_.push_back(std::move(row));
}

std::string Table::Render() const {
  std::vector<std::size_t> width(headers_.size());
  for (std::size_t c = 0; c < headers_.size(); ++c) width[c] = headers_[c].size();
  for (const auto& row : rows_) {
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::size_t pad = width[c] - cells[c].size();
      const bool last = c + 1 == cells.size();
      if (right_[c]) l.append(pad, ' ');
      l += cells[c];
      if (!right_[c] && !last) l.append(pad, ' ');
      if (!last) l += "  ";
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l;
    out += '\n';
  };
  line(headers_);
  for (const auto& row : rows_) line(row);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Small helpers

const char* RuntimeStateName(shm::RuntimeState state) {
  switch (state) {
    case shm::RuntimeState::kAbsent:
      return "absent";
    case shm::RuntimeState::kStarting:
      return "starting";
    case shm::RuntimeState::kAttached:
      return "attached";
    case shm::RuntimeState::kReady:
      return "ready";
    case shm::RuntimeState::kStopping:
      return "stopping";
  }
  return "unknown";
}

const char* ModeName(shm::Mode mode) {
  switch (mode) {
    case shm::Mode::kSolo:
      return "solo";
    case shm::Mode::kTwoRuntime:
      return "two-runtime";
  }
  return "unknown";
}

std::vector<std::string> SlotFlagNames(std::uint32_t flags) {
  std::vector<std::string> names;
  if (flags & shm::kSlotFilled) names.emplace_back("filled");
  if (flags & shm::kSlotUnpublished) names.emplace_back("unpublished");
  if (flags & shm::kSlotHoldReleased) names.emplace_back("released");
  if (flags & shm::kSlotStalled) names.emplace_back("stalled");
  return names;
}

bool PidAlive(std::int32_t pid) { return pid > 0 && shm::ProcessAlive(pid); }

namespace inspect {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string Join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::string Bytes(std::uint64_t bytes) {
  char buf[64];
  if (bytes >= (1ull << 30)) {
    std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1ull << 30));
  } else if (bytes >= (1ull << 20)) {
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1ull << 20));
  } else if (bytes >= (1ull << 10)) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(bytes) / (1ull << 10));
  } else {
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  }
  return buf;
}

std::string UtcTime(std::uint64_t unix_ns) {
  const std::time_t secs = static_cast<std::time_t>(unix_ns / 1000000000ull);
  std::tm tm{};
  if (gmtime_r(&secs, &tm) == nullptr) return std::to_string(unix_ns);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::uint64_t NowUnixMs() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

// A failure: the reason on stderr, and with --json also {"error", "exit_code"} on stdout.
int Failure(const Output& o, const std::string& message, int code) {
  o.err << "tandem-shm: " << message << "\n";
  if (o.json) o.out << JsonError(message, code) << "\n" << std::flush;
  return code;
}
int Fail(const Output& o, const std::string& message) { return Failure(o, message, kExitError); }
int Fail(const Output& o, const Status& status, const std::string& context) {
  return Failure(o, context + status.message(),
                 status.code() == StatusCode::kCorruption ? kExitCorrupt : kExitError);
}
int Usage(const Output& o, const std::string& message) { return Failure(o, message, kExitUsage); }

void Emit(const Output& o, const JsonWriter& json) { o.out << json.str() << "\n" << std::flush; }

Result<Opened> OpenSegment(const std::string& arg) {
  Opened opened;
  const bool file = IsSegmentFile(arg);
  opened.name = file ? arg : ResolveSegmentName(arg);
  auto probe = file ? Segment::ProbeFile(opened.name) : Segment::Probe(opened.name);
  if (!probe.ok()) return probe.status();
  if (!probe->valid) {
    return Status::Corruption("segment '" + opened.name + "': " + probe->problem);
  }
  opened.probe = std::move(probe).value();
  if (!file && opened.probe.supervisor_alive) {
    // A live replica frees batches as it merges: every read is announced in its reader table.
    auto table = shm::ReaderTable::Open(opened.name);
    if (!table.ok()) {
      return Status(table.status().code(), "segment '" + opened.name +
                                               "' is live, but its reader table cannot be used: " +
                                               table.status().message());
    }
    opened.table = std::move(table).value();
  }
  auto segment = file ? Segment::OpenFile(opened.name) : Segment::Open(opened.name);
  if (!segment.ok()) return segment.status();
  opened.segment = std::move(segment).value();
  if (opened.table && opened.table->generation() != opened.segment->header().generation) {
    return Status::Unavailable("replica '" + opened.name +
                               "' restarted while it was being opened; try again");
  }
  return opened;
}

Result<Opened> OpenImage(const std::string& label, char* base, std::uint64_t size) {
  Opened opened;
  opened.name = label;
  auto segment = Segment::OpenImage(label, base, size);
  if (!segment.ok()) return segment.status();
  opened.segment = std::move(segment).value();
  opened.probe.name = label;
  opened.probe.file_bytes = size;
  opened.probe.valid = true;
  opened.probe.magic = shm::kSegmentMagic;
  opened.probe.header = shm::CopyHeader(opened.segment->header());
  return opened;
}

void SortSlots(std::vector<SlotInfo>& slots) {
  std::sort(slots.begin(), slots.end(), [](const SlotInfo& a, const SlotInfo& b) {
    return std::tuple(a.key.id, a.key.as_of, a.ordinal, a.index) <
           std::tuple(b.key.id, b.key.as_of, b.ordinal, b.index);
  });
}

std::string SlotsHeadline(const Opened& opened, std::size_t count) {
  std::string s = "segment " + opened.name + " (replica " +
                  (opened.probe.header ? opened.probe.header->replica_id : std::string("?")) +
                  ", supervisor " + (opened.probe.supervisor_alive ? "alive" : "dead") +
                  "): " + std::to_string(count) + " live slot" + (count == 1 ? "" : "s") + "\n";
  return s;
}

}  // namespace inspect

using namespace inspect;

bool IsSegmentFile(const std::string& arg) {
  if (StartsWith(arg, "/dev/shm/") &&
      arg.find('/', std::strlen("/dev/shm/")) == std::string::npos) {
    return false;
  }
  return StartsWith(arg, "/") || StartsWith(arg, "./") || StartsWith(arg, "../");
}

std::string ResolveSegmentName(const std::string& arg) {
  std::string name = arg;
  if (StartsWith(name, "/dev/shm/")) name = name.substr(std::strlen("/dev/shm/"));
  if (!StartsWith(name, "tandem.") && !name.empty() && name.find('/') == std::string::npos) {
    struct stat st {};
    if (stat(Segment::PathOf(name).c_str(), &st) != 0 &&
        stat(Segment::PathOf("tandem." + name).c_str(), &st) == 0) {
      name = "tandem." + name;
    }
  }
  return name;
}

}  // namespace tandem::tools

#include "tools/shm/inspect.h"

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

using shm::Inspector;
using shm::Segment;
using shm::SegmentProbe;
using shm::SlotInfo;
using shm::Snapshot;

// ---------------------------------------------------------------------------------------------
// JsonWriter

void JsonWriter::Separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ += ',';
    first_.back() = false;
  }
}

JsonWriter& JsonWriter::BeginObject() {
  Separate();
  out_ += '{';
  first_.push_back(true);
  return *this;
}
JsonWriter& JsonWriter::EndObject() {
  out_ += '}';
  first_.pop_back();
  return *this;
}
JsonWriter& JsonWriter::BeginArray() {
  Separate();
  out_ += '[';
  first_.push_back(true);
  return *this;
}
JsonWriter& JsonWriter::EndArray() {
  out_ += ']';
  first_.pop_back();
  return *this;
}
JsonWriter& JsonWriter::Key(std::string_view key) {
  Separate();
  out_ += JsonQuote(key);
  out_ += ':';
  after_key_ = true;
  return *this;
}
JsonWriter& JsonWriter::String(std::string_view value) {
  Separate();
  out_ += JsonQuote(value);
  return *this;
}
JsonWriter& JsonWriter::Int(std::int64_t value) {
  Separate();
  out_ += std::to_string(value);
  return *this;
}
JsonWriter& JsonWriter::UInt(std::uint64_t value) {
  Separate();
  out_ += std::to_string(value);
  return *this;
}
JsonWriter& JsonWriter::Double(double value) {
  if (!std::isfinite(value)) return String(std::isnan(value) ? "NaN" : value > 0 ? "inf" : "-inf");
  Separate();
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", value);
  out_ += buf;
  return *this;
}
JsonWriter& JsonWriter::Bool(bool value) {
  Separate();
  out_ += value ? "true" : "false";
  return *this;
}
JsonWriter& JsonWriter::Null() {
  Separate();
  out_ += "null";
  return *this;
}

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

void FrontierJson(JsonWriter& json, Frontier frontier) {
  json.BeginArray();
  if (!frontier.empty()) json.UInt(frontier.time());
  json.EndArray();
}

bool PidAlive(std::int32_t pid) { return pid > 0 && shm::ProcessAlive(pid); }

namespace {

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

int Fail(const Output& o, const std::string& message) {
  o.err << "tandem-shm: " << message << "\n";
  return kExitError;
}

int Usage(const Output& o, const std::string& message) {
  o.err << "tandem-shm: " << message << "\n";
  return kExitUsage;
}

void Emit(const Output& o, const JsonWriter& json) { o.out << json.str() << "\n" << std::flush; }

// Opens `arg` (resolved) for reading through Inspector. Works on a segment whose supervisor is
// gone: Open checks magic, version and size, not liveness.
struct Opened {
  std::string name;
  std::unique_ptr<Segment> segment;
  SegmentProbe probe;
};

Result<Opened> OpenSegment(const std::string& arg) {
  Opened opened;
  opened.name = ResolveSegmentName(arg);
  auto probe = Segment::Probe(opened.name);
  if (!probe.ok()) return probe.status();
  if (!probe->valid) {
    return Status::Corruption("segment '" + opened.name + "': " + probe->problem);
  }
  opened.probe = std::move(probe).value();
  auto segment = Segment::Open(opened.name);
  if (!segment.ok()) return segment.status();
  opened.segment = std::move(segment).value();
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

}  // namespace

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

// ---------------------------------------------------------------------------------------------
// ls

int RunLs(const Output& o, const std::string& prefix) {
  if (!StartsWith(prefix, kSegmentPrefix)) {
    return Usage(o, "--prefix must begin with '" + std::string(kSegmentPrefix) + "'");
  }
  std::vector<std::string> names = Segment::List(prefix);
  std::sort(names.begin(), names.end());
  JsonWriter json;
  json.BeginObject().Key("segments").BeginArray();
  Table table({"NAME", "SUPERVISOR", "PID", "SIZE", "REPLICA", "STATUS"},
              {false, false, true, true, false, false});
  for (const std::string& name : names) {
    auto probe = Segment::Probe(name);
    if (!probe.ok()) {
      if (probe.status().code() == StatusCode::kNotFound) continue;  // removed meanwhile
      json.BeginObject().Key("name").String(name).Key("supervisor_alive").Null();
      json.Key("valid").Bool(false).Key("problem").String(probe.status().message()).EndObject();
      table.Add({name, "?", "", "", "", probe.status().message()});
      continue;
    }
    const SegmentProbe& p = *probe;
    json.BeginObject().Key("name").String(name);
    json.Key("supervisor_alive").Bool(p.supervisor_alive);
    json.Key("supervisor_pid");
    if (p.header) {
      json.Int(p.header->supervisor_pid);
    } else {
      json.Null();
    }
    json.Key("size_bytes").UInt(p.file_bytes);
    json.Key("replica_id");
    if (p.header) {
      json.String(p.header->replica_id);
    } else {
      json.Null();
    }
    json.Key("valid").Bool(p.valid);
    json.Key("problem");
    if (p.valid) {
      json.Null();
    } else {
      json.String(p.problem);
    }
    json.EndObject();
    table.Add({name, p.supervisor_alive ? "alive" : "dead",
               p.header ? std::to_string(p.header->supervisor_pid) : "", Bytes(p.file_bytes),
               p.header ? p.header->replica_id : "", p.valid ? "ok" : p.problem});
  }
  json.EndArray().EndObject();
  if (o.json) {
    Emit(o, json);
  } else if (table.empty()) {
    o.out << "no " << prefix << "* segments in /dev/shm\n";
  } else {
    o.out << table.Render();
  }
  return kExitOk;
}

// ---------------------------------------------------------------------------------------------
// info

int RunInfo(const Output& o, const std::string& arg) {
  auto opened = OpenSegment(arg);
  if (!opened.ok()) return Fail(o, opened.status().message());
  Segment& seg = *opened->segment;
  const shm::HeaderInfo h = shm::CopyHeader(seg.header());
  const bool alive = opened->probe.supervisor_alive;
  Inspector inspector(&seg);
  const std::size_t live_slots = inspector.Slots().size();
  const std::uint64_t capacity = std::uint64_t{h.workers} * h.slots_per_row;
  const std::uint64_t used = seg.used_bytes();
  const std::uint64_t free = seg.free_bytes();
  static constexpr const char* kRoles[shm::kRuntimeEntries] = {"maintenance", "interactive"};

  if (o.json) {
    JsonWriter json;
    json.BeginObject().Key("name").String(opened->name);
    json.Key("replica_id").String(h.replica_id);
    json.Key("layout_version").UInt(h.layout_version);
    json.Key("generation").UInt(h.generation);
    json.Key("created_unix_ns").UInt(h.created_unix_ns);
    json.Key("created").String(UtcTime(h.created_unix_ns));
    json.Key("supervisor_pid").Int(h.supervisor_pid);
    json.Key("supervisor_alive").Bool(alive);
    json.Key("mode").String(ModeName(h.mode));
    json.Key("workers").UInt(h.workers);
    json.Key("slots_per_row").UInt(h.slots_per_row);
    json.Key("segment_bytes").UInt(h.segment_bytes);
    json.Key("used_bytes").UInt(used);
    json.Key("free_bytes").UInt(free);
    json.Key("live_slots").UInt(live_slots);
    json.Key("slot_capacity").UInt(capacity);
    json.Key("runtimes").BeginArray();
    for (std::size_t i = 0; i < shm::kRuntimeEntries; ++i) {
      json.BeginObject().Key("role").String(kRoles[i]);
      json.Key("pid").Int(h.runtimes[i].pid);
      json.Key("state").String(RuntimeStateName(h.runtimes[i].state));
      json.Key("alive").Bool(PidAlive(h.runtimes[i].pid));
      json.EndObject();
    }
    json.EndArray().EndObject();
    Emit(o, json);
    return kExitOk;
  }
  Table t({"FIELD", "VALUE"});
  t.Add({"name", opened->name});
  t.Add({"replica id", h.replica_id});
  t.Add({"layout version", std::to_string(h.layout_version)});
  t.Add({"generation", std::to_string(h.generation)});
  t.Add({"created", UtcTime(h.created_unix_ns)});
  t.Add(
      {"supervisor", "pid " + std::to_string(h.supervisor_pid) + (alive ? " (alive)" : " (dead)")});
  t.Add({"mode", ModeName(h.mode)});
  t.Add({"workers", std::to_string(h.workers)});
  t.Add({"slots", std::to_string(live_slots) + " live of " + std::to_string(capacity) + " (" +
                      std::to_string(h.slots_per_row) + " per row)"});
  t.Add({"size", std::to_string(h.segment_bytes) + " (" + Bytes(h.segment_bytes) + ")"});
  t.Add({"used", std::to_string(used) + " (" + Bytes(used) + ")"});
  t.Add({"free", std::to_string(free) + " (" + Bytes(free) + ")"});
  o.out << t.Render() << "\n";
  Table r({"RUNTIME", "PID", "STATE", "PROCESS"}, {false, true, false, false});
  for (std::size_t i = 0; i < shm::kRuntimeEntries; ++i) {
    const auto& rt = h.runtimes[i];
    r.Add({kRoles[i], std::to_string(rt.pid), RuntimeStateName(rt.state),
           rt.pid <= 0 ? "-" : (PidAlive(rt.pid) ? "alive" : "dead")});
  }
  o.out << r.Render();
  return kExitOk;
}

// ---------------------------------------------------------------------------------------------
// slots

std::string RenderSlotsTable(std::vector<SlotInfo> slots) {
  if (slots.empty()) return "no live slots\n";
  SortSlots(slots);
  Table t({"ID", "AS_OF", "ORD", "SLOT", "UPPER", "SINCE", "OWN", "HOLD", "FLAGS", "BATCHES",
           "UPDATES", "BYTES", "MERGES"},
          {false, true, true, true, false, false, false, false, false, true, true, true, true});
  for (const SlotInfo& s : slots) {
    const auto flags = SlotFlagNames(s.flags);
    t.Add({s.key.id.ToString(), std::to_string(s.key.as_of), std::to_string(s.ordinal),
           std::to_string(s.index), s.upper.ToString(), s.since.ToString(),
           s.own_frontier.ToString(), s.peer_hold.ToString(),
           flags.empty() ? "placeholder" : Join(flags, ","), std::to_string(s.batches),
           std::to_string(s.updates), std::to_string(s.bytes), std::to_string(s.merges)});
  }
  return t.Render();
}

void SlotsJson(JsonWriter& json, std::vector<SlotInfo> slots) {
  SortSlots(slots);
  json.BeginArray();
  for (const SlotInfo& s : slots) {
    json.BeginObject();
    json.Key("id").String(s.key.id.ToString());
    json.Key("as_of").UInt(s.key.as_of);
    json.Key("ordinal").UInt(s.ordinal);
    json.Key("slot").UInt(s.index);
    json.Key("upper");
    FrontierJson(json, s.upper);
    json.Key("since");
    FrontierJson(json, s.since);
    json.Key("own_frontier");
    FrontierJson(json, s.own_frontier);
    json.Key("peer_hold");
    FrontierJson(json, s.peer_hold);
    json.Key("flags").BeginArray();
    for (const auto& f : SlotFlagNames(s.flags)) json.String(f);
    json.EndArray();
    json.Key("list_version").UInt(s.list_version);
    json.Key("batches").UInt(s.batches);
    json.Key("updates").UInt(s.updates);
    json.Key("bytes").UInt(s.bytes);
    json.Key("merges").UInt(s.merges);
    json.EndObject();
  }
  json.EndArray();
}

int RunSlots(const Output& o, const std::string& arg) {
  auto opened = OpenSegment(arg);
  if (!opened.ok()) return Fail(o, opened.status().message());
  const std::vector<SlotInfo> slots = Inspector(opened->segment.get()).Slots();
  if (o.json) {
    JsonWriter json;
    json.BeginObject().Key("name").String(opened->name);
    json.Key("supervisor_alive").Bool(opened->probe.supervisor_alive);
    json.Key("slots");
    SlotsJson(json, slots);
    json.EndObject();
    Emit(o, json);
  } else {
    o.out << SlotsHeadline(*opened, slots.size()) << RenderSlotsTable(slots);
  }
  return kExitOk;
}

// ---------------------------------------------------------------------------------------------
// dump

namespace {

struct DumpRow {
  std::uint32_t ordinal = 0;
  std::string key, val;  // encoded
  std::int64_t count = 0;
  bool error() const { return !key.empty() && key[0] == workers::kErrorKeyPrefix; }
};

void DatumJson(JsonWriter& json, const Datum& d) {
  switch (d.index()) {
    case 0:
      json.Null();
      break;
    case 1:
      json.Bool(std::get<bool>(d));
      break;
    case 2:
      json.Int(std::get<std::int64_t>(d));
      break;
    case 3:
      json.Double(std::get<double>(d));
      break;
    default:
      json.String(std::get<std::string>(d));
  }
}

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  for (const char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    s += kDigits[c >> 4];
    s += kDigits[c & 15];
  }
  return s;
}

// A row as text; an undecodable one as its bytes in hex.
std::string RowText(std::string_view encoded) {
  auto row = DecodeRow(encoded);
  if (!row.ok()) return "<undecodable 0x" + Hex(encoded) + ">";
  return RowToString(*row);
}

void RowJson(JsonWriter& json, std::string_view encoded) {
  auto row = DecodeRow(encoded);
  if (!row.ok()) {
    json.BeginObject().Key("undecodable_hex").String(Hex(encoded)).EndObject();
    return;
  }
  json.BeginArray();
  for (const Datum& d : *row) DatumJson(json, d);
  json.EndArray();
}

// What a dump reports about each ordinal's snapshot, kept after the snapshot is released.
struct Slice {
  std::uint32_t ordinal = 0, slot = 0;
  Frontier since, upper;
  std::size_t batches = 0;
};

// Defers SIGINT, SIGTERM, SIGHUP and SIGQUIT while alive (or until Restore): a spare reader entry
// claimed by a process killed mid-snapshot would stay claimed.
class SignalBlocker {
 public:
  SignalBlocker() {
    sigset_t set;
    sigemptyset(&set);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&set, sig);
    active_ = pthread_sigmask(SIG_BLOCK, &set, &old_) == 0;
  }
  ~SignalBlocker() { Restore(); }
  SignalBlocker(const SignalBlocker&) = delete;
  SignalBlocker& operator=(const SignalBlocker&) = delete;
  void Restore() {
    if (active_) pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    active_ = false;
  }

 private:
  sigset_t old_;
  bool active_ = false;
};

// Takes a snapshot through the Inspector, retrying a slot that changed identity under us.
Result<Snapshot> TakeWithRetry(Inspector& inspector, std::uint32_t ordinal, std::uint32_t index) {
  for (int attempt = 0;; ++attempt) {
    auto snap = inspector.Take(ordinal, index);
    if (snap.ok() || snap.status().code() != StatusCode::kUnavailable || attempt >= 3) return snap;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace

int RunDump(const Output& o, const DumpOptions& options) {
  const std::optional<GlobalId> id = GlobalId::Parse(options.id);
  if (!id) return Usage(o, "invalid index id '" + options.id + "': expected e.g. u1, s3 or t7");
  if (options.at && *options.at > kMaxTime) return Usage(o, "--at is out of range");
  auto opened = OpenSegment(options.segment);
  if (!opened.ok()) return Fail(o, opened.status().message());
  Segment& seg = *opened->segment;
  const std::uint32_t workers = seg.workers();
  if (options.ordinal && *options.ordinal >= workers) {
    return Fail(o, "ordinal " + std::to_string(*options.ordinal) + " is out of range: segment '" +
                       opened->name + "' has " + std::to_string(workers) + " worker ordinal" +
                       (workers == 1 ? "" : "s"));
  }
  Inspector inspector(&seg);

  // The slots of this id (on the chosen ordinal), then the as_of.
  std::vector<SlotInfo> candidates;
  for (const SlotInfo& s : inspector.Slots()) {
    if (s.key.id == *id && (!options.ordinal || s.ordinal == *options.ordinal)) {
      candidates.push_back(s);
    }
  }
  const std::string where =
      "segment '" + opened->name + "'" +
      (options.ordinal ? " on ordinal " + std::to_string(*options.ordinal) : std::string());
  if (candidates.empty()) return Fail(o, "no slot for index " + id->ToString() + " in " + where);
  Time as_of = 0;
  if (options.as_of) {
    as_of = *options.as_of;
    const bool found = std::any_of(candidates.begin(), candidates.end(),
                                   [&](const SlotInfo& s) { return s.key.as_of == as_of; });
    if (!found) {
      std::vector<std::string> have;
      for (const SlotInfo& s : candidates) have.push_back(std::to_string(s.key.as_of));
      std::sort(have.begin(), have.end());
      have.erase(std::unique(have.begin(), have.end()), have.end());
      return Fail(o, "no slot for index " + id->ToString() + " as of " + std::to_string(as_of) +
                         " in " + where + " (as_of present: " + Join(have, ", ") + ")");
    }
  } else {
    for (const SlotInfo& s : candidates) as_of = std::max(as_of, s.key.as_of);
  }
  // One slot per ordinal: prefer a live (not dropped) one, then a filled one.
  std::map<std::uint32_t, SlotInfo> chosen;
  auto rank = [](const SlotInfo& s) {
    return std::pair<int, int>(!(s.flags & shm::kSlotUnpublished), (s.flags & shm::kSlotFilled));
  };
  for (const SlotInfo& s : candidates) {
    if (s.key.as_of != as_of) continue;
    auto [it, inserted] = chosen.emplace(s.ordinal, s);
    if (!inserted && rank(s) > rank(it->second)) it->second = s;
  }

  // Snapshots pin the batches they see (the publisher frees nothing a claimed entry can see), so
  // they live only for this block: rows are copied out, then every entry is released before any
  // output. Termination signals wait until then, so an interrupted dump never leaks an entry.
  SignalBlocker block_termination;
  std::vector<Slice> slices;
  std::vector<DumpRow> rows;
  bool truncated = false;
  Time t = 0;
  {
    std::vector<Snapshot> snaps;
    snaps.reserve(chosen.size());
    for (const auto& [ordinal, slot] : chosen) {
      auto snap = TakeWithRetry(inspector, ordinal, slot.index);
      if (!snap.ok()) {
        return Fail(o, "reading " + slot.key.ToString() + " on ordinal " + std::to_string(ordinal) +
                           ": " + snap.status().message());
      }
      slices.push_back({ordinal, slot.index, snap->since(), snap->upper(), snap->batches().size()});
      snaps.push_back(std::move(snap).value());
    }

    // The time: given, or the newest complete time every ordinal can answer.
    if (options.at) {
      t = *options.at;
    } else {
      std::optional<Frontier> min_upper;
      Frontier max_since = Frontier::Minimum();
      for (const Snapshot& s : snaps) {
        min_upper = min_upper ? Min(*min_upper, s.upper()) : s.upper();
        max_since = Max(max_since, s.since());
      }
      if (min_upper && !min_upper->empty() && min_upper->time() > 0) {
        t = min_upper->time() - 1;
      } else if (!max_since.empty()) {
        t = max_since.time();
      }
    }
    for (std::size_t i = 0; i < snaps.size(); ++i) {
      if (Status readable = snaps[i].CheckReadable(t); !readable.ok()) {
        return Fail(o, "read refused on ordinal " + std::to_string(slices[i].ordinal) + ": " +
                           readable.message());
      }
    }
    for (std::size_t i = 0; i < snaps.size(); ++i) {
      std::uint64_t taken = 0;
      const std::uint32_t ordinal = slices[i].ordinal;
      Status scanned =
          snaps[i].Scan(t, [&](std::string_view key, std::string_view val, std::int64_t count) {
            if (options.limit && taken >= *options.limit) {
              truncated = true;
              return false;
            }
            rows.push_back({ordinal, std::string(key), std::string(val), count});
            ++taken;
            return true;
          });
      if (!scanned.ok()) {
        return Fail(
            o, "read refused on ordinal " + std::to_string(ordinal) + ": " + scanned.message());
      }
    }
  }
  block_termination.Restore();

  // Each ordinal is in key order; so is the whole (errors first: their keys start with '\0').
  std::stable_sort(rows.begin(), rows.end(), [](const DumpRow& a, const DumpRow& b) {
    return std::tie(a.key, a.val) < std::tie(b.key, b.val);
  });
  if (options.limit && rows.size() > *options.limit) {
    rows.resize(*options.limit);
    truncated = true;
  }

  std::size_t errors = 0;
  for (const DumpRow& r : rows) errors += r.error();

  if (o.json) {
    JsonWriter json;
    json.BeginObject().Key("name").String(opened->name);
    json.Key("id").String(id->ToString());
    json.Key("as_of").UInt(as_of);
    json.Key("time").UInt(t);
    json.Key("supervisor_alive").Bool(opened->probe.supervisor_alive);
    json.Key("ordinals").BeginArray();
    for (const Slice& slice : slices) {
      json.BeginObject().Key("ordinal").UInt(slice.ordinal).Key("slot").UInt(slice.slot);
      json.Key("since");
      FrontierJson(json, slice.since);
      json.Key("upper");
      FrontierJson(json, slice.upper);
      json.Key("batches").UInt(slice.batches);
      json.EndObject();
    }
    json.EndArray();
    json.Key("rows").BeginArray();
    for (const DumpRow& r : rows) {
      if (r.error()) continue;
      json.BeginObject().Key("ordinal").UInt(r.ordinal).Key("key");
      RowJson(json, r.key);
      json.Key("val");
      RowJson(json, r.val);
      json.Key("count").Int(r.count).EndObject();
    }
    json.EndArray();
    json.Key("errors").BeginArray();
    for (const DumpRow& r : rows) {
      if (!r.error()) continue;
      json.BeginObject().Key("ordinal").UInt(r.ordinal);
      json.Key("message").String(std::string_view(r.key).substr(1));
      json.Key("count").Int(r.count).EndObject();
    }
    json.EndArray();
    json.Key("truncated").Bool(truncated);
    json.EndObject();
    Emit(o, json);
    return kExitOk;
  }

  o.out << id->ToString() << "@" << as_of << " in " << opened->name << " at time " << t
        << (opened->probe.supervisor_alive ? "" : " (supervisor dead: post-mortem)") << "\n";
  for (const Slice& slice : slices) {
    o.out << "  ordinal " << slice.ordinal << ": slot " << slice.slot << ", since "
          << slice.since.ToString() << ", upper " << slice.upper.ToString() << ", " << slice.batches
          << " batch" << (slice.batches == 1 ? "" : "es") << "\n";
  }
  if (!rows.empty()) {
    Table table({"ORD", "KEY", "VAL", "COUNT"}, {true, false, false, true});
    for (const DumpRow& r : rows) {
      if (r.error()) {
        table.Add({std::to_string(r.ordinal),
                   "error: " + std::string(std::string_view(r.key).substr(1)), "",
                   std::to_string(r.count)});
      } else {
        table.Add(
            {std::to_string(r.ordinal), RowText(r.key), RowText(r.val), std::to_string(r.count)});
      }
    }
    o.out << table.Render();
  }
  o.out << rows.size() - errors << " row" << (rows.size() - errors == 1 ? "" : "s");
  if (errors) o.out << ", " << errors << " error" << (errors == 1 ? "" : "s");
  if (truncated) o.out << " (truncated by --limit " << *options.limit << ")";
  o.out << "\n";
  return kExitOk;
}

// ---------------------------------------------------------------------------------------------
// watch

int RunWatch(const Output& o, const WatchOptions& options) {
  auto opened = OpenSegment(options.segment);
  if (!opened.ok()) return Fail(o, opened.status().message());
  Inspector inspector(opened->segment.get());
  for (std::uint64_t n = 1;; ++n) {
    // Liveness can change while we watch; Probe never blocks (a non-blocking flock attempt).
    if (auto probe = Segment::Probe(opened->name); probe.ok()) {
      opened->probe.supervisor_alive = probe->supervisor_alive;
    } else {
      opened->probe.supervisor_alive = false;  // removed: we keep reading our mapping
    }
    const std::vector<SlotInfo> slots = inspector.Slots();
    if (o.json) {
      JsonWriter json;
      json.BeginObject().Key("name").String(opened->name);
      json.Key("refresh").UInt(n).Key("unix_ms").UInt(NowUnixMs());
      json.Key("supervisor_alive").Bool(opened->probe.supervisor_alive);
      json.Key("slots");
      SlotsJson(json, slots);
      json.EndObject();
      Emit(o, json);
    } else {
      std::string frame;
      if (options.clear_screen) frame += "\x1b[H\x1b[2J";
      frame += "every " + std::to_string(options.interval_ms) + " ms, refresh " +
               std::to_string(n) + ", " + UtcTime(NowUnixMs() * 1000000ull) + "\n";
      frame += SlotsHeadline(*opened, slots.size());
      frame += RenderSlotsTable(slots);
      if (!options.clear_screen) frame += "\n";
      o.out << frame << std::flush;
    }
    if (options.count && n >= *options.count) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(options.interval_ms));
  }
  return kExitOk;
}

// ---------------------------------------------------------------------------------------------
// gc

namespace {

// Removes `name` only if it is still the stale file we probed: we take its creation lock
// ourselves (so no supervisor can be holding it) and check the name still points at the file we
// locked (a new supervisor may have replaced it meanwhile) before unlinking.
Status RemoveIfStale(const std::string& name) {
  const int fd = shm_open(("/" + name).c_str(), O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound("already gone");
    return Status::Internal(std::string("shm_open: ") + std::strerror(errno));
  }
  struct Closer {
    int fd;
    ~Closer() { close(fd); }  // also drops our lock, after the unlink
  } closer{fd};
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    return Status::FailedPrecondition("its lock is held again: a supervisor owns it now");
  }
  struct stat locked {
  }, named{};
  if (fstat(fd, &locked) != 0 || stat(Segment::PathOf(name).c_str(), &named) != 0 ||
      locked.st_ino != named.st_ino || locked.st_dev != named.st_dev) {
    return Status::FailedPrecondition("it was replaced while we looked");
  }
  return Segment::Remove(name);
}

}  // namespace

int RunGc(const Output& o, bool dry_run, const std::string& prefix) {
  if (!StartsWith(prefix, kSegmentPrefix)) {
    return Usage(o, "--prefix must begin with '" + std::string(kSegmentPrefix) + "'");
  }
  std::vector<std::string> names = Segment::List(prefix);
  std::sort(names.begin(), names.end());
  struct Kept {
    std::string name, reason;
  };
  struct Removed {
    std::string name, why;
  };
  std::vector<Removed> removed;
  std::vector<Kept> kept, failed;
  for (const std::string& name : names) {
    auto probe = Segment::Probe(name);
    if (!probe.ok()) {
      if (probe.status().code() != StatusCode::kNotFound) {
        kept.push_back({name, probe.status().message()});
      }
      continue;
    }
    const SegmentProbe& p = *probe;
    if (p.supervisor_alive) {
      kept.push_back(
          {name, "supervisor alive" +
                     (p.header ? " (pid " + std::to_string(p.header->supervisor_pid) + ")"
                               : std::string())});
      continue;
    }
    // Shared fate means runtimes die with their supervisor; if one still runs, something is
    // wrong and its memory is still in use: leave it for a person (a reused pid errs the same
    // safe way).
    std::string running;
    if (p.header) {
      for (const auto& rt : p.header->runtimes) {
        if (PidAlive(rt.pid)) running = std::to_string(rt.pid);
      }
    }
    if (!running.empty()) {
      kept.push_back({name, "supervisor gone but runtime pid " + running + " still runs"});
      continue;
    }
    // Like Segment::Create: a file with someone else's magic is not ours to delete.
    if (!p.valid && p.magic != 0 && p.magic != shm::kSegmentMagic) {
      kept.push_back({name, p.problem + "; not removing a file that is not Tandem's"});
      continue;
    }
    if (p.magic == 0) {
      // Creation never finished — or is under way right now (the creator takes its lock just
      // after creating the file). Leave young ones alone.
      struct stat st {};
      if (stat(Segment::PathOf(name).c_str(), &st) == 0 &&
          std::time(nullptr) - st.st_ctim.tv_sec < 10) {
        kept.push_back({name, "unfinished and less than 10 s old: creation may be under way"});
        continue;
      }
    }
    std::string why =
        p.header ? "supervisor pid " + std::to_string(p.header->supervisor_pid) + " is gone"
                 : "supervisor gone (" + p.problem + ")";
    if (!dry_run) {
      if (Status s = RemoveIfStale(name); !s.ok()) {
        if (s.code() == StatusCode::kNotFound) continue;
        if (s.code() == StatusCode::kFailedPrecondition) {
          kept.push_back({name, s.message()});
        } else {
          failed.push_back({name, s.message()});
        }
        continue;
      }
    }
    removed.push_back({name, why});
  }
  if (o.json) {
    JsonWriter json;
    json.BeginObject().Key("dry_run").Bool(dry_run).Key("removed").BeginArray();
    for (const auto& r : removed) {
      json.BeginObject().Key("name").String(r.name).Key("reason").String(r.why).EndObject();
    }
    json.EndArray().Key("kept").BeginArray();
    for (const auto& k : kept) {
      json.BeginObject().Key("name").String(k.name).Key("reason").String(k.reason).EndObject();
    }
    json.EndArray().Key("failed").BeginArray();
    for (const auto& f : failed) {
      json.BeginObject().Key("name").String(f.name).Key("error").String(f.reason).EndObject();
    }
    json.EndArray().EndObject();
    Emit(o, json);
  } else {
    for (const auto& r : removed) {
      o.out << (dry_run ? "would remove " : "removed ") << r.name << " (" << r.why << ")\n";
    }
    for (const auto& k : kept) o.out << "kept " << k.name << " (" << k.reason << ")\n";
    if (removed.empty()) o.out << (dry_run ? "nothing to remove\n" : "nothing removed\n");
  }
  for (const auto& f : failed)
    o.err << "tandem-shm: could not remove " << f.name << ": " << f.reason << "\n";
  return failed.empty() ? kExitOk : kExitError;
}

}  // namespace tandem::tools

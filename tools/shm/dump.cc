#include "tools/shm/support.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <map>
#include <thread>
#include <tuple>

#include "base/global_id.h"
#include "base/row.h"
#include "shm/routing.h"

namespace tandem::tools {

using namespace inspect;

// ---------------------------------------------------------------------------------------------
// dump

namespace {

struct DumpRow {
  std::uint32_t ordinal = 0;
  std::string key, val;  // encoded
  std::int64_t count = 0;
  bool error() const { return !key.empty() && key[0] == shm::kErrorKeyPrefix; }
};

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

// A row (or, `key`, a key: base/row.h "Keys") as text; an undecodable one as its bytes in hex.
std::string EncodedRowText(std::string_view encoded, bool key = false) {
  auto row = key ? DecodeKey(encoded) : DecodeRow(encoded);
  if (!row.ok()) return "<undecodable 0x" + Hex(encoded) + ">";
  return RowText(*row);
}

void RowJson(JsonWriter& json, std::string_view encoded, bool key = false) {
  auto row = key ? DecodeKey(encoded) : DecodeRow(encoded);
  if (!row.ok()) {
    json.BeginObject().Key("undecodable_hex").String(Hex(encoded)).EndObject();
    return;
  }
  json.RowValue(*row);
}

// What a dump reports about each ordinal's snapshot, kept after the snapshot is released.
struct Slice {
  std::uint32_t ordinal = 0, slot = 0;
  Frontier since, upper;
  std::size_t batches = 0;
};

// Defers SIGINT, SIGTERM, SIGHUP and SIGQUIT while alive (or until Restore), so that a dump
// interrupted by a signal still lets its reader-table entries go before it exits (one killed
// outright is cleared by the supervisor's sweep).
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

// What a dump read, kept after the snapshots are released.
struct Dump {
  Time as_of = 0;
  Time t = 0;
  std::vector<Slice> slices;
  std::vector<DumpRow> rows;
  bool truncated = false;
  bool closed = false;  // every ordinal's upper is the empty frontier
};

// The slot to read per ordinal: of `id` (on the chosen ordinal), as of --as-of or the newest,
// preferring a live (not dropped) one, then a filled one. An exit code when there is none.
std::optional<int> ChooseSlots(const Output& o, Inspector& inspector, const Opened& opened,
                               const GlobalId& id, const DumpOptions& options, Time& as_of,
                               std::map<std::uint32_t, SlotInfo>& chosen) {
  std::vector<SlotInfo> candidates;
  for (const SlotInfo& s : inspector.Slots()) {
    if (s.key.id == id && (!options.ordinal || s.ordinal == *options.ordinal)) {
      candidates.push_back(s);
    }
  }
  const std::string where =
      "segment '" + opened.name + "'" +
      (options.ordinal ? " on ordinal " + std::to_string(*options.ordinal) : std::string());
  if (candidates.empty()) return Fail(o, "no slot for index " + id.ToString() + " in " + where);
  as_of = 0;
  if (options.as_of) {
    as_of = *options.as_of;
    const bool found = std::any_of(candidates.begin(), candidates.end(),
                                   [&](const SlotInfo& s) { return s.key.as_of == as_of; });
    if (!found) {
      std::vector<std::string> have;
      for (const SlotInfo& s : candidates) have.push_back(std::to_string(s.key.as_of));
      std::sort(have.begin(), have.end());
      have.erase(std::unique(have.begin(), have.end()), have.end());
      return Fail(o, "no slot for index " + id.ToString() + " as of " + std::to_string(as_of) +
                         " in " + where + " (as_of present: " + Join(have, ", ") + ")");
    }
  } else {
    for (const SlotInfo& s : candidates) as_of = std::max(as_of, s.key.as_of);
  }
  auto rank = [](const SlotInfo& s) {
    return std::pair<int, int>(!(s.flags & shm::kSlotUnpublished), (s.flags & shm::kSlotFilled));
  };
  for (const SlotInfo& s : candidates) {
    if (s.key.as_of != as_of) continue;
    auto [it, inserted] = chosen.emplace(s.ordinal, s);
    if (!inserted && rank(s) > rank(it->second)) it->second = s;
  }
  return std::nullopt;
}

// The newest complete time every ordinal can answer: min upper - 1; for an index closed on every
// ordinal (readable at every time from since on) its final contents, at the largest time
// (UINT64_MAX is the empty frontier); since when nothing is complete yet.
Time DefaultTime(const std::vector<Snapshot>& snaps) {
  std::optional<Frontier> min_upper;
  Frontier max_since = Frontier::Minimum();
  for (const Snapshot& s : snaps) {
    min_upper = min_upper ? Min(*min_upper, s.upper()) : s.upper();
    max_since = Max(max_since, s.since());
  }
  if (min_upper && min_upper->empty()) return kMaxTime;
  if (min_upper && min_upper->time() > 0) return min_upper->time() - 1;
  if (!max_since.empty()) return max_since.time();
  return 0;
}

// Snapshots pin the batches they see (the publisher frees nothing an announcement can see), so
// they live only in here: rows are copied out, then every announcement is released before any
// output. Termination signals wait until then.
std::optional<int> ReadRows(const Output& o, Inspector& inspector, const std::string& seg_name,
                            const std::map<std::uint32_t, SlotInfo>& chosen,
                            const DumpOptions& options, Dump& d) {
  SignalBlocker block_termination;
  d.closed = !chosen.empty();
  std::vector<Snapshot> snaps;
  snaps.reserve(chosen.size());
  for (const auto& [ordinal, slot] : chosen) {
    auto snap = TakeWithRetry(inspector, ordinal, slot.index);
    if (!snap.ok()) {
      return Fail(o, snap.status(),
                  "reading " + slot.key.ToString() + " on ordinal " + std::to_string(ordinal) +
                      " of segment '" + seg_name + "': ");
    }
    d.slices.push_back({ordinal, slot.index, snap->since(), snap->upper(), snap->batches().size()});
    d.closed = d.closed && snap->upper().empty();
    snaps.push_back(std::move(snap).value());
  }
  d.t = options.at ? *options.at : DefaultTime(snaps);
  for (std::size_t i = 0; i < snaps.size(); ++i) {
    if (Status readable = snaps[i].CheckReadable(d.t); !readable.ok()) {
      return Fail(o, "read refused on ordinal " + std::to_string(d.slices[i].ordinal) + ": " +
                         readable.message());
    }
  }
  for (std::size_t i = 0; i < snaps.size(); ++i) {
    std::uint64_t taken = 0;
    const std::uint32_t ordinal = d.slices[i].ordinal;
    Status scanned =
        snaps[i].Scan(d.t, [&](std::string_view key, std::string_view val, std::int64_t count) {
          if (options.limit && taken >= *options.limit) {
            d.truncated = true;
            return false;
          }
          d.rows.push_back({ordinal, std::string(key), std::string(val), count});
          ++taken;
          return true;
        });
    if (!scanned.ok()) {
      return Fail(o,
                  "read refused on ordinal " + std::to_string(ordinal) + ": " + scanned.message());
    }
  }
  snaps.clear();  // releases every entry while termination signals still wait
  return std::nullopt;
}

void PrintJson(const Output& o, const Opened& opened, const GlobalId& id, const Dump& d) {
  JsonWriter json;
  json.BeginObject().Key("name").String(opened.name);
  json.Key("id").String(id.ToString());
  json.Key("as_of").UInt(d.as_of);
  json.Key("time").UInt(d.t);
  json.Key("closed").Bool(d.closed);
  json.Key("supervisor_alive").Bool(opened.probe.supervisor_alive);
  json.Key("ordinals").BeginArray();
  for (const Slice& slice : d.slices) {
    json.BeginObject().Key("ordinal").UInt(slice.ordinal).Key("slot").UInt(slice.slot);
    json.Key("since");
    json.FrontierValue(slice.since);
    json.Key("upper");
    json.FrontierValue(slice.upper);
    json.Key("batches").UInt(slice.batches);
    json.EndObject();
  }
  json.EndArray();
  json.Key("rows").BeginArray();
  for (const DumpRow& r : d.rows) {
    if (r.error()) continue;
    json.BeginObject().Key("ordinal").UInt(r.ordinal).Key("key");
    RowJson(json, r.key, true);
    json.Key("val");
    RowJson(json, r.val);
    json.Key("count").Int(r.count).EndObject();
  }
  json.EndArray();
  json.Key("errors").BeginArray();
  for (const DumpRow& r : d.rows) {
    if (!r.error()) continue;
    json.BeginObject().Key("ordinal").UInt(r.ordinal);
    json.Key("message").String(std::string_view(r.key).substr(1));
    json.Key("count").Int(r.count).EndObject();
  }
  json.EndArray();
  json.Key("truncated").Bool(d.truncated);
  json.EndObject();
  Emit(o, json);
}

void PrintText(const Output& o, const Opened& opened, const GlobalId& id, const Dump& d,
               const DumpOptions& options) {
  std::size_t errors = 0;
  for (const DumpRow& r : d.rows) errors += r.error();
  o.out << id.ToString() << "@" << d.as_of << " in " << opened.name << " at time " << d.t
        << (d.closed ? " (closed: its final contents)" : "")
        << (opened.probe.supervisor_alive ? "" : " (supervisor dead: post-mortem)") << "\n";
  for (const Slice& slice : d.slices) {
    o.out << "  ordinal " << slice.ordinal << ": slot " << slice.slot << ", since "
          << slice.since.ToString() << ", upper " << slice.upper.ToString() << ", " << slice.batches
          << " batch" << (slice.batches == 1 ? "" : "es") << "\n";
  }
  if (!d.rows.empty()) {
    Table table({"ORD", "KEY", "VAL", "COUNT"}, {true, false, false, true});
    for (const DumpRow& r : d.rows) {
      if (r.error()) {
        table.Add({std::to_string(r.ordinal),
                   "error: " + std::string(std::string_view(r.key).substr(1)), "",
                   std::to_string(r.count)});
      } else {
        table.Add({std::to_string(r.ordinal), EncodedRowText(r.key, true), EncodedRowText(r.val),
                   std::to_string(r.count)});
      }
    }
    o.out << table.Render();
  }
  o.out << d.rows.size() - errors << " row" << (d.rows.size() - errors == 1 ? "" : "s");
  if (errors) o.out << ", " << errors << " error" << (errors == 1 ? "" : "s");
  if (d.truncated) o.out << " (truncated by --limit " << *options.limit << ")";
  o.out << "\n";
}

}  // namespace

int RunDump(const Output& o, const DumpOptions& options) {
  const std::optional<GlobalId> id = GlobalId::Parse(options.id);
  if (!id) return Usage(o, "invalid index id '" + options.id + "': expected e.g. u1, s3 or t7");
  if (options.at && *options.at > kMaxTime) return Usage(o, "--at is out of range");
  auto opened = OpenSegment(options.segment);
  if (!opened.ok()) return Fail(o, opened.status());
  return PrintDump(o, *opened, options);
}

int PrintDump(const Output& o, Opened& opened, const DumpOptions& options) {
  const std::optional<GlobalId> id = GlobalId::Parse(options.id);
  if (!id) return Usage(o, "invalid index id '" + options.id + "': expected e.g. u1, s3 or t7");
  Segment& seg = *opened.segment;
  const std::uint32_t workers = seg.workers();
  if (options.ordinal && *options.ordinal >= workers) {
    return Fail(o, "ordinal " + std::to_string(*options.ordinal) + " is out of range: segment '" +
                       opened.name + "' has " + std::to_string(workers) + " worker ordinal" +
                       (workers == 1 ? "" : "s"));
  }
  // A live replica's reads are announced in its reader table; a dead one's frees nothing.
  Inspector inspector =
      opened.table ? Inspector(&seg, opened.table.get()) : Inspector(&seg, Inspector::PostMortem{});
  Dump d;
  std::map<std::uint32_t, SlotInfo> chosen;
  if (auto code = ChooseSlots(o, inspector, opened, *id, options, d.as_of, chosen)) return *code;
  if (auto code = ReadRows(o, inspector, opened.name, chosen, options, d)) return *code;
  // Each ordinal is in key order; so is the whole (errors first: their keys start with '\0').
  std::stable_sort(d.rows.begin(), d.rows.end(), [](const DumpRow& a, const DumpRow& b) {
    return std::tie(a.key, a.val) < std::tie(b.key, b.val);
  });
  if (options.limit && d.rows.size() > *options.limit) {
    d.rows.resize(*options.limit);
    d.truncated = true;
  }
  if (o.json) {
    PrintJson(o, opened, *id, d);
  } else {
    PrintText(o, opened, *id, d, options);
  }
  return kExitOk;
}

}  // namespace tandem::tools

#include "tools/shm/support.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace tandem::tools {

using namespace inspect;

// ---------------------------------------------------------------------------------------------
// slots

namespace {

// What holds a slot's `since` back (DESIGN §8): since = min(own frontier, peer hold, import hold),
// so the holds below the own frontier at that minimum. `kinds` is empty only when every frontier
// is empty (a dropped, released slot); {"own_frontier"} when no hold is below it.
struct HeldBy {
  std::vector<std::string> kinds;  // "peer_hold", "import_hold", or "own_frontier"
  Frontier at;                     // the minimum: where the publisher may compact to
  std::string text;                // "peer hold 5", "import hold 3 (2 importers)", "own frontier"
};

std::string Plural(std::uint64_t n, const char* one) {
  return std::to_string(n) + " " + one + (n == 1 ? "" : "s");
}

HeldBy HeldByOf(const SlotInfo& s) {
  HeldBy h;
  // Frontier raw values order like frontiers: a time below the empty frontier (UINT64_MAX).
  const std::uint64_t own = s.own_frontier.raw(), peer = s.peer_hold.raw(),
                      import = s.import_hold.raw();
  const std::uint64_t holds = std::min(peer, import);
  if (holds >= own) {
    h.at = s.own_frontier;
    if (s.own_frontier.empty()) {
      h.text = "nothing (all empty)";
    } else {
      h.kinds = {"own_frontier"};
      h.text = "own frontier";
    }
    return h;
  }
  h.at = Frontier::FromRaw(holds);
  std::vector<std::string> parts;
  if (peer == holds) {
    h.kinds.push_back("peer_hold");
    parts.push_back("peer hold " + std::to_string(peer));
    if (s.reader_holds > 0) parts.back() += " (" + Plural(s.reader_holds, "reader hold") + ")";
  }
  if (import == holds) {
    h.kinds.push_back("import_hold");
    parts.push_back("import hold " + std::to_string(import) + " (" +
                    Plural(s.importers, "importer") + ")");
  }
  h.text = Join(parts, " and ");
  return h;
}

}  // namespace

std::string RenderSlotsTable(std::vector<SlotInfo> slots) {
  if (slots.empty()) return "no live slots\n";
  SortSlots(slots);
  Table t(
      {"ID", "AS_OF", "ORD", "SLOT", "UPPER", "SINCE", "OWN", "PEER_HOLD", "IMPORT_HOLD",
       "IMPORTERS", "READER_HOLDS", "HELD_BY", "FLAGS", "BATCHES", "UPDATES", "BYTES", "MERGES"},
      {false, true, true, true, false, false, false, false, false, true, true, false, false, true,
       true, true, true});
  for (const SlotInfo& s : slots) {
    const auto flags = SlotFlagNames(s.flags);
    t.Add({s.key.id.ToString(), std::to_string(s.key.as_of), std::to_string(s.ordinal),
           std::to_string(s.index), s.upper.ToString(), s.since.ToString(),
           s.own_frontier.ToString(), s.peer_hold.ToString(), s.import_hold.ToString(),
           std::to_string(s.importers), std::to_string(s.reader_holds), HeldByOf(s).text,
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
    json.FrontierValue(s.upper);
    json.Key("closed").Bool(s.upper.empty());
    json.Key("since");
    json.FrontierValue(s.since);
    json.Key("own_frontier");
    json.FrontierValue(s.own_frontier);
    json.Key("peer_hold");
    json.FrontierValue(s.peer_hold);
    json.Key("import_hold");
    json.FrontierValue(s.import_hold);
    json.Key("importers").UInt(s.importers);
    json.Key("reader_holds").UInt(s.reader_holds);
    const HeldBy held = HeldByOf(s);
    json.Key("held_by").BeginArray();
    for (const auto& k : held.kinds) json.String(k);
    json.EndArray();
    json.Key("held_at");
    json.FrontierValue(held.at);
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
  if (!opened.ok()) return Fail(o, opened.status());
  return PrintSlots(o, *opened);
}

int PrintSlots(const Output& o, Opened& opened) {
  const std::vector<SlotInfo> slots = Inspector(opened.segment.get()).Slots();
  if (o.json) {
    JsonWriter json;
    json.BeginObject().Key("name").String(opened.name);
    json.Key("supervisor_alive").Bool(opened.probe.supervisor_alive);
    json.Key("slots");
    SlotsJson(json, slots);
    json.EndObject();
    Emit(o, json);
  } else {
    o.out << SlotsHeadline(opened, slots.size()) << RenderSlotsTable(slots);
  }
  return kExitOk;
}

// ---------------------------------------------------------------------------------------------
// watch

int RunWatch(const Output& o, const WatchOptions& options) {
  auto opened = OpenSegment(options.segment);
  if (!opened.ok()) return Fail(o, opened.status());
  Inspector inspector(opened->segment.get());
  for (std::uint64_t n = 1;; ++n) {
    // Liveness can change while we watch; Probe never blocks (a non-blocking flock attempt).
    auto probe = IsSegmentFile(opened->name) ? Segment::ProbeFile(opened->name)
                                             : Segment::Probe(opened->name);
    if (probe.ok()) {
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

}  // namespace tandem::tools

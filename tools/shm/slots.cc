#include "tools/shm/support.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace tandem::tools {

using namespace inspect;

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
    json.FrontierValue(s.upper);
    json.Key("closed").Bool(s.upper.empty());
    json.Key("since");
    json.FrontierValue(s.since);
    json.Key("own_frontier");
    json.FrontierValue(s.own_frontier);
    json.Key("peer_hold");
    json.FrontierValue(s.peer_hold);
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

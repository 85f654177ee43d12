#include "tools/shm/support.h"

#include <algorithm>
#include <optional>

namespace tandem::tools {

using namespace inspect;

// ---------------------------------------------------------------------------------------------
// info

int RunInfo(const Output& o, const std::string& arg) {
  auto opened = OpenSegment(arg);
  if (!opened.ok()) return Fail(o, opened.status());
  return PrintInfo(o, *opened);
}

int PrintInfo(const Output& o, Opened& opened) {
  Segment& seg = *opened.segment;
  const shm::HeaderInfo h = shm::CopyHeader(seg.header());
  const bool alive = opened.probe.supervisor_alive;
  Inspector inspector(&seg);
  const std::size_t live_slots = inspector.Slots().size();
  const std::uint64_t capacity = std::uint64_t{h.workers} * h.slots_per_row;
  const std::uint64_t used = seg.used_bytes();
  const std::uint64_t free = seg.free_bytes();
  static constexpr const char* kRoles[shm::kRuntimeEntries] = {"maintenance", "interactive"};
  // Local readers (and tools) with an entry in the reader table now, this one included.
  std::optional<std::uint64_t> local_readers;
  if (opened.table) {
    local_readers = 0;
    for (std::uint32_t i = 0; i < shm::kReaderTableEntries; ++i) {
      *local_readers += opened.table->slot(i).pid.load() != 0;
    }
  }

  if (o.json) {
    JsonWriter json;
    json.BeginObject().Key("name").String(opened.name);
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
    if (local_readers) json.Key("local_readers").UInt(*local_readers);
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
  t.Add({"name", opened.name});
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
  if (local_readers) {
    t.Add({"local readers", std::to_string(*local_readers) + " attached (reader table " +
                                opened.table->path() + ")"});
  }
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

}  // namespace tandem::tools

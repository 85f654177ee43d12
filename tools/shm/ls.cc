#include "tools/shm/support.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>

namespace tandem::tools {

using namespace inspect;

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

}  // namespace tandem::tools

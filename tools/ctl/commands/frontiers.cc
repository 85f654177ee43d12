// frontiers: the latest frontier per id, as reported (or probed), in an observer session.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include "tools/ctl/commands/commands.h"
#include "tools/ctl/output.h"

namespace tandem::ctl {
namespace {

using tools::JsonWriter;

struct FrontiersOptions {
  std::optional<std::string> only;
  std::optional<std::string> seconds;
};

// A log, CSV or JSON-lines source whose file is gone (or never was) cannot advance: say so,
// whatever the replica reports.
std::vector<std::string> MissingLogWarnings(const History& h,
                                            const std::optional<std::string>& only) {
  std::vector<std::string> warnings;
  for (const auto& [source, file] : h.SourceFiles()) {
    const std::string& path = file.path;
    const auto indexes = h.KindOf(source).indexes;
    if (only && *only != source &&
        std::find(indexes.begin(), indexes.end(), *only) == indexes.end()) {
      continue;
    }
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) continue;
    const std::string state =
        std::filesystem::exists(path, ec) ? "is not a regular file" : "does not exist";
    // A pending source has no index yet: nothing is waiting on it, but create-index would.
    const std::string waits = indexes.empty()       ? "an index on it"
                              : indexes.size() == 1 ? "its index " + indexes.front()
                                                    : "its indexes " + JoinIds(indexes);
    warnings.push_back("the " + file.what + " file of source " + source + " (" + path + ") " +
                       state + " now: " + waits + " cannot advance until it is back");
  }
  return warnings;
}

void Print(const std::map<std::string, pb::Frontiers>& latest, const std::set<std::string>& probed,
           const std::vector<std::string>& warnings, const std::optional<std::string>& only) {
  if (JsonOutput()) {
    JsonWriter json;
    json.BeginObject().Key("frontiers").BeginArray();
    for (const auto& [id, f] : latest) FrontiersJson(json, f);
    json.EndArray().Key("probed").BeginArray();
    for (const auto& id : probed) json.String(id);
    json.EndArray().Key("warnings").BeginArray();
    for (const auto& w : warnings) json.String(w);
    json.EndArray().EndObject();
    std::cout << json.str() << "\n";
    return;
  }
  if (latest.empty()) {
    std::cout << "(no frontiers reported" << (only ? " for " + *only : "")
              << "; frontiers are reported as they advance)\n";
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& [id, f] : latest) {
    rows.push_back({id, FrontierText(f.write()), FrontierText(f.input()), FrontierText(f.output()),
                    probed.count(id) ? "probed" : "reported"});
  }
  PrintTable({"id", "write", "input", "output", "how"}, rows);
}

// Several replicas: the frontiers each one reported, per replica (no probing: a replica that
// reported nothing for an id shows none).
int RunMulti(const std::optional<std::string>& only, double seconds,
             const std::vector<std::string>& warnings, Session& s) {
  ReplicaSet& set = s.set();
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
  while (!Interrupted() && ipc::Left(deadline).count() > 0) {
    (void)set.Poll(std::min(ipc::Left(deadline), std::chrono::milliseconds(100)));
  }
  auto shown = [&](const std::string& id) { return !only || id == *only; };
  if (JsonOutput()) {
    JsonWriter json;
    json.BeginObject().Key("replicas").BeginArray();
    for (std::size_t i = 0; i < set.size(); ++i) {
      const auto st = set.status(i);
      json.BeginObject().Key("replica").UInt(i).Key("endpoint").String(st.endpoint);
      json.Key("state").String(ReplicaSet::StateName(st.state));
      json.Key("frontiers").BeginArray();
      for (const auto& [id, f] : set.frontiers(i)) {
        if (shown(id)) FrontiersJson(json, f);
      }
      json.EndArray().EndObject();
    }
    json.EndArray().Key("warnings").BeginArray();
    for (const auto& w : warnings) json.String(w);
    json.EndArray().EndObject();
    std::cout << json.str() << "\n";
    return kExitOk;
  }
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < set.size(); ++i) {
    const auto st = set.status(i);
    bool any = false;
    for (const auto& [id, f] : set.frontiers(i)) {
      if (!shown(id)) continue;
      any = true;
      rows.push_back({std::to_string(i), id, FrontierText(f.write()), FrontierText(f.input()),
                      FrontierText(f.output()), ReplicaSet::StateName(st.state)});
    }
    if (!any)
      rows.push_back({std::to_string(i), "-", "-", "-", "-", ReplicaSet::StateName(st.state)});
  }
  PrintTable({"replica", "id", "write", "input", "output", "state"}, rows);
  return kExitOk;
}

int RunFrontiers(const FrontiersOptions& o, Session& s) {
  const std::optional<std::string>& only = o.only;
  double seconds = 1.0;
  if (o.seconds) {
    auto parsed = ParseSeconds(*o.seconds, "--for");
    if (!parsed.ok()) return Usage(parsed.status().message());
    seconds = *parsed;
  }
  const std::vector<std::string> warnings = MissingLogWarnings(s.history(), only);
  for (const auto& w : warnings) Warn(w);
  if (auto code = s.Open(Session::Mode::kObserve)) return *code;
  if (s.multi()) return RunMulti(only, seconds, warnings, s);
  std::map<std::string, pb::Frontiers> latest;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
  while (!Interrupted()) {
    const auto left = ipc::Left(deadline);
    if (left.count() <= 0) break;
    auto r = s.client().Receive(left);
    if (!r) break;
    if (!r->has_frontiers()) continue;
    if (only && r->frontiers().id() != *only) continue;
    latest[r->frontiers().id()] = r->frontiers();
  }
  if (s.over()) return s.Ended(Status::Ok());
  // Frontiers are reported as they advance: an index of the history whose frontier has not moved
  // since an earlier controller saw it is not reported again. Find its frontier by probing.
  std::set<std::string> probed;
  for (const auto& id : s.history().LiveIndexes()) {
    if ((only && id != *only) || latest.count(id)) continue;
    auto t = controller::ProbeLatest(s.core(), id);
    pb::Frontiers f;
    f.set_id(id);
    if (t.ok()) {
      if (!t->closed) {
        for (auto* fr : {f.mutable_write(), f.mutable_input(), f.mutable_output()}) {
          fr->add_elements(t->time + 1);
        }
      }
    } else if (t.status().code() == StatusCode::kUnavailable) {
      return s.Ended(t.status());
    } else {
      continue;  // no complete time yet, or unknown to the replica
    }
    latest[id] = f;
    probed.insert(id);
  }
  Print(latest, probed, warnings, only);
  return kExitOk;
}

}  // namespace

Subcommand AddFrontiers(CLI::App& app) {
  auto o = std::make_shared<FrontiersOptions>();
  auto* sub = app.add_subcommand("frontiers", "the latest frontier per id");
  sub->footer(
      "Collects frontiers for about a second (--for) and prints the latest per id; an index of\n"
      "the history that reported nothing meanwhile is probed (peeks with limit 0, canceled when\n"
      "they would wait) and shown as \"probed\". Warns about a log source whose file is missing\n"
      "now (its index cannot advance). With several endpoints: the frontiers each replica\n"
      "reported, one row per replica and id (no probing).");
  sub->add_option_function<std::string>(
      "ID", [o](const std::string& v) { o->only = v; }, "only this id");
  AddOptional(*sub, "--for", &o->seconds, "SECONDS to collect (default 1)");
  return {sub,
          [o](const Globals& g, History h) {
            Session s(g, std::move(h));
            return RunFrontiers(*o, s);
          },
          History::Access::kRead};
}

}  // namespace tandem::ctl

// status: the state of each replica of --endpoint (one or several), in observer sessions: up or
// down, its replica id, how far its frontiers lag behind the freshest replica's
// (controller/replica_lag.h), and why it is down.
#include <algorithm>
#include <iostream>
#include <map>
#include <set>

#include "controller/replica_lag.h"
#include "tools/ctl/commands/commands.h"
#include "tools/ctl/output.h"

namespace tandem::ctl {
namespace {

using tools::JsonWriter;

struct StatusOptions {
  std::optional<std::string> seconds;
};

int RunStatus(const StatusOptions& o, const Globals& g) {
  double seconds = 1.0;
  if (o.seconds) {
    auto parsed = ParseSeconds(*o.seconds, "--for");
    if (!parsed.ok()) return Usage(parsed.status().message());
    seconds = *parsed;
  }
  auto curve = LoadCurveKeys(g);
  if (!curve.ok()) return Usage(curve.status().message());
  const std::vector<std::string> endpoints =
      g.endpoints.size() > 1 && !g.replica ? g.endpoints : std::vector<std::string>{g.endpoint};
  ReplicaSet::Options options;
  options.client.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(g.timeout_s * 1000));
  options.client.linger = std::chrono::milliseconds(200);
  options.client.curve = *curve;
  options.observer = true;
  auto created = ReplicaSet::Create(endpoints, options);
  if (!created.ok()) return Usage("--endpoint: " + created.status().message());
  ReplicaSet& set = **created;
  // Nobody up is reported like everything else (a table), not as a failure to connect.
  (void)set.Connect(std::chrono::steady_clock::now() + options.client.timeout);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
  while (!Interrupted() && ipc::Left(deadline).count() > 0) {
    (void)set.Poll(std::min(ipc::Left(deadline), std::chrono::milliseconds(100)));
  }
  std::size_t up = 0;
  JsonWriter json;
  json.BeginObject().Key("replicas").BeginArray();
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < set.size(); ++i) {
    const auto st = set.status(i);
    const bool is_up = st.state == ReplicaSet::State::kReady;
    up += is_up;
    // A replica that did not answer Hello while we waited is down for anyone asking now.
    const std::string state = is_up ? "up" : "down";
    std::string error = st.last_error;
    if (!is_up && error.empty()) {
      error = "no answer to Hello within " + std::to_string(g.timeout_s).substr(0, 4) + " s";
    }
    const controller::ReplicaLag lag = is_up ? controller::LagOf(set, i) : controller::ReplicaLag{};
    std::string lag_text = "-";
    if (lag.ticks) lag_text = std::to_string(*lag.ticks);
    if (lag.behind_closed) lag_text += " (not closed)";
    if (!lag.missing.empty()) lag_text += " (missing " + JoinIds(lag.missing) + ")";
    rows.push_back({std::to_string(i), st.endpoint, state,
                    st.replica_id.empty() ? "-" : st.replica_id,
                    std::to_string(set.frontiers(i).size()), lag_text, error});
    json.BeginObject().Key("replica").UInt(i).Key("endpoint").String(st.endpoint);
    json.Key("state").String(state).Key("replica_id").String(st.replica_id);
    json.Key("indexes").UInt(set.frontiers(i).size()).Key("lag");
    if (lag.ticks) {
      json.UInt(*lag.ticks);
    } else {
      json.Null();
    }
    json.Key("behind_closed").Bool(lag.behind_closed).Key("missing").BeginArray();
    for (const auto& id : lag.missing) json.String(id);
    json.EndArray().Key("error").String(error).EndObject();
  }
  json.EndArray().Key("up").UInt(up).Key("of").UInt(set.size()).EndObject();
  if (JsonOutput()) {
    std::cout << json.str() << "\n";
  } else {
    PrintTable({"replica", "endpoint", "state", "replica-id", "ids", "lag", "error"}, rows);
  }
  if (up == set.size()) return kExitOk;
  return up == 0 ? kExitUnavailable : kExitFailed;
}

}  // namespace

Subcommand AddStatus(CLI::App& app) {
  auto o = std::make_shared<StatusOptions>();
  auto* sub = app.add_subcommand("status", "the state of each replica of --endpoint");
  sub->footer(
      "Connects to every replica of --endpoint (A,B,C; or --replica N) as an observer, collects\n"
      "their frontiers for about a second (--for), and prints per replica: up or down, its\n"
      "replica id, how many ids reported frontiers, its lag (how many times its write frontiers\n"
      "are behind the freshest replica's, over every id; \"missing\" ids it reported none for),\n"
      "and why it is down. Exit 0 when every replica is up, 1 when some are down, 69 when none\n"
      "is up.");
  AddOptional(*sub, "--for", &o->seconds, "SECONDS to collect frontiers (default 1)");
  return {sub, [o](const Globals& g, History) { return RunStatus(*o, g); },
          /*state=*/std::nullopt};
}

}  // namespace tandem::ctl

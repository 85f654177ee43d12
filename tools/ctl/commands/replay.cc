// replay: a controller session that replays the state file's history and sends nothing else. A
// replica that restarted runs nothing until a controller replays its history to it (a table's
// rows wait on disk), and read and write sessions never replay: this is that replay on its own,
// with every check a replaying command makes (the live-index check, --replace, several replicas).
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tools/ctl/commands/commands.h"

namespace tandem::ctl {
namespace {

using tools::JsonWriter;

std::string Commands(std::size_t n) {
  return std::to_string(n) + (n == 1 ? " command" : " commands");
}

int RunReplay(const Globals& g, History h) {
  const std::size_t commands = h.Replay().size();
  const std::string path = h.path();
  const std::set<std::string> live = h.LiveIndexes();
  const std::vector<std::string> indexes(live.begin(), live.end());
  // {"ok", "command": "replay", "commands": n, "indexes": [the history's], "replicas": k (of
  // several: how many are up, replayed to)}.
  auto print = [&](const std::string& human, std::optional<std::size_t> replicas) {
    PrintOk(
        "replay",
        [&](JsonWriter& json) {
          json.Key("commands").UInt(commands).Key("indexes").BeginArray();
          for (const auto& id : indexes) json.String(id);
          json.EndArray();
          if (replicas) json.Key("replicas").UInt(*replicas);
        },
        human);
  };
  if (commands == 0) {
    // A controller session with nothing to replay could only reconcile a replica's dataflows away
    // (or be refused for them): no replica is contacted.
    print("nothing to replay: the state file " + path +
              " holds no commands to replay (no replica was contacted)",
          std::nullopt);
    return kExitOk;
  }
  Session s(g, std::move(h));
  if (auto code = s.Open(Session::Mode::kControl)) return *code;
  if (const std::size_t refused = s.replay_refusals(); refused > 0) {
    // What was refused is warned about above; the rest of the history runs.
    if (s.multi()) {
      return Refused("replay", std::to_string(refused) +
                                   (refused == 1 ? " replica refused" : " replicas refused") +
                                   " commands of the history of " + path + " (named above)");
    }
    return Refused("replay", "the replica refused " + std::to_string(refused) + " of the " +
                                 Commands(commands) + " of " + path +
                                 " (named above); it runs the others");
  }
  const std::string what = indexes.empty()
                               ? "no indexes"
                               : (indexes.size() == 1 ? "index " : "indexes ") + JoinIds(indexes);
  if (s.multi()) {
    const std::size_t up = s.set().ready();
    print("replayed " + Commands(commands) + " of " + path + " to " + std::to_string(up) + " of " +
              std::to_string(s.set().size()) + " replicas (" + what + ")",
          up);
    return kExitOk;
  }
  print("replayed " + Commands(commands) + " of " + path + " (" + what + ")", std::nullopt);
  return kExitOk;
}

}  // namespace

Subcommand AddReplay(CLI::App& app) {
  auto* sub = app.add_subcommand("replay", "replay the state file's history; change nothing else");
  sub->footer(
      "Opens a controller session that replays the state file's history (Hello, the history,\n"
      "InitializationComplete) and sends nothing else: what every command that changes the\n"
      "replica does first. A replica that restarted runs nothing until then (a table's rows wait\n"
      "on disk), and write, load, peek, subscribe, frontiers and watch never replay: they find\n"
      "its tables and indexes unknown. Refused like every replay when the replica maintains\n"
      "indexes the history does not define (--replace replaces them); exit 1 when the replica\n"
      "refused a replayed command. An empty history contacts no replica. The state file is not\n"
      "changed.");
  return {sub, [](const Globals& g, History h) { return RunReplay(g, std::move(h)); }};
}

}  // namespace tandem::ctl

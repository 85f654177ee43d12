// run: sends a script of protocol-JSON commands in one controller session, printing the responses.
#include <fstream>
#include <iostream>
#include <set>

#include "controller/one_shot.h"
#include "tools/ctl/commands/commands.h"
#include "tools/ctl/output.h"

namespace tandem::ctl {
namespace {

struct Line {
  int number;
  pb::Command command;
};

// The script's commands (blank lines and # comments skipped); a usage error's message otherwise.
Result<std::vector<Line>> ReadScript(const std::string& file) {
  std::ifstream f(file);
  if (!f) return Status::InvalidArgument("cannot read " + file);
  std::vector<Line> script;
  int number = 0;
  for (std::string line; std::getline(f, line);) {
    ++number;
    const auto b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos || line[b] == '#') continue;
    auto c = ipc::CommandFromJson(line);
    if (!c.ok()) {
      return Status::InvalidArgument(file + ":" + std::to_string(number) + ": " +
                                     c.status().message());
    }
    if (c->has_hello() || c->has_goodbye()) {
      return Status::InvalidArgument(file + ":" + std::to_string(number) + ": " +
                                     ipc::CommandName(*c) + " is sent by tandem-ctl");
    }
    script.push_back({number, Canonical(*c)});
  }
  return script;
}

// One run: what it sent, what failed, the peeks still unanswered.
class Script {
 public:
  Script(Session& s, std::string file) : s_(s), file_(std::move(file)) {}

  // Sends every line; an exit code when the session ended.
  std::optional<int> Send(const std::vector<Line>& script) {
    for (const auto& [line, c] : script) {
      const std::string what = file_ + ":" + std::to_string(line) + " " + ipc::Describe(c);
      // A one-shot read (and the drop of its transient result) is no state of the replica a
      // history replays: sent, never recorded, and its drop not checked against the history.
      const bool one_shot = controller::IsOneShot(c);
      const bool record = !one_shot && (c.has_create_dataflow() || c.has_allow_compaction());
      if (c.has_allow_compaction() && !one_shot) {
        const auto& f = c.allow_compaction().frontier();
        if (auto why =
                NotAnIndex(s_.history(), c.allow_compaction().id(),
                           f.elements().empty() ? std::nullopt : std::optional(f.elements(0)))) {
          Refuse(what, ipc::CommandName(c), *why);
          continue;
        }
      }
      auto errors = s_.client().SendChecked(c);
      if (!errors.ok()) return s_.Ended(errors.status());
      if (!errors->empty()) {
        for (const auto& e : *errors) Refuse(what, e.what(), ReplicaRefusal(e));
        continue;
      }
      if (record) s_.core().Record(c);
      if (c.has_peek()) peeks_.insert(c.peek().uuid());
    }
    return std::nullopt;
  }

  // Shows responses until `deadline`, or (`until_answered`) until every peek is answered.
  void Show(std::chrono::steady_clock::time_point deadline, bool until_answered) {
    while ((!until_answered || (!peeks_.empty() && !Interrupted())) && !s_.over()) {
      const auto left = ipc::Left(deadline);
      if (left.count() <= 0) break;
      auto r = s_.client().Receive(left);
      if (!r) break;
      if (r->has_peek_response()) {
        peeks_.erase(r->peek_response().uuid());
        if (r->peek_response().has_error()) ++refused_;
      }
      PrintResponse(*r);
    }
  }

  // The exit code once the responses are in.
  int Finish(std::size_t commands) {
    if (s_.over()) return s_.Ended(Status::Ok());
    for (const auto& uuid : peeks_) {
      std::cerr << "tandem-ctl: refused: peek " << uuid << ": no answer within the timeout\n";
      ++refused_;
    }
    if (refused_ > 0) {
      return Fail(kExitFailed, std::to_string(refused_) + " of the script's " +
                                   std::to_string(commands) + " commands failed");
    }
    return kExitOk;
  }

 private:
  // A refused line: its reason on stderr, and (--json) a command_error line like the replica's.
  void Refuse(const std::string& what, const std::string& name, const std::string& why) {
    std::cerr << "tandem-ctl: refused: " << what << ": " << why << "\n";
    pb::Response r;
    r.mutable_command_error()->set_what(name);
    r.mutable_command_error()->set_why(why);
    if (JsonOutput()) PrintResponse(r);
    ++refused_;
  }

  Session& s_;
  std::string file_;
  int refused_ = 0;
  std::set<std::string> peeks_;
};

int RunScript(const std::string& file, Session& s) {
  auto script = ReadScript(file);
  if (!script.ok()) return Usage(script.status().message());
  if (auto code = s.Open(Session::Mode::kControl)) return *code;
  Script run(s, file);
  if (auto code = run.Send(*script)) return *code;
  // Wait for the peeks' answers (bounded), then show what else arrived shortly after.
  run.Show(std::chrono::steady_clock::now() + s.client().timeout(), /*until_answered=*/true);
  run.Show(std::chrono::steady_clock::now() + std::chrono::milliseconds(200), false);
  return run.Finish(script->size());
}

}  // namespace

Subcommand AddRun(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  auto* sub = app.add_subcommand("run", "send a script of protocol-JSON commands");
  sub->footer(
      "Sends one protocol-JSON command a line (blank lines and # comments skipped), in order,\n"
      "and prints the responses. Accepted CreateDataflow and AllowCompaction lines are recorded\n"
      "in the state file, except a ONE_SHOT_READ dataflow and the drop of a transient t<n>\n"
      "result: a one-shot read is no state to replay.");
  sub->add_option("SCRIPT", *file, "one protocol-JSON command a line")->required();
  return {sub, [file](const Globals& g, History h) {
            Session s(g, std::move(h));
            return RunScript(*file, s);
          }};
}

}  // namespace tandem::ctl

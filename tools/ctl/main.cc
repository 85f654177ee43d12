// tandem-ctl: the reference controller. The command line only: the global options here, one file
// per subcommand in commands/, what they share in session.h; the logic (history, session, replica
// set) is the controller library's (controller/README.md). docs/ctl.md and docs/formats.md
// ("Output of the tools") say what it prints.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tools/ctl/commands/commands.h"

namespace tandem::ctl {

CLI::Option* AddOptional(CLI::App& app, const std::string& name, std::optional<std::string>* into,
                         const std::string& help) {
  return app.add_option_function<std::string>(
      name, [into](const std::string& v) { *into = v; }, help);
}

namespace {

constexpr char kDescription[] = R"(tandem-ctl — the reference controller of a Tandem replica

usage: tandem-ctl [global options] COMMAND [arguments]   (tandem-ctl COMMAND --help: its options)
)";

constexpr char kFooter[] = R"(
Like a real controller, tandem-ctl keeps the commands that define the replica's state
(CreateDataflow, AllowCompaction) in the state file, one protocol-JSON command a line. Every
command that changes the replica (create-*, allow-compaction, drop, run, and replay, which sends
nothing else) connects (a ZeroMQ DEALER), sends Hello, replays that history, sends
InitializationComplete and then its new commands; the replica's reconciliation keeps what was
re-sent unchanged, so nothing already running is rebuilt, and drops what was not re-sent. So
first it checks the indexes the replica maintains (HelloAccepted.live_indexes): one the history
does not define would be dropped, and the command is refused, listing them, unless --replace.
New commands are added to the history only once the replica has accepted them; a refused command
is never recorded. Dropped dataflows are pruned from it.

create-source u<n> creates a dataflow of its own: the source and its index s<n>. create-index and
create-view --on a source (or any collection with an index) import an index of it, so dropping
them leaves the source; drop u<n> drops the source (refused while something imports it). query
computes a view once, at one time, in a one-shot dataflow it drops again: nothing is recorded.

peek, subscribe, frontiers and watch are read-only: they open an observer session
(Hello{observer}), which never replays, never sends InitializationComplete and never takes over
from the controller. They cannot change the replica, whatever the state file (any, or none: it
only supplies column names and key types, and the index of a view).
write sends one WriteTable to a table in a writer session (Hello{observer, writer}): no replay
either; the table's schema comes from the state file.
A replica that restarted runs nothing until a command replays the history to it: until then
write, load and the read commands find its tables and indexes unknown (a table's rows wait on
disk), and such a refusal of an id the state file defines says so. tandem-ctl replay replays the
history and changes nothing else (an empty history: it contacts no replica).

Every invocation ends its session with Goodbye. Every option of a command takes one value, even
one that begins with '-' (--key -inf); --key, --aggregate, --join and --join-on may be
repeated (--left, --table, --no-snapshot, --observer and --progress are flags).

A replica that requires CURVE (tandem-supervisor --curve-secret-key) is reached with
--curve-server-key (its public key file) and --curve-client-key (this client's secret key file,
whose public half is in the replica's --curve-authorized-keys directory); tandem-ctl keygen FILE
makes a key pair. A refused key is reported as such (exit 69).

Several replicas of one definition (--endpoint A,B,C; DESIGN §13): create-*, allow-compaction,
drop and replay go to every replica (each replayed to first; a command is recorded once no
replica refused it and at least one accepted it; a replica that is down is left out with a
warning, and the next command's replay brings it up to date); write goes to every replica that is
up, each answering with its own time (a table's time is its replica's clock); peek goes to all and
prints the first answer (an error from one replica waits for the others' rows); frontiers lists
each replica's; status shows each replica's state. Every write's times are recorded per replica
in STATE.writes, and a peek of an index over tables this state file wrote is answered only by
replicas that acknowledged every such write, each from its own time of them on (read your
writes). --replica N sends any command to replica N alone; run, query, load, subscribe and watch
need it.

exit status: 0 success (subscribe: it ended at --up-to, its index closed, or --for or ^C
canceled it); 1 a command was refused, a peek failed or timed out, a subscribe was ended by the
replica (dropped, an error, too slow) or its stdout did not keep up; 64 bad usage (including an
--endpoint that is not a ZeroMQ endpoint, and a key file that is malformed or, for a secret key,
readable by others);
69 the replica could not be reached, refused this client's key, or the connection to it was lost;
75 another controller took over (superseded this session).
Refusals are printed as "tandem-ctl: refused: COMMAND ID: WHY".)";

// The flags (the global ones, --left, --table and subscribe's --no-snapshot, --observer and
// --progress): every other option takes one value.
bool IsFlag(const std::string& arg) {
  return arg == "--json" || arg == "--replace" || arg == "--left" || arg == "--table" ||
         arg == "--no-snapshot" || arg == "--observer" || arg == "--progress" || arg == "--help" ||
         arg == "-h";
}

// Every option but the flags takes the next argument as its value, whatever it looks like
// (`--key -inf`, which CLI11 would take for an option): joined as --name=value for CLI11.
std::vector<std::string> JoinValues(int argc, char** argv) {
  std::vector<std::string> joined;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) == 0 && arg.size() > 2 && arg.find('=') == std::string::npos &&
        !IsFlag(arg) && i + 1 < argc) {
      arg += "=" + std::string(argv[++i]);
    }
    joined.push_back(std::move(arg));
  }
  return joined;
}

// CLI11's words for the mistakes the old command line named itself, in the old words.
std::string UsageMessage(const CLI::ParseError& e) {
  static const std::regex twice(R"(^(--[\w-]+): At Most 1 required but received \d+$)");
  static const std::regex no_value(R"(^(--[\w-]+): 1 required \w+ missing$)");
  static const std::regex positional(R"(^[A-Z]+ is required$)");
  const std::string what = e.what();
  std::smatch m;
  if (std::regex_match(what, m, twice)) return m[1].str() + " given twice";
  if (std::regex_match(what, m, no_value)) return m[1].str() + " needs a value";
  if (std::regex_match(what, positional)) return "missing argument";
  return what;
}

// Options or arguments no subcommand took: the usage error naming the first.
int Unexpected(const std::vector<std::string>& extras) {
  const std::string& first = extras.front();
  if (first.rfind("--", 0) == 0) return Usage("unknown option " + first.substr(0, first.find('=')));
  return Usage("unexpected argument " + first);
}

// A global option given twice: the last one counts (a command's options may be given once).
constexpr auto kLastWins = CLI::MultiOptionPolicy::TakeLast;

int Main(int argc, char** argv) {
  Globals g;
  if (const char* e = std::getenv("TANDEM_ENDPOINT"); e && *e) g.endpoint = e;
  if (const char* e = std::getenv("TANDEM_CURVE_SERVER_KEY"); e && *e) g.curve_server_key = e;
  if (const char* e = std::getenv("TANDEM_CURVE_CLIENT_KEY"); e && *e) g.curve_client_key = e;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--json") SetJsonOutput(g.json = true);  // for usage errors too
  }
  CLI::App app{kDescription, "tandem-ctl"};
  app.footer(kFooter);
  app.fallthrough();   // global options may come after the command, too
  app.allow_extras();  // reported below, as the old command line did
  std::string timeout;
  app.add_option("--endpoint", g.endpoint,
                 "the replica's controller endpoint (env TANDEM_ENDPOINT; default "
                 "tcp://127.0.0.1:2101), or several replicas of one definition: A,B,C")
      ->multi_option_policy(kLastWins);
  std::optional<std::string> replica;
  AddOptional(app, "--replica", &replica,
              "N: with --endpoint A,B,C, talk to replica N (0 = the first endpoint) alone")
      ->multi_option_policy(kLastWins);
  app.add_option("--state", g.state, "the command history (default ./tandem-ctl.state)")
      ->multi_option_policy(kLastWins);
  app.add_flag(
      "--json", g.json,
      "machine-readable output: JSON on stdout, one document a line (docs/formats.md \"Output of "
      "the tools\"); a failure ends with {\"error\": ..., \"exit_code\": N}");
  app.add_option("--timeout", timeout, "SECONDS: how long to wait for the replica (default 5)")
      ->multi_option_policy(kLastWins);
  app.add_flag("--replace", g.replace,
               "let a command that replays the history replace dataflows of the replica that the "
               "history does not define (they are dropped); without it, such a command is refused "
               "and changes nothing");
  app.add_option("--curve-server-key", g.curve_server_key,
                 "FILE: the replica's CURVE public key (env TANDEM_CURVE_SERVER_KEY); with "
                 "--curve-client-key, for a replica that requires CURVE")
      ->multi_option_policy(kLastWins);
  app.add_option("--curve-client-key", g.curve_client_key,
                 "FILE: this client's CURVE secret key, mode 0600 (env TANDEM_CURVE_CLIENT_KEY; "
                 "tandem-ctl keygen makes one)")
      ->multi_option_policy(kLastWins);
  // Several replicas: these commands go to every replica of --endpoint A,B,C (peek: the first
  // answer; write: each replica's time; frontiers and status: per replica); the others talk to
  // one, --replica N.
  static const std::set<std::string> kToEveryReplica = {
      "create-source",    "create-index", "create-view", "create-dataflow",
      "allow-compaction", "drop",         "replay",      "peek",
      "frontiers",        "status",       "keygen",      "write"};
  std::vector<Subcommand> commands = {
      AddCreateSource(app), AddCreateIndex(app), AddCreateView(app), AddCreateDataflow(app),
      AddPeek(app),         AddFrontiers(app),   AddWatch(app),      AddAllowCompaction(app),
      AddDrop(app),         AddRun(app),         AddKeygen(app),     AddQuery(app)};
  commands.push_back(AddWrite(app));
  commands.push_back(AddLoad(app));
  commands.push_back(AddSubscribe(app));
  commands.push_back(AddStatus(app));
  commands.push_back(AddReplay(app));
  std::vector<std::string> args = JoinValues(argc, argv);
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    // Every subcommand with its options (or, after one, that one's).
    std::cout << app.help("", CLI::AppFormatMode::All);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    return Usage(UsageMessage(e));
  }
  const Subcommand* chosen = nullptr;
  for (const auto& c : commands) {
    if (c.app->parsed()) chosen = &c;
  }
  if (!chosen) {
    if (app.remaining().empty()) return Usage("no command given");
    return Usage("unknown command \"" + app.remaining().front() + "\"");
  }
  if (!app.remaining().empty()) return Unexpected(app.remaining());
  if (!chosen->app->remaining().empty()) return Unexpected(chosen->app->remaining());
  if (!timeout.empty() || app.count("--timeout")) {
    char* end = nullptr;
    g.timeout_s = std::strtod(timeout.c_str(), &end);
    if (timeout.empty() || *end != '\0' || !(g.timeout_s > 0)) {
      return Usage("--timeout: \"" + timeout + "\" is not a positive number of seconds");
    }
  }
  if (g.endpoint.find(',') != std::string::npos) {
    auto list = controller::ParseEndpointList(g.endpoint);
    if (!list.ok()) return Usage("--endpoint: " + list.status().message());
    g.endpoints = std::move(list).value();
  }
  if (replica) {
    auto n = ParseU64(*replica, "--replica");
    if (!n.ok()) return Usage(n.status().message());
    const std::size_t count = std::max<std::size_t>(1, g.endpoints.size());
    if (*n >= count) {
      return Usage("--replica " + *replica + ": there " +
                   (count == 1 ? "is 1 replica (0)"
                               : "are " + std::to_string(count) + " replicas (0 to " +
                                     std::to_string(count - 1) + ")") +
                   " in --endpoint");
    }
    g.replica = *n;
    if (!g.endpoints.empty()) g.endpoint = g.endpoints[*n];
  }
  if (g.endpoints.size() > 1 && !g.replica && !kToEveryReplica.count(chosen->app->get_name())) {
    return Usage(chosen->app->get_name() +
                 " talks to one replica: with several endpoints, pick one with --replica N");
  }
  if (!chosen->state) return chosen->run(g, History());
  auto history = History::Load(g.state, *chosen->state);
  if (!history.ok()) return Fail(kExitFailed, history.status().message());
  InstallInterruptHandlers();
  return chosen->run(g, std::move(*history));
}

}  // namespace
}  // namespace tandem::ctl

int main(int argc, char** argv) {
  try {
    return tandem::ctl::Main(argc, argv);
  } catch (const std::exception& e) {
    return tandem::ctl::Fail(tandem::ctl::kExitFailed, e.what());
  }
}

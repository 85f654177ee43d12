// tandem-ctl: what every subcommand shares — the global options, how failures are reported (exit
// codes, stderr, the --json error line), and the Session: the controller library's session
// (controller/session.h) as the command line uses it, which prints what the library returns and
// turns it into exit codes. The logic — the history, replay, the live-index check, peeks, writes,
// read your writes — is the library's; nothing here decides anything a frontend would.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "controller/compaction.h"
#include "controller/history.h"
#include "controller/latest.h"
#include "controller/replica_set.h"
#include "controller/session.h"
#include "controller/write_ledger.h"
#include "ipc/client.h"
#include "tools/common/format.h"

namespace tandem::ctl {

namespace pb = ipc::pb;

// The controller library's words, as every subcommand uses them.
using controller::AnsweredWrite;
using controller::Canonical;
using controller::CollectionInfo;
using controller::History;
using controller::JoinIds;
using controller::Latest;
using controller::NotAnIndex;
using controller::RandomHex;
using controller::ReadAt;
using controller::ReplicaRefusal;
using controller::ReplicaSet;

// Exit codes (sysexits.h spirit, as the supervisor's).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;  // refused command, peek error, timeout
inline constexpr int kExitUsage = 64;  // bad usage, including an --endpoint that is no endpoint
inline constexpr int kExitUnavailable = 69;  // the replica could not be reached, or went away
inline constexpr int kExitSuperseded = 75;   // another controller took over this session

struct Globals {
  std::string endpoint = "tcp://127.0.0.1:2101";
  // --endpoint A,B,C: several replicas of one definition, in the order given (a replica's number
  // is its place here, from 0). Empty for one endpoint: then `endpoint` alone. --replica N
  // narrows every command to endpoints[N] (in `endpoint`).
  std::vector<std::string> endpoints;
  std::optional<std::size_t> replica;
  std::string state = "tandem-ctl.state";
  bool json = false;
  double timeout_s = 5;
  bool replace = false;  // a replaying command may drop indexes the history does not define
  // CURVE: the replica's public key file and this client's secret key file, both or neither (env
  // TANDEM_CURVE_SERVER_KEY, TANDEM_CURVE_CLIENT_KEY).
  std::string curve_server_key, curve_client_key;
};

// The CURVE keys of --curve-server-key and --curve-client-key (both or neither; none: unset).
// InvalidArgument naming what is wrong (a usage error).
Result<std::optional<ipc::CurveClientKeys>> LoadCurveKeys(const Globals& g);

// --json, process-wide: also for the failure paths that have no Globals at hand.
void SetJsonOutput(bool json);
bool JsonOutput();

// SIGINT and SIGTERM end waits (watch, frontiers, run, peeks) instead of the process.
void InstallInterruptHandlers();
bool Interrupted();

// Every failure goes through here: the reason on stderr, and with --json also
// {"error": reason, "exit_code": code} as the last line on stdout. Returns `code`.
int Fail(int code, const std::string& message);
// Bad usage: Fail(kExitUsage, …) pointing at --help.
int Usage(const std::string& message);
// "refused: WHAT: WHY", exit 1.
int Refused(const std::string& what, const std::string& why);
void Warn(const std::string& message);

// Command-line numbers; the error (InvalidArgument) names `what`.
Result<std::uint64_t> ParseU64(const std::string& text, const std::string& what);
Result<double> ParseSeconds(const std::string& text, const std::string& what);

// One session with the replica, or with every replica of --endpoint A,B,C (controller::Session:
// its header says what each mode may do). Warnings go to stderr as they come; ^C ends its waits.
class Session {
 public:
  using Mode = controller::Session::Mode;
  using PeekWait = controller::Session::PeekWait;

  Session(Globals g, History h);

  // Loads the CURVE keys and opens the session; an exit code (printed) on failure.
  std::optional<int> Open(Mode mode);
  std::size_t replay_refusals() const { return core_.replay_refusals(); }

  // Sends a new command and waits for its verdict; accepted state-changing commands (`record`)
  // are added to the history (and saved). Returns true when accepted; prints the refusals, as
  // refusals of `what` (the command as the user typed it).
  Result<bool> Submit(const pb::Command& command, bool record, const std::string& what,
                      const std::function<void(History&)>& also = {});

  Result<std::optional<pb::CommandError>> SendPeek(const pb::Command& peek,
                                                   ReadAt at = ReadAt::kProbe) {
    return core_.SendPeek(peek, at);
  }
  PeekWait AwaitPeek(const std::string& uuid, std::chrono::steady_clock::time_point deadline) {
    return core_.AwaitPeek(uuid, deadline);
  }
  void CancelPeek(const std::string& uuid) { core_.CancelPeek(uuid); }

  // controller::Session::ReadOwnWrites for `what`: the replicas left out are warned about; an
  // exit code (printed) when none may answer or the ledger is unreadable.
  std::optional<int> ReadOwnWrites(const std::string& id, const std::string& what);
  bool reads_restricted() const { return core_.reads_restricted(); }

  controller::Session::WriteWait Write(const pb::Command& write,
                                       std::chrono::steady_clock::time_point deadline) {
    return core_.Write(write, deadline);
  }
  Result<ReplicaSet::WriteResult> WriteToSet(const pb::WriteTable& write,
                                             std::chrono::steady_clock::time_point deadline) {
    return core_.WriteToSet(write, deadline);
  }
  void NoteWrites(const std::string& table, std::vector<AnsweredWrite> writes) {
    core_.NoteWrites(table, std::move(writes));
  }

  std::string Refusal(const pb::CommandError& e) const { return core_.Refusal(e); }
  std::string ExplainUnknown(const std::string& why,
                             std::optional<std::size_t> replica = std::nullopt) const {
    return core_.ExplainUnknown(why, replica);
  }

  // The exit for a session that could not go on: 69 unreachable or lost, 75 superseded, else 1.
  int Ended(const Status& s);
  bool over() const { return core_.over(); }
  std::string EndReason() const { return core_.EndReason(); }
  std::chrono::milliseconds timeout() const { return core_.timeout(); }

  // Several replicas (--endpoint A,B,C without --replica): set() instead of client().
  bool multi() const { return core_.multi(); }
  ReplicaSet& set() { return core_.set(); }
  std::size_t last_peek_replica() const { return core_.last_peek_replica(); }
  std::uint64_t last_peek_time() const { return core_.last_peek_time(); }
  std::string DescribeReplica(std::size_t i) const { return core_.DescribeReplica(i); }

  ipc::ControllerClient& client() { return core_.client(); }
  History& history() { return core_.history(); }
  const Globals& globals() const { return g_; }
  controller::Session& core() { return core_; }

 private:
  Globals g_;
  controller::Session core_;
};

// The latest time index `id` can be read at, for `what` (a command reading it): see
// controller::LatestTime. An exit code (printed) when the session ended or the time was refused.
std::optional<int> LatestTime(
    Session& s, const std::string& id, const std::string& what, Latest& latest,
    std::optional<std::chrono::steady_clock::time_point> wait_until = std::nullopt);
// The same for a command reading every index of `ids` (controller::LatestOfAll).
std::optional<int> LatestTime(
    Session& s, const std::vector<std::string>& ids, const std::string& what, Latest& latest,
    std::optional<std::chrono::steady_clock::time_point> wait_until = std::nullopt);

// {"ok": true, "command": what, fields…} with --json, else `human`.
void PrintOk(const std::string& what, const std::function<void(tools::JsonWriter&)>& fields,
             const std::string& human);

}  // namespace tandem::ctl

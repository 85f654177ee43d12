// tandem-ctl: what every subcommand shares — the global options, how failures are reported (exit
// codes, stderr, the --json error line) and the Session, one connection to the replica.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ipc/client.h"
#include "ipc/replica_set.h"
#include "tools/common/format.h"
#include "tools/ctl/ctl.h"
#include "tools/ctl/writes.h"

namespace tandem::ctl {

struct Globals {
  std::string endpoint = "tcp://127.0.0.1:2101";
  // --endpoint A,B,C (issue 18): several replicas of one definition, in the order given (a
  // replica's number is its place here, from 0). Empty for one endpoint: then `endpoint` alone, the
  // single-replica behaviour. --replica N narrows every command to endpoints[N] (in `endpoint`).
  std::vector<std::string> endpoints;
  std::optional<std::size_t> replica;
  std::string state = "tandem-ctl.state";
  bool json = false;
  double timeout_s = 5;
  bool replace = false;  // a replaying command may drop indexes the history does not define
  // CURVE (issue 12): the replica's public key file and this client's secret key file, both or
  // neither (env TANDEM_CURVE_SERVER_KEY, TANDEM_CURVE_CLIENT_KEY).
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
// What the replica's refusal says, for the command the user typed.
std::string ReplicaRefusal(const pb::CommandError& e);

// Command-line numbers; the error (InvalidArgument) names `what`.
Result<std::uint64_t> ParseU64(const std::string& text, const std::string& what);
Result<double> ParseSeconds(const std::string& text, const std::string& what);

// One session with the replica.
//
// Read commands (peek, frontiers, watch) open an observer session: they never replay, never send
// InitializationComplete and never supersede the controller, so whatever their state file says
// (or none), they cannot change the replica. Commands that change it open a controller session
// and replay the history first — but only once they know that the replica maintains no index the
// history does not define (HelloAccepted.live_indexes): reconciliation would drop those. Unless
// --replace, such a command is refused, having changed nothing: it asks as an observer first
// (whose Hello reaches no runtime), and only then says Hello as the controller.
//
// A write (`write`) opens a writer session (Hello{observer, writer}, issue 15): an observer that
// may also send WriteTable. It never replays either: a writer needs no history.
//
// So a replica that restarted knows none of the history's tables and indexes until a controller
// session replays it (`replay` does only that): an observer's or writer's "unknown table" or
// "unknown index" for an id the history defines is explained by Refusal (ExplainUnknown) when the
// replica maintains none of the history's indexes.
//
// With several endpoints (Globals::endpoints, no --replica) the session is an ipc::ReplicaSet
// (multi()): Open connects to every replica (a controller's replays to each, after the live-index
// check on each), Submit sends to every replica that is up and records a command that none
// refused, a write goes to every replica that is up (WriteToSet: each answers with its own time),
// and peeks go to all of them, the first answer winning (ipc/peek_race.h). A replica that is down
// is warned about, not waited for: it gets the history in the next command's replay.
//
// Read your writes (tools/ctl/writes.h). Every write's answers are recorded per replica endpoint
// beside the state file (NoteWrites, with one replica too), and a read through several replicas
// of an index over tables this state file wrote (ReadOwnWrites) is answered only by replicas that
// acknowledged every such write, each from the latest time it acknowledged one at.
class Session {
 public:
  enum class Mode { kObserve, kWrite, kControl };

  Session(Globals g, History h) : g_(std::move(g)), history_(std::move(h)) {}
  ~Session();

  // Returns an exit code on failure.
  std::optional<int> Open(Mode mode);
  // How many replayed commands a controller's Open saw refused (each warned about); with several
  // replicas, how many replicas refused a command of their replay.
  std::size_t replay_refusals() const { return replay_refusals_; }

  // Sends a new command and waits for its verdict. Accepted state-changing commands are added to
  // the history (and saved). Returns true when accepted; prints the refusals, as refusals of
  // `what` (the command as the user typed it).
  Result<bool> Submit(const pb::Command& command, bool record, const std::string& what,
                      const std::function<void(History&)>& also = {});

  // Sends a Peek. A controller's is checked at once (barrier); an observer may send no barrier,
  // so its refusal, if any, comes while AwaitPeek waits. Returns the refusal when known now.
  // With several replicas, `at` says how its time was chosen, for ReadOwnWrites' targets
  // (TargetsAt).
  Result<std::optional<pb::CommandError>> SendPeek(const pb::Command& peek,
                                                   ReadAt at = ReadAt::kProbe);

  // Waits until `deadline` for the answer to peek `uuid` — or, in an observer session, the
  // CommandError refusing it (one peek is in flight at a time). Neither: timed out, interrupted
  // or the session ended (lost(), superseded()).
  struct PeekWait {
    std::optional<pb::PeekResponse> answer;
    std::optional<pb::CommandError> refused;
  };
  PeekWait AwaitPeek(const std::string& uuid, std::chrono::steady_clock::time_point deadline);

  // Cancels peek `uuid` (its answer, Canceled or the result, is left unread).
  void CancelPeek(const std::string& uuid);

  // Several replicas: restricts this session's reads of index `id` to the replicas that
  // acknowledged every write this state file made to a table `id` reads (tools/ctl/writes.h),
  // each read from the latest time it acknowledged one at (ReadAt::kLatest) or only if that is
  // not after the time asked for (ReadAt::kExactly); the others are warned about. Call after
  // Open, before the first peek of `id`. With one replica, or no such write: nothing. Returns an
  // exit code (printed) when no replica of --endpoint may answer or the record is unreadable.
  std::optional<int> ReadOwnWrites(const std::string& id, const std::string& what);
  // Whether replica i may answer this session's reads (every replica unless ReadOwnWrites says).
  bool ReadsFrom(std::size_t i) const {
    return !readers_.restricted || readers_.floors.count(i) > 0;
  }
  // Whether ReadOwnWrites left some replicas out.
  bool reads_restricted() const { return readers_.restricted && !readers_.left_out.empty(); }

  // Several replicas: sends `write` to every replica that is up and waits until each has answered
  // or gone, or `deadline` passes or ^C (the others are unanswered then). Unavailable when no
  // replica is up.
  Result<ipc::ReplicaSet::WriteResult> WriteToSet(const pb::WriteTable& write,
                                                  std::chrono::steady_clock::time_point deadline);
  // Records writes to `table` with the replicas that acknowledged them (AnsweredWrite; sent_to is
  // filled in: every endpoint of --endpoint) beside the state file, for ReadOwnWrites. A failure
  // is warned about: reads through several replicas may then miss these writes.
  void NoteWrites(const std::string& table, std::vector<AnsweredWrite> writes);
  // Every endpoint of --endpoint (with --replica N too).
  std::set<std::string> endpoints() const;

  // What the replica's refusal says (ReplicaRefusal), with ExplainUnknown's hint.
  std::string Refusal(const pb::CommandError& e) const;
  // For a `why` from the replica saying "unknown table X" or "unknown index X" in an observer or
  // writer session: when the history defines X and the replica (with several: `replica`, by
  // default the one that answered the last peek) maintains none of the history's indexes, " — "
  // and why (this history was not replayed to it since it started, or another one was) and the
  // command to run; else empty. A controller session replayed the history first: empty.
  std::string ExplainUnknown(const std::string& why,
                             std::optional<std::size_t> replica = std::nullopt) const;

  // The exit for a session that could not go on: 69 unreachable or lost, 75 superseded, else 1.
  int Ended(const Status& s);
  // Over: the connection is lost or superseded; with several replicas, none is up.
  bool over() const { return set_ ? set_->ready() == 0 : client_->lost() || client_->superseded(); }
  std::string EndReason() const;
  std::chrono::milliseconds timeout() const {
    return std::chrono::milliseconds(static_cast<std::int64_t>(g_.timeout_s * 1000));
  }

  // Several replicas (--endpoint A,B,C without --replica): set() instead of client().
  bool multi() const { return g_.endpoints.size() > 1 && !g_.replica; }
  ipc::ReplicaSet& set() { return *set_; }
  // Which replica answered the last peek AwaitPeek returned (multi()).
  std::size_t last_peek_replica() const { return last_peek_replica_; }
  // The time that peek was read at: its timestamp, or with several replicas the answering
  // replica's (ReadAt::kLatest asks each from its own floor on).
  std::uint64_t last_peek_time() const { return last_peek_time_; }
  // "replica N (endpoint)" (multi()).
  std::string DescribeReplica(std::size_t i) const;

  ipc::ControllerClient& client() { return *client_; }
  History& history() { return history_; }
  const Globals& globals() const { return g_; }

 private:
  // Refuses (an exit code) when the replica maintains indexes the history does not define and
  // --replace was not given.
  std::optional<int> CheckLiveIndexes();
  // The live indexes of a replica that the history does not define (transient ones aside).
  std::vector<std::string> UnknownLiveIndexes(const pb::Status::HelloAccepted& accepted) const;
  // ReplicaSet::Options::admit of the controller set: a replica with such indexes is left out
  // (unless --replace), never replayed to.
  Status AdmitReplica(const pb::Status::HelloAccepted& accepted);
  std::optional<int> CheckLiveIndexes(const pb::Status::HelloAccepted& accepted,
                                      const std::string& endpoint);
  std::optional<int> OpenSet(Mode mode);
  ipc::ReplicaSet::Options SetOptions(bool observer) const;

  Globals g_;
  History history_;
  std::unique_ptr<ipc::ControllerClient> client_;
  std::unique_ptr<ipc::ReplicaSet> set_;
  std::optional<ipc::CurveClientKeys> curve_;
  std::size_t last_peek_replica_ = 0;
  std::uint64_t last_peek_time_ = 0;
  Readers readers_;  // ReadOwnWrites'
  bool warned_replace_ = false;
  Mode mode_ = Mode::kObserve;  // as opened
  std::size_t replay_refusals_ = 0;
};

// {"ok": true, "command": what, fields…} with --json, else `human`.
void PrintOk(const std::string& what, const std::function<void(tools::JsonWriter&)>& fields,
             const std::string& human);

}  // namespace tandem::ctl

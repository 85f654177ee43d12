// Session: one controller's session with its replica, or with several replicas of one definition
// (DESIGN §3, §13) — the history replayed, commands submitted and recorded, peeks and writes sent
// and their answers awaited. It prints nothing and never exits: every outcome is a value (Status,
// a refusal, a wait's result); what it has to say that does not stop it (a replica left out, a
// replayed command refused) goes to Options::warn. Its reasons are tandem-ctl's words (they name
// its commands and options where the user must act).
//
// Modes. Read sessions (kObserve: Hello{observer}) never replay, never send InitializationComplete
// and never supersede the controller, so whatever their history says (or none), they cannot
// change a replica. Writer sessions (kWrite: Hello{observer, writer}, DESIGN §9) may also send
// WriteTable; they never replay either: a writer needs no history. Controller sessions
// (kControl) replay the history first — but only once they know that the replica maintains no
// index the history does not define (HelloAccepted.live_indexes): reconciliation would drop
// those. Unless Options::replace, such a session is refused having changed nothing: it asks as an
// observer first (whose Hello reaches no runtime), and only then says Hello as the controller.
//
// So a replica that restarted knows none of the history's tables and indexes until a controller
// session replays it: an observer's or writer's "unknown table" or "unknown index" for an id the
// history defines is explained (ExplainUnknown) when the replica maintains none of the history's
// indexes.
//
// Several replicas (Options::endpoints with more than one, no Options::replica: multi()): the
// session is a ReplicaSet (controller/replica_set.h). Open connects to every replica (a
// controller's replays to each, after the live-index check on each), Submit sends to every
// replica that is up and records a command that none refused, a write goes to every replica that
// is up (WriteToSet: each answers with its own time), and peeks go to all of them, the first
// answer winning (controller/peek_race.h). A replica that is down is warned about, not waited
// for: it gets the history in the next controller session's replay.
//
// Read your writes (controller/write_ledger.h). Every write's answers are recorded per replica
// endpoint beside the state file (NoteWrites, with one replica too), and a read through several
// replicas of an index over tables this state file wrote (ReadOwnWrites) is answered only by
// replicas that acknowledged every such write, each from the latest time it acknowledged one at.
//
// Thread safety: none; one thread calls every method.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "base/time.h"
#include "controller/history.h"
#include "controller/replica_set.h"
#include "controller/write_ledger.h"
#include "ipc/client.h"
#include "ipc/curve_keys.h"

namespace tandem::controller {

// `bytes` random bytes in hex: the uuids of peeks, writes and subscribes, Hello nonces.
std::string RandomHex(int bytes);

// What the replica's refusal says: "the replica refused WHAT: WHY".
std::string ReplicaRefusal(const pb::CommandError& e);

// The live indexes of a replica (`accepted`, its HelloAccepted) that `h` does not define: what a
// replay of `h` would drop. Transient indexes are left out: a one-shot result that was cut short
// before its drop, which no history defines and whose drop loses nothing.
std::vector<std::string> UnknownLiveIndexes(const History& h,
                                            const pb::Status::HelloAccepted& accepted);

class Session {
 public:
  enum class Mode { kObserve, kWrite, kControl };

  struct Options {
    Options() {}
    // The replicas of one definition, in order: a replica's number is its place here. At least
    // one.
    std::vector<std::string> endpoints;
    // Talk to endpoints[*replica] alone (a single session, as with one endpoint).
    std::optional<std::size_t> replica;
    // How long a Hello, a barrier or an answer is waited for.
    std::chrono::duration<double> timeout{5.0};
    // A controller session may replace what a replica runs that the history does not define
    // (those indexes are dropped by the replay, with a warning); without it, it is refused.
    bool replace = false;
    std::optional<ipc::CurveClientKeys> curve;
    // Told what does not stop the session (unset: nothing is told).
    std::function<void(const std::string&)> warn;
    // Polled by the waits (AwaitPeek, Write, WriteToSet, and LatestTime's wait for a first
    // complete time): true ends a wait as if its deadline had passed (a user's interrupt).
    std::function<bool()> interrupted;
  };

  Session(Options options, History history)
      : options_(std::move(options)), history_(std::move(history)) {}
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // What Open uses; a caller may change it until then.
  Options& options() { return options_; }

  // Opens the session. InvalidArgument: an endpoint is no ZeroMQ endpoint (nothing was
  // connected). Unavailable: no replica could be reached, or the session ended while opening
  // (superseded(), lost()). FailedPrecondition: refused — the replica supports no observer
  // sessions, or (kControl) maintains indexes the history does not define and
  // Options::replace is off; nothing was changed. Any other error of the handshake or the replay
  // as the client returned it.
  Status Open(Mode mode);
  // How many replayed commands a controller's Open saw refused (each warned about); with several
  // replicas, how many replicas refused a command of their replay.
  std::size_t replay_refusals() const { return replay_refusals_; }

  // A refusal of a submitted command: by `replica` (several replicas), or by the one replica.
  struct Refused {
    std::optional<std::size_t> replica;
    pb::CommandError error;
  };
  // Sends `command` and waits for its verdict: the refusals, none when it was accepted. With
  // `record`, an accepted command joins the history (Record, with `also`). Several replicas:
  // Unavailable when no replica confirmed it in time; one that did not is warned about.
  Result<std::vector<Refused>> Submit(const pb::Command& command, bool record,
                                      const std::function<void(History&)>& also = {});
  // Adds an accepted `command` to the history, then `also`; a drop prunes the history and the
  // write ledger's dropped tables (compaction.h); saves it. A failure to save is warned about.
  void Record(const pb::Command& command, const std::function<void(History&)>& also = {});

  // Sends a Peek. A controller's is checked at once (barrier); an observer may send no barrier,
  // so its refusal, if any, comes while AwaitPeek waits. Returns the refusal when known now.
  // With several replicas, `at` says how its time was chosen, for ReadOwnWrites' targets
  // (TargetsAt).
  Result<std::optional<pb::CommandError>> SendPeek(const pb::Command& peek,
                                                   ReadAt at = ReadAt::kProbe);

  // Waits until `deadline` for the answer to peek `uuid` — or, in an observer session, the
  // CommandError refusing it (one peek is in flight at a time). Neither: timed out, interrupted
  // or the session ended (over()).
  struct PeekWait {
    std::optional<pb::PeekResponse> answer;
    std::optional<pb::CommandError> refused;
  };
  PeekWait AwaitPeek(const std::string& uuid, std::chrono::steady_clock::time_point deadline);

  // Cancels peek `uuid` (its answer, Canceled or the result, is left unread).
  void CancelPeek(const std::string& uuid);

  // Several replicas: restricts this session's reads of index `id` to the replicas that
  // acknowledged every write this state file made to a table `id` reads (write_ledger.h), each
  // read from the latest time it acknowledged one at (ReadAt::kLatest) or only if that is not
  // after the time asked for (ReadAt::kExactly); left_out() says which others and why. Call after
  // Open, before the first peek of `id`. With one replica, or no such write: nothing. An error
  // (its reason) when no replica may answer or the ledger is unreadable.
  Status ReadOwnWrites(const std::string& id);
  // The replicas ReadOwnWrites left out, and why.
  const std::map<std::size_t, std::string>& left_out() const { return readers_.left_out; }
  // Whether replica i may answer this session's reads (every replica unless ReadOwnWrites says).
  bool ReadsFrom(std::size_t i) const {
    return !readers_.restricted || readers_.floors.count(i) > 0;
  }
  // Whether ReadOwnWrites left some replicas out.
  bool reads_restricted() const { return readers_.restricted && !readers_.left_out.empty(); }

  // One replica: sends `write` (a Command holding a WriteTable) and waits until `deadline` for
  // its WriteResponse or the CommandError refusing it. Neither: timed out, interrupted or the
  // session ended (then the write may or may not have been applied).
  struct WriteWait {
    std::optional<pb::WriteResponse> response;
    std::optional<pb::CommandError> refused;
  };
  WriteWait Write(const pb::Command& write, std::chrono::steady_clock::time_point deadline);
  // Several replicas: sends `write` to every replica that is up and waits until each has answered
  // or gone, or `deadline` passes or the wait is interrupted (the others are unanswered then).
  // Unavailable when no replica is up.
  Result<ReplicaSet::WriteResult> WriteToSet(const pb::WriteTable& write,
                                             std::chrono::steady_clock::time_point deadline);
  // Records writes to `table` with the replicas that acknowledged them (AnsweredWrite; sent_to is
  // filled in: every endpoint) beside the state file, for ReadOwnWrites. With one endpoint only
  // once the state file has a ledger (it was used with several). A failure is warned about:
  // reads through several replicas may then miss these writes.
  void NoteWrites(const std::string& table, std::vector<AnsweredWrite> writes);
  // Every endpoint of Options::endpoints (with Options::replica too).
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

  // Over: the connection is lost or superseded; with several replicas, none is up.
  bool over() const;
  // One replica: another controller took over, or the connection was lost.
  bool superseded() const { return client_ && client_->superseded(); }
  bool lost() const { return client_ && client_->lost(); }
  // Why the session is over.
  std::string EndReason() const;
  std::chrono::milliseconds timeout() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(options_.timeout);
  }
  // Whether a wait should end now (Options::interrupted).
  bool Interrupted() const { return options_.interrupted && options_.interrupted(); }
  void Warn(const std::string& message) const {
    if (options_.warn) options_.warn(message);
  }

  // Several replicas (more than one endpoint, no Options::replica): set() instead of client().
  bool multi() const { return options_.endpoints.size() > 1 && !options_.replica; }
  ReplicaSet& set() { return *set_; }
  // The one replica's endpoint (not multi()).
  const std::string& endpoint() const {
    return options_.endpoints.at(options_.replica.value_or(0));
  }
  // Which replica answered the last peek AwaitPeek returned (multi()).
  std::size_t last_peek_replica() const { return last_peek_replica_; }
  // The time that peek was read at: its timestamp, or with several replicas the answering
  // replica's (ReadAt::kLatest asks each from its own floor on).
  std::uint64_t last_peek_time() const { return last_peek_time_; }
  // "replica N (endpoint)" (multi()).
  std::string DescribeReplica(std::size_t i) const;

  ipc::ControllerClient& client() { return *client_; }
  History& history() { return history_; }
  const History& history() const { return history_; }
  Mode mode() const { return mode_; }

 private:
  // Refused (FailedPrecondition) when the replica (`accepted`, named `replica`) maintains indexes
  // the history does not define and Options::replace is off; with it, warns once.
  Status CheckLiveIndexes(const pb::Status::HelloAccepted& accepted, const std::string& replica);
  // ReplicaSet::Options::admit of the controller set: a replica with such indexes is left out
  // (unless Options::replace), never replayed to.
  Status AdmitReplica(const pb::Status::HelloAccepted& accepted);
  Status OpenSet(Mode mode);
  ReplicaSet::Options SetOptions(bool observer) const;
  // Warns about every replica of the set that is not up: it is left out of this session.
  void WarnNotUp(bool control) const;

  Options options_;
  History history_;
  std::unique_ptr<ipc::ControllerClient> client_;
  std::unique_ptr<ReplicaSet> set_;
  std::size_t last_peek_replica_ = 0;
  std::uint64_t last_peek_time_ = 0;
  Readers readers_;  // ReadOwnWrites'
  bool warned_replace_ = false;
  Mode mode_ = Mode::kObserve;  // as opened
  std::size_t replay_refusals_ = 0;
};

}  // namespace tandem::controller

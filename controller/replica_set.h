// ReplicaSet: one controller in front of several replicas of the same definition (DESIGN §13) —
// Materialize's cluster replicas. One ControllerClient (ipc/client.h) per replica endpoint; every
// command goes to every replica; a peek goes to all of them (or to those chosen) and the first
// answer wins (controller/peek_race.h says what "first" means with errors); frontiers are kept per
// replica.
//
// Writes (writer sessions, Options::writer). A WriteTable goes to every ready replica, and each
// answers it by its own clock: a table's time is its replica's wall clock, so one write has one
// time per replica (WriteResult). A reader that must see a write therefore asks each replica from
// that replica's own time of it on (PeekTargets::at_least), and does not ask a replica that did
// not acknowledge it (PeekTargets::only): the set keeps no record of writes across sessions, its
// caller does (controller/write_ledger.h).
//
// A replica that is down or restarting never blocks the others:
//  * every send is non-blocking (ControllerClient::TrySend). A replica whose send queue is full
//    (ZeroMQ's high-water mark: it stopped reading) is dropped and reconnected like a lost one —
//    the replay below gives it everything it missed, so nothing needs queueing on our side;
//  * sessions watch their connection (socket monitor, ZMTP heartbeats: Options::client is forced
//    to end_on_disconnect), so a SIGKILLed or frozen supervisor is noticed, and every wait polls
//    all replicas at once and is bounded by the caller's deadline;
//  * a replica that is down is retried every Options::retry_interval with a new connection: a
//    supervisor that comes back at the same address is a new replica that never saw our Hello.
//
// Replay (controller sessions). The set keeps the controller's history: the commands that define
// the replicas' state (Submit(..., record = true) once every replica that answered accepted it).
// When a replica's Hello is accepted — at Connect or after a restart — the set sends it the
// history and InitializationComplete, then a barrier (an empty UpdateConfiguration); the replica
// is kReplaying until the barrier is answered, then kReady. Reconciliation in the supervisor does
// the rest: a replica that kept running keeps every dataflow re-sent unchanged; a restarted one
// builds them all. The replay is pipelined (no round trip per command): the supervisor handles one
// controller's commands in order. Commands submitted while a replica replays are sent to it after
// its replay (same stream, same order). Observer sessions (Options::observer) neither keep nor
// replay a history: they read.
//
// Subscribes (DESIGN §10). A subscribe is sent to one replica and lives on that replica's session
// only: its stream's times are that replica's (a table's time is its replica's clock), so it is
// never moved to another replica. Its SubscribeBatches, then exactly one last event — its
// SubscribeEnd, the replica's refusal of it, or the session ending (the replica went away, was
// reset or superseded) — are kept for TakeSubscribeEvents, in the order they arrived.
//
// A replica that maintains indexes the history does not define loses them at the replay
// (reconciliation): a caller that must not do that checks accepted(i).live_indexes() in an
// observer ReplicaSet first, as controller::Session does (controller/session.h).
//
// Thread safety: none. One thread calls every method (tandem-ctl, a test's loop, a bench driver).
//
// Invariants:
//  1. A replica's stream, from each accepted Hello on, is: the history at that moment,
//     InitializationComplete, then every later command in the order Submit was called.
//  2. A peek is decided once; CancelPeek goes to every replica still asked once it is decided.
//     A replica is asked at most at one time per peek (its PeekTargets time), and only if the
//     peek's targets allow it.
//  3. Frontiers of a replica are those of its current session (cleared when it reconnects: a
//     restarted replica's frontiers start again from its own reports).
//  4. A subscribe has exactly one last event (SubscribeEvent::last), after all its batches;
//     nothing of its uuid is reported after it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "controller/peek_race.h"
#include "ipc/client.h"

namespace tandem::controller {

namespace pb = ipc::pb;

// "A,B,C" → {A, B, C}. InvalidArgument for an empty list, an empty element ("A,,B", a trailing
// comma) or an endpoint given twice (two sessions to one replica would supersede each other).
Result<std::vector<std::string>> ParseEndpointList(const std::string& list);

class ReplicaSet {
 public:
  struct Options {
    // Per replica: timeout (how long a Hello may go unanswered before the connection is made
    // again), linger, goodbye, CURVE. end_on_disconnect is always on.
    ipc::ControllerClient::Options client;
    // Observer sessions (read-only: peeks; no history, no replay).
    bool observer = false;
    // With observer: writer sessions (Hello{observer, writer}), which may also send WriteTable.
    bool writer = false;
    // How long a replica that went down waits before a new connection is tried.
    std::chrono::milliseconds retry_interval{250};
    // Commands submitted but not yet answered are not queued here: ZeroMQ's queue per replica is
    // bounded by its high-water mark (send_hwm, messages); a replica that lets it fill is reset.
    int send_hwm = 10000;
    // Controller sessions: asked with each replica's HelloAccepted before the history is replayed
    // to it — at Connect and after every reconnect. An error leaves that replica down and not
    // retried (its last_error says why): nothing was replayed and no InitializationComplete sent,
    // so the replica keeps every dataflow it had (controller::Session refuses to drop indexes
    // its history does not define this way). Unset: every replica is replayed to.
    std::function<Status(const pb::Status::HelloAccepted&)> admit;
    // A descriptor polled beside the replicas (an eventfd, say; -1: none) by every wait of the
    // set: when it is readable, `on_wake` is called on the set's thread (it must make the
    // descriptor unreadable, e.g. read the eventfd) and the wait goes on. What lets a thread that
    // owns the set also serve requests other threads post, without polling on a timer.
    int wake_fd = -1;
    std::function<void()> on_wake;
  };

  enum class State {
    kConnecting,  // Hello sent, not answered yet
    kReplaying,   // Hello accepted; the history is being applied (controller sessions)
    kReady,       // serving: commands and peeks go to it
    kDown,        // lost (or refused the Hello); retried after retry_interval
  };
  static const char* StateName(State s);

  struct ReplicaStatus {
    std::string endpoint;
    State state = State::kDown;
    std::string replica_id;      // from its last HelloAccepted
    std::uint64_t sessions = 0;  // Hellos accepted so far (a restart or reconnect adds one)
    std::uint64_t replays = 0;   // replays completed (controller sessions)
    std::string last_error;      // why it went down last, or what its replay or a command refused
    std::chrono::steady_clock::time_point since;  // in this state since
  };

  // InvalidArgument for a bad endpoint list (ParseEndpointList's rules) or one that is no ZeroMQ
  // endpoint. Nothing is connected yet: Connect.
  static Result<std::unique_ptr<ReplicaSet>> Create(const std::vector<std::string>& endpoints,
                                                    const Options& options);
  ~ReplicaSet();
  ReplicaSet(const ReplicaSet&) = delete;
  ReplicaSet& operator=(const ReplicaSet&) = delete;

  // The history replayed to every replica whose Hello is accepted (controller sessions). Set it
  // before Connect.
  void SetHistory(std::vector<pb::Command> history) { history_ = std::move(history); }
  const std::vector<pb::Command>& history() const { return history_; }

  // Says Hello to every replica and waits until each is ready or down, or `deadline`. Unavailable
  // (naming each replica's reason) when none is ready then; the others go on in the background
  // (Poll) and join when they are.
  Status Connect(std::chrono::steady_clock::time_point deadline);

  // The verdict of one command sent to every ready (or replaying) replica.
  struct SubmitOutcome {
    std::vector<std::size_t> accepted;  // answered the barrier with no refusal
    std::vector<std::pair<std::size_t, pb::CommandError>> refused;
    std::vector<std::size_t> unconfirmed;  // sent, but no verdict before the deadline or went down
  };
  // Sends `command` to every replica that is ready or replaying, with a barrier, and waits (until
  // `deadline`) for each one's verdict. With `record`, a command that at least one replica
  // accepted and none refused joins the history (replicas down now get it in their replay).
  // Unavailable when no replica could be sent it.
  Result<SubmitOutcome> Submit(const pb::Command& command, bool record,
                               std::chrono::steady_clock::time_point deadline);

  // Sends `commands` to every replica that is ready or replaying, then a barrier of its own, and
  // returns without waiting: for commands whose verdict nobody waits for (a compaction's
  // AllowCompaction, a one-shot result's drop). A refusal of one becomes that replica's
  // last_error — never the verdict of a Submit (the barrier keeps them apart). Returns how many
  // replicas they were sent to.
  std::size_t Broadcast(const std::vector<pb::Command>& commands);

  // Which replicas may answer a peek, and at which time each is asked. The default: every
  // replica, at the peek's timestamp.
  struct PeekTargets {
    // Only these replicas are asked (unset: every replica).
    std::optional<std::set<std::size_t>> only;
    // A replica listed here is asked at this time when it is later than the peek's timestamp: its
    // answer then includes everything it had acknowledged up to that time (a write it answered
    // with that time, say). The rows of different replicas may so be of different times; the
    // result says which (PeekResult::timestamp).
    std::map<std::size_t, std::uint64_t> at_least;
  };

  // Sends `peek` (a Command holding a Peek with a uuid unique to this set) to every ready replica
  // that `targets` allows, each at its time, and returns at once. A replica that becomes ready
  // later is asked too while the peek is undecided (if `targets` allows it). InvalidArgument for a
  // target out of range or a uuid already in flight.
  Status StartPeek(const pb::Command& peek, PeekTargets targets);
  // To every replica, or only to replica `only`, at the peek's timestamp.
  Status StartPeek(const pb::Command& peek, std::optional<std::size_t> only = std::nullopt);

  struct PeekResult {
    std::string uuid;
    PeekRace::Outcome outcome = PeekRace::Outcome::kTimedOut;
    std::size_t replica = 0;                  // who answered (kRows, kError, kRefused)
    std::uint64_t timestamp = 0;              // the time that replica was asked at
    std::optional<pb::PeekResponse> answer;   // kRows, kError
    std::optional<pb::CommandError> refused;  // kRefused
    std::vector<std::string> other_errors;    // what other replicas said meanwhile
  };
  // Waits until peek `uuid` is decided or `deadline` passes (then: its first Error or refusal if
  // any, else kTimedOut — and CancelPeek to the replicas still asked). Other peeks decided
  // meanwhile are kept for Poll.
  PeekResult AwaitPeek(const std::string& uuid, std::chrono::steady_clock::time_point deadline);
  // Cancels peek `uuid` (CancelPeek to every replica still asked); its result is dropped.
  void CancelPeek(const std::string& uuid);
  // Handles what arrives within `limit` (handshakes, replays, frontiers, answers) and returns
  // the peeks decided by now (for a caller with many peeks in flight).
  std::vector<PeekResult> Poll(std::chrono::milliseconds limit);
  std::size_t peeks_in_flight() const { return races_.size(); }

  // What every replica a write was sent to answered, once each has answered or gone.
  struct WriteResult {
    std::string uuid;
    // Their WriteResponses: durable at that replica's time(), or its error() (not applied).
    std::map<std::size_t, pb::WriteResponse> answers;
    // The supervisor refused it (nothing was applied there).
    std::vector<std::pair<std::size_t, pb::CommandError>> refused;
    // Sent, but no answer: the replica went down, or the caller stopped waiting (ExpireWrite).
    // The write may or may not have been applied there: a retry with its uuid is applied once.
    std::vector<std::size_t> unanswered;
    // Not sent: the replica was not ready then.
    std::vector<std::size_t> not_sent;
  };
  // Sends WriteTable `write` (its uuid unique among the writes in flight) to every ready replica
  // and returns at once. Writer or controller sessions. Unavailable when no replica is ready,
  // InvalidArgument for a uuid in flight already.
  Status StartWrite(const pb::WriteTable& write);
  // The result of write `uuid` once every replica it was sent to has answered or gone (it is then
  // forgotten); nullopt while some are still to answer, or for a uuid not in flight. Poll (or any
  // other wait) takes the answers in.
  std::optional<WriteResult> TakeWrite(const std::string& uuid);
  // The result of write `uuid` now: the replicas that have not answered are unanswered. Their late
  // answers are dropped.
  WriteResult ExpireWrite(const std::string& uuid);
  std::size_t writes_in_flight() const { return writes_.size(); }

  // One event of a subscribe: a batch, or its one last event (an end, a refusal, or its replica's
  // session ended: `gone` says why).
  struct SubscribeEvent {
    SubscribeEvent() {}
    std::string uuid;
    std::size_t replica = 0;
    std::optional<pb::SubscribeBatch> batch;
    std::optional<pb::SubscribeEnd> end;
    std::optional<pb::CommandError> refused;
    std::string gone;
    bool last() const { return !batch.has_value(); }
  };
  // Sends `subscribe` (a Command holding a Subscribe with a uuid unique among the live ones of the
  // set and an as_of: the refusal is matched by its description) to replica `replica`, which must
  // be ready, and returns at once. InvalidArgument for no Subscribe, no as_of, a replica out of
  // range or a uuid live already; Unavailable when the replica is not ready (or its send failed).
  Status StartSubscribe(const pb::Command& subscribe, std::size_t replica);
  // Sends CancelSubscribe for live subscribe `uuid` (once): its last event still comes (END
  // CANCELED, or whatever ended it first). Nothing for a uuid not live.
  void CancelSubscribe(const std::string& uuid);
  // The events that arrived since the last call (any wait takes them in), oldest first.
  std::vector<SubscribeEvent> TakeSubscribeEvents();
  std::size_t subscribes_live() const { return subscribes_.size(); }

  std::size_t size() const { return replicas_.size(); }
  ReplicaStatus status(std::size_t i) const;
  // The last HelloAccepted of replica i (its live indexes, replica id).
  const pb::Status::HelloAccepted& accepted(std::size_t i) const;
  // The latest Frontiers each replica reported in its current session, by id.
  const std::map<std::string, pb::Frontiers>& frontiers(std::size_t i) const;
  // Replicas ready now.
  std::size_t ready() const;

 private:
  struct Replica;
  struct Race {
    PeekRace race;
    pb::Command peek;
    PeekTargets targets;
  };
  struct LiveSubscribe {
    LiveSubscribe() {}
    pb::Command command;  // the Subscribe, as sent (its description matches a refusal)
    std::size_t replica = 0;
    bool cancel_sent = false;
  };
  struct Write {
    pb::Command command;  // the WriteTable
    std::set<std::size_t> waiting;
    WriteResult result;
  };

  ReplicaSet(std::vector<std::string> endpoints, const Options& options);
  void StartSession(std::size_t i);
  void MarkDown(std::size_t i, const std::string& why);
  // Sends to replica i without blocking; a full queue resets it. False when not sent.
  bool SendTo(std::size_t i, const pb::Command& command);
  void OnAccepted(std::size_t i);
  void Handle(std::size_t i, pb::Response& r);
  void AskPending(std::size_t i);
  // Handles a subscribe's answer or refusal from replica i: true when `r` was one.
  bool HandleSubscribe(std::size_t i, pb::Response& r);
  // The time replica i is asked at in `race` (PeekTargets::at_least).
  static std::uint64_t AskedAt(const Race& race, std::size_t i);
  // The Peek as replica i is sent it (its time).
  static pb::Command PeekFor(const Race& race, std::size_t i);
  // Sends `race`'s peek to replica i if its targets allow it. False when that failed (the
  // replica is down now).
  bool AskPeek(std::size_t i, Race& race);
  void SettleDecided();
  // One round: reconnects what is due, polls every client for up to `limit`, handles input.
  void Pump(std::chrono::milliseconds limit);
  PeekResult ResultOf(const std::string& uuid, const Race& r) const;

  Options options_;
  std::vector<std::unique_ptr<Replica>> replicas_;
  std::vector<pb::Command> history_;
  std::map<std::string, Race> races_;                // undecided or not yet taken
  std::map<std::string, Write> writes_;              // in flight: sent, not yet taken
  std::deque<PeekResult> decided_;                   // decided and settled, for Poll
  std::map<std::string, LiveSubscribe> subscribes_;  // sent, last event not yet arrived
  std::deque<SubscribeEvent> subscribe_events_;      // for TakeSubscribeEvents
  // The Submit in progress: its command goes to a replica that starts replaying meanwhile too.
  const pb::Command* submitting_ = nullptr;
  std::uint64_t submit_seq_ = 0;  // the Submit in progress (barrier owner), 0 = none yet
  struct Verdict {
    bool done = false;  // its barrier was answered
    bool gone = false;  // its session ended first
    std::vector<pb::CommandError> errors;
  };
  std::map<std::size_t, Verdict> verdicts_;  // per replica the Submit was sent to
  std::uint64_t nonce_ = 0;
};

}  // namespace tandem::controller

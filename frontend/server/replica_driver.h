// ReplicaDriver: the frontend's controller of its replicas (DESIGN §3, §13, §15) — one thread that
// owns the controller library's ReplicaSet (controller/replica_set.h) and so every ZeroMQ socket
// of it (a ZeroMQ socket belongs to one thread), and serves requests that SQL threads post.
//
// What it does on its own:
//  * connects to every replica endpoint and keeps reconnecting; every replica whose Hello is
//    accepted — at start, after a restart of it, after a network loss — is replayed the history
//    (ReplayHistory::Commands(), then the compaction the driver allowed each live index) and
//    InitializationComplete: reconciliation (DESIGN §3) keeps what a running replica already has
//    and builds everything on a restarted one. Nobody has to do anything for that.
//  * a replica that maintains indexes the history does not define is replayed all the same (the
//    frontend is the controller of its replicas: reconciliation drops them) and warned about;
//  * tracks every replica's frontiers (ReplicaSet::frontiers) and keeps each live index compacted
//    to its latest readable time minus Options::history_window (AllowCompaction, never moving
//    back; DESIGN §15 "Compaction is the frontend's job");
//  * keeps a write ledger in memory (controller/write_ledger.h): which replica acknowledged which
//    write at which of its times, so a read through several replicas sees every write the
//    frontend acknowledged (read your writes).
//
// Requests (thread-safe; any thread). Each is answered exactly once through its callback, on the
// driver's thread — or at once on the caller's thread when it is refused before it is queued
// (the queue is full, the driver stopped). A callback must not block and must not call back into
// the driver synchronously with a blocking wait. A request waits for a replica (none connected,
// one restarting) and for the frontiers it needs until its deadline, then fails with
// Unavailable naming what it waited for.
//  * Submit: commands (DDL: CreateDataflow, drops) sent to every replica that is up, each with a
//    barrier (ReplicaSet::Submit); answered once every replica it was sent to gave its verdict or
//    went away. A refusal fails it (FailedPrecondition, the replica's reason); commands after a
//    refused one are not sent, and those before it stay applied (the caller drops them, or
//    submits one command per request). The set replays an accepted command to replicas that come
//    back at once; the catalog records it (ReplayHistory) before it answers its client. While a
//    Submit waits for its verdicts the driver serves nothing else (reads queue behind it).
//  * Peek: one index at one time — the first answer wins (controller/peek_race.h). A peek whose
//    replicas all went away before answering is asked again of the replicas that come back,
//    until its deadline.
//  * OneShot: a one-shot dataflow (controller/one_shot.h) built at the read time on every replica
//    that is up, its result peeked, then dropped.
//  * Write: a WriteTable to every replica that is up; answered with the latest time a replica
//    acknowledged it at (a session reads at or after it: read your writes).
//  * LatestReadable: the latest time every index named can be read at.
//  * Subscribe: a Subscribe (DESIGN §10) of one maintained index on one ready replica — the one
//    with the freshest frontier of it among those that may answer (read your writes: the write
//    ledger's readers) — at the read time (below). Its SubscribeBatches go to `on_batch` as they
//    arrive, on the driver's thread (it must not block: queue them), and its end answers `done`
//    once: the SubscribeEnd (CANCELED after Cancel; UP_TO, CLOSED, DROPPED, ERROR, TOO_SLOW …),
//    or an error — refused by the replica (FailedPrecondition), or Unavailable when no replica
//    could start it by its deadline or its replica went away. A subscribe is never moved to
//    another replica: a table's times are its replica's own clock (controller/replica_set.h), so
//    a stream continued elsewhere would not be exact. Only its start is bounded by the deadline;
//    once started it runs until it ends or is cancelled.
//
// Times. A read "at latest" is at the latest time all its inputs can be read at: per index, the
// freshest write frontier a replica that may answer reported, minus one; over several, the
// earliest of those. A session's floor (ReadTime::floor, its last write's time) raises it; a peek
// at a time a replica cannot read yet waits there (never answers early), so the floor is safe.
//
// Invariants: a request is answered once (a subscribe's batches all come before its answer); the
// ReplicaSet is touched by the driver's thread only; a compaction frontier the driver sent for an
// index never moves back.
#pragma once

#include <atomic>
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
#include <thread>
#include <variant>
#include <vector>

#include "base/status.h"
#include "base/thread_annotations.h"
#include "base/time.h"
#include "controller/replica_set.h"
#include "controller/write_ledger.h"
#include "frontend/server/replay_history.h"

namespace tandem::frontend {

using DriverClock = std::chrono::steady_clock;

// At which time a read is made.
struct ReadTime {
  ReadTime() {}
  enum class Kind {
    kLatest,   // the latest time every input can be read at, raised to `floor`
    kExactly,  // `at` (AS OF): fails when compacted, waits when not readable yet
  };
  Kind kind = Kind::kLatest;
  Time at = 0;
  Time floor = 0;  // kLatest: the session's last write's time (read your writes)
};

struct PeekRequest {
  PeekRequest() {}
  std::string index;
  std::vector<pb::Row> keys;  // empty: a full scan
  pb::MapFilterProject mfp;
  pb::Finishing finishing;
  ReadTime time;
  // The tables the index reads (directly or through the indexes it imports): a read through
  // several replicas is answered only by replicas that acknowledged every write to them.
  std::set<std::string> tables;
  DriverClock::time_point deadline;
};

struct OneShotRequest {
  OneShotRequest() {}
  std::string debug_name = "one-shot";
  // The indexes the plan reads: each IndexImport's id is a live index. The read time is chosen
  // over all of them.
  std::vector<pb::IndexImport> imports;
  pb::Plan plan;
  std::vector<std::uint32_t> key;  // the result index's key
  // Applied to the result's rows by its peek.
  pb::MapFilterProject mfp;
  pb::Finishing finishing;
  ReadTime time;
  std::set<std::string> tables;
  DriverClock::time_point deadline;
};

struct PeekAnswer {
  PeekAnswer() {}
  pb::PeekResponse response;  // holds Rows
  Time timestamp = 0;         // the time the answering replica read at
  std::size_t replica = 0;    // which one (its place in Options::endpoints)
};

struct SubmitRequest {
  SubmitRequest() {}
  std::vector<pb::Command> commands;
  // Whether the commands join the history replayed to replicas (DDL the catalog records). False
  // for the drops of a withdrawn change: sent to the replicas up now, replayed to none.
  bool record = true;
  DriverClock::time_point deadline;
};
struct SubmitAnswer {
  SubmitAnswer() {}
  std::set<std::size_t> accepted;     // replicas that accepted every command
  std::set<std::size_t> unconfirmed;  // sent, no verdict in time (they get it in a replay)
};

struct WriteRequest {
  WriteRequest() {}
  pb::WriteTable write;  // its uuid filled in when empty
  DriverClock::time_point deadline;
};
struct WriteAnswer {
  WriteAnswer() {}
  Time time = 0;                             // the latest time a replica acknowledged it at
  std::map<std::size_t, Time> acknowledged;  // per replica
};

struct SubscribeRequest {
  SubscribeRequest() {}
  std::string index;  // a maintained index
  // kLatest: the latest time the chosen replica can read the index at, raised to `floor` and to
  // that replica's time of the latest write to `tables` (read your writes). kExactly: `at`.
  ReadTime time;
  bool snapshot = true;  // first the index's contents at the read time
  std::optional<Time> up_to;
  std::set<std::string> tables;
  // Bounds the start (a replica, a readable time), not the stream.
  DriverClock::time_point deadline;
};
// A subscribe's batch, handed over on the driver's thread: must not block.
using OnSubscribeBatch = std::function<void(pb::SubscribeBatch)>;

struct LatestRequest {
  LatestRequest() {}
  std::vector<std::string> indexes;  // at least one
  DriverClock::time_point deadline;
};

template <typename T>
using Done = std::function<void(Result<T>)>;

class ReplicaDriver {
 public:
  struct Options {
    Options() {}
    std::vector<std::string> endpoints;  // controller endpoints of replicas of one definition
    std::optional<ipc::CurveClientKeys> curve;  // CURVE towards them (unset: none)
    std::chrono::milliseconds history_window{1000};
    // How often compaction is advanced.
    std::chrono::milliseconds compaction_interval{200};
    // Requests queued and not yet taken by the driver's thread; beyond it a request is refused
    // (ResourceExhausted) at once.
    std::size_t max_queued = 4096;
    // A replica's Hello timeout, and how soon a lost one is tried again.
    std::chrono::milliseconds hello_timeout{5000};
    std::chrono::milliseconds retry_interval{250};
    // Called on the driver's thread for every AllowCompaction of a live index it sends (index,
    // time; the times of one index only rise): where a dataflow importing that index may start
    // from now on. The catalog records it (Catalog::RecordCompaction) so that its ReadableFrom
    // knows; it must not block. The driver also adds its compactions to every replay itself, so
    // the catalog may record only some of them (one a second, say).
    std::function<void(const std::string& index, Time t)> on_compaction;
  };

  // InvalidArgument: no endpoint, one given twice, one that is no ZeroMQ endpoint. Nothing is
  // connected until Start. `history` must outlive the driver.
  static Result<std::unique_ptr<ReplicaDriver>> Create(Options options,
                                                       const ReplayHistory& history);
  ~ReplicaDriver();  // Stop
  ReplicaDriver(const ReplicaDriver&) = delete;
  ReplicaDriver& operator=(const ReplicaDriver&) = delete;

  // Starts the driver's thread (it connects to every replica).
  void Start();
  // Answers every request not answered yet with Unavailable, says Goodbye to the replicas and
  // joins the thread. Idempotent.
  void Stop();

  using RequestId = std::uint64_t;
  RequestId Submit(SubmitRequest request, Done<SubmitAnswer> done);
  RequestId Peek(PeekRequest request, Done<PeekAnswer> done);
  RequestId OneShot(OneShotRequest request, Done<PeekAnswer> done);
  RequestId Write(WriteRequest request, Done<WriteAnswer> done);
  RequestId LatestReadable(LatestRequest request, Done<Time> done);
  RequestId Subscribe(SubscribeRequest request, OnSubscribeBatch on_batch,
                      Done<pb::SubscribeEnd> done);
  // Ends request `id` soon: a read not decided yet is answered Unavailable("canceled") and its
  // peek cancelled on the replicas. A Submit or Write already sent is not undone: it is answered
  // with its outcome. A subscribe not started yet is answered Unavailable("canceled"); a started
  // one is sent CancelSubscribe and answered with its SubscribeEnd (CANCELED, or what ended it
  // first).
  void Cancel(RequestId id);

  // A snapshot of the replicas, for logs and tests (thread-safe; refreshed by the driver's loop).
  struct ReplicaView {
    ReplicaView() {}
    std::string endpoint;
    std::string state;  // ReplicaSet::StateName
    std::uint64_t sessions = 0;
    std::uint64_t replays = 0;
    std::string last_error;
  };
  std::vector<ReplicaView> Replicas() const;
  // Replicas ready now.
  std::size_t ready() const { return ready_.load(); }

 private:
  // A subscribe's request with its batch callback.
  struct SubscribeJob {
    SubscribeJob() {}
    SubscribeRequest request;
    OnSubscribeBatch on_batch;
  };
  using Request = std::variant<SubmitRequest, PeekRequest, OneShotRequest, WriteRequest,
                               LatestRequest, SubscribeJob>;
  using Callback = std::variant<Done<SubmitAnswer>, Done<PeekAnswer>, Done<WriteAnswer>, Done<Time>,
                                Done<pb::SubscribeEnd>>;
  struct Job {
    Job() {}
    RequestId id = 0;
    Request request;
    Callback done;
    DriverClock::time_point deadline;
    std::string waiting_for;  // why it has not started yet (its error at the deadline)
  };
  // A read sent to replicas, waiting to be decided.
  struct InFlightRead {
    InFlightRead() {}
    Job job;
    std::string result_index;  // a one-shot's transient result: dropped once decided
  };
  struct InFlightWrite {
    InFlightWrite() {}
    Job job;
  };
  // A write some replica may or may not have applied (it went away before answering, or was not
  // up): sent again, with its uuid, to a replica that misses it when it is ready again — applied
  // there at most once (WriteTable's idempotency) — so that the table is readable there again
  // (the ledger keeps reads away from a replica that misses a write). Only while nothing newer to
  // its table was sent to that replica: an upsert's order matters, and the resend then goes
  // first in the replica's stream. One that can no longer be resolved is forgotten (that replica
  // stays out of reads of its table, as the ledger says).
  struct UnresolvedWrite {
    UnresolvedWrite() {}
    pb::WriteTable write;
    DriverClock::time_point retry_deadline;  // while it is being sent again
    bool in_flight = false;
  };

  ReplicaDriver(Options options, const ReplayHistory& history);
  RequestId Post(Request request, Callback done, DriverClock::time_point deadline);
  static void Answer(Callback& done, const Status& error);

  // The driver's thread.
  void Run();
  void OnWake();
  void TakeQueue();
  // Tries to start `job`: true when it is done with (started or answered).
  bool TryStart(Job& job);
  bool StartSubmit(Job& job);
  bool StartPeek(Job& job);
  bool StartOneShot(Job& job);
  bool StartWrite(Job& job);
  bool AnswerLatest(Job& job);
  bool StartSubscribe(Job& job);
  void OnSubscribeEvent(controller::ReplicaSet::SubscribeEvent event);
  void OnPeekDecided(controller::ReplicaSet::PeekResult result);
  void CollectWrites();
  // Records that write `seq` to `table` was sent to every replica ready now.
  void NoteSent(const std::string& table, std::uint64_t seq);
  // Keeps write `seq` for resolving (some replica neither acknowledged nor refused it).
  void KeepUnresolved(std::uint64_t seq, const pb::WriteTable& write);
  // Sends unresolved writes again to ready replicas that miss them; collects their answers.
  void ResolveWrites();
  void ExpireReads();
  void Compact();
  // Re-reads the history when its version moved, and hands the set the replay: the history's
  // commands, then the compaction of each live index (also when only that moved).
  void RefreshHistory(bool compaction_moved);
  void PublishReplicas();
  // The latest time index `id` can be read at over the ready replicas `only` allows.
  std::optional<Time> LatestOf(const std::string& id,
                               const std::optional<std::set<std::size_t>>& only) const;
  // The read time of `time` over `indexes`, or nullopt (why in `why`) when a frontier is missing.
  std::optional<Time> ChooseTime(const ReadTime& time, const std::vector<std::string>& indexes,
                                 const controller::Readers& readers, std::string* why) const;
  controller::Readers ReadersOf(const std::set<std::string>& tables) const;

  const Options options_;
  const ReplayHistory& history_;
  std::thread thread_;
  int wake_fd_ = -1;

  mutable Mutex mu_;
  std::deque<Job> queue_ TANDEM_GUARDED_BY(mu_);
  std::set<RequestId> cancels_ TANDEM_GUARDED_BY(mu_);
  bool stopping_ TANDEM_GUARDED_BY(mu_) = false;
  bool started_ TANDEM_GUARDED_BY(mu_) = false;
  std::vector<ReplicaView> replicas_view_ TANDEM_GUARDED_BY(mu_);
  std::atomic<RequestId> next_id_{1};
  std::atomic<std::size_t> ready_{0};

  // The driver's thread only.
  std::unique_ptr<controller::ReplicaSet> set_;
  std::deque<Job> waiting_;                      // taken, not started
  std::map<std::string, InFlightRead> reads_;    // by peek uuid
  std::map<std::string, InFlightWrite> writes_;  // by write uuid
  // Writes in the order they were sent (a sequence number each), so that a table's writes are
  // sent again in their order.
  std::uint64_t next_write_seq_ = 1;
  std::map<std::string, std::uint64_t> write_seq_;       // uuid → its sequence number
  std::map<std::uint64_t, UnresolvedWrite> unresolved_;  // by sequence number
  std::size_t unresolved_bytes_ = 0;
  // table → per replica, the sequence number of the last write to it sent to that replica.
  std::map<std::string, std::vector<std::uint64_t>> sent_seq_;
  std::map<std::string, Job> subscribes_;  // started, not ended: by subscribe uuid
  controller::WriteLedger ledger_;
  std::map<std::string, Time> compacted_;      // index → the compaction frontier sent
  std::vector<pb::Command> history_commands_;  // ReplayHistory::Commands() at history_version_
  // Commands a Submit got accepted since the history's version last moved: the catalog records
  // them next; until then the driver replays them after history_commands_.
  std::vector<pb::Command> submitted_;
  std::vector<std::string> live_indexes_;
  std::uint64_t history_version_ = 0;
  bool history_loaded_ = false;
  DriverClock::time_point next_compaction_;
};

}  // namespace tandem::frontend

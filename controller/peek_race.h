// PeekRace: the first-answer rule of a peek sent to several replicas (DESIGN §13). One
// object per peek; ReplicaSet (controller/replica_set.h) feeds it what each replica said and asks
// it whether the peek is decided. Pure logic, no I/O: tests/unit/replica_set_test.cc pins it.
//
// Why the first rows are the answer. Replicas run the same definition (the controller's history)
// over the same deterministic inputs, so a peek at time t is answered with the same rows by every
// replica that can answer it at all. A replica that cannot answer yet does not answer wrongly: a
// peek at t >= upper waits until upper passes t (a restarted replica catching up makes the peek
// wait, never answer early). So the first Rows to arrive are the answer, and the others are
// cancelled.
//
// Why an Error does not win at once. Not every Error is about the data. A replica that lags or
// has just restarted can answer an Error that another replica would not: "unknown index" (a
// refusal while its controller replays, or before the replay reached the CreateDataflow), "as_of
// … is compacted" (a restarted replica starts its index at the compaction frontier the history
// allowed, while a long-running one still holds older times), or a dropped index. Taking such an
// Error while another replica is about to answer Rows would fail a peek that the replica set can
// answer. So an Error (or a refusal) is only kept: the peek is decided by the first Rows, or, once
// every replica it was sent to has answered or gone, by the first Error (errors in the data — a
// division by zero — are deterministic, so every replica answers them alike and that costs only
// the wait for the slowest replica). At the caller's deadline an Error already received is
// returned rather than a timeout. Canceled from a replica (it cancelled the peek itself, e.g. its
// session ended) counts as that replica gone.
//
// Invariants: a race is decided at most once; once decided, every replica still asked is listed
// for CancelPeek exactly once; a replica's second answer for the same uuid is ignored.
#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ipc/codec.h"

namespace tandem::controller {

namespace pb = ipc::pb;

class PeekRace {
 public:
  enum class Outcome {
    kRows,      // answer() holds Rows: from replica()
    kError,     // answer() holds the first Error (every asked replica answered or went away)
    kRefused,   // refused() holds the first refusal (CommandError), nothing better came
    kTimedOut,  // the deadline passed with no Rows, no Error and no refusal
    kCanceled,  // the caller cancelled it
    kNoReplica  // every replica it was sent to went away without answering
  };

  // A replica it is sent to (again, after a reconnect: a new attempt of that replica).
  void Asked(std::size_t replica);
  // What replica `replica` answered. Answers of replicas not asked are ignored.
  void Answered(std::size_t replica, const pb::PeekResponse& response);
  void Refused(std::size_t replica, const pb::CommandError& error);
  // Replica `replica`'s session ended before it answered.
  void Gone(std::size_t replica);
  // The caller's deadline passed: decides with what there is (an Error or refusal beats a
  // timeout). The caller's own cancel: Canceled.
  void Expire();
  void Cancel();

  bool decided() const { return outcome_.has_value(); }
  Outcome outcome() const { return *outcome_; }
  // The replica whose answer decided it (kRows, kError, kRefused).
  std::size_t replica() const { return replica_; }
  const std::optional<pb::PeekResponse>& answer() const { return answer_; }
  const std::optional<pb::CommandError>& refused() const { return refused_; }
  // What the other replicas said that did not decide the race ("replica 2: <error>").
  const std::vector<std::string>& other_errors() const { return other_errors_; }
  // Replicas still asked (no answer yet).
  const std::set<std::size_t>& waiting() const { return waiting_; }
  // Once decided: the replicas to send CancelPeek to (still waiting), each returned once.
  std::vector<std::size_t> TakeCancels();
  // Whether replica `replica` was ever asked (so its late answer belongs to this race).
  bool WasAsked(std::size_t replica) const { return asked_.count(replica) > 0; }

 private:
  // The first Error, else the first refusal, if any came: decides it so. Whether it did.
  bool DecideByErrorOrRefusal();
  void DecideIfNoneWaiting();

  std::set<std::size_t> asked_, waiting_;
  std::optional<Outcome> outcome_;
  std::size_t replica_ = 0;
  std::optional<pb::PeekResponse> answer_;  // Rows, or the first Error kept
  std::size_t error_replica_ = 0;
  std::optional<pb::PeekResponse> first_error_;
  std::optional<pb::CommandError> refused_, first_refusal_;
  std::size_t refusal_replica_ = 0;
  std::vector<std::string> other_errors_;
  bool cancels_taken_ = false;
};

}  // namespace tandem::controller

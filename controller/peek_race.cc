#include "controller/peek_race.h"

namespace tandem::controller {

void PeekRace::Asked(std::size_t replica) {
  if (decided()) return;
  asked_.insert(replica);
  waiting_.insert(replica);
}

void PeekRace::Answered(std::size_t replica, const pb::PeekResponse& response) {
  if (waiting_.erase(replica) == 0) return;  // not asked, or answered already
  if (decided()) return;
  if (response.has_rows()) {
    outcome_ = Outcome::kRows;
    replica_ = replica;
    answer_ = response;
    return;
  }
  if (response.has_error()) {
    other_errors_.push_back("replica " + std::to_string(replica) + ": " + response.error());
    if (!first_error_) {
      first_error_ = response;
      error_replica_ = replica;
    }
  }
  // Canceled (not by us: we cancel only once decided): that replica is out of this race.
  DecideIfNoneWaiting();
}

void PeekRace::Refused(std::size_t replica, const pb::CommandError& error) {
  if (waiting_.erase(replica) == 0) return;
  if (decided()) return;
  other_errors_.push_back("replica " + std::to_string(replica) + ": refused: " + error.why());
  if (!first_refusal_) {
    first_refusal_ = error;
    refusal_replica_ = replica;
  }
  DecideIfNoneWaiting();
}

void PeekRace::Gone(std::size_t replica) {
  if (waiting_.erase(replica) == 0) return;
  if (decided()) return;
  DecideIfNoneWaiting();
}

bool PeekRace::DecideByErrorOrRefusal() {
  if (first_error_) {
    outcome_ = Outcome::kError;
    replica_ = error_replica_;
    answer_ = first_error_;
  } else if (first_refusal_) {
    outcome_ = Outcome::kRefused;
    replica_ = refusal_replica_;
    refused_ = first_refusal_;
  }
  return first_error_ || first_refusal_;
}

void PeekRace::DecideIfNoneWaiting() {
  if (decided() || !waiting_.empty()) return;
  // Nobody answered anything: undecided, so a replica that comes back may still be asked; the
  // caller's deadline (Expire) ends it as kNoReplica then.
  (void)DecideByErrorOrRefusal();
}

void PeekRace::Expire() {
  if (decided() || DecideByErrorOrRefusal()) return;
  outcome_ = waiting_.empty() ? Outcome::kNoReplica : Outcome::kTimedOut;
}

void PeekRace::Cancel() {
  if (!decided()) outcome_ = Outcome::kCanceled;
}

std::vector<std::size_t> PeekRace::TakeCancels() {
  if (!decided() || cancels_taken_) return {};
  cancels_taken_ = true;
  return {waiting_.begin(), waiting_.end()};
}

}  // namespace tandem::controller

// SubscribeBatchQueue: where the replica driver's thread leaves a subscribe's batches and its end
// for the SQL thread that streams them to the client (sql_subscribe.h). The driver's callbacks
// must not block, so the queue never waits for the client: it is bounded in bytes instead, and
// overflows — the stream is then no longer exact, and the statement ends — rather than grow.
//
// Thread safety: Push and End on the driver's thread, Wake on any thread, Take and AwaitEnd on
// the SQL thread.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "base/status.h"
#include "base/thread_annotations.h"
#include "frontend/server/replica_driver.h"
#include "ipc/codec.h"

namespace tandem::frontend {

class SubscribeBatchQueue {
 public:
  explicit SubscribeBatchQueue(std::size_t max_bytes) : max_bytes_(max_bytes) {}

  // The driver's thread. A batch that would take the queued batches past max_bytes (what they
  // weigh parsed, SpaceUsedLong) is dropped with every batch queued, and the queue overflows —
  // unless the queue is empty: one batch is always taken, however large. Nothing is queued after
  // an overflow or the end.
  void Push(ipc::pb::SubscribeBatch batch) {
    const std::size_t bytes = batch.SpaceUsedLong();
    MutexLock lock(mu_);
    if (overflowed_ || end_) return;
    if (!batches_.empty() && bytes_ + bytes > max_bytes_) {
      overflowed_ = true;
      batches_.clear();
      bytes_ = 0;
    } else {
      batches_.emplace_back(std::move(batch), bytes);
      bytes_ += bytes;
    }
    cv_.NotifyAll();
  }
  void End(Result<ipc::pb::SubscribeEnd> end) {
    MutexLock lock(mu_);
    end_.emplace(std::move(end));
    cv_.NotifyAll();
  }
  // Any thread: a waiting Take returns now (a cancel).
  void Wake() {
    MutexLock lock(mu_);
    woken_ = true;
    cv_.NotifyAll();
  }

  struct Taken {
    Taken() {}
    std::vector<ipc::pb::SubscribeBatch> batches;
    // Set once every batch before it was taken.
    std::optional<Result<ipc::pb::SubscribeEnd>> end;
    bool overflowed = false;
  };
  // The SQL thread: what is there once something is, or at `until` (then perhaps nothing).
  Taken Take(DriverClock::time_point until) {
    MutexLock lock(mu_);
    while (batches_.empty() && !end_ && !overflowed_ && !woken_) {
      if (!cv_.WaitUntil(mu_, until) && DriverClock::now() >= until) break;
    }
    woken_ = false;
    Taken t;
    for (auto& [batch, bytes] : batches_) t.batches.push_back(std::move(batch));
    batches_.clear();
    bytes_ = 0;
    t.overflowed = overflowed_;
    if (end_) t.end = *end_;
    return t;
  }
  // Waits for the end until `until`: whether it came.
  bool AwaitEnd(DriverClock::time_point until) {
    MutexLock lock(mu_);
    while (!end_) {
      if (!cv_.WaitUntil(mu_, until) && DriverClock::now() >= until) break;
    }
    return end_.has_value();
  }

 private:
  const std::size_t max_bytes_;
  Mutex mu_;
  CondVar cv_;  // a batch, the end, an overflow or a wake
  std::deque<std::pair<ipc::pb::SubscribeBatch, std::size_t>> batches_ TANDEM_GUARDED_BY(mu_);
  std::size_t bytes_ TANDEM_GUARDED_BY(mu_) = 0;
  std::optional<Result<ipc::pb::SubscribeEnd>> end_ TANDEM_GUARDED_BY(mu_);
  bool overflowed_ TANDEM_GUARDED_BY(mu_) = false;
  bool woken_ TANDEM_GUARDED_BY(mu_) = false;
};

}  // namespace tandem::frontend

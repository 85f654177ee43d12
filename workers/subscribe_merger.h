// The subscribe merger (DESIGN §10): a runtime's N reading workers each stream their part of a
// subscribe (workers/subscriptions.h); the controller sees one stream per uuid — SubscribeBatch
// messages over contiguous intervals [lower, upper), where upper is the minimum of the workers'
// progress, then exactly one SubscribeEnd.
//
// Per subscribe it keeps the delivered frontier, each worker's progress and the updates a worker
// sent beyond the delivered frontier; when the minimum progress passes the delivered frontier, it
// sends every kept update below it, in time order, in batches of at most subscribe_batch_bytes of
// updates (all but the last with upper == lower), the last (possibly progress only) with the new
// upper. It ends a subscribe once: UP_TO when the delivered frontier reaches up_to, CLOSED at the
// empty frontier, CANCELED on CancelSubscribe, or the first worker's end (ERROR, DROPPED) — and
// then forgets it: anything later for that uuid is dropped. Workers' parts are consolidated and
// the workers hold disjoint keys, so a merged batch is consolidated too.
//
// Thread safety: none — owned by the runtime's command thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/time.h"
#include "ipc/codec.h"
#include "workers/subscriptions.h"

namespace tandem::workers {

class SubscribeMerger {
 public:
  using Send = std::function<void(const ipc::pb::Response&)>;
  // `forget(uuid)`: the subscribe ended here while workers may still serve it — tell every worker
  // to forget it (the runtime appends a CancelSubscribe to its command log).
  using Forget = std::function<void(const std::string& uuid)>;
  SubscribeMerger(std::uint32_t workers, Send send, Forget forget)
      : workers_(workers), send_(std::move(send)), forget_(std::move(forget)) {}

  // For the batches sent from now on.
  void SetBatchBytes(std::size_t bytes) { batch_bytes_ = bytes; }
  // A Subscribe every worker will serve a part of (as_of set). A uuid still live is replaced
  // (the supervisor never sends one twice).
  void Expect(const ipc::pb::Subscribe& subscribe);
  bool Expects(const std::string& uuid) const { return subs_.count(uuid) > 0; }
  // CancelSubscribe: a live subscribe ends CANCELED now (true: the workers must forget it); an
  // unknown (ended) one changes nothing.
  bool Cancel(const std::string& uuid);
  // A worker's part.
  void OnPart(std::uint32_t worker, ipc::pb::SubscribeBatch part);
  void OnEnd(const ipc::pb::SubscribeEnd& end);
  std::size_t live() const { return subs_.size(); }

 private:
  struct Merge {
    Time delivered = 0;  // every update at a time < delivered has been sent
    std::optional<Time> up_to;
    std::vector<std::uint64_t> progress;  // per worker, raw frontiers (UINT64_MAX: closed)
    std::vector<bool> heard;              // per worker: sent a part (its index was readable)
    std::uint32_t heard_from = 0;
    std::vector<ipc::pb::SubscribeUpdate> pending;  // beyond `delivered`, from any worker
  };
  // Sends what the minimum progress completes, and the end it reaches (true then).
  bool Deliver(const std::string& uuid, Merge& m);
  // Sends every kept update below `upper` (> delivered) and the progress to it.
  void SendUpTo(const std::string& uuid, Merge& m, std::uint64_t upper);

  const std::uint32_t workers_;
  const Send send_;
  const Forget forget_;
  std::size_t batch_bytes_ = kDefaultSubscribeBatchBytes;
  std::map<std::string, Merge> subs_;  // by uuid
};

}  // namespace tandem::workers

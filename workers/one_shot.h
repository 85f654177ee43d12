// One-shot dataflows (DESIGN §8, class ONE_SHOT_READ): computed once, at as_of, by the reading
// side of a runtime (interactive; solo's own), from index imports only, into transient indexes
// that live in this process's memory until the controller drops them.
//
// Who does what:
//  * Reading worker i (ReadingSide) accepts the dataflow, holds each import at as_of in row i
//    (I1 for imports), waits until every import is readable at as_of there, takes the snapshots
//    and Submits their batches — it keeps the snapshots (so the batches stay) until its part of
//    the result is back, then installs it and serves peeks from it.
//  * Compute thread i of the OneShotPool computes worker i's part: the plan's graph over the
//    imported batches, read in place (workers/sources/index_import.h), with the same operators as
//    a Maintained dataflow, in one tick [0, as_of + 1). Stateful operators exchange rows between
//    the pool's N compute threads (their own barrier Exchange), so worker i's part of each
//    transient index holds exactly the keys with hash % N == i, as any index's part does.
//  So a reading worker never waits for another worker or for a computation: it polls. Maintenance
//  never waits for any of it.
//
// Order: a job becomes ready when the last of the N reading workers submits it; compute threads
// take ready jobs in that one order, so their exchanges always pair up. A job withdrawn (dropped)
// before it is ready never becomes ready; once ready, every compute thread computes it.
//
// Thread safety: Submit/Withdraw/TakeResult from reading worker threads, compute on the pool's
// threads; one mutex guards the job lists. A job's inputs are written before it is ready and only
// read after; results are written by compute thread i and read by worker i after TakeResult.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/thread_annotations.h"
#include "base/time.h"
#include "ipc/codec.h"
#include "shm/batch.h"
#include "workers/exchange.h"
#include "workers/operators/memory_budget.h"

namespace tandem::workers {

// Worker i's part of one transient index: its batches (in this process's memory), or why it could
// not be built (a part beyond the batch format's limits): peeks of the index answer that Error.
struct TransientPart {
  std::vector<shm::LocalBatch> batches;
  std::optional<std::string> error;
  std::vector<shm::BatchView> views() const {
    std::vector<shm::BatchView> v;
    for (const auto& b : batches) v.push_back(b.view());
    return v;
  }
};

struct OneShotJob {
  OneShotJob(std::uint64_t seq, ipc::pb::DataflowDescription desc, std::uint32_t workers,
             std::uint64_t max_memory)
      : seq(seq), desc(std::move(desc)), budget(max_memory), inputs(workers), results(workers) {}
  const std::uint64_t seq;
  const ipc::pb::DataflowDescription desc;
  // What its operators may make, charged by every compute thread (max_one_shot_memory).
  MemoryBudget budget;
  // [worker][index import]: the imported batches worker i read in row i at as_of.
  std::vector<std::vector<std::vector<shm::BatchView>>> inputs;
  // [worker]: by export id. Set by compute thread i.
  std::vector<std::map<std::string, TransientPart>> results;
};

class OneShotPool {
 public:
  // `wake(i)` tells reading worker i that a result is ready (it must not block). `max_memory`:
  // each one-shot's budget (max_one_shot_memory, workers/operators/memory_budget.h): one that
  // needs more answers every peek of its exports with MemoryBudget::Why.
  OneShotPool(std::uint32_t workers, std::function<void(std::uint32_t)> wake,
              std::uint64_t max_memory = kDefaultMaxOneShotMemory);
  ~OneShotPool();  // stops and joins the compute threads
  OneShotPool(const OneShotPool&) = delete;
  OneShotPool& operator=(const OneShotPool&) = delete;

  // Worker `me` hands in its imports' batches for `job` (which every worker creates from the same
  // command: the first Submit for a seq registers it). The batches must stay valid until
  // TakeResult returns its part.
  void Submit(std::uint32_t me, std::uint64_t seq, const ipc::pb::DataflowDescription& desc,
              std::vector<std::vector<shm::BatchView>> batches) TANDEM_EXCLUDES(mu_);
  // Worker `me` drops `seq`. True when nothing of it is or will be computed with `me`'s batches
  // any more (never ready, or `me`'s part done): then they may go. False while a compute thread
  // may still read them: call again (TakeResult's part is then discarded).
  bool Withdraw(std::uint32_t me, std::uint64_t seq) TANDEM_EXCLUDES(mu_);
  // Worker `me`'s part of `seq`'s result, once computed.
  std::optional<std::map<std::string, TransientPart>> TakeResult(std::uint32_t me,
                                                                 std::uint64_t seq)
      TANDEM_EXCLUDES(mu_);

 private:
  struct Entry {
    std::shared_ptr<OneShotJob> job;
    std::uint32_t submitted = 0;
    bool withdrawn = false;  // by some worker before it was ready: it never will be
    bool ready = false;
    std::vector<bool> done;   // [worker] part computed
    std::vector<bool> taken;  // [worker] part taken or withdrawn
  };
  void ComputeMain(std::uint32_t me);
  std::map<std::string, TransientPart> Compute(OneShotJob& job, std::uint32_t me);
  Entry& EntryFor(std::uint64_t seq) TANDEM_REQUIRES(mu_);
  // Erases `seq` once every worker has taken or withdrawn its part.
  void Forget(std::uint64_t seq) TANDEM_REQUIRES(mu_);

  const std::uint32_t workers_;
  std::function<void(std::uint32_t)> wake_;
  const std::uint64_t max_memory_;
  Exchange exchange_;  // between the compute threads only
  Mutex mu_;
  CondVar cv_;
  std::map<std::uint64_t, Entry> entries_ TANDEM_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<OneShotJob>> ready_ TANDEM_GUARDED_BY(mu_);  // in the one order
  std::uint64_t ready_base_ TANDEM_GUARDED_BY(mu_) = 0;     // number of ready_.front()
  std::vector<std::uint64_t> next_ TANDEM_GUARDED_BY(mu_);  // per compute thread: next ready job
  bool stop_ TANDEM_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace tandem::workers

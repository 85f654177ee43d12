#include "workers/one_shot.h"

#include <spdlog/spdlog.h>

#include <pthread.h>

#include "base/check.h"
#include "workers/operators/index_export.h"
#include "workers/plan_graph.h"
#include "workers/sources/index_import.h"

namespace tandem::workers {

namespace pb = ipc::pb;

namespace {

// A one-shot import: the batches of the snapshot the reading worker took at as_of (and holds).
class SnapshotImport final : public ImportedIndex {
 public:
  explicit SnapshotImport(std::vector<shm::BatchView> batches) : batches_(std::move(batches)) {}
  std::vector<shm::BatchView> Batches() override { return batches_; }
  void Read(Frontier) override {}  // the reading worker holds it at as_of until the drop

 private:
  std::vector<shm::BatchView> batches_;
};

}  // namespace

OneShotPool::OneShotPool(std::uint32_t workers, std::function<void(std::uint32_t)> wake,
                         std::uint64_t max_memory)
    : workers_(workers), wake_(std::move(wake)), max_memory_(max_memory), exchange_(workers) {
  {
    MutexLock lock(mu_);
    next_.assign(workers, 0);
  }
  for (std::uint32_t i = 0; i < workers; ++i) {
    threads_.emplace_back([this, i] {
      const std::string name = "oneshot:" + std::to_string(i);
      pthread_setname_np(pthread_self(), name.c_str());
      ComputeMain(i);
    });
  }
}

OneShotPool::~OneShotPool() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
  for (auto& t : threads_) t.join();
}

OneShotPool::Entry& OneShotPool::EntryFor(std::uint64_t seq) {
  Entry& e = entries_[seq];
  if (e.done.empty()) {
    e.done.assign(workers_, false);
    e.taken.assign(workers_, false);
  }
  return e;
}

void OneShotPool::Submit(std::uint32_t me, std::uint64_t seq, const pb::DataflowDescription& desc,
                         std::vector<std::vector<shm::BatchView>> batches) {
  bool ready = false;
  {
    MutexLock lock(mu_);
    Entry& e = EntryFor(seq);
    if (!e.job) e.job = std::make_shared<OneShotJob>(seq, desc, workers_, max_memory_);
    e.job->inputs[me] = std::move(batches);
    if (++e.submitted == workers_ && !e.withdrawn) {
      e.ready = ready = true;
      ready_.push_back(e.job);
    }
  }
  if (ready) cv_.NotifyAll();
}

bool OneShotPool::Withdraw(std::uint32_t me, std::uint64_t seq) {
  MutexLock lock(mu_);
  Entry& e = EntryFor(seq);
  if (e.ready && !e.done[me]) return false;  // compute thread `me` reads (or will) its batches
  // Not ready: it never will be now (a worker that has not submitted drops it before it could).
  if (!e.ready) e.withdrawn = true;
  e.taken[me] = true;
  Forget(seq);
  return true;
}

std::optional<std::map<std::string, TransientPart>> OneShotPool::TakeResult(std::uint32_t me,
                                                                            std::uint64_t seq) {
  MutexLock lock(mu_);
  auto it = entries_.find(seq);
  if (it == entries_.end() || !it->second.done[me] || it->second.taken[me]) return std::nullopt;
  it->second.taken[me] = true;
  auto out = std::move(it->second.job->results[me]);
  Forget(seq);
  return out;
}

void OneShotPool::Forget(std::uint64_t seq) {
  auto it = entries_.find(seq);
  const Entry& e = it->second;
  for (bool t : e.taken) {
    if (!t) return;
  }
  entries_.erase(it);
}

void OneShotPool::ComputeMain(std::uint32_t me) {
  for (;;) {
    std::shared_ptr<OneShotJob> job;
    {
      MutexLock lock(mu_);
      while (!stop_ && next_[me] >= ready_base_ + ready_.size()) {
        cv_.WaitUntil(mu_, std::chrono::steady_clock::now() + std::chrono::seconds(1));
      }
      if (stop_) return;
      job = ready_[next_[me]++ - ready_base_];
      // Every compute thread has taken the oldest ready jobs: they need not be kept.
      const std::uint64_t lowest = *std::min_element(next_.begin(), next_.end());
      while (ready_base_ < lowest) {
        ready_.erase(ready_.begin());
        ++ready_base_;
      }
    }
    auto result = Compute(*job, me);
    {
      MutexLock lock(mu_);
      job->results[me] = std::move(result);
      entries_.at(job->seq).done[me] = true;
    }
    wake_(me);
  }
}

std::map<std::string, TransientPart> OneShotPool::Compute(OneShotJob& job, std::uint32_t me) {
  const pb::DataflowDescription& desc = job.desc;
  const Time as_of = desc.as_of().elements(0);
  const Frontier until = Frontier::At(as_of + 1);
  std::vector<PlanInput> inputs;
  for (int k = 0; k < desc.index_imports_size(); ++k) {
    const pb::IndexImport& imp = desc.index_imports(k);
    auto index = std::make_unique<SnapshotImport>(job.inputs[me][k]);
    ImportedIndex* raw = index.get();
    std::vector<std::uint32_t> key(imp.key().begin(), imp.key().end());
    inputs.push_back({{imp.id(), imp.on()},
                      std::make_unique<ImportNode>(std::move(index), key, as_of, until),
                      key,
                      raw});
  }
  PlanGraph graph = BuildPlanGraph(desc, std::move(inputs));
  if (me == 0) {  // one-shots are many: what their joins reused is a debug line
    for (const std::string& a : graph.arrangements) {
      spdlog::debug("one-shot {}: {}", desc.debug_name(), a);
    }
  }
  const TickCtx ctx{kMinTime, until, 1, me, &exchange_, &job.budget};
  std::map<std::string, TransientPart> out;
  for (auto& [node, e] : graph.exports) {
    const std::vector<std::uint32_t> key(e->key().begin(), e->key().end());
    shm::UpdateBuffer updates = ArrangeByKey(ctx, node->Pull(ctx), key, node->partitioning());
    TransientPart& part = out[e->id()];
    if (job.budget.exceeded()) continue;  // answered below: nothing of it is kept
    auto batch = shm::BuildLocalBatch(std::move(updates), Frontier::At(as_of));
    if (!batch.ok()) {
      part.error = e->id() + ": worker " + std::to_string(me) +
                   "'s part of the result cannot be kept: " + batch.status().message();
    } else if (batch->has_value()) {
      part.batches.push_back(std::move(**batch));
    }
  }
  // One verdict on every worker: once all have charged all they will (an exchange is a barrier),
  // the budget's total is final.
  exchange_.Shuffle(me, {}, {}, true);
  if (job.budget.exceeded()) {
    if (me == 0) {
      spdlog::warn("one-shot {}: stopped at {} bytes of rows, past {} ({} bytes)",
                   desc.debug_name(), job.budget.used(), kMaxOneShotMemory, job.budget.limit());
    }
    for (auto& [id, part] : out) part = TransientPart{{}, job.budget.Why()};
  }
  return out;
}

}  // namespace tandem::workers

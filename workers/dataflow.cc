#include "workers/dataflow.h"

#include <algorithm>
#include <functional>
#include <set>

#include <spdlog/spdlog.h>

#include "base/check.h"
#include "workers/operators/index_export.h"
#include "workers/row_room.h"
#include "workers/sources/index_import.h"

namespace tandem::workers {

namespace pb = ipc::pb;
using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------------------------
// The shared part

Clock::time_point DataflowShared::Prepare(std::uint32_t workers, Time max_ticks,
                                          Clock::time_point now) {
  frontier = target;
  if (stalled.exchange(false)) {
    if (retry_pending) {  // the last try found no room either: back off
      stall_backoff = std::clamp<Clock::duration>(2 * stall_backoff, std::chrono::milliseconds(10),
                                                  std::chrono::seconds(1));
      retry_at = now + stall_backoff;
    }
    retry_pending = now >= retry_at;
    return retry_pending ? now : retry_at;
  }
  stall_backoff = {};
  retry_pending = true;
  AdvanceCtx ctx{.now = now,
                 .max_ticks = max_ticks,
                 .processed = frontier,
                 .as_of = as_of,
                 .until = until,
                 .workers = workers,
                 .next = now + std::chrono::milliseconds(100)};
  Frontier hi = Frontier::Empty();
  for (auto& s : sources) {
    s->Advance(ctx);
    hi = Min(hi, s->upper);
  }
  budget_limited = ctx.budget_limited;
  hi = Min(hi, until);
  // Nothing is emitted before as_of: the first tick ends beyond it.
  if (!hi.empty() && hi.time() <= as_of) hi = frontier;
  target = Max(frontier, hi);
  return ctx.next;
}

// ---------------------------------------------------------------------------------------------
// DataflowInstance

namespace {

// A Maintained importer's view of an index its own runtime publishes (DESIGN §8): worker i reads
// the batches it publishes in row i, on the same thread, and holds the index at its progress.
class PublishedImport final : public ImportedIndex {
 public:
  PublishedImport(shm::Publisher* publisher, shm::PublishedRef ref, Time as_of, std::string id)
      : publisher_(publisher), ref_(ref), held_(as_of) {
    // Validation refuses an import below the index's as_of and the frontier this controller
    // allowed; one an earlier controller compacted further (the arrangement outlived a
    // reconnect) is an error of the dataflow, never a wrong answer.
    if (!publisher_->since(ref_).LessEqual(as_of)) {
      error_ = "index import " + id + ": as_of " + std::to_string(as_of) + " is compacted (" + id +
               "'s since is " + publisher_->since(ref_).ToString() +
               "): the dataflow cannot be computed exactly";
      return;
    }
    const Status s = publisher_->HoldForImport(ref_, held_);
    TANDEM_CHECK(s.ok(), ("holding an imported index failed: " + s.ToString()).c_str());
  }
  ~PublishedImport() override {
    // The slot may be gone already (a reconciliation dropped the exporter first): nothing to do.
    if (!error_) (void)publisher_->ReleaseImportHold(ref_, held_);
  }
  std::vector<shm::BatchView> Batches() override { return publisher_->Batches(ref_); }
  const std::optional<std::string>& error() const override { return error_; }
  void Read(Frontier hi) override {
    if (error_ || hi.empty() || hi.time() == 0 || hi.time() - 1 <= held_) return;
    const Status s = publisher_->MoveImportHold(ref_, held_, hi.time() - 1);
    TANDEM_CHECK(s.ok(), ("moving an import hold failed: " + s.ToString()).c_str());
    held_ = hi.time() - 1;
  }

 private:
  shm::Publisher* publisher_;
  shm::PublishedRef ref_;
  Time held_;
  std::optional<std::string> error_;
};

}  // namespace

DataflowInstance::DataflowInstance(DataflowShared* shared, std::uint32_t me, Exchange* exchange,
                                   shm::Publisher* publisher,
                                   const std::map<std::string, shm::PublishedRef>& imports)
    : shared_(shared), me_(me), exchange_(exchange), publisher_(publisher) {
  const pb::DataflowDescription& desc = shared->desc;
  std::vector<PlanInput> inputs;
  for (int i = 0; i < desc.source_imports_size(); ++i) {
    inputs.push_back({{shared->sources[i]->id},
                      shared->sources[i]->MakeNode(me, shared->as_of, shared->until),
                      {}});
  }
  for (const pb::IndexImport& imp : desc.index_imports()) {
    auto index = std::make_unique<PublishedImport>(publisher_, imports.at(imp.id()), shared->as_of,
                                                   imp.id());
    ImportedIndex* raw = index.get();
    imports_.push_back(raw);
    std::vector<std::uint32_t> key(imp.key().begin(), imp.key().end());
    inputs.push_back(
        {{imp.id(), imp.on()},
         std::make_unique<ImportNode>(std::move(index), key, shared->as_of, shared->until),
         key,
         raw});
  }
  graph_ = BuildPlanGraph(desc, std::move(inputs));
  // What each join arranged itself and what it read in place: the same plan on every worker, so
  // worker 0 alone logs it.
  if (me == 0) {
    for (const std::string& a : graph_.arrangements) {
      spdlog::info("dataflow {}: {}", desc.debug_name(), a);
    }
  }
  for (const auto& [node, ep] : graph_.exports) {
    const pb::IndexExport& e = *ep;
    auto id = GlobalId::Parse(e.id());
    TANDEM_CHECK(id.has_value(), "an index id that does not parse passed validation");
    const shm::SlotKey key{*id, shared->as_of};
    auto ref = WaitForRoomInRow([&] { return publisher_->BindSlot(key); },
                                [&] { publisher_->Maintain(); });  // frees what both let go of
    TANDEM_CHECK(ref.ok(),
                 ("could not publish index " + e.id() + ": " + ref.status().ToString()).c_str());
    exports_[e.id()] = *ref;
  }
}

DataflowInstance::~DataflowInstance() = default;

void DataflowInstance::AppendToIndex(const std::string& id, Pending pending) {
  // A retry: Step moved the updates out of pending_, whose entry is still there.
  const bool retry = pending_.count(id) > 0;
  const std::size_t count = pending.updates.size();
  const Status s =
      publisher_->AppendOrKeep(exports_.at(id), &pending.updates, pending.upper, retry);
  if (s.ok()) {
    if (retry) {
      pending_.erase(id);
      spdlog::info(
          "worker {}: index {}: published {} updates that waited {} ms for room in the "
          "segment: resumed",
          me_, id, count,
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - pending.since)
              .count());
    }
    return;
  }
  // Anything but a full segment is our own bug (times and uppers come from the tick).
  TANDEM_CHECK(s.code() == StatusCode::kResourceExhausted,
               ("publishing an index failed: " + s.ToString()).c_str());
  if (!retry) {
    spdlog::warn(
        "worker {}: index {}: the segment is full ({}); {} updates wait to be published "
        "and the dataflow's inputs pause until compaction or a drop frees room",
        me_, id, s.message(), count);
    pending.since = Clock::now();
  }
  pending_[id] = std::move(pending);
  shared_->stalled = true;
}

bool DataflowInstance::Step() {
  if (!pending_.empty()) {
    for (auto it = pending_.begin(); shared_->retry_pending && it != pending_.end();) {
      const std::string id = (it++)->first;  // AppendToIndex erases it on success
      AppendToIndex(id, std::move(pending_[id]));
    }
    if (!pending_.empty()) {
      shared_->stalled = true;  // keeps new ticks back until they are published
      return false;
    }
  }
  if (!(shared_->frontier < shared_->target)) return false;
  TickCtx ctx{shared_->frontier.time(), shared_->target, ++tick_, me_, exchange_};
  for (auto& [node, e] : graph_.exports) {
    std::vector<std::uint32_t> key(e->key().begin(), e->key().end());
    shm::UpdateBuffer updates = PullIntoIndex(node, ctx, key);
    if (shared_->dropped_exports.count(e->id()))
      continue;  // after the exchanges: they are barriers
    AppendToIndex(e->id(), {std::move(updates), ctx.hi, {}});
  }
  // Only now, after every node of the tick has read: no import's hold passes what a node of this
  // tick still reads (ArrangedReduce reads at t - 1 >= lo - 1).
  for (ImportedIndex* i : imports_) i->Read(ctx.hi);
  return true;
}

Status DataflowInstance::AllowCompaction(const std::string& id, Frontier frontier) {
  auto it = exports_.find(id);
  // Not ours, or dropped already (a replayed history may drop an index again): nothing to do.
  if (it == exports_.end() || unpublished_.count(id)) return Status::Ok();
  if (frontier.empty()) {
    unpublished_.insert(id);
    pending_.erase(id);  // nobody will read them
  }
  return publisher_->AllowCompaction(it->second, frontier);
}

}  // namespace tandem::workers

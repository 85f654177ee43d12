#include "workers/dataflow.h"

#include <algorithm>
#include <functional>
#include <set>

#include <spdlog/spdlog.h>

#include "base/check.h"
#include "workers/operators/cached.h"
#include "workers/operators/distinct.h"
#include "workers/operators/index_export.h"
#include "workers/operators/mfp.h"
#include "workers/operators/reduce.h"
#include "workers/operators/union.h"
#include "workers/row_room.h"

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

DataflowInstance::DataflowInstance(DataflowShared* shared, std::uint32_t me, Exchange* exchange,
                                   shm::Publisher* publisher)
    : shared_(shared), me_(me), exchange_(exchange), publisher_(publisher) {
  const pb::DataflowDescription& desc = shared->desc;
  std::map<std::string, CachedNode*> named;
  auto cached = [&](Node* inner) {
    auto node = std::make_unique<CachedNode>(inner);
    CachedNode* raw = node.get();
    nodes_.push_back(std::move(node));
    return raw;
  };
  for (std::size_t i = 0; i < shared->sources.size(); ++i) {
    nodes_.push_back(shared->sources[i]->MakeNode(me, shared->as_of, shared->until));
    named[shared->sources[i]->id] = cached(nodes_.back().get());
  }
  std::function<Node*(const pb::Plan&)> build = [&](const pb::Plan& p) -> Node* {
    switch (p.kind_case()) {
      case pb::Plan::kGet: {
        auto it = named.find(p.get().id());
        TANDEM_CHECK(it != named.end(), "a Get of an unknown collection passed validation");
        it->second->AddConsumer();
        return it->second;
      }
      case pb::Plan::kMfp: {
        Node* in = build(p.mfp().input());
        nodes_.push_back(std::make_unique<MfpNode>(in, Mfp(p.mfp().mfp(), 0)));
        return nodes_.back().get();
      }
      case pb::Plan::kReduce: {
        Node* in = build(p.reduce().input());
        nodes_.push_back(MakeReduce(in, p.reduce()));
        return nodes_.back().get();
      }
      case pb::Plan::kUnion: {
        std::vector<Node*> ins;
        for (const auto& i : p.union_().inputs()) ins.push_back(build(i));
        nodes_.push_back(std::make_unique<UnionNode>(std::move(ins)));
        return nodes_.back().get();
      }
      case pb::Plan::kDistinct: {
        Node* in = build(p.distinct().input());
        nodes_.push_back(std::make_unique<DistinctNode>(in));
        return nodes_.back().get();
      }
      default:
        TANDEM_CHECK(false, "an empty plan passed validation");
    }
    return nullptr;
  };
  for (const pb::BuildDesc& b : desc.objects_to_build()) {
    named[b.id()] = cached(build(b.plan()));
  }
  for (const pb::IndexExport& e : desc.index_exports()) {
    CachedNode* on = named.at(e.on());
    on->AddConsumer();
    index_nodes_.emplace_back(on, &e);
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

void DataflowInstance::Step() {
  if (!pending_.empty()) {
    for (auto it = pending_.begin(); shared_->retry_pending && it != pending_.end();) {
      const std::string id = (it++)->first;  // AppendToIndex erases it on success
      AppendToIndex(id, std::move(pending_[id]));
    }
    if (!pending_.empty()) {
      shared_->stalled = true;  // keeps new ticks back until they are published
      return;
    }
  }
  if (!(shared_->frontier < shared_->target)) return;
  TickCtx ctx{shared_->frontier.time(), shared_->target, ++tick_, me_, exchange_};
  for (auto& [node, e] : index_nodes_) {
    Delta d = node->Pull(ctx);
    std::vector<std::uint32_t> key(e->key().begin(), e->key().end());
    shm::UpdateBuffer updates = ArrangeByKey(ctx, std::move(d), key);
    if (shared_->dropped_exports.count(e->id()))
      continue;  // after the exchanges: they are barriers
    AppendToIndex(e->id(), {std::move(updates), ctx.hi, {}});
  }
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

// A collection referenced more than once in a plan (a named build, a source) is computed once
// per tick and handed to each consumer.
//
// Invariant: every consumer (registered with AddConsumer while the plan is built) pulls at most
// once per tick, so the consumers_-th pull of a tick is the last one: it takes the cached delta
// instead of a copy (the common single consumer never copies). A consumer that does not pull
// only costs the others a copy.
#pragma once

#include "base/check.h"
#include "workers/operators/node.h"

namespace tandem::workers {

class CachedNode final : public Node {
 public:
  explicit CachedNode(Node* inner) : inner_(inner) {}
  void AddConsumer() { ++consumers_; }
  Partitioning partitioning() const override { return inner_->partitioning(); }
  // With one consumer nothing else needs the rows: the inner node encodes them itself.
  bool CanPullArranged(const std::vector<std::uint32_t>& key) const override {
    return consumers_ == 1 && inner_->CanPullArranged(key);
  }
  void PullArranged(const TickCtx& ctx, const std::vector<std::uint32_t>& key,
                    shm::UpdateBuffer* updates, std::vector<ErrorUpdate>* errors) override {
    inner_->PullArranged(ctx, key, updates, errors);
  }
  Delta Pull(const TickCtx& ctx) override {
    if (!computed_ || tick_ != ctx.tick) {
      cache_ = inner_->Pull(ctx);
      tick_ = ctx.tick;
      computed_ = true;
      pulls_ = 0;
    }
    ++pulls_;
    TANDEM_CHECK(pulls_ <= consumers_, "a cached node was pulled more often than it has consumers");
    if (pulls_ == consumers_) return std::move(cache_);
    return cache_;
  }

 private:
  Node* inner_;
  Delta cache_;
  std::uint64_t tick_ = 0;
  bool computed_ = false;
  std::uint32_t consumers_ = 0;
  std::uint32_t pulls_ = 0;  // in tick_
};

}  // namespace tandem::workers

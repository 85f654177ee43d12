// A source's Envelope, made in its first Advance (when the worker count is known: ctx.workers),
// and nodes that can be made before it: each worker's node asks the envelope for its own on its
// first Pull (ticks run after a Prepare, so after an Advance).
//
// Thread safety: Ensure runs in Advance (the barrier's completion step); a node reads the pointer
// between barriers, after it was set.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "workers/sources/envelope.h"

namespace tandem::workers {

class EnvelopeHolder {
 public:
  explicit EnvelopeHolder(std::vector<std::uint32_t> upsert_key) : key_(std::move(upsert_key)) {}

  Envelope& Ensure(std::uint32_t workers) {
    if (!envelope_) envelope_ = std::make_unique<Envelope>(key_, workers);
    return *envelope_;
  }
  // nullptr before the first Ensure.
  Envelope* get() const { return envelope_.get(); }
  const std::vector<std::uint32_t>& upsert_key() const { return key_; }

  std::unique_ptr<Node> MakeNode(std::uint32_t me, Time as_of, Frontier until) {
    return std::make_unique<LazyNode>(this, me, as_of, until);
  }

 private:
  class LazyNode final : public Node {
   public:
    LazyNode(EnvelopeHolder* h, std::uint32_t me, Time as_of, Frontier until)
        : h_(h), me_(me), as_of_(as_of), until_(until) {}
    Delta Pull(const TickCtx& ctx) override {
      if (!node_) {
        if (h_->get() == nullptr) return {};
        node_ = h_->get()->MakeNode(me_, as_of_, until_);
      }
      return node_->Pull(ctx);
    }

   private:
    EnvelopeHolder* h_;
    std::uint32_t me_;
    Time as_of_;
    Frontier until_;
    std::unique_ptr<Node> node_;
  };

  std::vector<std::uint32_t> key_;
  std::unique_ptr<Envelope> envelope_;
};

}  // namespace tandem::workers

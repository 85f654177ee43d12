#include "workers/sources/counter.h"

#include "workers/exchange.h"

namespace tandem::workers {

namespace {

class CounterNode final : public SourceNode {
 public:
  CounterNode(Time max, Time as_of, Frontier until) : SourceNode(as_of, until), max_(max) {}
  Delta Pull(const TickCtx& ctx) override {
    Delta d;
    const std::uint32_t n = ctx.exchange->workers();
    const Time hi = ctx.hi.empty() ? kMaxTime : ctx.hi.time();
    for (Time v = std::max<Time>(ctx.lo, 1); v < hi && (max_ == 0 || v <= max_); ++v) {
      const auto value = static_cast<std::int64_t>(v);
      if (OwnerOf(value, n) == ctx.me) Emit(d, {value}, v, 1);
    }
    return d;
  }
  Partitioning partitioning() const override { return Partitioning::By({0}); }

 private:
  Time max_;
};

}  // namespace

Frontier CounterSource::Limit(Frontier upper) const {
  const Time max = source.counter().max();
  if (max != 0 && !upper.empty() && upper.time() > max) return Frontier::Empty();  // all emitted
  return upper;
}

std::unique_ptr<Node> CounterSource::MakeNode(std::uint32_t, Time as_of, Frontier until) {
  return std::make_unique<CounterNode>(source.counter().max(), as_of, until);
}

}  // namespace tandem::workers

#include "workers/sources/key_value.h"

#include <vector>

#include "workers/exchange.h"

namespace tandem::workers {

namespace {

std::uint64_t Mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

class KeyValueNode final : public SourceNode {
 public:
  KeyValueNode(const ipc::pb::KeyValueSource& kv, std::int64_t* values, Time as_of, Frontier until)
      : SourceNode(as_of, until), kv_(kv), values_(values) {}
  Delta Pull(const TickCtx& ctx) override {
    Delta d;
    const std::uint32_t n = ctx.exchange->workers();
    const Time hi = ctx.hi.empty() ? kMaxTime : ctx.hi.time();
    const auto keys = static_cast<std::int64_t>(kv_.keys());
    // A retraction and an insertion per update of one of this worker's keys (about 1/n).
    // A reservation only (a closed upper would be unbounded).
    const Time ticks = std::min<Time>(hi - std::min(hi, ctx.lo), kMaxStepTicks);
    d.rows.reserve(2 * ticks * kv_.updates_per_tick() / n + (ctx.lo == 0 ? kv_.keys() / n : 0));
    if (ctx.lo == 0) {
      for (std::int64_t k = 0; k < keys; ++k) {
        if (OwnerOf(k, n) != ctx.me) continue;
        values_[k] = KeyValueInitial(kv_.seed(), k);
        Emit(d, {k, values_[k]}, 0, 1);
      }
    }
    // Picks are random over all keys, so values_ (8 bytes per key) misses the cache on
    // nearly every update: prefetch the value of the pick kPrefetch updates ahead (picks are
    // pure functions of (seed, t, j)). Every worker computes every pick and keeps its own.
    constexpr std::uint64_t kPrefetch = 16;
    for (Time t = std::max<Time>(ctx.lo, 1); t < hi; ++t) {
      for (std::uint64_t j = 0; j < kv_.updates_per_tick(); ++j) {
        if (j + kPrefetch < kv_.updates_per_tick()) {
          __builtin_prefetch(&values_[KeyValuePick(kv_.seed(), t, j + kPrefetch, kv_.keys())]);
        }
        const std::int64_t k = KeyValuePick(kv_.seed(), t, j, kv_.keys());
        if (OwnerOf(k, n) != ctx.me) continue;
        const std::int64_t v = KeyValueValue(kv_.seed(), t, j);
        std::int64_t& cur = values_[k];
        Emit(d, {k, cur}, t, -1);
        cur = v;
        Emit(d, {k, cur}, t, 1);
      }
    }
    return d;
  }
  Partitioning partitioning() const override { return Partitioning::By({0}); }

 private:
  const ipc::pb::KeyValueSource& kv_;
  std::int64_t* values_;  // KeyValueSource::values_
};

}  // namespace

std::int64_t KeyValueInitial(std::uint64_t seed, std::int64_t key) {
  return static_cast<std::int64_t>(Mix(seed ^ Mix(static_cast<std::uint64_t>(key))) % 1000000);
}
std::int64_t KeyValuePick(std::uint64_t seed, Time t, std::uint64_t j, std::uint64_t keys) {
  return static_cast<std::int64_t>(Mix(seed * 31 + Mix(t * 1000003 + j)) % keys);
}
std::int64_t KeyValueValue(std::uint64_t seed, Time t, std::uint64_t j) {
  return static_cast<std::int64_t>(Mix(~seed ^ Mix(t * 7919 + j)) % 1000000);
}

std::unique_ptr<Node> KeyValueSource::MakeNode(std::uint32_t, Time as_of, Frontier until) {
  return std::make_unique<KeyValueNode>(source.key_value(), values_.get(), as_of, until);
}

}  // namespace tandem::workers

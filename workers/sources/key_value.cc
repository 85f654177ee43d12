#include "workers/sources/key_value.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <vector>

#include "shm/batch.h"
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
    d.rows.reserve(Expected(ctx));
    Generate(ctx, [&](std::int64_t k, std::int64_t v, Time t, std::int64_t diff) {
      Emit(d, {k, v}, t, diff);
    });
    return d;
  }
  Partitioning partitioning() const override { return Partitioning::By({0}); }
  // An index by key: (key, (key, value)) encoded as the index holds them, without Rows.
  bool CanPullArranged(const std::vector<std::uint32_t>& key) const override {
    return key == std::vector<std::uint32_t>{0};
  }
  void PullArranged(const TickCtx& ctx, const std::vector<std::uint32_t>&,
                    shm::UpdateBuffer* updates, std::vector<ErrorUpdate>*) override {
    updates->Reserve(Expected(ctx), Expected(ctx) * 27);  // 9 key bytes, 18 row bytes
    Generate(ctx, [&](std::int64_t k, std::int64_t v, Time t, std::int64_t diff) {
      Time at;
      if (!Admit(t, &at)) return;
      char row[18];
      const std::array<char, 9> key = EncodedInt64(k), value = EncodedInt64(v);
      std::copy(key.begin(), key.end(), row);
      std::copy(value.begin(), value.end(), row + 9);
      updates->Push(std::string_view(key.data(), key.size()), std::string_view(row, sizeof row), at,
                    diff);
    });
  }

 private:
  // The updates of this worker in the tick (about): a reservation only (a closed upper would be
  // unbounded).
  std::size_t Expected(const TickCtx& ctx) const {
    const std::uint32_t n = ctx.exchange->workers();
    const Time hi = ctx.hi.empty() ? kMaxTime : ctx.hi.time();
    const Time ticks = std::min<Time>(hi - std::min(hi, ctx.lo), kMaxStepTicks);
    return 2 * ticks * kv_.updates_per_tick() / n + (ctx.lo == 0 ? kv_.keys() / n : 0);
  }

  // Calls emit(key, value, time, diff) for every update of this worker's keys in the tick: the
  // initial value of each key at 0, then a retraction and an insertion per update of one of them.
  template <typename EmitFn>
  void Generate(const TickCtx& ctx, EmitFn&& emit) {
    const std::uint32_t n = ctx.exchange->workers();
    const Time hi = ctx.hi.empty() ? kMaxTime : ctx.hi.time();
    const auto keys = static_cast<std::int64_t>(kv_.keys());
    if (ctx.lo == 0) {
      for (std::int64_t k = 0; k < keys; ++k) {
        if (OwnerOf(k, n) != ctx.me) continue;
        values_[k] = KeyValueInitial(kv_.seed(), k);
        emit(k, values_[k], 0, 1);
      }
    }
    // Picks are random over all keys, so values_ (8 bytes per key) misses the cache on
    // nearly every update: the pick kPrefetch updates ahead is computed (picks are pure
    // functions of (seed, t, j)) and, when this worker owns it, its value prefetched; the ring
    // keeps it for when its turn comes. Every worker computes every pick and keeps its own.
    constexpr std::uint64_t kPrefetch = 16;
    constexpr std::int64_t kNotMine = -1;
    std::array<std::int64_t, kPrefetch> ahead{};
    const std::uint64_t per_tick = kv_.updates_per_tick();
    auto look_ahead = [&](Time t, std::uint64_t j) {
      const std::int64_t k = KeyValuePick(kv_.seed(), t, j, kv_.keys());
      if (OwnerOf(k, n) != ctx.me) return kNotMine;
      __builtin_prefetch(&values_[k]);
      return k;
    };
    for (Time t = std::max<Time>(ctx.lo, 1); t < hi; ++t) {
      for (std::uint64_t j = 0; j < std::min(kPrefetch, per_tick); ++j) ahead[j] = look_ahead(t, j);
      for (std::uint64_t j = 0; j < per_tick; ++j) {
        const std::int64_t k = ahead[j % kPrefetch];
        if (j + kPrefetch < per_tick) ahead[j % kPrefetch] = look_ahead(t, j + kPrefetch);
        if (k == kNotMine) continue;
        std::int64_t& cur = values_[k];
        emit(k, cur, t, -1);
        cur = KeyValueValue(kv_.seed(), t, j);
        emit(k, cur, t, 1);
      }
    }
  }

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

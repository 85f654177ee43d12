#include "workers/sources/generator.h"

#include <algorithm>

namespace tandem::workers {

namespace {
Time SaturatingAdd(Time a, Time b) { return a > kMaxTime - b ? kMaxTime : a + b; }
}  // namespace

void GeneratorSource::Advance(AdvanceCtx& ctx) {
  if (upper.empty()) return;
  Time due = kMaxTime;
  if (interval_us_ != 0) {
    const auto elapsed =
        std::chrono::duration_cast<std::chrono::microseconds>(ctx.now - created).count();
    due = static_cast<Time>(elapsed) / interval_us_ + 1;
    ctx.next = std::min(ctx.next, created + std::chrono::microseconds(due * interval_us_));
  }
  const Time base = std::max(ctx.processed.empty() ? kMaxTime : ctx.processed.time(), ctx.as_of);
  Time available = std::min(due, std::max(upper.time(), SaturatingAdd(base, ctx.max_ticks)));
  const Time rows_cap =
      std::max<std::uint64_t>(1, kMaxStepRows / std::max<std::uint64_t>(1, RowsPerTick()));
  available = std::min(available, SaturatingAdd(upper.time(), rows_cap));
  if (!ctx.until.empty()) available = std::min(available, std::max(upper.time(), ctx.until.time()));
  if (due > available) {
    ctx.budget_limited = true;
    // More is due already: step again at once — if this step has something new to do.
    if (available > upper.time()) ctx.next = ctx.now;
  }
  upper = Limit(Frontier::At(std::max(available, upper.time())));
}

}  // namespace tandem::workers

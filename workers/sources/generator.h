// Generators: sources that emit one tick of data per time, paced by the wall clock
// (tick_interval_us; 0 = as fast as the step budget allows). Counter and key_value share this
// pacing; each says what a tick holds.
#pragma once

#include "workers/sources/source.h"

namespace tandem::workers {

// The most rows a generator emits in one step (beyond its first tick's initial rows).
inline constexpr std::uint64_t kMaxStepRows = std::uint64_t{1} << 20;

class GeneratorSource : public Source {
 public:
  GeneratorSource(const ipc::pb::SourceImport& import,
                  std::chrono::steady_clock::time_point created, std::uint64_t tick_interval_us)
      : Source(import, created), interval_us_(tick_interval_us) {}

  // Ticks due by now (unthrottled: always more), at most the step budget past what the dataflow
  // has processed (a source cannot run away while another holds the dataflow back) and at most
  // kMaxStepRows worth of ticks past its upper, never past `until` (nothing is emitted there).
  // Steps again at once when more is due than it took.
  void Advance(AdvanceCtx& ctx) override;

 protected:
  // The upper after the ticks below `upper` (a counter with a max closes).
  virtual Frontier Limit(Frontier upper) const { return upper; }
  // The most rows one tick emits (over all workers). A step takes at most kMaxStepRows / this
  // many ticks (at least one), whatever the step budget or as_of: the budget is shared by every
  // dataflow of the runtime, so a light source must not make a heavy one's step unbounded.
  virtual std::uint64_t RowsPerTick() const { return 1; }

 private:
  std::uint64_t interval_us_;
};

}  // namespace tandem::workers

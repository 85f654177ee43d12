// counter{tick_interval_us, max}: row (n) inserted at time n for n = 1, 2, … (up to max if set,
// then closed). Worker me emits the n it owns (OwnerOf(n) == me): partitioned by the column.
#pragma once

#include "workers/sources/generator.h"

namespace tandem::workers {

class CounterSource final : public GeneratorSource {
 public:
  CounterSource(const ipc::pb::SourceImport& import, std::chrono::steady_clock::time_point created)
      : GeneratorSource(import, created, import.source().counter().tick_interval_us()) {}
  std::unique_ptr<Node> MakeNode(std::uint32_t me, Time as_of, Frontier until) override;

 protected:
  Frontier Limit(Frontier upper) const override;
};

}  // namespace tandem::workers

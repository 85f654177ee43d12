#include "tools/bench/scenarios/scenarios.h"

#include <algorithm>
#include <cstdio>

#include "tools/bench/measure.h"

namespace tandem::bench {

Scenario LookupScale(const Options& o) {
  Scenario s{.name = "lookup-scale"};
  for (std::uint64_t keys = o.min_keys; keys <= o.max_keys; keys *= 10) {
    const std::string name = "keys=" + std::to_string(keys);
    Progress(o, "lookup-scale: %s (building the index)\n", name);
    Options big = o;
    big.shm_size = ShmSizeFor(o, keys);
    LookupReplica lr(big, true, keys);
    PeekRun run = PeekLoop(*lr.client, lr.replica, kLightIndex, keys, o, keys);
    Cell cell{.name = name};
    cell.Set("keys", static_cast<double>(keys));
    run.AddTo(cell);
    cell.Set("segment_bytes_used", lr.replica.SegmentBytesUsed());
    s.cells.push_back(std::move(cell));
    if (keys > o.max_keys / 10) break;
  }
  if (s.cells.size() >= 2) {
    double first = 0, last = 0;
    for (const auto& [k, v] : s.cells.front().metrics) {
      if (k == "p50_us") first = v;
    }
    for (const auto& [k, v] : s.cells.back().metrics) {
      if (k == "p50_us") last = v;
    }
    char buf[160];
    std::snprintf(buf, sizeof buf, "p50 grows %.2fx from %s to %s (target <= 1.5x to 10^7 keys)",
                  last / std::max(first, 1e-9), s.cells.front().name.c_str(),
                  s.cells.back().name.c_str());
    s.notes.push_back(buf);
  }
  return s;
}

}  // namespace tandem::bench

#include "tools/bench/scenarios/scenarios.h"

#include <algorithm>

#include "tools/bench/measure.h"

namespace tandem::bench {

Scenario Memory(const Options& o) {
  Scenario s{.name = "memory"};
  const KeyValue kv{.keys = o.memory_keys,
                    .updates_per_tick = o.memory_updates,
                    .tick_interval_us = 1000,
                    .seed = 5};
  Progress(o, "memory: %s\n", "starting");
  Replica replica(ReplicaFor(o, true));
  replica.WaitReady();
  Client client(replica.endpoint(), ClientKeys(o));
  const double baseline = replica.SegmentBytesUsed();
  client.Send(IndexedSource(kHeavySource, kHeavyIndex, kv));
  client.WaitWrite(kHeavyIndex, 2, BuildLimit(kv.keys), replica);
  client.Track(kHeavyIndex);
  std::vector<std::pair<double, double>> used;  // (seconds, bytes)
  const auto start = Clock::now();
  const double total = std::max(2.0, o.duration);
  auto next = start;
  while (Seconds(Clock::now() - start) < total) {
    client.Pump(50ms);
    client.CompactAllBut({});
    replica.CheckAlive();
    if (Clock::now() >= next) {
      next += 250ms;
      used.emplace_back(Seconds(Clock::now() - start), replica.SegmentBytesUsed() - baseline);
    }
  }
  const double ticks = client.TickRate(start, Clock::now());
  const std::size_t n = used.size();
  auto mean = [&](std::size_t from, std::size_t to) {
    double sum = 0;
    for (std::size_t i = from; i < to; ++i) sum += used[i].second;
    return to > from ? sum / static_cast<double>(to - from) : 0.0;
  };
  // Least-squares slope over the samples after warm-up (the first third).
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const std::size_t w = n / 3;
  for (std::size_t i = w; i < n; ++i) {
    sx += used[i].first;
    sy += used[i].second;
    sxx += used[i].first * used[i].first;
    sxy += used[i].first * used[i].second;
  }
  const double m = static_cast<double>(n - w);
  const double denom = m * sxx - sx * sx;
  const double slope = denom > 0 ? (m * sxy - sx * sy) / denom : 0;
  const double middle = mean(w, 2 * n / 3), last = mean(2 * n / 3, n);
  double peak = 0;
  for (std::size_t i = w; i < n; ++i) peak = std::max(peak, used[i].second);
  // A consolidated row here is (key int64, value int64, time u64, diff i64): 32 bytes raw.
  constexpr double kRawRowBytes = 32;
  Cell cell{.name = "churn"};
  cell.Set("keys", static_cast<double>(kv.keys));
  cell.Set("updates_per_s", ticks * static_cast<double>(kv.updates_per_tick));
  cell.Set("seconds", total);
  cell.Set("samples", static_cast<double>(n));
  cell.Set("baseline_bytes", baseline);
  cell.Set("bytes_middle_third", middle);
  cell.Set("bytes_last_third", last);
  cell.Set("bytes_peak_after_warmup", peak);
  cell.Set("bytes_per_live_update", last / static_cast<double>(kv.keys));
  cell.Set("ratio_to_raw_rows", last / (static_cast<double>(kv.keys) * kRawRowBytes));
  cell.Set("trend_bytes_per_s", slope);
  cell.Set("trend_pct_per_min", middle > 0 ? 100.0 * slope * 60 / middle : 0);
  s.cells.push_back(std::move(cell));
  s.notes.push_back(
      "bytes = segment used minus the empty replica's; live updates = keys (one value each); "
      "raw row = 32 bytes (key, value, time, diff)");
  return s;
}

}  // namespace tandem::bench

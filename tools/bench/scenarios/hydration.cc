#include "tools/bench/scenarios/scenarios.h"

#include <algorithm>
#include <cstdio>

#include "tools/bench/measure.h"

namespace tandem::bench {

namespace {

// The maintenance runtime's memory: its private RSS (RssAnon: the segment's pages are shared, not
// in it) and the segment's bytes in use, sampled together.
struct MemorySample {
  double rss_anon = 0, segment = 0;
  double total() const { return rss_anon + segment; }
};

}  // namespace

Scenario Hydration(const Options& o) {
  Scenario s{.name = "hydration"};
  for (const std::uint64_t keys : o.hydration_keys) {
    if (keys > o.hydration_max_keys) continue;
    for (const int workers : o.worker_counts) {
      const std::string name = "keys=" + std::to_string(keys) + "/w" + std::to_string(workers);
      Progress(o, "hydration: %s\n", name);
      Options ow = o;
      ow.workers = workers;
      ow.shm_size = ShmSizeFor(o, keys);
      Replica replica(ReplicaFor(ow, true));
      replica.WaitReady();
      Client client(replica.endpoint(), ClientKeys(o));
      const pid_t maintenance = replica.RuntimePid("maintenance");
      auto sample = [&] {
        return MemorySample{RssBytes(maintenance, "RssAnon"), replica.SegmentBytesUsed()};
      };
      const MemorySample baseline = sample();
      MemorySample peak = baseline;
      double peak_total = baseline.total();
      std::size_t samples = 0;
      auto note = [&](const MemorySample& m) {
        ++samples;
        peak.rss_anon = std::max(peak.rss_anon, m.rss_anon);
        peak.segment = std::max(peak.segment, m.segment);
        peak_total = std::max(peak_total, m.total());
      };
      // Only the snapshot at time 0 matters: a tick a second of a few updates after it.
      const KeyValue kv{
          .keys = keys, .updates_per_tick = 10, .tick_interval_us = 1000000, .seed = 13};
      // CreateDataflow → the index's write frontier past its as_of (0): a peek at the as_of would
      // be answered from then on. Frontiers are taken as they arrive (waits of at most 2 ms),
      // memory sampled every 5 ms meanwhile.
      const auto start = Clock::now();
      client.Send(IndexedSource(kHeavySource, kHeavyIndex, kv));
      const auto deadline = start + BuildLimit(keys);
      auto next_sample = start;
      while (client.Write(kHeavyIndex) < 1) {
        const auto now = Clock::now();
        if (now > deadline) throw std::runtime_error("hydration: " + name + " did not build");
        if (now >= next_sample) {
          note(sample());
          next_sample = now + 5ms;
        }
        replica.CheckAlive();
        client.Receive(2ms);
      }
      const double hydration_s = Seconds(Clock::now() - start);
      // Then until it settles: at least 2 s, and until the last second's samples (every 50 ms)
      // are within 1% of each other — at most 20 s. Compaction flows, as a controller's would.
      Progress(o, "hydration: %s (settling)\n", name);
      const auto built = Clock::now();
      std::vector<std::pair<Clock::time_point, double>> tail;
      MemorySample settled;
      for (;;) {
        client.Pump(50ms);
        client.CompactAllBut({});
        replica.CheckAlive();
        settled = sample();
        note(settled);
        const auto now = Clock::now();
        tail.emplace_back(now, settled.total());
        std::erase_if(tail, [&](const auto& t) { return now - t.first > 1s; });
        const auto [lo, hi] =
            std::minmax_element(tail.begin(), tail.end(),
                                [](const auto& a, const auto& b) { return a.second < b.second; });
        const bool flat = hi->second - lo->second <= 0.01 * hi->second;
        if ((now - built >= 2s && flat) || now - built >= 20s) break;
      }
      const double peak_growth = peak_total - baseline.total();
      const double settled_growth = settled.total() - baseline.total();
      Cell cell{.name = name};
      cell.Set("keys", static_cast<double>(keys));
      cell.Set("workers", workers);
      cell.Set("hydration_s", hydration_s);
      cell.Set("keys_per_s", static_cast<double>(keys) / hydration_s);
      cell.Set("samples", static_cast<double>(samples));
      cell.Set("baseline_bytes", baseline.total());
      cell.Set("peak_bytes", peak_growth);
      cell.Set("settled_bytes", settled_growth);
      cell.Set("peak_over_settled", settled_growth > 0 ? peak_growth / settled_growth : 0);
      cell.Set("peak_rss_anon_bytes", peak.rss_anon - baseline.rss_anon);
      cell.Set("peak_segment_bytes", peak.segment - baseline.segment);
      cell.Set("settled_rss_anon_bytes", settled.rss_anon - baseline.rss_anon);
      cell.Set("settled_segment_bytes", settled.segment - baseline.segment);
      cell.Set("settled_bytes_per_key", settled_growth / static_cast<double>(keys));
      s.cells.push_back(std::move(cell));
    }
  }
  s.notes.push_back(
      "hydration_s = CreateDataflow sent -> the index's write frontier past its as_of (readable); "
      "bytes = the maintenance runtime's RssAnon + segment bytes used, above the replica's before "
      "the create (baseline_bytes), sampled every 5 ms while building; peak_*: the most of any "
      "sample (rss and segment peaks each their own), settled_*: once flat for 1 s (target: "
      "peak_over_settled <= 1.5)");
  return s;
}

}  // namespace tandem::bench

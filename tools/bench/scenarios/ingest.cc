#include "tools/bench/scenarios/scenarios.h"

#include "tools/bench/measure.h"

namespace tandem::bench {

namespace {

// Keeps compaction flowing for `d`, returning ticks/s of the tracked index over the window.
double MeasureTicks(Client& client, Replica& replica, const std::string& tracked, double seconds,
                    double warmup) {
  const auto start = Clock::now();
  const auto from =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(warmup));
  const auto to =
      from + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  client.Track(tracked);
  while (Clock::now() < to) {
    client.Pump(100ms);
    client.CompactAllBut({});
    replica.CheckAlive();
  }
  return client.TickRate(from, to);
}

}  // namespace

Scenario Ingest(const Options& o) {
  Scenario s{.name = "ingest"};
  const KeyValue kv{.keys = o.ingest_keys,
                    .updates_per_tick = o.ingest_updates,
                    .tick_interval_us = 0,
                    .seed = 3};
  for (bool reduce : {false, true}) {
    const std::string name = reduce ? "reduce" : "index";
    Progress(o, "ingest: %s (building)\n", name);
    Replica replica(ReplicaFor(o, true));
    replica.WaitReady();
    Client client(replica.endpoint(), ClientKeys(o));
    const std::string tracked = reduce ? kHeavyReduceIndex : kHeavyIndex;
    client.Send(reduce
                    ? ReducedSource(kHeavySource, "", kHeavyReduce, kHeavyReduceIndex, kv, o.groups)
                    : IndexedSource(kHeavySource, kHeavyIndex, kv));
    client.WaitWrite(tracked, 2, BuildLimit(kv.keys), replica);
    Progress(o, "ingest: measuring %s\n", name);
    const double ticks = MeasureTicks(client, replica, tracked, o.duration, o.warmup);
    const double ups = ticks * static_cast<double>(kv.updates_per_tick);
    Cell cell{.name = name};
    cell.Set("keys", static_cast<double>(kv.keys));
    cell.Set("updates_per_tick", static_cast<double>(kv.updates_per_tick));
    cell.Set("ticks_per_s", ticks);
    cell.Set("updates_per_s", ups);
    cell.Set("workers", o.workers);
    cell.Set("updates_per_s_per_worker", ups / o.workers);
    s.cells.push_back(std::move(cell));
  }
  return s;
}

}  // namespace tandem::bench

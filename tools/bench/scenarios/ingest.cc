#include "tools/bench/scenarios/scenarios.h"

#include <cstdio>

#include "tools/bench/measure.h"

namespace tandem::bench {

namespace {

// What one measuring window saw: the tracked index's ticks/s, and each worker's busy and waiting
// seconds (the runtime's step statistics) at its start and end.
struct IngestWindow {
  double ticks_per_s = 0;
  double seconds = 0;
  std::vector<Replica::WorkerSeconds> start, end;
};

// Keeps compaction flowing through --warmup, then measures for `seconds`.
IngestWindow MeasureTicks(Client& client, Replica& replica, const std::string& tracked,
                          double seconds, double warmup) {
  auto after = [](Clock::time_point t, double s) {
    return t + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  };
  client.Track(tracked);
  auto pump_until = [&](Clock::time_point until) {
    while (Clock::now() < until) {
      client.Pump(100ms);
      client.CompactAllBut({});
      replica.CheckAlive();
    }
  };
  pump_until(after(Clock::now(), warmup));
  IngestWindow w;
  w.start = replica.StepTimes();
  const auto from = Clock::now();
  pump_until(after(from, seconds));
  w.end = replica.StepTimes();
  const auto to = Clock::now();
  w.seconds = Seconds(to - from);
  w.ticks_per_s = client.TickRate(from, to);
  return w;
}

}  // namespace

Scenario Ingest(const Options& o) {
  Scenario s{.name = "ingest"};
  const KeyValue kv{.keys = o.ingest_keys,
                    .updates_per_tick = o.ingest_updates,
                    .tick_interval_us = 0,
                    .seed = 3};
  // join: the join scenario's "sources" variant (both inputs sources of the joining dataflow);
  // its input updates per tick are the fact's and the dimension's.
  const JoinLoad join = JoinSourcesLoad(o, 40);
  for (const std::string kind : {"index", "reduce", "join"}) {
    double first_ups = 0;
    for (const int workers : o.worker_counts) {
      const std::string name = kind + "/w" + std::to_string(workers);
      Progress(o, "ingest: %s (building)\n", name);
      Options ow = kind == "join" ? join.options : o;
      ow.workers = workers;
      Replica replica(ReplicaFor(ow, true));
      replica.WaitReady();
      Client client(replica.endpoint(), ClientKeys(o));
      std::string tracked;
      double updates_per_tick = 0;
      if (kind == "join") {
        // Back to back, so both dataflows start at time 0 together.
        for (const pb::Command& c : join.target.Create(join.fact, join.dim)) client.Send(c);
        for (const std::string& id : join.target.Built())
          client.WaitWrite(id, 2, BuildLimit(join.fact.keys), replica);
        tracked = join.target.join_index;
        updates_per_tick =
            static_cast<double>(join.fact.updates_per_tick + join.dim.updates_per_tick);
      } else {
        const bool reduce = kind == "reduce";
        tracked = reduce ? kHeavyReduceIndex : kHeavyIndex;
        client.Send(
            reduce ? ReducedSource(kHeavySource, "", kHeavyReduce, kHeavyReduceIndex, kv, o.groups)
                   : IndexedSource(kHeavySource, kHeavyIndex, kv));
        client.WaitWrite(tracked, 2, BuildLimit(kv.keys), replica);
        updates_per_tick = static_cast<double>(kv.updates_per_tick);
      }
      Progress(o, "ingest: measuring %s\n", name);
      const IngestWindow w = MeasureTicks(client, replica, tracked, o.duration, o.warmup);
      const double ups = w.ticks_per_s * updates_per_tick;
      if (first_ups == 0) first_ups = ups;
      Cell cell{.name = name};
      cell.Set("keys", static_cast<double>(kind == "join" ? join.fact.keys : kv.keys));
      cell.Set("updates_per_tick", updates_per_tick);
      cell.Set("ticks_per_s", w.ticks_per_s);
      cell.Set("updates_per_s", ups);
      cell.Set("workers", workers);
      cell.Set("updates_per_s_per_worker", ups / workers);
      cell.Set("speedup", first_ups > 0 ? ups / first_ups : 0);
      double busy_sum = 0, waiting_sum = 0;
      for (std::size_t i = 0; i < w.end.size() && i < w.start.size(); ++i) {
        const double busy = (w.end[i].busy - w.start[i].busy) / w.seconds;
        const double waiting = (w.end[i].waiting - w.start[i].waiting) / w.seconds;
        cell.Set("busy_frac_w" + std::to_string(i), busy);
        cell.Set("waiting_frac_w" + std::to_string(i), waiting);
        cell.Set("steps_per_s_w" + std::to_string(i),
                 (w.end[i].steps - w.start[i].steps) / w.seconds);
        busy_sum += busy;
        waiting_sum += waiting;
      }
      cell.Set("busy_frac_mean", busy_sum / workers);
      cell.Set("waiting_frac_mean", waiting_sum / workers);
      s.cells.push_back(std::move(cell));
    }
  }
  char note[384];
  std::snprintf(note, sizeof note,
                "cells <index|reduce|join>/w<N>: N maintenance workers (join: the join scenario's "
                "sources variant, fact + dimension updates); speedup = updates_per_s over "
                "the w%d cell's; busy/waiting_frac_w<i> = worker i's busy (working) and waiting "
                "(at barriers) seconds per second of the measured window, from /metrics",
                o.worker_counts.front());
  s.notes.push_back(note);
  return s;
}

}  // namespace tandem::bench

// tandem-bench's measurement loops: closed-loop point lookups on a replica's index, and closed
// loops of anything else, in the measuring window --warmup/--duration/--min-samples set.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tools/bench/client.h"
#include "tools/bench/results.h"

namespace tandem::bench {

// When a cell measures: samples taken after --warmup count; it runs --duration seconds and goes on
// until --min-samples, at most --max-factor durations.
struct MeasureWindow {
  explicit MeasureWindow(const Options& o) : min_samples(o.min_samples) {
    auto seconds = [](double s) {
      return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
    };
    from = Clock::now() + seconds(o.warmup);
    until = from + seconds(o.duration);
    hard = from + seconds(o.duration * o.max_factor);
  }
  bool Done(Clock::time_point now, std::size_t samples) const {
    return now >= hard || (now >= until && samples >= min_samples);
  }
  Clock::time_point from, until, hard;
  std::size_t min_samples;
};

struct PeekRun {
  std::vector<double> us;
  std::size_t misses = 0;  // answers without exactly one row
  Clock::time_point from, to;
  double supervisor_mean_us = 0;  // the supervisor's mean over the same measured peeks
  void AddTo(Cell& cell) {
    AddLatencies(cell, us);
    cell.Set("misses", static_cast<double>(misses));
    cell.Set("supervisor_peek_mean_us", supervisor_mean_us);
  }
};

// Peeks `index` (keys 0..keys-1, uniformly) at its latest complete time, one at a time, for
// `duration` (and on until `min_samples`, at most --max-factor × longer); discards the first
// `warmup`. Every 100 ms compacts every index behind its frontier (the peeked one behind the peek
// time).
PeekRun PeekLoop(Client& client, Replica& replica, const std::string& index, std::uint64_t keys,
                 const Options& o, std::uint64_t seed);

// Closed-loop round trips of `once` for --duration (on until --min-samples, at most --max-factor
// times longer), after --warmup. Returns each round trip's latency in µs.
std::vector<double> ClosedLoop(const Options& o, const std::function<void()>& once);

// Starts a replica with the point-lookup index and waits until it has a complete time.
struct LookupReplica {
  LookupReplica(const Options& o, bool two_runtime, std::uint64_t keys)
      : replica(ReplicaFor(o, two_runtime)) {
    replica.WaitReady();
    client.emplace(replica.endpoint(), ClientKeys(o));
    client->Send(IndexedSource(kLightSource, kLightIndex, LightLoad(o, keys)));
    client->WaitWrite(kLightIndex, 2, BuildLimit(keys), replica);
  }
  Replica replica;
  std::optional<Client> client;
};

// `o`'s measuring window split over `rounds` alternating rounds (duration, warm-up and samples
// each).
Options RoundOptions(const Options& o, int rounds);

// Point-lookup peeks of two replicas with the same index (`replicas[0]` the baseline), measured in
// `rounds` alternating rounds (ABBA: neither always goes first, and the machine's drift and
// neighbours weigh on both alike). Returns cells names[0], names[1] (latencies) and
// "names[1]/names[0]" (ratios of the whole runs' percentiles, and the median over rounds of each
// round's ratio, which resists drift), and adds a note saying so.
std::vector<Cell> AlternatingPeekCells(const Options& o, LookupReplica (&replicas)[2],
                                       const std::string (&names)[2], int rounds,
                                       const std::string& progress,
                                       std::vector<std::string>* notes);

}  // namespace tandem::bench

// tandem-bench's scenarios, one file each; every one starts its own replicas and stops them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tools/bench/bench.h"
#include "tools/bench/results.h"

namespace tandem::bench {

// Point-lookup peek latency, {solo, two-runtime} x {idle, loaded}; each cell's latencies into
// `distributions` (for Plot).
Scenario Isolation(const Options& o, std::map<std::string, std::vector<double>>& distributions);
// The CDF of each isolation cell's latencies: a data file, a gnuplot script beside it, the PNG.
void Plot(const std::string& png, const std::map<std::string, std::vector<double>>& dists);
Scenario LookupScale(const Options& o);
Scenario Ingest(const Options& o);
Scenario Memory(const Options& o);
Scenario RedisScenario(const Options& o);
// Point-lookup peek latency, plain vs CURVE on the controller endpoint, in the same run.
Scenario CurveScenario(const Options& o);
// One-shot aggregate queries (create, peek, drop) over a 10^5- and a 10^6-row index,
// {solo, two-runtime} x {idle, loaded}, and the memory one takes while it runs (issue 13).
Scenario SlowPath(const Options& o);

}  // namespace tandem::bench

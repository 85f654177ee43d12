#include "tools/bench/scenarios/scenarios.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "tools/bench/measure.h"

namespace tandem::bench {

std::vector<Cell> IsolationCells(const Options& o, bool two_runtime, const HeavyLoadSpec& load,
                                 const std::string& prefix,
                                 std::map<std::string, std::vector<double>>* distributions) {
  std::vector<Cell> cells;
  const std::string mode = two_runtime ? "two-runtime" : "solo";
  Progress(o, (prefix + "starting a %s replica\n").c_str(), mode);
  Options sized = o;
  if (!o.shm_size_set && !load.shm_size.empty()) sized.shm_size = load.shm_size;
  LookupReplica lr(sized, two_runtime, o.keys);
  Client& client = *lr.client;
  for (bool loaded : {false, true}) {
    const std::string name = mode + "/" + (loaded ? "loaded" : "idle");
    if (loaded) {
      Progress(o, (prefix + "building the heavy load (%s)\n").c_str(), load.what);
      client.Track(load.tracked);
      for (const pb::Command& c : load.dataflows) client.Send(c);
      for (const std::string& id : load.built) {
        client.WaitWrite(id, 2, BuildLimit(load.build_keys), lr.replica);
      }
    }
    Progress(o, (prefix + "measuring %s\n").c_str(), name);
    PeekRun run = PeekLoop(client, lr.replica, kLightIndex, o.keys, o, loaded ? 2 : 1);
    Cell cell{.name = name};
    cell.Set("keys", static_cast<double>(o.keys));
    if (distributions) (*distributions)[name] = run.us;
    run.AddTo(cell);
    const double ticks = loaded ? client.TickRate(run.from, run.to) : 0;
    cell.Set("updates_per_s", ticks * load.updates_per_tick);
    cells.push_back(std::move(cell));
  }
  return cells;
}

HeavyLoadSpec HeadlineLoad(const Options& o) {
  const KeyValue heavy = HeavyLoad(o);
  return {.what = "an index and a reduce",
          .dataflows = {ReducedSource(kHeavySource, kHeavyIndex, kHeavyReduce, kHeavyReduceIndex,
                                      heavy, o.groups)},
          .built = {kHeavyIndex, kHeavyReduceIndex},
          .tracked = kHeavyIndex,
          .updates_per_tick = static_cast<double>(heavy.updates_per_tick),
          .build_keys = heavy.keys};
}

Scenario Isolation(const Options& o, std::map<std::string, std::vector<double>>& distributions) {
  Scenario s{.name = "isolation"};
  const HeavyLoadSpec load = HeadlineLoad(o);
  for (bool two : {false, true}) {
    for (Cell& c : IsolationCells(o, two, load, "isolation: ", &distributions)) {
      s.cells.push_back(std::move(c));
    }
  }
  const double two_ratio = Metric(s, "two-runtime/loaded", "p99_us") /
                           std::max(1e-9, Metric(s, "two-runtime/idle", "p99_us"));
  const double solo_vs_two = Metric(s, "solo/loaded", "p99_us") /
                             std::max(1e-9, Metric(s, "two-runtime/loaded", "p99_us"));
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "two-runtime loaded p99 / idle p99 = %.2f (target <= 2); solo loaded p99 / "
                "two-runtime loaded p99 = %.2f (target >= 10)",
                two_ratio, solo_vs_two);
  s.notes.push_back(buf);
  return s;
}

// The CDF of each cell's latencies: a data file, a gnuplot script beside it, and the PNG.
void Plot(const std::string& png, const std::map<std::string, std::vector<double>>& dists) {
  std::string base = png;
  if (base.size() > 4 && base.substr(base.size() - 4) == ".png") base.resize(base.size() - 4);
  const std::string dat = base + ".dat", gp = base + ".gp";
  const std::vector<std::string> order = {"solo/idle", "solo/loaded", "two-runtime/idle",
                                          "two-runtime/loaded"};
  {
    std::ofstream out(dat);
    out << "# latency_us cumulative_fraction; one block per cell (gnuplot index)\n";
    for (const auto& name : order) {
      out << "# " << name << "\n";
      auto it = dists.find(name);
      if (it != dists.end()) {
        std::vector<double> v = it->second;
        std::sort(v.begin(), v.end());
        const std::size_t n = v.size();
        const std::size_t step = std::max<std::size_t>(1, n / 4000);
        for (std::size_t i = 0; i < n; i += step) {
          out << v[i] << ' ' << static_cast<double>(i + 1) / static_cast<double>(n) << '\n';
        }
        // The tail point by point: the last 0.5%.
        for (std::size_t i = n - std::min<std::size_t>(n, n / 200 + 1); i < n; ++i) {
          out << v[i] << ' ' << static_cast<double>(i + 1) / static_cast<double>(n) << '\n';
        }
      }
      out << "\n\n";
    }
  }
  {
    std::ofstream out(gp);
    out << "set terminal pngcairo size 1000,600 noenhanced\n"
        << "set output '" << png << "'\n"
        << "set title 'tandem-bench isolation: point-lookup peek latency (client round trip)'\n"
        << "set xlabel 'latency (microseconds, log scale)'\nset ylabel 'fraction of peeks <= x'\n"
        << "set logscale x\nset grid\nset key center center box\nset yrange [0:1.0]\n"
        << "plot ";
    for (std::size_t i = 0; i < order.size(); ++i) {
      out << (i ? ", " : "") << "'" << dat << "' index " << i
          << " using 1:2 with lines lw 2 title '" << order[i] << "'";
    }
    out << "\n";
  }
  if (!OnPath("gnuplot")) {
    std::fprintf(stderr, "tandem-bench: gnuplot not installed; wrote %s and %s only\n", dat.c_str(),
                 gp.c_str());
    return;
  }
  const std::string cmd = "gnuplot '" + gp + "'";
  if (std::system(cmd.c_str()) != 0) {
    // pngcairo may be missing: fall back to the plain png terminal.
    std::string script = ReadFile(gp);
    script.replace(0, script.find('\n'), "set terminal png size 1000,600");
    std::ofstream(gp) << script;
    if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "tandem-bench: gnuplot failed\n");
  }
}

}  // namespace tandem::bench

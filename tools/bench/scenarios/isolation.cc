#include "tools/bench/scenarios/scenarios.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "tools/bench/measure.h"

namespace tandem::bench {

Scenario Isolation(const Options& o, std::map<std::string, std::vector<double>>& distributions) {
  Scenario s{.name = "isolation"};
  const KeyValue heavy = HeavyLoad(o);
  for (bool two : {false, true}) {
    const std::string mode = two ? "two-runtime" : "solo";
    Progress(o, "isolation: starting a %s replica\n", mode);
    LookupReplica lr(o, two, o.keys);
    Client& client = *lr.client;
    for (bool loaded : {false, true}) {
      const std::string name = mode + "/" + (loaded ? "loaded" : "idle");
      if (loaded) {
        client.Track(kHeavyIndex);
        client.Send(ReducedSource(kHeavySource, kHeavyIndex, kHeavyReduce, kHeavyReduceIndex, heavy,
                                  o.groups));
        client.WaitWrite(kHeavyIndex, 2, BuildLimit(heavy.keys), lr.replica);
        client.WaitWrite(kHeavyReduceIndex, 2, BuildLimit(heavy.keys), lr.replica);
      }
      Progress(o, "isolation: measuring %s\n", name);
      PeekRun run = PeekLoop(client, lr.replica, kLightIndex, o.keys, o, loaded ? 2 : 1);
      Cell cell{.name = name};
      cell.Set("keys", static_cast<double>(o.keys));
      distributions[name] = run.us;
      run.AddTo(cell);
      const double ticks = loaded ? client.TickRate(run.from, run.to) : 0;
      cell.Set("updates_per_s", ticks * static_cast<double>(heavy.updates_per_tick));
      s.cells.push_back(std::move(cell));
    }
  }
  auto find = [&](const std::string& n) -> const Cell* {
    for (const auto& c : s.cells) {
      if (c.name == n) return &c;
    }
    return nullptr;
  };
  auto metric = [&](const std::string& cell, const std::string& m) {
    const Cell* c = find(cell);
    for (const auto& [k, v] : c->metrics) {
      if (k == m) return v;
    }
    return 0.0;
  };
  const double two_ratio =
      metric("two-runtime/loaded", "p99_us") / std::max(1e-9, metric("two-runtime/idle", "p99_us"));
  const double solo_vs_two =
      metric("solo/loaded", "p99_us") / std::max(1e-9, metric("two-runtime/loaded", "p99_us"));
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

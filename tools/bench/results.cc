#include "tools/bench/results.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace tandem::bench {

double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return Percentile(v, 0.5);
}

Cell MedianOfRounds(const std::vector<Cell>& rounds, const std::string& spread) {
  Cell out{.name = rounds.front().name};
  for (const auto& [k, unused] : rounds.front().metrics) {
    std::vector<double> v;
    for (const Cell& c : rounds) {
      for (const auto& [name, value] : c.metrics) {
        if (name == k) v.push_back(value);
      }
    }
    out.Set(k, Median(v));
    if (k == spread) {
      out.Set(k + "_min", *std::min_element(v.begin(), v.end()));
      out.Set(k + "_max", *std::max_element(v.begin(), v.end()));
    }
  }
  out.Set("rounds", static_cast<double>(rounds.size()));
  return out;
}

void AddLatencies(Cell& cell, std::vector<double>& us) {
  std::sort(us.begin(), us.end());
  cell.Set("p50_us", Percentile(us, 0.50));
  cell.Set("p90_us", Percentile(us, 0.90));
  cell.Set("p99_us", Percentile(us, 0.99));
  cell.Set("p999_us", Percentile(us, 0.999));
  cell.Set("max_us", us.empty() ? 0 : us.back());
  double sum = 0;
  for (double v : us) sum += v;
  cell.Set("mean_us", us.empty() ? 0 : sum / static_cast<double>(us.size()));
  cell.Set("samples", static_cast<double>(us.size()));
}

std::string Num(double v) {
  char buf[64];
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else if (std::isfinite(v) && std::fabs(v) >= 1) {
    std::snprintf(buf, sizeof buf, "%.2f", v);
  } else if (std::isfinite(
                 v)) {  // below 1: three significant digits, so a small value never prints as 0
    std::snprintf(buf, sizeof buf, "%.3g", v);
  } else {
    std::snprintf(buf, sizeof buf, "null");
  }
  return buf;
}

void PrintTable(const std::vector<Scenario>& scenarios) {
  for (const auto& s : scenarios) {
    std::printf("\n== %s ==\n", s.name.c_str());
    for (const auto& n : s.notes) std::printf("  %s\n", n.c_str());
    if (s.cells.empty()) continue;
    std::vector<std::string> cols;
    for (const auto& c : s.cells) {
      for (const auto& [k, v] : c.metrics) {
        if (std::find(cols.begin(), cols.end(), k) == cols.end()) cols.push_back(k);
      }
    }
    std::size_t w0 = 4;
    for (const auto& c : s.cells) w0 = std::max(w0, c.name.size());
    std::vector<std::size_t> widths;
    for (const auto& k : cols) {
      std::size_t w = k.size();
      for (const auto& c : s.cells) {
        for (const auto& [name, v] : c.metrics) {
          if (name == k) w = std::max(w, Num(v).size());
        }
      }
      widths.push_back(w);
    }
    std::printf("  %-*s", static_cast<int>(w0), "cell");
    for (std::size_t i = 0; i < cols.size(); ++i) {
      std::printf("  %*s", static_cast<int>(widths[i]), cols[i].c_str());
    }
    std::printf("\n");
    for (const auto& c : s.cells) {
      std::printf("  %-*s", static_cast<int>(w0), c.name.c_str());
      for (std::size_t i = 0; i < cols.size(); ++i) {
        std::string text = "-";
        for (const auto& [name, v] : c.metrics) {
          if (name == cols[i]) text = Num(v);
        }
        std::printf("  %*s", static_cast<int>(widths[i]), text.c_str());
      }
      std::printf("\n");
    }
  }
  std::fflush(stdout);
}

std::string Json(const std::vector<Scenario>& scenarios) {
  std::string out = "{";
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    const auto& s = scenarios[i];
    out += (i ? ", \"" : "\"") + s.name + "\": {";
    for (std::size_t j = 0; j < s.cells.size(); ++j) {
      const auto& c = s.cells[j];
      out += (j ? ", \"" : "\"") + c.name + "\": {";
      for (std::size_t k = 0; k < c.metrics.size(); ++k) {
        out += (k ? ", \"" : "\"") + c.metrics[k].first + "\": " + Num(c.metrics[k].second);
      }
      out += "}";
    }
    out += "}";
  }
  return out + "}";
}

void WriteCsv(const std::string& path, const std::vector<Scenario>& scenarios) {
  std::ofstream out(path);
  out << "scenario,cell,metric,value\n";
  for (const auto& s : scenarios) {
    for (const auto& c : s.cells) {
      for (const auto& [k, v] : c.metrics)
        out << s.name << ',' << c.name << ',' << k << ',' << Num(v) << '\n';
    }
  }
  if (!out) throw std::runtime_error("cannot write " + path);
}

double P50(const Cell& cell) {
  for (const auto& [k, v] : cell.metrics) {
    if (k == "p50_us") return v;
  }
  return 0;
}

double Metric(const Scenario& s, const std::string& cell, const std::string& m) {
  for (const auto& c : s.cells) {
    if (c.name != cell) continue;
    for (const auto& [k, v] : c.metrics) {
      if (k == m) return v;
    }
  }
  return 0;
}

}  // namespace tandem::bench

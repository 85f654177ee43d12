// tandem-bench's results: scenarios of cells of named metrics, printed as a table, JSON or CSV.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tandem::bench {

struct Cell {
  std::string name;
  std::vector<std::pair<std::string, double>> metrics;
  void Set(const std::string& k, double v) {
    for (auto& [name, value] : metrics) {
      if (name == k) {
        value = v;
        return;
      }
    }
    metrics.emplace_back(k, v);
  }
};

struct Scenario {
  std::string name;
  std::vector<Cell> cells;
  std::vector<std::string> notes;
};

struct LatencyStats {
  std::vector<double> us;  // sorted
};

// The q-quantile of sorted values (0 when empty).
double Percentile(const std::vector<double>& sorted, double q);
// Sorts `us` and sets p50/p90/p99/p999/max/mean (µs) and samples.
void AddLatencies(Cell& cell, std::vector<double>& us);
// A metric as printed: integers without a fraction, others with two digits, null if not finite.
std::string Num(double v);
void PrintTable(const std::vector<Scenario>& scenarios);
std::string Json(const std::vector<Scenario>& scenarios);  // scenario -> cell -> metric
void WriteCsv(const std::string& path, const std::vector<Scenario>& scenarios);
double P50(const Cell& cell);
// Metric `m` of the cell named `cell` in `s` (0 when either is missing).
double Metric(const Scenario& s, const std::string& cell, const std::string& m);

}  // namespace tandem::bench

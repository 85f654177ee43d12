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
  // Metric `k` (0 when the cell has none).
  double Get(const std::string& k) const {
    for (const auto& [name, value] : metrics) {
      if (name == k) return value;
    }
    return 0;
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
// The median of `v` (0 when empty).
double Median(std::vector<double> v);
// One cell of a variant's rounds (cells of the same metrics): each metric's median over the
// rounds, `spread` also its min and max (as `spread`_min and `spread`_max), and "rounds".
Cell MedianOfRounds(const std::vector<Cell>& rounds, const std::string& spread);
// Sorts `us` and sets p50/p90/p99/p999/max/mean (µs) and samples.
void AddLatencies(Cell& cell, std::vector<double>& us);
// A metric as printed: integers without a fraction, others with two digits after the point (three
// significant digits below 1, so a small value never prints as 0), null if not finite.
std::string Num(double v);
void PrintTable(const std::vector<Scenario>& scenarios);
std::string Json(const std::vector<Scenario>& scenarios);  // scenario -> cell -> metric
void WriteCsv(const std::string& path, const std::vector<Scenario>& scenarios);
double P50(const Cell& cell);
// Metric `m` of the cell named `cell` in `s` (0 when either is missing).
double Metric(const Scenario& s, const std::string& cell, const std::string& m);

}  // namespace tandem::bench

// A small Prometheus registry: counters, gauges and one histogram kind, rendered in the text
// exposition format. Families are declared once with their type and help; samples carry labels.
//
// Thread safety: none; the supervisor's loop owns it (and serves /metrics from the same loop).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tandem::supervisor {

using Labels = std::vector<std::pair<std::string, std::string>>;

class Metrics {
 public:
  enum class Type { kCounter, kGauge, kHistogram };

  void Declare(const std::string& family, Type type, const std::string& help,
               std::vector<double> buckets = {});
  void Inc(const std::string& family, const Labels& labels = {}, double by = 1);
  void Set(const std::string& family, const Labels& labels, double value);
  // A counter kept elsewhere (in the segment), copied at each scrape: REQUIRES it only rises.
  void SetCounter(const std::string& family, const Labels& labels, double value);
  void Observe(const std::string& family, const Labels& labels, double value);
  // A histogram kept elsewhere (in the segment), copied at each scrape: `counts` per bucket, not
  // cumulative, one more than the declared buckets (the last: above them all, +Inf), and the sum.
  // REQUIRES every count only rises.
  void SetHistogram(const std::string& family, const Labels& labels,
                    const std::vector<std::uint64_t>& counts, double sum);
  // Forgets every sample of a gauge family (its label sets are rebuilt from what is live, as
  // for a dropped index's series).
  void Clear(const std::string& family);

  double Value(const std::string& family, const Labels& labels = {}) const;
  std::string Render() const;

 private:
  struct Histogram {
    std::vector<std::uint64_t> counts;  // per bucket (not cumulative)
    std::uint64_t count = 0;
    double sum = 0;
  };
  struct Family {
    Type type;
    std::string help;
    std::vector<double> buckets;
    std::map<std::string, double> values;  // rendered label set → value
    std::map<std::string, Histogram> histograms;
  };
  static std::string RenderLabels(const Labels& labels, const std::string& extra = {});
  Family& Get(const std::string& family, Type type);

  std::map<std::string, Family> families_;
};

}  // namespace tandem::supervisor

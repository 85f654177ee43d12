#include "supervisor/metrics.h"

#include <charconv>

#include "base/check.h"

namespace tandem::supervisor {

namespace {

std::string Escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string Number(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest form that round-trips
  return std::string(buf, r.ptr);
}

}  // namespace

void Metrics::Declare(const std::string& family, Type type, const std::string& help,
                      std::vector<double> buckets) {
  Family& f = families_[family];
  f.type = type;
  f.help = help;
  f.buckets = std::move(buckets);
}

Metrics::Family& Metrics::Get(const std::string& family, Type type) {
  auto it = families_.find(family);
  TANDEM_CHECK(it != families_.end(), "metric family used before it was declared");
  TANDEM_CHECK(it->second.type == type, "metric family used with the wrong type");
  return it->second;
}

std::string Metrics::RenderLabels(const Labels& labels, const std::string& extra) {
  if (labels.empty() && extra.empty()) return "";
  std::string s = "{";
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (i) s += ",";
    s += labels[i].first + "=\"" + Escape(labels[i].second) + "\"";
  }
  if (!extra.empty()) s += (labels.empty() ? "" : ",") + extra;
  return s + "}";
}

void Metrics::Inc(const std::string& family, const Labels& labels, double by) {
  Get(family, Type::kCounter).values[RenderLabels(labels)] += by;
}

void Metrics::Set(const std::string& family, const Labels& labels, double value) {
  Get(family, Type::kGauge).values[RenderLabels(labels)] = value;
}

void Metrics::SetCounter(const std::string& family, const Labels& labels, double value) {
  Get(family, Type::kCounter).values[RenderLabels(labels)] = value;
}

void Metrics::Observe(const std::string& family, const Labels& labels, double value) {
  Family& f = Get(family, Type::kHistogram);
  Histogram& h = f.histograms[RenderLabels(labels)];
  if (h.counts.empty()) h.counts.assign(f.buckets.size(), 0);
  for (std::size_t i = 0; i < f.buckets.size(); ++i) {
    if (value <= f.buckets[i]) {
      ++h.counts[i];
      break;
    }
  }
  ++h.count;
  h.sum += value;
}

void Metrics::SetHistogram(const std::string& family, const Labels& labels,
                           const std::vector<std::uint64_t>& counts, double sum) {
  Family& f = Get(family, Type::kHistogram);
  TANDEM_CHECK(counts.size() == f.buckets.size() + 1, "a histogram's counts must fit its buckets");
  Histogram& h = f.histograms[RenderLabels(labels)];
  h.counts.assign(counts.begin(), counts.end() - 1);
  h.count = 0;
  for (std::uint64_t c : counts) h.count += c;
  h.sum = sum;
}

void Metrics::Clear(const std::string& family) { Get(family, Type::kGauge).values.clear(); }

double Metrics::Value(const std::string& family, const Labels& labels) const {
  auto it = families_.find(family);
  if (it == families_.end()) return 0;
  auto v = it->second.values.find(RenderLabels(labels));
  return v == it->second.values.end() ? 0 : v->second;
}

std::string Metrics::Render() const {
  std::string out;
  for (const auto& [name, f] : families_) {
    const char* type = f.type == Type::kCounter ? "counter"
                       : f.type == Type::kGauge ? "gauge"
                                                : "histogram";
    out += "# HELP " + name + " " + f.help + "\n# TYPE " + name + " " + type + "\n";
    if (f.type != Type::kHistogram) {
      for (const auto& [labels, v] : f.values) out += name + labels + " " + Number(v) + "\n";
      continue;
    }
    for (const auto& [labels, h] : f.histograms) {
      // Labels were rendered as {a="b"}; splice `le` into them.
      const std::string inner = labels.empty() ? "" : labels.substr(1, labels.size() - 2);
      const std::string sep = inner.empty() ? "" : ",";
      std::uint64_t cumulative = 0;
      for (std::size_t i = 0; i < f.buckets.size(); ++i) {
        cumulative += h.counts[i];
        out += name + "_bucket{" + inner + sep + "le=\"" + Number(f.buckets[i]) + "\"} " +
               std::to_string(cumulative) + "\n";
      }
      out += name + "_bucket{" + inner + sep + "le=\"+Inf\"} " + std::to_string(h.count) + "\n";
      out += name + "_sum" + labels + " " + Number(h.sum) + "\n";
      out += name + "_count" + labels + " " + std::to_string(h.count) + "\n";
    }
  }
  return out;
}

}  // namespace tandem::supervisor

#include "base/metrics.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "base/str_cat.h"

namespace kiln::metrics {
namespace {

constexpr double kLatencyBuckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                      0.25,   0.5,   1,      2.5,   5,    10,    30,   120};

template <typename Series>
std::unique_ptr<Series> MakeSeries(const std::vector<double>& buckets) {
  if constexpr (std::is_same_v<Series, Histogram>) {
    return std::make_unique<Histogram>(buckets);
  } else {
    return std::make_unique<Series>();
  }
}

std::string FormatValue(double value) {
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (std::isnan(value)) return "NaN";
  return StrCat(value);
}

void AppendEscaped(std::string& out, std::string_view text, bool escape_quotes) {
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && escape_quotes) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

// `{a="x",b="y"}` from names and values, plus an optional extra pair (le).
std::string LabelSet(const std::vector<std::string>& names, const std::vector<std::string>& values,
                     std::string_view extra_name = {}, std::string_view extra_value = {}) {
  if (names.empty() && extra_name.empty()) return {};
  std::string out = "{";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ',';
    out += names[i];
    out += "=\"";
    AppendEscaped(out, values[i], true);
    out += '"';
  }
  if (!extra_name.empty()) {
    if (!names.empty()) out += ',';
    out += StrCat(extra_name, "=\"", extra_value, "\"");
  }
  out += '}';
  return out;
}

template <typename Series>
void AppendHeader(std::string& out, const Family<Series>& family, std::string_view type) {
  out += StrCat("# HELP ", family.name(), " ");
  AppendEscaped(out, family.help(), false);
  out += StrCat("\n# TYPE ", family.name(), " ", type, "\n");
}

std::string RenderSimple(const CounterFamily& family) {
  std::string out;
  AppendHeader(out, family, "counter");
  family.ForEach([&](const std::vector<std::string>& labels, const Counter& series) {
    out += StrCat(family.name(), LabelSet(family.label_names(), labels), " ",
                  FormatValue(series.value()), "\n");
  });
  return out;
}

std::string RenderSimple(const GaugeFamily& family) {
  std::string out;
  AppendHeader(out, family, "gauge");
  family.ForEach([&](const std::vector<std::string>& labels, const Gauge& series) {
    out += StrCat(family.name(), LabelSet(family.label_names(), labels), " ",
                  FormatValue(series.value()), "\n");
  });
  return out;
}

std::string RenderHistogram(const HistogramFamily& family) {
  std::string out;
  AppendHeader(out, family, "histogram");
  const std::vector<std::string>& names = family.label_names();
  family.ForEach([&](const std::vector<std::string>& labels, const Histogram& series) {
    const std::vector<double>& bounds = series.upper_bounds();
    for (size_t i = 0; i <= bounds.size(); ++i) {
      std::string le = i < bounds.size() ? FormatValue(bounds[i]) : "+Inf";
      out += StrCat(family.name(), "_bucket", LabelSet(names, labels, "le", le), " ",
                    series.cumulative_count(i), "\n");
    }
    out += StrCat(family.name(), "_sum", LabelSet(names, labels), " ", FormatValue(series.sum()),
                  "\n");
    out += StrCat(family.name(), "_count", LabelSet(names, labels), " ", series.count(), "\n");
  });
  return out;
}

template <typename FamilyT, typename... Args>
FamilyT& FindOrAdd(std::map<std::string, std::unique_ptr<FamilyT>>& families, std::string name,
                   Args&&... args) {
  auto it = families.find(name);
  if (it != families.end()) return *it->second;
  auto family = std::make_unique<FamilyT>(name, std::forward<Args>(args)...);
  FamilyT& ref = *family;
  families.emplace(std::move(name), std::move(family));
  return ref;
}

}  // namespace

Histogram::Histogram(std::span<const double> upper_bounds)
    : upper_bounds_(upper_bounds.begin(), upper_bounds.end()),
      buckets_(std::make_unique<std::atomic<uint64_t>[]>(upper_bounds.size() + 1)) {
  assert(std::is_sorted(upper_bounds_.begin(), upper_bounds_.end()));
}

void Histogram::Observe(double value) {
  size_t bucket =
      std::lower_bound(upper_bounds_.begin(), upper_bounds_.end(), value) - upper_bounds_.begin();
  buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

uint64_t Histogram::cumulative_count(size_t bucket) const {
  uint64_t total = 0;
  for (size_t i = 0; i <= bucket && i <= upper_bounds_.size(); ++i) {
    total += buckets_[i].load(std::memory_order_relaxed);
  }
  return total;
}

std::span<const double> DefaultLatencyBuckets() { return kLatencyBuckets; }

template <typename Series>
Series& Family<Series>::WithLabels(const std::vector<std::string>& label_values) {
  assert(label_values.size() == label_names_.size());
  std::lock_guard lock(mu_);
  auto it = series_.find(label_values);
  if (it == series_.end()) {
    it = series_.emplace(label_values, MakeSeries<Series>(buckets_)).first;
  }
  return *it->second;
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

CounterFamily& MetricsRegistry::AddCounter(std::string name, std::string help,
                                           std::vector<std::string> label_names) {
  std::lock_guard lock(mu_);
  assert(!gauges_.contains(name) && !histograms_.contains(name));
  return FindOrAdd(counters_, std::move(name), std::move(help), std::move(label_names));
}

GaugeFamily& MetricsRegistry::AddGauge(std::string name, std::string help,
                                       std::vector<std::string> label_names) {
  std::lock_guard lock(mu_);
  assert(!counters_.contains(name) && !histograms_.contains(name));
  return FindOrAdd(gauges_, std::move(name), std::move(help), std::move(label_names));
}

HistogramFamily& MetricsRegistry::AddHistogram(std::string name, std::string help,
                                               std::vector<std::string> label_names,
                                               std::span<const double> buckets) {
  std::lock_guard lock(mu_);
  assert(!counters_.contains(name) && !gauges_.contains(name));
  return FindOrAdd(histograms_, std::move(name), std::move(help), std::move(label_names),
                   std::vector<double>(buckets.begin(), buckets.end()));
}

std::string MetricsRegistry::RenderPrometheus() const {
  std::map<std::string_view, std::string> blocks;  // by family name
  std::lock_guard lock(mu_);
  for (const auto& [name, family] : counters_) blocks[name] = RenderSimple(*family);
  for (const auto& [name, family] : gauges_) blocks[name] = RenderSimple(*family);
  for (const auto& [name, family] : histograms_) blocks[name] = RenderHistogram(*family);
  std::string out;
  for (const auto& [name, block] : blocks) out += block;
  return out;
}

}  // namespace kiln::metrics

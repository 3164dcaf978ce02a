// Counters, gauges and histograms with labels, rendered as Prometheus text.
//
// The registry owns every family it creates; families own their labelled
// series. References returned by Add* and WithLabels stay valid for the
// registry's lifetime, so hot paths may look a series up once and keep it.
// Everything here is thread-safe: series update with atomics, and label
// lookups and rendering take a per-family mutex.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::metrics {

class Counter {
 public:
  void Increment(double amount = 1) { value_.fetch_add(amount, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Gauge {
 public:
  void Set(double value) { value_.store(value, std::memory_order_relaxed); }
  void Add(double amount) { value_.fetch_add(amount, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Histogram {
 public:
  // `upper_bounds` ascending; a +Inf bucket is implied.
  explicit Histogram(std::span<const double> upper_bounds);

  void Observe(double value);

  const std::vector<double>& upper_bounds() const { return upper_bounds_; }
  // Observations <= upper_bounds()[i] (cumulative); index size() is +Inf.
  uint64_t cumulative_count(size_t bucket) const;
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  double sum() const { return sum_.load(std::memory_order_relaxed); }

 private:
  std::vector<double> upper_bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // per bucket, not cumulative
  std::atomic<uint64_t> count_{0};
  std::atomic<double> sum_{0};
};

// Seconds, from half a millisecond (hot-set hits) to two minutes (compiles).
std::span<const double> DefaultLatencyBuckets();

// One named metric and its series, one per distinct label-value tuple.
template <typename Series>
class Family {
 public:
  Family(std::string name, std::string help, std::vector<std::string> label_names,
         std::vector<double> buckets = {})
      : name_(std::move(name)),
        help_(std::move(help)),
        label_names_(std::move(label_names)),
        buckets_(std::move(buckets)) {}

  // The series for `label_values` (one per label name), created on first use.
  Series& WithLabels(const std::vector<std::string>& label_values);

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  const std::vector<std::string>& label_names() const { return label_names_; }

  // Calls fn(label_values, series) for each series in label order.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    std::lock_guard lock(mu_);
    for (const auto& [labels, series] : series_) fn(labels, *series);
  }

 private:
  const std::string name_;
  const std::string help_;
  const std::vector<std::string> label_names_;
  const std::vector<double> buckets_;  // histograms only
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<Series>> series_;  // guarded by mu_
};

extern template class Family<Counter>;
extern template class Family<Gauge>;
extern template class Family<Histogram>;
using CounterFamily = Family<Counter>;
using GaugeFamily = Family<Gauge>;
using HistogramFamily = Family<Histogram>;

class MetricsRegistry {
 public:
  // Creating a family whose name exists returns the existing one when it is
  // of the same kind; names must be unique across kinds (checked by assert).
  CounterFamily& AddCounter(std::string name, std::string help,
                            std::vector<std::string> label_names = {});
  GaugeFamily& AddGauge(std::string name, std::string help,
                        std::vector<std::string> label_names = {});
  HistogramFamily& AddHistogram(std::string name, std::string help,
                                std::vector<std::string> label_names = {},
                                std::span<const double> buckets = DefaultLatencyBuckets());

  // Prometheus text exposition format 0.0.4, families sorted by name.
  std::string RenderPrometheus() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<CounterFamily>> counters_;      // guarded by mu_
  std::map<std::string, std::unique_ptr<GaugeFamily>> gauges_;          // guarded by mu_
  std::map<std::string, std::unique_ptr<HistogramFamily>> histograms_;  // guarded by mu_
};

// The Content-Type of RenderPrometheus output.
inline constexpr std::string_view kPrometheusContentType = "text/plain; version=0.0.4";

}  // namespace kiln::metrics

#include "base/metrics.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace kiln::metrics {
namespace {

bool Contains(const std::string& text, std::string_view needle) {
  return text.find(needle) != std::string::npos;
}

TEST(MetricsTest, RendersCountersAndGaugesWithLabels) {
  MetricsRegistry registry;
  CounterFamily& requests =
      registry.AddCounter("kiln_requests_total", "Requests.", {"route", "status"});
  requests.WithLabels({"/v1/compile", "200"}).Increment();
  requests.WithLabels({"/v1/compile", "200"}).Increment(2);
  requests.WithLabels({"/a\"b\\c\n", "404"}).Increment();
  registry.AddGauge("kiln_open", "Open things.").WithLabels({}).Set(7);

  std::string text = registry.RenderPrometheus();
  EXPECT_TRUE(Contains(text, "# HELP kiln_requests_total Requests.\n"));
  EXPECT_TRUE(Contains(text, "# TYPE kiln_requests_total counter\n"));
  EXPECT_TRUE(Contains(text, "kiln_requests_total{route=\"/v1/compile\",status=\"200\"} 3\n"));
  EXPECT_TRUE(Contains(text, "kiln_requests_total{route=\"/a\\\"b\\\\c\\n\",status=\"404\"} 1\n"));
  EXPECT_TRUE(Contains(text, "# TYPE kiln_open gauge\nkiln_open 7\n"));
  // Families are sorted by name.
  EXPECT_LT(text.find("kiln_open"), text.find("kiln_requests_total"));
}

TEST(MetricsTest, HistogramBucketsAreCumulative) {
  MetricsRegistry registry;
  const double bounds[] = {0.1, 1, 10};
  Histogram& latency = registry.AddHistogram("kiln_latency_seconds", "Latency.", {"route"}, bounds)
                           .WithLabels({"/x"});
  for (double v : {0.05, 0.1, 0.5, 5.0, 50.0}) latency.Observe(v);
  EXPECT_EQ(latency.cumulative_count(0), 2u);  // 0.05 and 0.1 (le is inclusive)
  EXPECT_EQ(latency.cumulative_count(1), 3u);
  EXPECT_EQ(latency.cumulative_count(3), 5u);
  std::string text = registry.RenderPrometheus();
  EXPECT_TRUE(Contains(text, "kiln_latency_seconds_bucket{route=\"/x\",le=\"0.1\"} 2\n"));
  EXPECT_TRUE(Contains(text, "kiln_latency_seconds_bucket{route=\"/x\",le=\"10\"} 4\n"));
  EXPECT_TRUE(Contains(text, "kiln_latency_seconds_bucket{route=\"/x\",le=\"+Inf\"} 5\n"));
  EXPECT_TRUE(Contains(text, "kiln_latency_seconds_sum{route=\"/x\"} 55.65\n"));
  EXPECT_TRUE(Contains(text, "kiln_latency_seconds_count{route=\"/x\"} 5\n"));
}

TEST(MetricsTest, AddingAFamilyTwiceReturnsTheSameOne) {
  MetricsRegistry registry;
  CounterFamily& a = registry.AddCounter("c_total", "C.", {"x"});
  CounterFamily& b = registry.AddCounter("c_total", "C.", {"x"});
  EXPECT_EQ(&a, &b);
  EXPECT_EQ(&a.WithLabels({"1"}), &b.WithLabels({"1"}));
}

TEST(MetricsTest, ConcurrentIncrementsAreNotLost) {
  MetricsRegistry registry;
  CounterFamily& family = registry.AddCounter("n_total", "N.", {"t"});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) family.WithLabels({"same"}).Increment();
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(family.WithLabels({"same"}).value(), 40000);
}

}  // namespace
}  // namespace kiln::metrics

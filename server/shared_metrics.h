// The kiln_shared_* series of GET /metrics (`kiln serve --shared`): the
// shared tier's counters (cache/shared/shared_tier.h) as Prometheus
// counters, and whether it is reachable now. Registered into the service's
// registry only when a shared tier is configured. Thread-safe: Update may
// run from concurrent scrapes (each difference is added once).
#pragma once

#include <mutex>

#include "cache/shared/shared_tier.h"
#include "server/http/metrics.h"

namespace kiln::server {

class SharedTierMetrics {
 public:
  explicit SharedTierMetrics(http::MetricsRegistry& registry);
  // `waiting`: waits on other servers' leases open now (LeaseWaiter).
  void Update(const cache::shared::SharedCounters& counters, const cache::shared::SharedHealth& health,
              size_t waiting);

 private:
  std::mutex mu_;
  http::Counter& hits_;
  http::Counter& misses_;
  http::Counter& errors_;
  http::Counter& corrupt_;
  http::Counter& publishes_;
  http::Counter& lease_waits_;
  http::Counter& takeovers_;
  http::Counter& stale_leases_;
  http::Gauge& waiting_;
  http::Gauge& up_;
};

}  // namespace kiln::server

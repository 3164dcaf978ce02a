// The kiln_shared_* series of GET /metrics (`kiln serve --shared`): the
// shared tier's counters (cache/shared/shared_tier.h) as Prometheus
// counters, and whether it is reachable now. Registered into the service's
// registry only when a shared tier is configured. Thread-safe: Update may
// run from concurrent scrapes (each difference is added once).
#pragma once

#include <mutex>

#include "cache/shared/shared_tier.h"
#include "base/metrics.h"
#include "server/service/fleet_sync.h"

namespace kiln::service {

class SharedTierMetrics {
 public:
  explicit SharedTierMetrics(metrics::MetricsRegistry& registry);
  // `waiting`: waits on other servers' leases open now (LeaseWaiter).
  void Update(const cache::shared::SharedCounters& counters, const cache::shared::SharedHealth& health,
              size_t waiting, const FleetSyncCounters& fleet);

 private:
  std::mutex mu_;
  metrics::Counter& hits_;
  metrics::Counter& misses_;
  metrics::Counter& errors_;
  metrics::Counter& corrupt_;
  metrics::Counter& publishes_;
  metrics::Counter& lease_waits_;
  metrics::Counter& takeovers_;
  metrics::Counter& stale_leases_;
  metrics::Counter& failures_published_;
  metrics::Counter& failures_found_;
  metrics::Counter& publishes_refused_;
  metrics::Counter& fleet_events_;
  metrics::Counter& fleet_replaced_;
  metrics::Counter& fleet_sync_failed_;
  metrics::Gauge& subscribed_;
  metrics::Gauge& waiting_;
  metrics::Gauge& up_;
};

}  // namespace kiln::service

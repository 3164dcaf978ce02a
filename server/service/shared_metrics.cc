#include "server/service/shared_metrics.h"

namespace kiln::service {
namespace {

metrics::Counter& AddCounter(metrics::MetricsRegistry& registry, const char* name, const char* help) {
  return registry.AddCounter(name, help).WithLabels({});
}

}  // namespace

SharedTierMetrics::SharedTierMetrics(metrics::MetricsRegistry& registry)
    : hits_(AddCounter(registry, "kiln_shared_hits_total",
                       "Local misses answered from the shared tier (verified entries fetched from Redis).")),
      misses_(AddCounter(registry, "kiln_shared_misses_total", "Shared-tier lookups that found no entry.")),
      errors_(AddCounter(registry, "kiln_shared_errors_total",
                         "Shared-tier calls that failed (Redis unreachable, slow or refusing); each fell back to "
                         "the local tier.")),
      corrupt_(AddCounter(registry, "kiln_shared_corrupt_total",
                          "Values in the shared tier that failed verification (never served).")),
      publishes_(AddCounter(registry, "kiln_shared_publishes_total",
                            "Entries (new compiles and tuned replacements) written to the shared tier.")),
      lease_waits_(AddCounter(registry, "kiln_shared_lease_waits_total",
                              "Compiles that waited on another server's compile lease instead of compiling.")),
      takeovers_(AddCounter(registry, "kiln_shared_lease_takeovers_total",
                            "Compile leases taken over after their holder stopped renewing them.")),
      stale_leases_(AddCounter(registry, "kiln_shared_stale_leases_total",
                               "Compile leases found with no time to live or one longer than --shared-lease "
                               "(no live kiln's), taken over at once.")),
      failures_published_(AddCounter(registry, "kiln_shared_failures_published_total",
                                     "Compile failures this server marked in the shared tier for the fleet.")),
      failures_found_(AddCounter(registry, "kiln_shared_failures_found_total",
                                 "Compiles answered with the failure another server marked, without compiling.")),
      publishes_refused_(AddCounter(registry, "kiln_shared_publishes_refused_total",
                                    "Publishes refused because the shared tier held a newer entry (a tuned plan).")),
      fleet_events_(AddCounter(registry, "kiln_shared_events_total",
                               "Fleet events received on the subscription (publishes, lease releases, failures).")),
      fleet_replaced_(AddCounter(registry, "kiln_shared_replaced_total",
                                 "Local entries replaced by a newer one from the fleet (another server's tuned plan).")),
      fleet_sync_failed_(AddCounter(registry, "kiln_shared_sync_failed_total",
                                    "Newer entries from the fleet that could not be fetched or stored (kept the old).")),
      subscribed_(registry
                      .AddGauge("kiln_shared_subscribed",
                                "1 while the subscription to the fleet's events is up (else waits poll and hits "
                                "compare versions).")
                      .WithLabels({})),
      waiting_(registry
                   .AddGauge("kiln_shared_lease_waiting",
                             "Compiles waiting now on another server's lease (none holds a thread).")
                   .WithLabels({})),
      up_(registry.AddGauge("kiln_shared_up", "1 while the shared tier answers, 0 while backing off after a failure.")
              .WithLabels({})) {}

void SharedTierMetrics::Update(const cache::shared::SharedCounters& counters,
                               const cache::shared::SharedHealth& health, size_t waiting,
                               const FleetSyncCounters& fleet) {
  std::lock_guard lock(mu_);
  auto catch_up = [](metrics::Counter& counter, int64_t total) {
    if (static_cast<double>(total) > counter.value()) counter.Increment(static_cast<double>(total) - counter.value());
  };
  catch_up(hits_, counters.hits);
  catch_up(misses_, counters.misses);
  catch_up(errors_, counters.errors);
  catch_up(corrupt_, counters.corrupt);
  catch_up(publishes_, counters.publishes);
  catch_up(lease_waits_, counters.lease_waits);
  catch_up(takeovers_, counters.takeovers);
  catch_up(stale_leases_, counters.stale_leases);
  catch_up(failures_published_, counters.failures_published);
  catch_up(failures_found_, counters.failures_found);
  catch_up(publishes_refused_, counters.publishes_refused);
  catch_up(fleet_events_, fleet.events);
  catch_up(fleet_replaced_, fleet.replaced);
  catch_up(fleet_sync_failed_, fleet.failed);
  subscribed_.Set(fleet.subscribed ? 1 : 0);
  waiting_.Set(static_cast<double>(waiting));
  up_.Set(health.up ? 1 : 0);
}

}  // namespace kiln::service

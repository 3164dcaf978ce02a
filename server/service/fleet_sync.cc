#include "server/service/fleet_sync.h"

namespace kiln::service {

using cache::shared::EntryVersion;
using cache::shared::FleetEvent;
using cache::shared::FleetEventKind;

FleetSync::FleetSync(cache::shared::SharedTier& tier, cache::CacheStore& store, CompileService& compile,
                     std::function<void(const cache::EntryId&)> forget,
                     cache::shared::FleetSubscriberOptions subscriber_options)
    : tier_(tier), store_(store), compile_(compile), forget_(std::move(forget)) {
  worker_ = std::make_unique<WorkerPool>(1, 4096);
  subscriber_ = std::make_unique<cache::shared::FleetSubscriber>(
      [this] { return tier_.OpenSubscription(); },
      cache::shared::FleetSubscriber::Handlers{
          .on_event = [this](const FleetEvent& event) { OnEvent(event); },
          .on_subscribed = [this](int64_t subscription) { OnSubscribed(subscription); }},
      subscriber_options);
}

FleetSync::~FleetSync() {
  subscriber_.reset();
  worker_.reset();
}

void FleetSync::OnEvent(const FleetEvent& event) {
  compile_.OnFleetChange(event.id);
  if (event.kind == FleetEventKind::kPublished && event.version.rank > 0) Queue(event.id, event.version);
}

void FleetSync::OnSubscribed(int64_t /*subscription*/) {
  // What was published while no subscription was up is found on the next
  // hit of each entry.
  std::lock_guard lock(mu_);
  checked_.clear();
}

void FleetSync::NoteHit(const cache::EntryId& id, const EntryVersion& local) {
  // Only the heuristic plan is ever superseded from the fleet (a tuned
  // entry is replaced only by the tuner that beat it, on this server).
  if (local.rank > 0) return;
  {
    std::lock_guard lock(mu_);
    if (checked_.contains(id)) return;
    checked_.insert(id);
  }
  Queue(id, std::nullopt);
}

void FleetSync::Queue(const cache::EntryId& id, std::optional<EntryVersion> announced) {
  {
    std::lock_guard lock(mu_);
    if (!queued_.insert(id).second) return;
  }
  WorkerPool::Task task = [this, id, announced] {
    {
      std::lock_guard lock(mu_);
      queued_.erase(id);
    }
    CatchUp(id, announced);
  };
  if (!worker_->TrySubmit(task)) {
    failed_++;
    std::lock_guard lock(mu_);
    queued_.erase(id);
  }
}

void FleetSync::CatchUp(const cache::EntryId& id, std::optional<EntryVersion> announced) {
  Result<std::optional<cache::EntryMetadata>> stored = store_.GetMetadata(id);
  if (!stored || !*stored || (*stored)->quarantined) return;  // not held here: nothing to keep in step
  const cache::EntryMetadata& local = **stored;
  const EntryVersion local_version = cache::shared::VersionOf(local);
  if (!announced) {
    checks_++;
    Result<std::optional<EntryVersion>> remote = tier_.StoredVersion(id);
    if (!remote || !*remote) return;
    announced = **remote;
  }
  if (announced->rank <= local_version.rank) return;

  Result<std::optional<cache::BundleEntry>> fetched = tier_.Fetch(id);  // verified: bytes, id, MAC
  if (!fetched || !*fetched) {
    failed_++;
    return;
  }
  const cache::BundleEntry& entry = **fetched;
  if (entry.metadata.plan_kind != cache::PlanKind::kTuned ||
      cache::shared::VersionOf(entry.metadata).rank <= local_version.rank)
    return;
  const cache::PutRequest put{
      .id = id,
      .options = entry.metadata.options,
      .plan_kind = cache::PlanKind::kTuned,
      .executable = entry.executable,
      .compile_seconds = entry.metadata.compile_seconds,
      .device_seconds = entry.metadata.device_seconds,
      .tune_seconds = entry.metadata.tune_seconds,
      .components = entry.components,
      .source_text = entry.source_text,
  };
  Status swapped = store_.ReplaceWithTuned(put, local.checksum);
  if (!swapped) {
    // Another writer got there first (this server's own tuner, a watcher's
    // change): what is stored now stays.
    if (swapped.error().reason() != cache::kEntryChanged && swapped.error().reason() != cache::kAlreadyTuned)
      failed_++;
    return;
  }
  replaced_++;
  forget_(id);
}

FleetSyncCounters FleetSync::Counters() const {
  return FleetSyncCounters{.subscribed = subscriber_->subscribed(),
                           .subscriptions = subscriber_->subscriptions(),
                           .events = subscriber_->events(),
                           .replaced = replaced_.load(),
                           .checks = checks_.load(),
                           .failed = failed_.load()};
}

}  // namespace kiln::service
